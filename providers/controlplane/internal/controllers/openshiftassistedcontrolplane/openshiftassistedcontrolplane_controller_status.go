package openshiftassistedcontrolplane

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"

	controlplanev1 "github.com/paritylab/paritylab/providers/controlplane/api/v1alpha3"
	"github.com/paritylab/paritylab/providers/controlplane/release"
	hiveextv1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

// ownedConditions are the condition types this controller writes.
var ownedConditions = []string{
	controlplanev1.ReadyCondition, controlplanev1.AvailableCondition, controlplanev1.KubeconfigAvailableCondition,
	controlplanev1.MachinesCreatedCondition, controlplanev1.MachinesReadyCondition,
	controlplanev1.KubernetesVersionAvailableCondition, controlplanev1.UpgradeAvailableCondition, controlplanev1.UpgradeCompletedCondition,
}

// updateStatus computes the contract's counters, the Kubernetes version
// and the summary conditions from what the reconcile saw.
func (r *Reconciler) updateStatus(ctx context.Context, s *scope) error {
	cp := s.cp
	if s.cluster == nil {
		return nil
	}
	cp.Status.Selector = selector(cp, s.cluster.Name).String()
	// Machines created or deleted in this reconcile are seen next time.
	if err := r.listMachines(ctx, s); err != nil {
		return err
	}
	var ready, available, upToDate int32
	for _, m := range s.machines {
		if conditions.IsTrue(m, clusterv1.MachineReadyCondition) {
			ready++
		}
		if conditions.IsTrue(m, clusterv1.MachineAvailableCondition) {
			available++
		}
		if conditions.IsTrue(m, clusterv1.MachineUpToDateCondition) {
			upToDate++
		}
	}
	cp.Status.Replicas = ptr.To(int32(len(s.machines)))
	cp.Status.ReadyReplicas, cp.Status.AvailableReplicas, cp.Status.UpToDateReplicas = ptr.To(ready), ptr.To(available), ptr.To(upToDate)
	setMachinesReady(cp, s.machines)
	setAvailable(cp, s.aci)
	if ptrTrue(cp.Status.Initialization.ControlPlaneInitialized) {
		r.setVersion(ctx, s)
	}
	if !cp.DeletionTimestamp.IsZero() {
		return nil
	}
	return setReady(cp)
}

// setVersion sets status.version to the Kubernetes version of the
// installed release (the oldest while an update runs).
func (r *Reconciler) setVersion(ctx context.Context, s *scope) {
	installed := s.cp.Status.DistributionVersion
	if installed == "" || installed == s.cp.Spec.DistributionVersion {
		if s.target.KubernetesVersion != "" {
			s.cp.Status.Version = s.target.KubernetesVersion
		}
		return
	}
	if info, err := r.resolve(ctx, s, releaseImage(s.cp, installed)); err == nil {
		s.cp.Status.Version = info.KubernetesVersion
	}
}

func set(cp *controlplanev1.OpenshiftAssistedControlPlane, t string, status metav1.ConditionStatus, reason, msg string) {
	conditions.Set(cp, metav1.Condition{Type: t, Status: status, Reason: reason, Message: msg})
}

func setWaitingForCluster(cp *controlplanev1.OpenshiftAssistedControlPlane) {
	set(cp, controlplanev1.AvailableCondition, metav1.ConditionFalse, controlplanev1.InstallingReason,
		"no Cluster owns this control plane yet: Cluster API sets the owner when a Cluster references it")
}

func setWaitingForEndpoint(cp *controlplanev1.OpenshiftAssistedControlPlane) {
	set(cp, controlplanev1.AvailableCondition, metav1.ConditionFalse, controlplanev1.WaitingForControlPlaneEndpointReason,
		"the Cluster has no spec.controlPlaneEndpoint yet: the infrastructure provider (or the user) sets it")
}

func setKubernetesVersionAvailable(cp *controlplanev1.OpenshiftAssistedControlPlane, info release.Info) {
	set(cp, controlplanev1.KubernetesVersionAvailableCondition, metav1.ConditionTrue, controlplanev1.KubernetesVersionAvailableReason,
		fmt.Sprintf("OpenShift %s ships Kubernetes %s (%s)", cp.Spec.DistributionVersion, info.KubernetesVersion, info.Image))
	cp.Status.ReleaseImage = info.Image
}

func setKubernetesVersionUnavailable(cp *controlplanev1.OpenshiftAssistedControlPlane, err error) {
	set(cp, controlplanev1.KubernetesVersionAvailableCondition, metav1.ConditionFalse, controlplanev1.ReleaseImageUnavailableReason,
		fmt.Sprintf("%v; the install uses the release by tag and the Kubernetes version stays unknown until the registry answers", err))
}

func setWaitingForKubeconfig(cp *controlplanev1.OpenshiftAssistedControlPlane, msg string) {
	set(cp, controlplanev1.KubeconfigAvailableCondition, metav1.ConditionFalse, controlplanev1.WaitingForAdminKubeconfigReason, msg)
}

func setKubeconfigAvailable(cp *controlplanev1.OpenshiftAssistedControlPlane, clusterName string) {
	set(cp, controlplanev1.KubeconfigAvailableCondition, metav1.ConditionTrue, controlplanev1.KubeconfigAvailableReason,
		fmt.Sprintf("Secret %s-kubeconfig holds the installed cluster's admin kubeconfig", clusterName))
	cp.Status.Initialization.ControlPlaneInitialized = ptr.To(true)
}

func setMachinesWaiting(cp *controlplanev1.OpenshiftAssistedControlPlane, reason, msg string) {
	set(cp, controlplanev1.MachinesCreatedCondition, metav1.ConditionFalse, reason, msg)
}

func setMachinesCreated(cp *controlplanev1.OpenshiftAssistedControlPlane, n int) {
	set(cp, controlplanev1.MachinesCreatedCondition, metav1.ConditionTrue, controlplanev1.MachinesCreatedReason,
		fmt.Sprintf("%d of %d control-plane Machines exist", n, n))
}

// setUpgradeAvailable says whether the release of the version asked for
// was read.
func setUpgradeAvailable(s *scope) {
	if s.target.Image == "" {
		set(s.cp, controlplanev1.UpgradeAvailableCondition, metav1.ConditionFalse, controlplanev1.UpgradeImageUnavailableReason, imageUnavailable(s))
		return
	}
	set(s.cp, controlplanev1.UpgradeAvailableCondition, metav1.ConditionTrue, controlplanev1.UpgradeAvailableReason,
		fmt.Sprintf("OpenShift %s is available: release image %s", s.cp.Spec.DistributionVersion, s.target.Image))
}

func setNoUpgradeRequested(cp *controlplanev1.OpenshiftAssistedControlPlane) {
	set(cp, controlplanev1.UpgradeAvailableCondition, metav1.ConditionTrue, controlplanev1.UpgradeAvailableReason,
		fmt.Sprintf("no update requested: the cluster runs %s", cp.Status.DistributionVersion))
}

func setUpgradeWaiting(cp *controlplanev1.OpenshiftAssistedControlPlane, reason, msg string) {
	set(cp, controlplanev1.UpgradeCompletedCondition, metav1.ConditionFalse, reason, msg)
}

func setUpgradeCompleted(cp *controlplanev1.OpenshiftAssistedControlPlane) {
	set(cp, controlplanev1.UpgradeCompletedCondition, metav1.ConditionTrue, controlplanev1.UpgradeCompletedReason,
		fmt.Sprintf("the cluster runs OpenShift %s", cp.Status.DistributionVersion))
}

func setDeleting(cp *controlplanev1.OpenshiftAssistedControlPlane) {
	set(cp, controlplanev1.ReadyCondition, metav1.ConditionFalse, controlplanev1.DeletingReason,
		"the control plane is being deleted: its Machines go first")
	set(cp, controlplanev1.AvailableCondition, metav1.ConditionFalse, controlplanev1.DeletingReason, "the control plane is being deleted")
}

// setMachinesReady aggregates the Machines' Ready conditions.
func setMachinesReady(cp *controlplanev1.OpenshiftAssistedControlPlane, machines []*clusterv1.Machine) {
	if len(machines) == 0 {
		set(cp, controlplanev1.MachinesReadyCondition, metav1.ConditionFalse, controlplanev1.NoMachinesReason, "no control-plane Machines exist")
		return
	}
	if err := conditions.SetAggregateCondition(machines, cp, clusterv1.MachineReadyCondition,
		conditions.TargetConditionType(controlplanev1.MachinesReadyCondition)); err != nil {
		set(cp, controlplanev1.MachinesReadyCondition, metav1.ConditionUnknown, "InternalError", err.Error())
	}
}

// setAvailable reads the install's state: the control plane serves from
// the time the install finalizes.
func setAvailable(cp *controlplanev1.OpenshiftAssistedControlPlane, aci *hiveextv1.AgentClusterInstall) {
	if !cp.DeletionTimestamp.IsZero() {
		return
	}
	if aci == nil {
		if !conditions.Has(cp, controlplanev1.AvailableCondition) {
			set(cp, controlplanev1.AvailableCondition, metav1.ConditionFalse, controlplanev1.InstallingReason, "the AgentClusterInstall does not exist yet")
		}
		return
	}
	state, info := aci.Status.DebugInfo.State, aci.Status.DebugInfo.StateInfo
	switch state {
	case hiveextv1.ClusterStateFinalizing, hiveextv1.ClusterStateInstalled, hiveextv1.ClusterStateAddingHosts:
		set(cp, controlplanev1.AvailableCondition, metav1.ConditionTrue, controlplanev1.AvailableReason,
			fmt.Sprintf("the cluster install is %s", state))
	case hiveextv1.ClusterStateError, hiveextv1.ClusterStateCancelled:
		set(cp, controlplanev1.AvailableCondition, metav1.ConditionFalse, controlplanev1.InstallFailedReason,
			fmt.Sprintf("the cluster install is %s: %s", state, info))
	default:
		if state == "" {
			state = "not reported yet"
		}
		msg := fmt.Sprintf("the cluster install is %s", state)
		if info != "" {
			msg += ": " + info
		}
		set(cp, controlplanev1.AvailableCondition, metav1.ConditionFalse, controlplanev1.InstallingReason, msg)
	}
}

// setReady summarises the other conditions.
func setReady(cp *controlplanev1.OpenshiftAssistedControlPlane) error {
	err := conditions.SetSummaryCondition(cp, cp, controlplanev1.ReadyCondition,
		conditions.ForConditionTypes{
			controlplanev1.AvailableCondition, controlplanev1.KubeconfigAvailableCondition, controlplanev1.MachinesCreatedCondition,
			controlplanev1.MachinesReadyCondition, controlplanev1.KubernetesVersionAvailableCondition,
			controlplanev1.UpgradeAvailableCondition, controlplanev1.UpgradeCompletedCondition,
		},
		conditions.IgnoreTypesIfMissing{
			controlplanev1.KubeconfigAvailableCondition, controlplanev1.MachinesCreatedCondition,
			controlplanev1.KubernetesVersionAvailableCondition, controlplanev1.UpgradeAvailableCondition,
			controlplanev1.UpgradeCompletedCondition,
		},
	)
	if err != nil {
		return fmt.Errorf("summarise conditions: %w", err)
	}
	return nil
}
