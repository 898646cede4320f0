package assisted

import (
	"context"
	"testing"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

// A day-2 host of a hosted cluster that its AgentMachine unbinds waits,
// unbinding-pending-user-action, with its install record reset; the BMAC
// attaches its BareMetalHost and removes its image so that it boots the
// discovery ISO again; registering again it is discovering-unbound, then
// known-unbound once its inventory is in.
func TestUnboundDay2HostReturnsToDiscovery(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	ns := h.namespace(t)
	ctx := context.Background()
	h.importedCluster(t, ns)
	ie := h.infraEnv(t, ns, nil)
	host := "3f2b1c0d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
	h.registerHost(t, ie, host, "52:54:00:00:51:01", hostInventory(4, 16, 120))

	bmh := h.bmh(t, ns, "hs-0", "52:54:00:00:51:01", map[string]string{agentv1beta1.InfraEnvNameLabel: ie.Name})
	a := &agentv1beta1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: host}}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := h.c.Get(ctx, client.ObjectKeyFromObject(a), a); err != nil {
			return err
		}
		a.Labels[agentv1beta1.BareMetalHostLabel] = bmh.Name
		a.Spec.Approved = true
		a.Spec.ClusterDeploymentName = &agentv1beta1.ClusterReference{Namespace: ns, Name: "hc1"}
		a.Spec.MachineConfigPool = "ignition"
		return h.c.Update(ctx, a)
	})
	if err != nil {
		t.Fatal(err)
	}
	h.updateStatus(t, a, func() {
		a.Status.Kind = agentv1beta1.HostKindAddToExistingClusterHost
		a.Status.Role = agentv1beta1.HostRoleWorker
		a.Status.Progress.CurrentStage = agentv1beta1.HostStageDone
		a.Status.DebugInfo.State = agentv1beta1.AgentStateAddedToExistingCluster
	})
	h.eventually(t, "the day-2 host installed and its host detached", func() bool {
		_ = h.c.Get(ctx, client.ObjectKeyFromObject(a), a)
		_ = h.c.Get(ctx, client.ObjectKeyFromObject(bmh), bmh)
		_, detached := bmh.Annotations[detachedAnnotation]
		return conditionStatus(a, agentv1beta1.ConditionInstalled) == corev1.ConditionTrue && detached
	})
	patch := client.MergeFrom(bmh.DeepCopy())
	bmh.Annotations[spokeCreatedAnnotation] = "earlier"
	format := "live-iso"
	bmh.Spec.Image = &bmov1alpha1.Image{URL: "http://127.0.0.1/discovery.iso", DiskFormat: &format}
	if err := h.c.Patch(ctx, bmh, patch); err != nil {
		t.Fatal(err)
	}

	// The AgentMachine's deletion unbinds the Agent.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := h.c.Get(ctx, client.ObjectKeyFromObject(a), a); err != nil {
			return err
		}
		a.Spec.ClusterDeploymentName, a.Spec.MachineConfigPool = nil, ""
		return h.c.Update(ctx, a)
	})
	if err != nil {
		t.Fatal(err)
	}
	h.eventually(t, "the Agent unbinding, pending a reboot", func() bool {
		_ = h.c.Get(ctx, client.ObjectKeyFromObject(a), a)
		return a.Status.DebugInfo.State == agentv1beta1.AgentStateUnbindingPendingUserAction
	})
	if a.Status.Progress.CurrentStage != "" || a.Status.Kind != agentv1beta1.HostKindHost || a.Status.Role != agentv1beta1.HostRoleAutoAssign ||
		a.Status.DebugInfo.StateInfo != unbindingStateInfo {
		t.Errorf("unbound Agent status: stage %q kind %q role %q info %q; want its install record reset", a.Status.Progress.CurrentStage,
			a.Status.Kind, a.Status.Role, a.Status.DebugInfo.StateInfo)
	}
	for ct, want := range map[conditionsv1.ConditionType]string{
		agentv1beta1.ConditionBound: agentv1beta1.ReasonUnbindingPendingUserAction, agentv1beta1.ConditionInstalled: agentv1beta1.ReasonUnbinding,
		agentv1beta1.ConditionRequirementsMet: agentv1beta1.ReasonUnbinding,
	} {
		c := conditionsv1.FindStatusCondition(a.Status.Conditions, ct)
		if c == nil || c.Status != corev1.ConditionFalse || c.Reason != want {
			t.Errorf("condition %s = %+v, want False %s", ct, c, want)
		}
	}
	h.eventually(t, "the BareMetalHost attached with its image removed", func() bool {
		_ = h.c.Get(ctx, client.ObjectKeyFromObject(bmh), bmh)
		_, detached := bmh.Annotations[detachedAnnotation]
		_, paused := bmh.Annotations[bmov1alpha1.PausedAnnotation]
		_, created := bmh.Annotations[spokeCreatedAnnotation]
		return !detached && !paused && !created && bmh.Spec.Image == nil
	})

	// The host boots the discovery ISO and registers again.
	h.registerHost(t, ie, host, "52:54:00:00:51:01", hostInventory(4, 16, 120))
	h.eventually(t, "the host known-unbound", func() bool {
		_ = h.c.Get(ctx, client.ObjectKeyFromObject(a), a)
		return a.Status.DebugInfo.State == agentv1beta1.AgentStateKnownUnbound
	})
	if c := conditionsv1.FindStatusCondition(a.Status.Conditions, agentv1beta1.ConditionBound); c == nil || c.Reason != agentv1beta1.ReasonUnbound {
		t.Errorf("Bound %+v once rediscovered, want Unbound", c)
	}
}
