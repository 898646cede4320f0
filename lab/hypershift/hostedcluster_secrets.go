package hypershift

import (
	"context"
	"fmt"
	"maps"

	hypershiftv1beta1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// Names of the Secrets a hosted cluster's control plane keeps in its
// namespace (HyperShift's manifests).
const (
	// PullSecretName is the copy of the HostedCluster's pull secret.
	PullSecretName = "pull-secret"
	// SSHKeySecretName is the copy of its SSH key.
	SSHKeySecretName = "ssh-key"
	// AdminKubeconfigSecretName holds the hosted cluster's admin
	// kubeconfig at KubeconfigKey: what the HostedControlPlane's
	// status.kubeConfig names, and what the agent provider reads to
	// reach the hosted cluster.
	AdminKubeconfigSecretName = "admin-kubeconfig"
	// KubeconfigKey is the key of a kubeconfig in HyperShift's Secrets.
	KubeconfigKey = "kubeconfig"
	// capiKubeconfigKey is the key of CAPI's <cluster>-kubeconfig Secret.
	capiKubeconfigKey = "value"
	// capiClusterNameLabel names the CAPI Cluster a Secret is for.
	capiClusterNameLabel = "cluster.x-k8s.io/cluster-name"
)

// HostedAdminKubeconfigName is the copy of the admin kubeconfig in the
// HostedCluster's namespace, which hc.status.kubeconfig names.
func HostedAdminKubeconfigName(hc *hypershiftv1beta1.HostedCluster) string {
	return hc.Name + "-admin-kubeconfig"
}

// copySecrets copies the HostedCluster's pull secret, and its SSH key if
// it names one, into the control-plane namespace, where the
// HostedControlPlane names them.
func (o *Operator) copySecrets(ctx context.Context, hc *hypershiftv1beta1.HostedCluster) error {
	if err := o.copySecret(ctx, hc, hc.Spec.PullSecret.Name, PullSecretName, "spec.pullSecret"); err != nil {
		return err
	}
	if hc.Spec.SSHKey.Name == "" {
		return nil
	}
	return o.copySecret(ctx, hc, hc.Spec.SSHKey.Name, SSHKeySecretName, "spec.sshKey")
}

func (o *Operator) copySecret(ctx context.Context, hc *hypershiftv1beta1.HostedCluster, from, to, field string) error {
	src := &corev1.Secret{}
	if err := o.apiReader.Get(ctx, client.ObjectKey{Namespace: hc.Namespace, Name: from}, src); err != nil {
		return fmt.Errorf("read the Secret %s/%s that %s names: %w", hc.Namespace, from, field, err)
	}
	dst := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ControlPlaneNamespace(hc), Name: to}}
	return o.applySecret(ctx, hc, dst, func() {
		dst.Type = src.Type
		dst.Data = maps.Clone(src.Data)
	})
}

// writeKubeconfigs writes the hosted cluster's admin kubeconfig where
// HyperShift keeps it: admin-kubeconfig in the control-plane namespace,
// CAPI's <infraID>-kubeconfig beside it, and <hc>-admin-kubeconfig in the
// HostedCluster's namespace, labelled as the HostedCluster and owned by
// it. They point at the API server's host address: the hub's processes
// and the lab's users read them, guests never do.
func (o *Operator) writeKubeconfigs(ctx context.Context, hc *hypershiftv1beta1.HostedCluster, rt *hostedRuntime) error {
	kubeconfig, err := rt.cluster.KubeconfigFor("")
	if err != nil {
		return err
	}
	cpns := ControlPlaneNamespace(hc)
	admin := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: cpns, Name: AdminKubeconfigSecretName}}
	if err := o.applySecret(ctx, hc, admin, func() { admin.Data = map[string][]byte{KubeconfigKey: kubeconfig} }); err != nil {
		return err
	}
	capi := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: cpns, Name: hc.Spec.InfraID + "-kubeconfig"}}
	err = o.applySecret(ctx, hc, capi, func() {
		capi.Labels = map[string]string{capiClusterNameLabel: hc.Spec.InfraID}
		capi.Data = map[string][]byte{capiKubeconfigKey: kubeconfig}
	})
	if err != nil {
		return err
	}
	copied := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: hc.Namespace, Name: HostedAdminKubeconfigName(hc)}}
	return o.applySecret(ctx, hc, copied, func() {
		copied.Type = corev1.SecretTypeOpaque
		copied.Labels = maps.Clone(hc.Labels)
		copied.Data = map[string][]byte{KubeconfigKey: kubeconfig}
		_ = controllerutil.SetControllerReference(hc, copied, o.scheme)
	})
}

// applySecret creates or updates a Secret as mutate sets it, annotated
// for the HostedCluster.
func (o *Operator) applySecret(ctx context.Context, hc *hypershiftv1beta1.HostedCluster, s *corev1.Secret, mutate func()) error {
	_, err := controllerutil.CreateOrUpdate(ctx, o.client, s, func() error {
		mutate()
		annotate(s, hc)
		return nil
	})
	if err != nil {
		return fmt.Errorf("write Secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	return nil
}
