package assisted

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/google/uuid"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

// Labels assisted-service puts on the credential Secrets it writes for
// hive (createClusterCredentialSecret).
const (
	hiveCDNameLabel     = "hive.openshift.io/cluster-deployment-name"
	hiveSecretTypeLabel = "hive.openshift.io/secret-type"
)

// publishNoIngressKubeconfig is what assisted-service does while a cluster
// is installing or finalizing (createNoIngressKubeConfig): it writes the
// installer's no-ingress admin kubeconfig to <cd>-admin-kubeconfig and
// names it in the AgentClusterInstall's spec.clusterMetadata, once. That
// is when a Cluster API control-plane provider reading the ACI can
// initialize its control plane; hive copies nothing yet (it waits for the
// password Secret, see syncClusterDeployment).
//
// The no-ingress kubeconfig lacks the ingress router's CA; the lab's
// workload clusters have no ingress, so it holds what the full one holds.
func (s *Service) publishNoIngressKubeconfig(ctx context.Context, in *install) error {
	if in.aci.Spec.ClusterMetadata != nil {
		return nil
	}
	spoke := s.opts.Spokes.Get(in.key())
	if spoke == nil {
		return fmt.Errorf("workload cluster %s is gone", in.key())
	}
	name := in.cd.Name + "-admin-kubeconfig"
	if err := s.ensureCredentialSecret(ctx, in, name, "kubeconfig", map[string][]byte{"kubeconfig": spoke.AdminKubeconfig()}); err != nil {
		return err
	}
	return s.setClusterMetadata(ctx, in, &hivev1.ClusterMetadata{
		ClusterID: uuid.NewString(), InfraID: clusterIDOf(in),
		AdminKubeconfigSecretRef: corev1.LocalObjectReference{Name: name},
	})
}

// clusterIDOf is the cluster's id in the service, which upstream records
// as the infra ID; the lab keeps no cluster table, so the ACI's UID
// stands for it.
func clusterIDOf(in *install) string { return string(in.aci.UID) }

// updateClusterMetadata is what assisted-service does once the cluster is
// installed (handleClusterInstalled): the kubeadmin password Secret, the
// full admin kubeconfig in place of the no-ingress one, both Secrets named
// in the ACI's cluster metadata, the kubeconfig labelled for backup and
// for the service's watch.
func (s *Service) updateClusterMetadata(ctx context.Context, in *install) error {
	spoke := s.opts.Spokes.Get(in.key())
	if spoke == nil {
		return fmt.Errorf("workload cluster %s is gone", in.key())
	}
	password := in.cd.Name + "-admin-password"
	pw := make([]byte, 12)
	_, _ = rand.Read(pw)
	if err := s.ensureCredentialSecret(ctx, in, password, "kubeadmincreds", map[string][]byte{"username": []byte("kubeadmin"), "password": []byte(hex.EncodeToString(pw))}); err != nil {
		return err
	}
	kubeconfig := in.cd.Name + "-admin-kubeconfig"
	if err := s.replaceKubeconfig(ctx, in, kubeconfig, spoke.AdminKubeconfig()); err != nil {
		return err
	}
	meta := &hivev1.ClusterMetadata{ClusterID: uuid.NewString(), InfraID: clusterIDOf(in)}
	if in.aci.Spec.ClusterMetadata != nil {
		meta.ClusterID = in.aci.Spec.ClusterMetadata.ClusterID
	}
	meta.AdminKubeconfigSecretRef = corev1.LocalObjectReference{Name: kubeconfig}
	meta.AdminPasswordSecretRef = &corev1.LocalObjectReference{Name: password}
	return s.setClusterMetadata(ctx, in, meta)
}

// replaceKubeconfig writes the full admin kubeconfig over the no-ingress
// one, adding the backup and watch labels (ensureSecretIsLabelled).
func (s *Service) replaceKubeconfig(ctx context.Context, in *install, name string, kubeconfig []byte) error {
	secret := &corev1.Secret{}
	err := s.apiReader.Get(ctx, client.ObjectKey{Namespace: in.cd.Namespace, Name: name}, secret)
	if apierrors.IsNotFound(err) {
		return s.ensureCredentialSecret(ctx, in, name, "kubeconfig", map[string][]byte{"kubeconfig": kubeconfig})
	}
	if err != nil {
		return fmt.Errorf("read admin kubeconfig %s: %w", name, err)
	}
	metav1.SetMetaDataLabel(&secret.ObjectMeta, backupLabel, "true")
	metav1.SetMetaDataLabel(&secret.ObjectMeta, agentv1beta1.WatchResourceLabel, "true")
	secret.Data = map[string][]byte{"kubeconfig": kubeconfig}
	if err := s.client.Update(ctx, secret); err != nil {
		return fmt.Errorf("update admin kubeconfig %s: %w", name, err)
	}
	return nil
}

// setClusterMetadata writes the ACI's spec.clusterMetadata, keeping the
// status this reconcile computed (the spec update returns the stored one).
func (s *Service) setClusterMetadata(ctx context.Context, in *install, meta *hivev1.ClusterMetadata) error {
	patch := client.MergeFrom(in.aci.DeepCopy())
	in.aci.Spec.ClusterMetadata = meta
	status := in.aci.Status.DeepCopy()
	if err := s.client.Patch(ctx, in.aci, patch); err != nil {
		return fmt.Errorf("record cluster metadata on %s: %w", in.aci.Name, err)
	}
	in.aci.Status = *status
	return nil
}

// ensureCredentialSecret creates a credential Secret owned by the
// ClusterDeployment, with hive's labels, unless it exists.
func (s *Service) ensureCredentialSecret(ctx context.Context, in *install, name, secretType string, data map[string][]byte) error {
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: in.cd.Namespace,
			Labels: map[string]string{hiveCDNameLabel: in.cd.Name, hiveSecretTypeLabel: secretType}},
		Data: data, Type: corev1.SecretTypeOpaque,
	}
	if err := controllerutil.SetOwnerReference(in.cd, secret, s.client.Scheme(), controllerutil.WithBlockOwnerDeletion(true)); err != nil {
		return err
	}
	if err := s.client.Create(ctx, secret); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create secret %s: %w", name, err)
	}
	return nil
}

// syncClusterDeployment is hive's side of the ClusterInstall contract
// (reconcileExistingInstallingClusterInstall), which the lab, running no
// hive, does for it: the ClusterDeployment gets the ACI's cluster
// metadata only once it is complete (infra and cluster IDs, kubeconfig
// and password Secrets), and spec.installed once the install stopped
// having completed.
//
// Left out: the ClusterInstall* and Provision* conditions and timestamps
// hive copies into the ClusterDeployment's status.
func (s *Service) syncClusterDeployment(ctx context.Context, in *install) error {
	cd, aci := in.cd, in.aci
	before := cd.DeepCopy()
	if met := aci.Spec.ClusterMetadata; met != nil && met.InfraID != "" && met.ClusterID != "" &&
		met.AdminKubeconfigSecretRef.Name != "" && met.AdminPasswordSecretRef != nil && met.AdminPasswordSecretRef.Name != "" {
		cd.Spec.ClusterMetadata = met.DeepCopy()
	}
	if aciConditionTrue(aci, hivev1.ClusterInstallStopped) && aciConditionTrue(aci, hivev1.ClusterInstallCompleted) {
		cd.Spec.Installed = true
	}
	if equality.Semantic.DeepEqual(before.Spec, cd.Spec) {
		return nil
	}
	if err := s.client.Patch(ctx, cd, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("sync ClusterDeployment %s with its install: %w", cd.Name, err)
	}
	return nil
}
