package controlplane

import (
	"fmt"
	"os"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/paritylab/paritylab/lab/pki"
)

// kubeconfigFor renders a kubeconfig that authenticates with a client
// certificate issued by the control plane's CA.
func kubeconfigFor(contextName, server string, ca *pki.CA, user *pki.KeyPair) ([]byte, error) {
	keyPEM, err := user.KeyPEM()
	if err != nil {
		return nil, err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[contextName] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca.CertPEM()}
	cfg.AuthInfos[contextName] = &clientcmdapi.AuthInfo{ClientCertificateData: user.CertPEM(), ClientKeyData: keyPEM}
	cfg.Contexts[contextName] = &clientcmdapi.Context{Cluster: contextName, AuthInfo: contextName}
	cfg.CurrentContext = contextName
	raw, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("render kubeconfig %s: %w", contextName, err)
	}
	return raw, nil
}

// writeKubeconfig writes a kubeconfig 0600: it holds a private key.
func writeKubeconfig(path string, raw []byte) error {
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	return nil
}

func restConfigFrom(raw []byte) (*rest.Config, error) {
	cfg, err := clientcmd.RESTConfigFromKubeConfig(raw)
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	// The lab's controllers are many and busy; client-go's default of 5 QPS
	// would make them wait on themselves.
	cfg.QPS, cfg.Burst = 200, 400
	return cfg, nil
}

// ClientKubeconfig issues a client certificate for user and groups, signed by
// the control plane's CA, and renders it as a kubeconfig for server (the
// control plane's own Server() when empty). Kubernetes reads the user and
// groups from the certificate's common name and organizations, so this is
// how a lab component gets an identity such as system:node:<name>.
func (cp *ControlPlane) ClientKubeconfig(server, user string, groups ...string) ([]byte, error) {
	if server == "" {
		server = cp.server
	}
	cert, err := cp.creds.ca.ClientCert(user, groups...)
	if err != nil {
		return nil, err
	}
	return kubeconfigFor(cp.opts.Name, server, cp.creds.ca, cert)
}
