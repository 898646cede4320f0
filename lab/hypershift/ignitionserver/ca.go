package ignitionserver

import (
	"context"
	"crypto/ecdsa"
	"crypto/tls"
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/pki"
)

// HyperShift's names (3ee9615): the CA Secret is ResourceName+"-ca-cert"
// (hypershift-operator/controllers/manifests/ignitionserver/manifests.go
// L15, L75-82), its CA is "ignition-root-ca" and the serving certificate
// "ignition-server" (control-plane-operator/controllers/hostedcontrolplane/
// v2/ignitionserver/pki.go L30, L98).
const (
	CASecretName      = "ignition-server-ca-cert"
	caCommonName      = "ignition-root-ca"
	servingCommonName = "ignition-server"
)

// ensureCA reads the CA from its Secret, or makes it and creates the
// Secret (kubernetes.io/tls, keys tls.crt and tls.key, as pki.go L29-33)
// when there is none. Like upstream it never updates an existing one.
func ensureCA(ctx context.Context, c client.Client, namespace string) (*pki.CA, error) {
	key := client.ObjectKey{Namespace: namespace, Name: CASecretName}
	secret := &corev1.Secret{}
	err := c.Get(ctx, key, secret)
	if err == nil {
		return caFromSecret(secret)
	}
	if !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("read ignition CA Secret %s: %w", key, err)
	}
	ca, err := pki.NewCA(caCommonName)
	if err != nil {
		return nil, fmt.Errorf("make ignition CA: %w", err)
	}
	keyPEM, err := pki.KeyPEM(ca.Key)
	if err != nil {
		return nil, err
	}
	secret = &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: CASecretName},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{corev1.TLSCertKey: ca.CertPEM(), corev1.TLSPrivateKeyKey: keyPEM},
	}
	switch err := c.Create(ctx, secret); {
	case err == nil:
		return ca, nil
	case apierrors.IsAlreadyExists(err):
		// Another server of the namespace made it meanwhile: use theirs.
		if err := c.Get(ctx, key, secret); err != nil {
			return nil, fmt.Errorf("read ignition CA Secret %s: %w", key, err)
		}
		return caFromSecret(secret)
	default:
		return nil, fmt.Errorf("create ignition CA Secret %s: %w", key, err)
	}
}

// caFromSecret reads a CA kept as the lab keeps it: an ECDSA key.
func caFromSecret(secret *corev1.Secret) (*pki.CA, error) {
	pair, err := tls.X509KeyPair(secret.Data[corev1.TLSCertKey], secret.Data[corev1.TLSPrivateKeyKey])
	if err != nil {
		return nil, fmt.Errorf("read ignition CA Secret %s/%s: %w", secret.Namespace, secret.Name, err)
	}
	key, ok := pair.PrivateKey.(*ecdsa.PrivateKey)
	if !ok || !pair.Leaf.IsCA {
		return nil, fmt.Errorf("read ignition CA Secret %s/%s: %w", secret.Namespace, secret.Name,
			errors.New("not an ECDSA certificate authority"))
	}
	return &pki.CA{Cert: pair.Leaf, Key: key}, nil
}

// servingCert issues the serving certificate for loopback, the listen host
// and the advertised host (upstream: the address the ignition service is
// published at, pki.go L86-110).
func servingCert(ca *pki.CA, listenHost, advertiseHost string) (tls.Certificate, error) {
	hosts := []string{"127.0.0.1", "localhost"}
	for _, h := range []string{listenHost, advertiseHost} {
		if !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	kp, err := ca.ServingCert(servingCommonName, hosts...)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("issue ignition serving certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{kp.Cert.Raw}, PrivateKey: kp.Key, Leaf: kp.Cert}, nil
}
