package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"syscall"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/paritylab/paritylab/lab/assisted/agentapi"
)

const csrPath = "/apis/certificates.k8s.io/v1/certificatesigningrequests"

// bootstrapNode is a kubelet's TLS bootstrap: with the shared bootstrap
// credential of the user data it asks for a client certificate of
// system:node:<host name> and waits until the cluster approves and signs
// it. The identity is kept at the end of the disk, as a kubelet keeps its
// certificate, and reused on the next boot from the same user data.
//
// digest identifies the bootstrap config (the user data, or the pointer
// Ignition it was fetched through); meta is the config drive's metadata,
// which may name the host.
func bootstrapNode(ctx context.Context, sys *system, disk string, boot agentapi.NodeConfig, digest string, meta map[string]string) (agentapi.NodeConfig, error) {
	if kept, err := readConfigArea(disk); err == nil && !kept.Bootstrap && kept.BootstrappedFrom == digest {
		log.Printf("node %s: reusing the identity kept on %s", kept.Name, disk)
		return kept, nil
	}
	name := boot.Name
	if name == "" {
		name = hostName(meta)
	}
	if err := syscall.Sethostname([]byte(name)); err != nil {
		log.Printf("set host name %s: %v", name, err)
	}
	certPEM, keyPEM, err := requestIdentity(ctx, sys, boot, name)
	if err != nil {
		return boot, err
	}
	cfg := boot
	cfg.Name, cfg.Bootstrap, cfg.BootstrappedFrom = name, false, digest
	cfg.ClientCert, cfg.ClientKey = string(certPEM), string(keyPEM)
	if err := writeConfigArea(disk, cfg); err != nil {
		// The node still joins; it only bootstraps again after a reboot.
		log.Printf("keep node identity on %s: %v", disk, err)
	}
	return cfg, nil
}

// hostName is the config drive's local-hostname, else the kernel's.
func hostName(meta map[string]string) string {
	if n := meta[agentapi.ConfigDriveHostnameKey]; n != "" {
		return n
	}
	n, _ := os.Hostname()
	return n
}

// requestIdentity creates the CSR and waits for its certificate.
func requestIdentity(ctx context.Context, sys *system, boot agentapi.NodeConfig, name string) (certPEM, keyPEM []byte, err error) {
	n, err := newNode(sys, boot)
	if err != nil {
		return nil, nil, fmt.Errorf("bootstrap credential: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generate node key: %w", err)
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("encode node key: %w", err)
	}
	keyPEM = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
	csrName, err := n.createCSR(ctx, key, name)
	if err != nil {
		return nil, nil, err
	}
	log.Printf("node %s: waiting for CertificateSigningRequest %s to be approved and signed", name, csrName)
	certPEM, err = n.waitForCertificate(ctx, csrName)
	return certPEM, keyPEM, err
}

func (n *node) createCSR(ctx context.Context, key *ecdsa.PrivateKey, name string) (string, error) {
	tmpl := &x509.CertificateRequest{Subject: pkix.Name{CommonName: "system:node:" + name, Organization: []string{"system:nodes"}}}
	der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
	if err != nil {
		return "", fmt.Errorf("create certificate request: %w", err)
	}
	csr := &certificatesv1.CertificateSigningRequest{
		TypeMeta:   metav1.TypeMeta{APIVersion: "certificates.k8s.io/v1", Kind: "CertificateSigningRequest"},
		ObjectMeta: metav1.ObjectMeta{GenerateName: "csr-"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: agentapi.KubeletClientSigner,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
		},
	}
	var created certificatesv1.CertificateSigningRequest
	for {
		_, err := n.call(ctx, http.MethodPost, csrPath, "application/json", csr, &created)
		if err == nil {
			return created.Name, nil
		}
		log.Printf("create CertificateSigningRequest: %v", err)
		if !sleep(ctx, 3*time.Second) {
			return "", ctx.Err()
		}
	}
}

// waitForCertificate polls the CSR until it carries a certificate; a
// denied or failed request ends the wait with an error.
func (n *node) waitForCertificate(ctx context.Context, name string) ([]byte, error) {
	for {
		var csr certificatesv1.CertificateSigningRequest
		if _, err := n.call(ctx, http.MethodGet, csrPath+"/"+name, "", nil, &csr); err != nil {
			log.Printf("read CertificateSigningRequest %s: %v", name, err)
		}
		for _, c := range csr.Status.Conditions {
			if (c.Type == certificatesv1.CertificateDenied || c.Type == certificatesv1.CertificateFailed) && c.Status == corev1.ConditionTrue {
				return nil, fmt.Errorf("CertificateSigningRequest %s %s: %s", name, c.Type, c.Message)
			}
		}
		if len(csr.Status.Certificate) > 0 {
			return csr.Status.Certificate, nil
		}
		if !sleep(ctx, 3*time.Second) {
			return nil, errors.Join(ctx.Err(), fmt.Errorf("CertificateSigningRequest %s not signed", name))
		}
	}
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
