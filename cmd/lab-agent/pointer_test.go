package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
)

// ignitionEndpoint serves, to a request with the right bearer token, an
// Ignition config carrying a node's bootstrap user data.
func ignitionEndpoint(t *testing.T, token string) (*httptest.Server, []byte) {
	t.Helper()
	ud, _ := json.Marshal(agentapi.UserData{Node: &agentapi.NodeConfig{APIPort: 6443, Bootstrap: true, ClientCert: "bootstrap"}})
	ign := `{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"` + agentapi.UserDataFile +
		`","contents":{"source":"data:,` + url.PathEscape(string(ud)) + `"}}]}}`
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/ignition/worker" || r.Header.Get("Authorization") != "Bearer "+token || r.Header.Get("NodePool") != "clusters/np1" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte(ign))
	}))
	t.Cleanup(srv.Close)
	return srv, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}

// selfSignedCA is a CA other than httptest's built-in one.
func selfSignedCA(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "other CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func pointer(t *testing.T, source, token string, ca []byte) []byte {
	t.Helper()
	raw, err := agentapi.NewPointerIgnition(source, map[string]string{"Authorization": "Bearer " + token, "NodePool": "clusters/np1"}, ca)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// A node follows the pointer its install left: with the endpoint's CA
// and token it gets its config; a wrong CA or token gets nothing.
func TestFetchPointerIgnition(t *testing.T) {
	srv, ca := ignitionEndpoint(t, "s3cret")
	otherCA := selfSignedCA(t)
	ctx := context.Background()

	body, err := fetchPointerIgnition(ctx, pointer(t, srv.URL+"/ignition/worker", "s3cret", ca), "")
	if err != nil {
		t.Fatalf("fetch with the right CA and token: %v", err)
	}
	ud, err := parseUserData(body)
	if err != nil || ud.Node == nil || !ud.Node.Bootstrap || ud.Node.APIPort != 6443 {
		t.Fatalf("fetched user data %+v, %v; want the bootstrap node config", ud, err)
	}

	cases := []struct {
		name    string
		pointer []byte
		want    string
	}{
		{"another CA", pointer(t, srv.URL+"/ignition/worker", "s3cret", otherCA), "certificate"},
		{"no CA", pointer(t, srv.URL+"/ignition/worker", "s3cret", nil), "certificate"},
		{"wrong token", pointer(t, srv.URL+"/ignition/worker", "guess", ca), "401"},
		{"two sources", []byte(`{"ignition":{"version":"3.2.0","config":{"merge":[{"source":"https://a"},{"source":"https://b"}]}}}`), "2 config.merge sources"},
		{"bad CA", []byte(`{"ignition":{"version":"3.2.0","config":{"merge":[{"source":"https://a"}]},"security":{"tls":{"certificateAuthorities":[{"source":"data:,nope"}]}}}}`), "no PEM certificate"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := fetchPointerIgnition(ctx, c.pointer, "")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one saying %q", err, c.want)
			}
			if err != nil && strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error %q shows the token", err)
			}
		})
	}
}

// A fetched config that needs no bootstrap is joined as it is, named and
// reporting as the pointer's node config says.
func TestJoinThroughPointerKeepsNameAndReport(t *testing.T) {
	ud, _ := json.Marshal(agentapi.UserData{Node: &agentapi.NodeConfig{APIPort: 7443, ClientCert: "own"}})
	ign := `{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"` + agentapi.UserDataFile +
		`","contents":{"source":"data:,` + url.PathEscape(string(ud)) + `"}}]}}`
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(ign)) }))
	defer srv.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	report := &agentapi.ReportTarget{HostID: "h-1", Token: "t"}
	in := agentapi.NodeConfig{Name: "hs-0", Report: report, PointerIgnition: pointer(t, srv.URL, "x", ca)}
	got, err := joinThroughPointer(context.Background(), systemWithGateway(t, "0100007F"), "/nonexistent", in, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "hs-0" || got.Report != report || got.APIPort != 7443 || got.ClientCert != "own" || len(got.PointerIgnition) != 0 {
		t.Errorf("joined with %+v; want the fetched config named hs-0 with the pointer's report target", got)
	}
}

// systemWithGateway is a fake system whose default gateway is the
// little-endian hex IPv4 address gw, as /proc/net/route writes it.
func systemWithGateway(t *testing.T, gw string) *system {
	t.Helper()
	sys := fakeSystem(t)
	route := "Iface\tDestination\tGateway \tFlags\n eth0\t00000000\t" + gw + "\t0003\n"
	if err := os.WriteFile(filepath.Join(sys.root, "proc/net/route"), []byte(route), 0o644); err != nil {
		t.Fatal(err)
	}
	return sys
}

// A pointer to the host's 127.0.0.1 (a lab service, as the hub names it)
// is followed at the guest's service host, its gateway, with the TLS
// name still the URL's: here the endpoint listens on 127.0.0.2 only.
func TestPointerToHostLoopbackIsFetchedAtTheServiceHost(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("{}")) }))
	l, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener = l
	srv.StartTLS()
	defer srv.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	_, port, _ := net.SplitHostPort(l.Addr().String())
	raw := pointer(t, "https://127.0.0.1:"+port+"/ignition", "x", ca)
	if _, err := fetchPointerIgnition(context.Background(), raw, "127.0.0.2"); err != nil {
		t.Errorf("fetch at the service host: %v", err)
	}
	if _, err := fetchPointerIgnition(context.Background(), raw, ""); err == nil {
		t.Error("fetched from 127.0.0.1 where nothing listens")
	}
}
