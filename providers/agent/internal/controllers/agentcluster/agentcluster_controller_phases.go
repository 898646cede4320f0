package agentcluster

import (
	"context"
	"fmt"

	hivev1 "github.com/openshift/hive/apis/hive/v1"
	hiveagent "github.com/openshift/hive/apis/hive/v1/agent"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"sigs.k8s.io/cluster-api/util"

	capiagentv1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
	hiveextv1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

// +kubebuilder:rbac:groups=hive.openshift.io,resources=clusterdeployments,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=extensions.hive.openshift.io,resources=agentclusterinstalls,verbs=get;list;watch;create

// The ClusterDeployment's delete verb is not for deleting it: an API server
// with the OwnerReferencesPermissionEnforcement admission plugin (OpenShift
// has it) lets only those who may delete an object change its owner
// references, which adopting and orphaning do.

// reconcileNormal runs the phases of a live, unpaused AgentCluster
// (upstream L124-158).
func (r *Reconciler) reconcileNormal(ctx context.Context, ac *capiagentv1.AgentCluster) (ctrl.Result, error) {
	if !metav1.HasLabel(ac.ObjectMeta, capiagentv1.BackupLabel) {
		metav1.SetMetaDataLabel(&ac.ObjectMeta, capiagentv1.BackupLabel, capiagentv1.BackupLabelValue)
	}
	// Without a reference yet, this reconcile only finds or creates the
	// ClusterDeployment and records it; writing the reference brings the
	// next (L127-130).
	if ac.Status.ClusterDeploymentRef.Name == "" {
		return r.findOrCreateClusterDeployment(ctx, ac)
	}
	ref := ac.Status.ClusterDeploymentRef
	cd := &hivev1.ClusterDeployment{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, cd); err != nil {
		return ctrl.Result{}, fmt.Errorf("get ClusterDeployment %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	if err := r.ensureOwned(ctx, ac, cd); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.ensureAgentClusterInstall(ctx, ac, cd); err != nil {
		return ctrl.Result{}, err
	}
	if !ac.Spec.ControlPlaneEndpoint.IsValid() {
		ctrl.LoggerFrom(ctx).Info("Waiting for the control plane endpoint")
		return ctrl.Result{RequeueAfter: dependencyWait}, nil
	}
	// Upstream never sets it back to false (L149-158).
	ac.Status.Ready = true
	return ctrl.Result{}, nil
}

// findOrCreateClusterDeployment records the ClusterDeployment labelled
// agentClusterRef=<AgentCluster name>, or else creates one from the
// control plane (upstream L260-290, L342-363). The label holds the name
// only, and the search spans every namespace the client sees, as
// upstream's does (its cache is limited to one namespace by --namespace).
func (r *Reconciler) findOrCreateClusterDeployment(ctx context.Context, ac *capiagentv1.AgentCluster) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	list := &hivev1.ClusterDeploymentList{}
	if err := r.Client.List(ctx, list, client.MatchingLabels{capiagentv1.AgentClusterRefLabel: ac.Name}); err != nil {
		return ctrl.Result{}, fmt.Errorf("list ClusterDeployments labelled %s=%s: %w", capiagentv1.AgentClusterRefLabel, ac.Name, err)
	}
	if len(list.Items) > 0 {
		cd := &list.Items[0]
		log.Info("Found the ClusterDeployment labelled for this AgentCluster", "ClusterDeployment", klog.KObj(cd))
		setClusterDeploymentRef(ac, cd)
		return ctrl.Result{}, nil
	}

	cp, err := r.controlPlane(ctx, ac)
	if err != nil || cp == nil {
		return ctrl.Result{RequeueAfter: dependencyWait}, err
	}
	cd := newClusterDeployment(ac, cp)
	for _, name := range []string{cp.pullSecret, cp.kubeconfig, cp.kubeadminPassword} {
		if name != "" {
			r.labelSecret(ctx, ac.Namespace, name)
		}
	}
	log.Info("Creating the ClusterDeployment", "ClusterDeployment", klog.KObj(cd))
	if err := r.Client.Create(ctx, cd); err != nil {
		if !apierrors.IsAlreadyExists(err) {
			// Upstream records the reference before creating (L352-354), so
			// a failed create leaves it naming nothing; here it is recorded
			// only once the ClusterDeployment exists.
			return ctrl.Result{}, fmt.Errorf("create ClusterDeployment %s: %w", cd.Name, err)
		}
		// Upstream takes over one of that name (L355-356); ensureOwned
		// then labels and owns it.
		log.Info("A ClusterDeployment of that name exists: taking it", "ClusterDeployment", klog.KObj(cd))
	}
	setClusterDeploymentRef(ac, cd)
	return ctrl.Result{}, nil
}

func setClusterDeploymentRef(ac *capiagentv1.AgentCluster, cd *hivev1.ClusterDeployment) {
	ac.Status.ClusterDeploymentRef = capiagentv1.ClusterDeploymentReference{Namespace: cd.Namespace, Name: cd.Name}
}

// newClusterDeployment is the ClusterDeployment of an AgentCluster, named
// and placed as it, standing for an installed cluster whose install is the
// AgentClusterInstall of the same name (upstream L292-340). Its cluster and
// infrastructure IDs are the UID of the AgentCluster's first owner,
// whatever kind that is (L329-330).
func newClusterDeployment(ac *capiagentv1.AgentCluster, cp *controlPlane) *hivev1.ClusterDeployment {
	var password *corev1.LocalObjectReference
	if cp.kubeadminPassword != "" {
		password = &corev1.LocalObjectReference{Name: cp.kubeadminPassword}
	}
	id := string(ac.OwnerReferences[0].UID)
	return &hivev1.ClusterDeployment{
		ObjectMeta: metav1.ObjectMeta{
			Name:      ac.Name,
			Namespace: ac.Namespace,
			Labels:    map[string]string{capiagentv1.AgentClusterRefLabel: ac.Name},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: agentClusterGVK.GroupVersion().String(), Kind: agentClusterGVK.Kind, Name: ac.Name, UID: ac.UID,
			}},
		},
		Spec: hivev1.ClusterDeploymentSpec{
			Installed:   true,
			ClusterName: cp.clusterName,
			BaseDomain:  cp.baseDomain,
			Platform:    hivev1.Platform{AgentBareMetal: &hiveagent.BareMetalPlatform{}},
			ClusterInstallRef: &hivev1.ClusterInstallLocalReference{
				Group: hiveextv1.GroupName, Version: hiveextv1.Version, Kind: hiveextv1.AgentClusterInstallKind, Name: ac.Name,
			},
			PullSecretRef: &corev1.LocalObjectReference{Name: cp.pullSecret},
			ClusterMetadata: &hivev1.ClusterMetadata{
				ClusterID:                id,
				InfraID:                  id,
				AdminKubeconfigSecretRef: corev1.LocalObjectReference{Name: cp.kubeconfig},
				AdminPasswordSecretRef:   password,
			},
		},
	}
}

// ensureOwned makes the AgentCluster an owner of its ClusterDeployment and
// labels it agentClusterRef=<AgentCluster name>, unless both are so
// (upstream L365-386). Owned means an owner reference of the AgentCluster's
// group, kind and name, whatever its version and UID.
func (r *Reconciler) ensureOwned(ctx context.Context, ac *capiagentv1.AgentCluster, cd *hivev1.ClusterDeployment) error {
	if util.IsOwnedByObject(cd, ac, agentClusterGVK.GroupKind()) && cd.Labels[capiagentv1.AgentClusterRefLabel] == ac.Name {
		return nil
	}
	ctrl.LoggerFrom(ctx).Info("Owning and labelling the ClusterDeployment", "ClusterDeployment", klog.KObj(cd))
	base := cd.DeepCopy()
	if err := controllerutil.SetOwnerReference(ac, cd, r.Client.Scheme()); err != nil {
		return fmt.Errorf("own ClusterDeployment %s: %w", cd.Name, err)
	}
	metav1.SetMetaDataLabel(&cd.ObjectMeta, capiagentv1.AgentClusterRefLabel, ac.Name)
	if err := r.Client.Patch(ctx, cd, client.MergeFrom(base)); err != nil {
		return fmt.Errorf("own ClusterDeployment %s: %w", cd.Name, err)
	}
	return nil
}

// ensureAgentClusterInstall creates the ClusterDeployment's
// AgentClusterInstall (same namespace and name) when there is none, and
// otherwise leaves it as it is (upstream L388-404): in particular its
// ignition endpoint, which assisted-service takes at creation only
// (L422).
func (r *Reconciler) ensureAgentClusterInstall(ctx context.Context, ac *capiagentv1.AgentCluster, cd *hivev1.ClusterDeployment) error {
	aci := &hiveextv1.AgentClusterInstall{}
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(cd), aci)
	if !apierrors.IsNotFound(err) {
		if err != nil {
			return fmt.Errorf("get AgentClusterInstall %s: %w", cd.Name, err)
		}
		return nil
	}
	aci = newAgentClusterInstall(ac, cd)
	if ca := aci.Spec.IgnitionEndpoint; ca != nil && ca.CaCertificateReference != nil {
		r.labelSecret(ctx, ca.CaCertificateReference.Namespace, ca.CaCertificateReference.Name)
	}
	ctrl.LoggerFrom(ctx).Info("Creating the AgentClusterInstall", "AgentClusterInstall", klog.KObj(aci))
	if err := r.Client.Create(ctx, aci); err != nil {
		return fmt.Errorf("create AgentClusterInstall %s: %w", aci.Name, err)
	}
	return nil
}

// newAgentClusterInstall is the AgentClusterInstall of a ClusterDeployment
// (upstream L406-439): three control plane agents, user-managed
// networking, and the AgentCluster's ignition endpoint, if it has a URL:
// the URL without its path (assisted-service appends the machine config
// pool to it), and its CA reference as it is. No owner reference, as
// upstream sets none.
func newAgentClusterInstall(ac *capiagentv1.AgentCluster, cd *hivev1.ClusterDeployment) *hiveextv1.AgentClusterInstall {
	aci := &hiveextv1.AgentClusterInstall{
		ObjectMeta: metav1.ObjectMeta{Name: cd.Name, Namespace: cd.Namespace},
		Spec: hiveextv1.AgentClusterInstallSpec{
			ClusterDeploymentRef:  corev1.LocalObjectReference{Name: cd.Name},
			ProvisionRequirements: hiveextv1.ProvisionRequirements{ControlPlaneAgents: 3},
			Networking:            hiveextv1.Networking{UserManagedNetworking: ptr.To(true)},
		},
	}
	ep := ac.Spec.IgnitionEndpoint
	if ep == nil {
		return aci
	}
	u := ignitionURL(ep.Url)
	if u == "" {
		return aci
	}
	aci.Spec.IgnitionEndpoint = &hiveextv1.IgnitionEndpoint{URL: u}
	if ca := ep.CaCertificateReference; ca != nil {
		aci.Spec.IgnitionEndpoint.CaCertificateReference = &hiveextv1.CaCertificateReference{Namespace: ca.Namespace, Name: ca.Name}
	}
	return aci
}

// labelSecret gives a Secret the AgentCluster depends on the backup label,
// so that a hub backup includes it (upstream L449-472, common.go L40-53).
// Failures are logged only, as upstream's are.
func (r *Reconciler) labelSecret(ctx context.Context, namespace, name string) {
	log := ctrl.LoggerFrom(ctx).WithValues("Secret", klog.KRef(namespace, name))
	s := &corev1.Secret{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, s); err != nil {
		log.Info("Could not read a Secret to label it for backup", "error", err.Error())
		return
	}
	if metav1.HasLabel(s.ObjectMeta, capiagentv1.BackupLabel) {
		return
	}
	metav1.SetMetaDataLabel(&s.ObjectMeta, capiagentv1.BackupLabel, capiagentv1.BackupLabelValue)
	if err := r.Client.Update(ctx, s); err != nil {
		log.Info("Could not label a Secret for backup", "error", err.Error())
	}
}
