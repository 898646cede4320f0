package scenarios

import (
	"context"

	. "github.com/onsi/gomega"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A flow that reached a milestone has to let its sets settle before the
// next step: a MachineSet's status follows its Machines a moment later,
// and what the recorder saw last of a set that had not settled yet would
// depend on when the flow moved on, not on what it did.

// ExpectMAPIMachineSetsSettled: every MachineSet of the namespace reports
// as many replicas, ready and available replicas as it wants.
func ExpectMAPIMachineSetsSettled(ctx context.Context, g Gomega, c client.Client, namespace string) {
	list := &machinev1beta1.MachineSetList{}
	g.Expect(c.List(ctx, list, client.InNamespace(namespace))).To(Succeed())
	for _, ms := range list.Items {
		want := ptr.Deref(ms.Spec.Replicas, 0)
		st := ms.Status
		g.Expect([]int32{st.Replicas, st.ReadyReplicas, st.AvailableReplicas}).To(Equal([]int32{want, want, want}),
			"MachineSet %s status (replicas, ready, available) settled at %d", ms.Name, want)
	}
}

// ExpectCAPIMachineSetsSettled: every MachineSet of the namespace that
// matches the labels reports as many ready and available replicas as it
// wants, and its MachinesReady condition is True when it has Machines.
func ExpectCAPIMachineSetsSettled(ctx context.Context, g Gomega, c client.Client, namespace string, labels client.MatchingLabels) {
	list := &clusterv1.MachineSetList{}
	g.Expect(c.List(ctx, list, client.InNamespace(namespace), labels)).To(Succeed())
	for _, ms := range list.Items {
		want := ptr.Deref(ms.Spec.Replicas, 0)
		st := ms.Status
		g.Expect([]int32{ptr.Deref(st.Replicas, 0), ptr.Deref(st.ReadyReplicas, 0), ptr.Deref(st.AvailableReplicas, 0)}).
			To(Equal([]int32{want, want, want}), "MachineSet %s status (replicas, ready, available) settled at %d", ms.Name, want)
		if want > 0 {
			g.Expect(meta.IsStatusConditionTrue(st.Conditions, clusterv1.MachineSetMachinesReadyCondition)).To(BeTrue(),
				"MachineSet %s MachinesReady: %v", ms.Name, conditionOf(st.Conditions, clusterv1.MachineSetMachinesReadyCondition))
		}
	}
}

func conditionOf(conds []metav1.Condition, t string) *metav1.Condition {
	return meta.FindStatusCondition(conds, t)
}
