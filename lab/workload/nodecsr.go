package workload

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
)

// NodeClientCSRNode checks that a CSR asks for a kubelet's client
// certificate, system:node:<name> in system:nodes with client usages and
// no subject alternative names, and returns the node name. Who may ask is
// each approver's own rule.
func NodeClientCSRNode(csr *certificatesv1.CertificateSigningRequest) (string, error) {
	block, _ := pem.Decode(csr.Spec.Request)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return "", errors.New("request is not a PEM certificate request")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return "", fmt.Errorf("parse certificate request: %w", err)
	}
	name, ok := strings.CutPrefix(req.Subject.CommonName, "system:node:")
	if !ok || name == "" {
		return "", fmt.Errorf("subject %q is not system:node:<name>", req.Subject.CommonName)
	}
	if !slices.Equal(req.Subject.Organization, []string{"system:nodes"}) {
		return "", fmt.Errorf("organizations %v are not [system:nodes]", req.Subject.Organization)
	}
	if len(req.DNSNames)+len(req.IPAddresses)+len(req.EmailAddresses)+len(req.URIs) > 0 {
		return "", errors.New("a client certificate request carries subject alternative names")
	}
	allowed := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth}
	for _, u := range csr.Spec.Usages {
		if !slices.Contains(allowed, u) {
			return "", fmt.Errorf("usage %q is not one of a client certificate", u)
		}
	}
	if !slices.Contains(csr.Spec.Usages, certificatesv1.UsageClientAuth) {
		return "", errors.New("usages lack client auth")
	}
	return name, nil
}

// CSRDecided says whether a CSR was approved or denied.
func CSRDecided(csr *certificatesv1.CertificateSigningRequest) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == certificatesv1.CertificateApproved || c.Type == certificatesv1.CertificateDenied {
			return true
		}
	}
	return false
}
