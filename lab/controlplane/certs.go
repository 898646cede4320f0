package controlplane

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/paritylab/paritylab/lab/pki"
	"github.com/paritylab/paritylab/lab/ports"
)

// files are the paths of the control plane's certificates and keys.
type files struct {
	dir string
}

func (f files) path(name string) string { return filepath.Join(f.dir, name) }
func (f files) caCert() string          { return f.path("ca.crt") }
func (f files) caKey() string           { return f.path("ca.key") }
func (f files) servingCert() string     { return f.path("apiserver.crt") }
func (f files) servingKey() string      { return f.path("apiserver.key") }
func (f files) saKey() string           { return f.path("sa.key") }
func (f files) saPub() string           { return f.path("sa.pub") }

// credentials are the in-memory credentials a running control plane hands out.
type credentials struct {
	ca    *pki.CA
	admin *pki.KeyPair
}

// writeCAKey writes the CA's private key (0600) for the controller
// manager's CSR signer; without CSRSigning the key never leaves memory.
func writeCAKey(f files, ca *pki.CA) error {
	keyPEM, err := pki.KeyPEM(ca.Key)
	if err != nil {
		return err
	}
	if err := os.WriteFile(f.caKey(), keyPEM, 0o600); err != nil {
		return fmt.Errorf("write CA key: %w", err)
	}
	return nil
}

// writePKI makes the CA, the API server serving certificate, the admin client
// certificate and the service-account signing key.
func writePKI(f files, name string, extraSANs []string) (*credentials, error) {
	if err := os.MkdirAll(f.dir, 0o700); err != nil {
		return nil, fmt.Errorf("create pki dir: %w", err)
	}
	ca, err := pki.NewCA("paritylab-" + name + "-ca")
	if err != nil {
		return nil, err
	}
	hosts := append([]string{ports.Loopback, "localhost", "kubernetes", "kubernetes.default",
		"kubernetes.default.svc", "10.0.0.1"}, extraSANs...)
	serving, err := ca.ServingCert("kube-apiserver", hosts...)
	if err != nil {
		return nil, err
	}
	admin, err := ca.ClientCert("paritylab-admin", "system:masters")
	if err != nil {
		return nil, err
	}
	if err := writeSAKey(f); err != nil {
		return nil, err
	}
	if err := os.WriteFile(f.caCert(), ca.CertPEM(), 0o644); err != nil {
		return nil, fmt.Errorf("write CA: %w", err)
	}
	if err := serving.WriteFiles(f.servingCert(), f.servingKey()); err != nil {
		return nil, fmt.Errorf("write serving certificate: %w", err)
	}
	return &credentials{ca: ca, admin: admin}, nil
}

func writeSAKey(f files) error {
	key, err := pki.NewKey()
	if err != nil {
		return err
	}
	keyPEM, err := pki.KeyPEM(key)
	if err != nil {
		return err
	}
	pubPEM, err := pki.PublicKeyPEM(key)
	if err != nil {
		return err
	}
	if err := os.WriteFile(f.saKey(), keyPEM, 0o600); err != nil {
		return fmt.Errorf("write service-account key: %w", err)
	}
	if err := os.WriteFile(f.saPub(), pubPEM, 0o644); err != nil {
		return fmt.Errorf("write service-account public key: %w", err)
	}
	return nil
}
