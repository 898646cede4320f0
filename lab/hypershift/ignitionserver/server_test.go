package ignitionserver

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
	"github.com/paritylab/paritylab/lab/pki"
)

func staticNode(context.Context) (agentapi.NodeConfig, error) { return bootstrapNode(6443), nil }

// dialTLS handshakes with the server on 127.0.0.1, checking its
// certificate for serverName against roots.
func dialTLS(s *Server, roots *x509.CertPool, serverName string, maxVersion uint16) (*x509.Certificate, error) {
	d := &net.Dialer{Timeout: 5 * time.Second}
	conn, err := tls.DialWithDialer(d, "tcp", "127.0.0.1:"+strconv.Itoa(s.Port()),
		&tls.Config{RootCAs: roots, ServerName: serverName, MaxVersion: maxVersion})
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0], nil
}

// The CA is kept in HyperShift's Secret and reused by a later server of
// the namespace; the serving certificate is valid for loopback and the
// advertised host, signed by that CA only, and TLS below 1.2 is refused.
func TestTLS(t *testing.T) {
	ns := newNamespace(t)
	s := start(t, Options{Namespace: ns, Client: k8s, Node: staticNode})

	var secret corev1.Secret
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "ignition-server-ca-cert"}, &secret); err != nil {
		t.Fatalf("CA Secret: %v", err)
	}
	if secret.Type != corev1.SecretTypeTLS || !bytes.Equal(secret.Data["tls.crt"], s.CACertPEM()) || len(secret.Data["tls.key"]) == 0 {
		t.Errorf("CA Secret type %q keys %v: want kubernetes.io/tls with tls.crt = CACertPEM and tls.key", secret.Type, slices.Sorted(maps.Keys(secret.Data)))
	}
	if _, err := tls.X509KeyPair(secret.Data["tls.crt"], secret.Data["tls.key"]); err != nil {
		t.Errorf("CA Secret tls.crt and tls.key are no pair: %v", err)
	}

	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(s.CACertPEM())
	for _, name := range []string{"127.0.0.1", "10.0.2.2", "localhost"} {
		cert, err := dialTLS(s, roots, name, 0)
		if err != nil {
			t.Errorf("handshake for %s: %v", name, err)
			continue
		}
		if name == "10.0.2.2" && (!hasIP(cert, "127.0.0.1") || !hasIP(cert, "10.0.2.2")) {
			t.Errorf("serving certificate IP SANs %v, want 127.0.0.1 and 10.0.2.2", cert.IPAddresses)
		}
	}
	if s.Endpoint() != "10.0.2.2:"+strconv.Itoa(s.Port()) {
		t.Errorf("Endpoint %q, want 10.0.2.2:%d", s.Endpoint(), s.Port())
	}

	other, err := pki.NewCA("ignition-root-ca")
	if err != nil {
		t.Fatal(err)
	}
	otherRoots := x509.NewCertPool()
	otherRoots.AddCert(other.Cert)
	var unknownCA x509.UnknownAuthorityError
	if _, err := dialTLS(s, otherRoots, "127.0.0.1", 0); !errors.As(err, &unknownCA) {
		t.Errorf("a client trusting another CA: %v, want an unknown authority error", err)
	}
	if _, err := dialTLS(s, roots, "127.0.0.1", tls.VersionTLS11); err == nil {
		t.Error("a TLS 1.1 client was served")
	}

	again := start(t, Options{Namespace: ns, Client: k8s, Node: staticNode, AdvertiseHost: "192.0.2.10"})
	if !bytes.Equal(again.CACertPEM(), s.CACertPEM()) {
		t.Error("a second server of the namespace made another CA")
	}
	if again.Endpoint() != "192.0.2.10:"+strconv.Itoa(again.Port()) {
		t.Errorf("Endpoint %q, want 192.0.2.10:%d", again.Endpoint(), again.Port())
	}
	if cert, err := dialTLS(again, roots, "192.0.2.10", 0); err != nil {
		t.Errorf("second server, by the first one's CA: %v", err)
	} else if hasIP(cert, "10.0.2.2") {
		t.Errorf("second server's IP SANs %v hold the default advertise host", cert.IPAddresses)
	}
}

func hasIP(cert *x509.Certificate, ip string) bool {
	return slices.ContainsFunc(cert.IPAddresses, func(a net.IP) bool { return a.Equal(net.ParseIP(ip)) })
}

// Start listens on loopback only, and checks its options before it
// writes anything.
func TestStartRefusesBadOptions(t *testing.T) {
	ns := newNamespace(t)
	for _, host := range []string{"0.0.0.0", "10.0.2.2", "::", "localhost"} {
		_, err := Start(context.Background(), Options{Namespace: ns, Client: k8s, Node: staticNode, ListenHost: host})
		if err == nil || !strings.Contains(err.Error(), "must be a loopback IP") {
			t.Errorf("ListenHost %q: %v, want an error saying it must be loopback", host, err)
		}
	}
	for name, opts := range map[string]Options{
		"Namespace": {Client: k8s, Node: staticNode},
		"Client":    {Namespace: ns, Node: staticNode},
		"Node":      {Namespace: ns, Client: k8s},
	} {
		if _, err := Start(context.Background(), opts); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("without %s: %v, want an error naming it", name, err)
		}
	}
	err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: CASecretName}, &corev1.Secret{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("a refused Start left the CA Secret (get: %v)", err)
	}
}

// Stop frees the port, and a second Stop is a no-op.
func TestStopReleasesPort(t *testing.T) {
	s, err := Start(context.Background(), Options{Namespace: newNamespace(t), Client: k8s, Node: staticNode})
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(s.Port())
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial a running server: %v", err)
	}
	conn.Close()
	if err := s.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if conn, err := net.DialTimeout("tcp", addr, 5*time.Second); err == nil {
		conn.Close()
		t.Errorf("%s still accepts connections after Stop", addr)
	}
	if err := s.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}
