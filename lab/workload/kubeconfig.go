package workload

import (
	"errors"
	"fmt"

	"k8s.io/client-go/tools/clientcmd"
)

// KubeconfigFor returns the admin kubeconfig pointed at server: Server()
// (also when empty) for host processes, GuestServer() for lab VMs. The
// serving certificate names both addresses.
func (c *Cluster) KubeconfigFor(server string) ([]byte, error) {
	if server == "" {
		server = c.Server()
	}
	cfg, err := clientcmd.Load(c.cp.Kubeconfig())
	if err != nil {
		return nil, fmt.Errorf("load admin kubeconfig: %w", err)
	}
	for _, cl := range cfg.Clusters {
		cl.Server = server
	}
	raw, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("render admin kubeconfig for %s: %w", server, err)
	}
	return raw, nil
}

// IssueNodeKubeconfig issues the identity of a kubelet for node nodeName
// (client certificate CN=system:node:<nodeName>, O=system:nodes, signed by
// the cluster CA) as a kubeconfig pointed at server (Server() when empty).
// With it a lab node agent may register that Node, update its status and
// renew its Lease in kube-node-lease, and nothing of other nodes.
func (c *Cluster) IssueNodeKubeconfig(nodeName, server string) ([]byte, error) {
	if nodeName == "" {
		return nil, errors.New("issue node kubeconfig: node name is empty")
	}
	raw, err := c.cp.ClientKubeconfig(server, "system:node:"+nodeName, "system:nodes")
	if err != nil {
		return nil, fmt.Errorf("issue kubeconfig for node %s: %w", nodeName, err)
	}
	return raw, nil
}

// BootstrapUser is the identity of the shared credential workers bootstrap
// with (IssueBootstrapKubeconfig): in group system:bootstrappers, which may
// create CertificateSigningRequests and nothing else once the cluster
// binds it to system:node-bootstrapper.
const BootstrapUser = "system:bootstrap:machine-api-workers"

// BootstrapGroup is the group of bootstrapping kubelets.
const BootstrapGroup = "system:bootstrappers"

// IssueBootstrapKubeconfig issues the shared bootstrap credential of
// workers as a kubeconfig pointed at server (Server() when empty): the
// lab's stand-in for the bootstrap kubeconfig in a worker's Ignition, with
// which a kubelet requests its own client certificate.
func (c *Cluster) IssueBootstrapKubeconfig(server string) ([]byte, error) {
	raw, err := c.cp.ClientKubeconfig(server, BootstrapUser, BootstrapGroup)
	if err != nil {
		return nil, fmt.Errorf("issue bootstrap kubeconfig: %w", err)
	}
	return raw, nil
}

// NodeBootstrapperUser is the identity of the bootstrap kubeconfig an
// OpenShift node's Ignition carries (the machine-config operator's
// node-bootstrapper service account; HyperShift issues it as the
// machine-bootstrap client certificate, pki/kas.go), and
// NodeBootstrapperGroups its groups.
const NodeBootstrapperUser = "system:serviceaccount:openshift-machine-config-operator:node-bootstrapper"

var NodeBootstrapperGroups = []string{"system:serviceaccounts:openshift-machine-config-operator", "system:serviceaccounts"}

// IssueNodeBootstrapperKubeconfig issues the node-bootstrapper credential
// as a kubeconfig pointed at server (Server() when empty). It may create
// CSRs once the cluster binds it to system:node-bootstrapper, which the
// cluster does not do by itself.
func (c *Cluster) IssueNodeBootstrapperKubeconfig(server string) ([]byte, error) {
	raw, err := c.cp.ClientKubeconfig(server, NodeBootstrapperUser, NodeBootstrapperGroups...)
	if err != nil {
		return nil, fmt.Errorf("issue node-bootstrapper kubeconfig: %w", err)
	}
	return raw, nil
}
