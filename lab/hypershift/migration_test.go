package hypershift

import (
	"context"
	"testing"
	"time"

	hypershiftv1beta1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	capiagentv1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
	agentv1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

// A hosted cluster on standard types, with a bound Agent, migrates to
// private types: a failure injected at the health check rolls everything
// back (no private object left, the same AgentMachine owned by the same
// standard Machine, the Cluster unpaused, the cluster marked failed);
// once the mark is removed the migration runs through, the AgentMachine
// (the same object) is owned by the private Machine of the same name, the
// standard objects are gone and the Agent stays bound, and the cluster's
// own CAPI scales the NodePool.
func TestMigrationToPrivateTypes(t *testing.T) {
	t.Parallel()
	h := startHub(t)
	// The health checks' rule is the same; the test waits less for it.
	h.op.migrationTiming.window = 5 * time.Second
	ctx := context.Background()
	hc := h.availableHostedCluster(t)
	cpns := ControlPlaneNamespace(hc)
	first := h.eligibleAgent(t, "first", "np1")
	np := h.agentNodePool(t, "np1", 1)
	h.eventually(t, "the first Agent bound on standard types", func() bool {
		h.get(t, client.ObjectKeyFromObject(first), first)
		return first.Spec.ClusterDeploymentName != nil
	})
	before := h.bindingOf(t, first)

	h.annotate(t, hc, map[string]string{MigrateCAPITypesAnnotation: "private", MigrationFailAtAnnotation: "health-check"})
	h.eventually(t, "the injected failure rolled back", func() bool {
		h.get(t, client.ObjectKeyFromObject(hc), hc)
		return hc.Annotations[MigrationFailedAnnotation] != "" && hc.Annotations[MigrationInProgressAnnotation] == ""
	})
	for _, kind := range capiKinds {
		if n := len(h.privateList(t, cpns, kind)); n != 0 {
			t.Errorf("%d private %ss left after the rollback", n, kind)
		}
	}
	if after := h.bindingOf(t, first); after != before {
		t.Errorf("after the rollback the binding is %+v, was %+v", after, before)
	}
	if usesPrivateTypes(hc) || h.standardClusterPaused(t, hc) {
		t.Errorf("after the rollback: annotations %v, standard Cluster paused %t", hc.Annotations, h.standardClusterPaused(t, hc))
	}
	h.expectEvent(t, hc, MigrationFailedReason)

	h.annotate(t, hc, map[string]string{MigrationFailedAnnotation: "", MigrationFailAtAnnotation: ""})
	h.eventuallyWithin(t, 4*time.Minute, "the migration done", func() bool {
		h.get(t, client.ObjectKeyFromObject(hc), hc)
		return usesPrivateTypes(hc) && hc.Annotations[MigrationInProgressAnnotation] == "" && hc.Annotations[MigrateCAPITypesAnnotation] == ""
	})
	after := h.bindingOf(t, first)
	if after.agentMachineUID != before.agentMachineUID || after.machine != before.machine || after.cd != before.cd {
		t.Errorf("the migration changed the binding: %+v, was %+v", after, before)
	}
	if after.ownerAPIVersion != privateGroup+"/v1beta2" || after.ownerUID == before.ownerUID {
		t.Errorf("the AgentMachine is owned by %s %s, want the private Machine", after.ownerAPIVersion, after.ownerUID)
	}
	for _, kind := range capiKinds {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(standardGroupVersion.WithKind(kind + "List"))
		if err := h.c.List(ctx, l, client.InNamespace(cpns)); err != nil || len(l.Items) != 0 {
			t.Errorf("%d standard %ss left after the migration (%v)", len(l.Items), kind, err)
		}
	}

	second := h.eligibleAgent(t, "second", "np1")
	h.scale(t, np, 2)
	h.eventually(t, "a second Agent bound by the cluster's own CAPI", func() bool {
		h.get(t, client.ObjectKeyFromObject(second), second)
		return second.Spec.ClusterDeploymentName != nil
	})
	if n := len(h.privateList(t, cpns, "Machine")); n != 2 {
		t.Errorf("%d private Machines after scaling to 2", n)
	}
	if n := len(h.privateList(t, cpns, "MachineSet")); n != 1 {
		t.Errorf("%d private MachineSets: the migration rolled the MachineDeployment out", n)
	}
	if b := h.bindingOf(t, first); b != after {
		t.Errorf("the first binding changed after the migration: %+v, was %+v", b, after)
	}
}

// binding is what identifies an Agent's binding to a Machine.
type binding struct {
	cd, machine     string
	agentMachineUID types.UID
	ownerAPIVersion string
	ownerUID        types.UID
}

func (h *hub) bindingOf(t *testing.T, a *agentv1.Agent) binding {
	t.Helper()
	h.get(t, client.ObjectKeyFromObject(a), a)
	b := binding{}
	if a.Spec.ClusterDeploymentName != nil {
		b.cd = a.Spec.ClusterDeploymentName.Namespace + "/" + a.Spec.ClusterDeploymentName.Name
	}
	am := &capiagentv1.AgentMachine{}
	h.get(t, client.ObjectKey{Namespace: "clusters-hc1", Name: a.Labels[capiagentv1.AgentMachineRefLabelKey]}, am)
	b.agentMachineUID = am.UID
	for _, ref := range am.OwnerReferences {
		if ref.Kind == "Machine" && ptr.Deref(ref.Controller, false) {
			b.machine, b.ownerAPIVersion, b.ownerUID = ref.Name, ref.APIVersion, ref.UID
		}
	}
	return b
}

func (h *hub) agentNodePool(t *testing.T, name string, replicas int32) *hypershiftv1beta1.NodePool {
	t.Helper()
	np := &hypershiftv1beta1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Namespace: "clusters", Name: name},
		Spec: hypershiftv1beta1.NodePoolSpec{
			ClusterName: "hc1", Replicas: ptr.To(replicas),
			Release:    hypershiftv1beta1.Release{Image: "quay.io/openshift-release-dev/ocp-release:4.21.0-x86_64"},
			Management: hypershiftv1beta1.NodePoolManagement{UpgradeType: hypershiftv1beta1.UpgradeTypeReplace},
			Platform: hypershiftv1beta1.NodePoolPlatform{Type: hypershiftv1beta1.AgentPlatform, Agent: &hypershiftv1beta1.AgentNodePoolPlatform{
				AgentLabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"pool": name}}}},
		},
	}
	h.create(t, np)
	return np
}

// annotate sets annotations on a HostedCluster; an empty value removes one.
func (h *hub) annotate(t *testing.T, hc *hypershiftv1beta1.HostedCluster, set map[string]string) {
	t.Helper()
	h.get(t, client.ObjectKeyFromObject(hc), hc)
	patch := client.MergeFrom(hc.DeepCopy())
	if hc.Annotations == nil {
		hc.Annotations = map[string]string{}
	}
	for k, v := range set {
		if v == "" {
			delete(hc.Annotations, k)
		} else {
			hc.Annotations[k] = v
		}
	}
	if err := h.c.Patch(context.Background(), hc, patch); err != nil {
		t.Fatal(err)
	}
}

func (h *hub) standardClusterPaused(t *testing.T, hc *hypershiftv1beta1.HostedCluster) bool {
	t.Helper()
	cl := &unstructured.Unstructured{}
	cl.SetGroupVersionKind(standardGroupVersion.WithKind("Cluster"))
	h.get(t, capiClusterKey(hc), cl)
	paused, _, _ := unstructured.NestedBool(cl.Object, "spec", "paused")
	return paused
}

func (h *hub) expectEvent(t *testing.T, hc *hypershiftv1beta1.HostedCluster, reason string) {
	t.Helper()
	h.eventually(t, "a "+reason+" event", func() bool {
		events := &corev1.EventList{}
		if err := h.c.List(context.Background(), events, client.InNamespace(hc.Namespace)); err != nil {
			return false
		}
		for _, e := range events.Items {
			if e.Reason == reason && e.InvolvedObject.Name == hc.Name && e.Type == corev1.EventTypeWarning {
				return true
			}
		}
		return false
	})
}
