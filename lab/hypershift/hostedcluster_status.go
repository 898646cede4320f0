package hypershift

import (
	"context"
	"fmt"

	configv1 "github.com/openshift/api/config/v1"
	hypershiftv1beta1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// HyperShift's reasons and messages for the conditions the lab sets
// (hostedcluster_controller.go; the first reason is misspelt upstream).
const (
	reconciliationSucceededReason = "ReconciliatonSucceeded"
	progressingReason             = "Progressing"
	availableMessage              = "The hosted control plane is available"
	atVersionMessage              = "HostedCluster is at expected version"
)

// copiedConditions are the HostedControlPlane's conditions HyperShift
// copies onto the HostedCluster as they are.
var copiedConditions = []hypershiftv1beta1.ConditionType{
	hypershiftv1beta1.InfrastructureReady, hypershiftv1beta1.KubeAPIServerAvailable, hypershiftv1beta1.EtcdAvailable,
}

// writeStatus writes the HostedCluster's status from its control plane:
// the kubeconfig and ignition endpoint, the control plane's endpoint and
// version, and the conditions.
func (o *Operator) writeStatus(ctx context.Context, hc *hypershiftv1beta1.HostedCluster, hcp *hypershiftv1beta1.HostedControlPlane, rt *hostedRuntime) error {
	before := hc.DeepCopy()
	st := &hc.Status
	st.KubeConfig = &corev1.LocalObjectReference{Name: HostedAdminKubeconfigName(hc)}
	st.IgnitionEndpoint = rt.ignition.Endpoint()
	st.ControlPlaneEndpoint = hcp.Status.ControlPlaneEndpoint
	st.Version = clusterVersionStatus(hc, hcp)
	for _, c := range hostedClusterConditions(hcp, st.Version) {
		c.ObservedGeneration = hc.Generation
		meta.SetStatusCondition(&st.Conditions, c)
	}
	if equality.Semantic.DeepEqual(before.Status, hc.Status) {
		return nil
	}
	if err := o.client.Status().Patch(ctx, hc, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("write the status of HostedCluster %s: %w", hc.Name, err)
	}
	return nil
}

// clusterVersionStatus is the HostedCluster's status.version
// (computeClusterVersionStatus): the control plane's, once it reports
// one; before, the desired release with a Partial history entry.
func clusterVersionStatus(hc *hypershiftv1beta1.HostedCluster, hcp *hypershiftv1beta1.HostedControlPlane) *hypershiftv1beta1.ClusterVersionStatus {
	var vs *hypershiftv1beta1.ClusterVersionStatus
	switch {
	case hcp.Status.VersionStatus != nil:
		vs = hcp.Status.VersionStatus.DeepCopy()
	case hc.Status.Version != nil:
		vs = hc.Status.Version
	default:
		vs = &hypershiftv1beta1.ClusterVersionStatus{
			Desired: configv1.Release{Image: hc.Spec.Release.Image},
			History: []configv1.UpdateHistory{{State: configv1.PartialUpdate, Image: hc.Spec.Release.Image, StartedTime: metav1.Now()}},
		}
	}
	// Required, if empty: a merge patch must not send null.
	if vs.AvailableUpdates == nil {
		vs.AvailableUpdates = []configv1.Release{}
	}
	return vs
}

// hostedClusterConditions are the conditions the lab's control plane
// determines: Available from the HostedControlPlane's, Progressing from
// the version history, the copied ones, and those of a configuration and
// reconcile that succeeded and an ignition server that runs.
func hostedClusterConditions(hcp *hypershiftv1beta1.HostedControlPlane, vs *hypershiftv1beta1.ClusterVersionStatus) []metav1.Condition {
	available := metav1.Condition{Type: string(hypershiftv1beta1.HostedClusterAvailable), Status: metav1.ConditionFalse,
		Reason: hypershiftv1beta1.WaitingForAvailableReason}
	if meta.IsStatusConditionTrue(hcp.Status.Conditions, string(hypershiftv1beta1.HostedControlPlaneAvailable)) {
		available.Status, available.Reason, available.Message = metav1.ConditionTrue, hypershiftv1beta1.AsExpectedReason, availableMessage
	}
	progressing := metav1.Condition{Type: string(hypershiftv1beta1.HostedClusterProgressing), Status: metav1.ConditionTrue,
		Reason: progressingReason, Message: "HostedCluster is deploying, upgrading, or reconfiguring"}
	if len(vs.History) > 0 && vs.History[0].State == configv1.CompletedUpdate && vs.History[0].Image == vs.Desired.Image {
		progressing.Status, progressing.Reason, progressing.Message = metav1.ConditionFalse, hypershiftv1beta1.AsExpectedReason, atVersionMessage
	}
	out := []metav1.Condition{available, progressing,
		{Type: string(hypershiftv1beta1.ValidHostedClusterConfiguration), Status: metav1.ConditionTrue,
			Reason: hypershiftv1beta1.AsExpectedReason, Message: "Configuration passes validation"},
		{Type: string(hypershiftv1beta1.ReconciliationSucceeded), Status: metav1.ConditionTrue,
			Reason: reconciliationSucceededReason, Message: "Reconciliation completed successfully"},
		{Type: string(hypershiftv1beta1.IgnitionEndpointAvailable), Status: metav1.ConditionTrue,
			Reason: hypershiftv1beta1.AsExpectedReason, Message: "Ignition server deployment is available"},
	}
	for _, t := range copiedConditions {
		c := metav1.Condition{Type: string(t), Status: metav1.ConditionUnknown, Reason: "StatusUnknown",
			Message: "Condition not found in the HostedControlPlane"}
		if got := meta.FindStatusCondition(hcp.Status.Conditions, string(t)); got != nil {
			c.Status, c.Reason, c.Message = got.Status, got.Reason, got.Message
		}
		out = append(out, c)
	}
	return out
}
