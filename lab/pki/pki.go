package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"time"
)

// validity of every certificate a lab makes: long enough for any run, short
// enough that a leaked lab key is worthless soon.
const validity = 7 * 24 * time.Hour

// CA is a certificate authority that signs the certificates of one lab run.
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
}

// KeyPair is a certificate and its private key.
type KeyPair struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
}

// NewCA makes a self-signed CA.
func NewCA(commonName string) (*CA, error) {
	key, err := newKey()
	if err != nil {
		return nil, err
	}
	tmpl, err := template(commonName)
	if err != nil {
		return nil, err
	}
	tmpl.IsCA = true
	tmpl.BasicConstraintsValid = true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign
	cert, err := sign(tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("sign CA %s: %w", commonName, err)
	}
	return &CA{Cert: cert, Key: key}, nil
}

// ServingCert makes a TLS server certificate for the given DNS names and IPs.
func (ca *CA) ServingCert(commonName string, hosts ...string) (*KeyPair, error) {
	tmpl, err := template(commonName)
	if err != nil {
		return nil, err
	}
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	return ca.issue(tmpl)
}

// ClientCert makes a TLS client certificate; Kubernetes reads the common
// name as the user and the organizations as the groups.
func (ca *CA) ClientCert(user string, groups ...string) (*KeyPair, error) {
	tmpl, err := template(user)
	if err != nil {
		return nil, err
	}
	tmpl.Subject.Organization = groups
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	return ca.issue(tmpl)
}

func (ca *CA) issue(tmpl *x509.Certificate) (*KeyPair, error) {
	key, err := newKey()
	if err != nil {
		return nil, err
	}
	cert, err := sign(tmpl, ca.Cert, key.Public(), ca.Key)
	if err != nil {
		return nil, fmt.Errorf("sign certificate %s: %w", tmpl.Subject.CommonName, err)
	}
	return &KeyPair{Cert: cert, Key: key}, nil
}

func newKey() (*ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate key: %w", err)
	}
	return key, nil
}

// NewKey makes a bare private key, e.g. for signing service-account tokens.
func NewKey() (*ecdsa.PrivateKey, error) { return newKey() }

func template(commonName string) (*x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("generate serial: %w", err)
	}
	now := time.Now()
	return &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: commonName},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(validity),
	}, nil
}

func sign(tmpl, parent *x509.Certificate, pub crypto.PublicKey, signer crypto.Signer) (*x509.Certificate, error) {
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
	if err != nil {
		return nil, err
	}
	return x509.ParseCertificate(der)
}

// CertPEM encodes a certificate.
func CertPEM(cert *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})
}

// KeyPEM encodes a private key (PKCS#8).
func KeyPEM(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("marshal private key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// PublicKeyPEM encodes a public key (PKIX).
func PublicKeyPEM(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return nil, fmt.Errorf("marshal public key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}

// CertPEM returns the certificate of the pair, PEM-encoded.
func (kp *KeyPair) CertPEM() []byte { return CertPEM(kp.Cert) }

// KeyPEM returns the private key of the pair, PEM-encoded.
func (kp *KeyPair) KeyPEM() ([]byte, error) { return KeyPEM(kp.Key) }

// CertPEM returns the CA certificate, PEM-encoded.
func (ca *CA) CertPEM() []byte { return CertPEM(ca.Cert) }

// WriteFiles writes the pair as <certPath> (0644) and <keyPath> (0600).
func (kp *KeyPair) WriteFiles(certPath, keyPath string) error {
	keyPEM, err := kp.KeyPEM()
	if err != nil {
		return err
	}
	return errors.Join(
		os.WriteFile(certPath, kp.CertPEM(), 0o644),
		os.WriteFile(keyPath, keyPEM, 0o600),
	)
}
