package nodeproviderid

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	capiagentv1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
)

// Where the kubeconfig of a hosted cluster is: the Secret HyperShift
// writes into the control plane namespace, under this key (upstream
// remote_client.go L45-60).
const (
	KubeconfigSecretName = "admin-kubeconfig"
	KubeconfigSecretKey  = "kubeconfig"
)

// RemoteClients reaches the clusters whose Nodes the AgentMachines back.
type RemoteClients interface {
	// Client returns a client of the cluster whose Machines live in
	// namespace (a HyperShift control plane namespace).
	Client(ctx context.Context, namespace string) (client.Client, error)
}

// secretClients builds a client from the admin kubeconfig Secret of the
// namespace, anew on each call, as upstream does (remote_client.go
// L44-78).
type secretClients struct {
	local  client.Client
	scheme *runtime.Scheme
}

var _ RemoteClients = (*secretClients)(nil)

// NewRemoteClients returns the RemoteClients that read the Secret
// admin-kubeconfig, key kubeconfig, of the namespace through local, and
// give it the backup label (upstream remote_client.go L61-62), so that a
// hub backup includes it. The clients know client-go's types only: Nodes
// are all this package reads.
func NewRemoteClients(local client.Client) RemoteClients {
	return &secretClients{local: local, scheme: clientgoscheme.Scheme}
}

func (s *secretClients) Client(ctx context.Context, namespace string) (client.Client, error) {
	secret := &corev1.Secret{}
	key := client.ObjectKey{Namespace: namespace, Name: KubeconfigSecretName}
	if err := s.local.Get(ctx, key, secret); err != nil {
		return nil, fmt.Errorf("get kubeconfig Secret %s: %w", key, err)
	}
	kubeconfig := secret.Data[KubeconfigSecretKey]
	if len(kubeconfig) == 0 {
		return nil, fmt.Errorf("kubeconfig Secret %s has no key %s", key, KubeconfigSecretKey)
	}
	s.label(ctx, secret)
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("read kubeconfig Secret %s: %w", key, err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s.scheme})
	if err != nil {
		return nil, fmt.Errorf("create client from kubeconfig Secret %s: %w", key, err)
	}
	return c, nil
}

// label gives the Secret the backup label; a failure is logged only, as
// upstream ignores it.
func (s *secretClients) label(ctx context.Context, secret *corev1.Secret) {
	if metav1.HasLabel(secret.ObjectMeta, capiagentv1.BackupLabel) {
		return
	}
	metav1.SetMetaDataLabel(&secret.ObjectMeta, capiagentv1.BackupLabel, capiagentv1.BackupLabelValue)
	if err := s.local.Update(ctx, secret); err != nil {
		ctrl.LoggerFrom(ctx).Info("Could not label a Secret for backup", "Secret", klog.KObj(secret), "error", err.Error())
	}
}
