package scenarios

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/mapi"
)

// WorkerMachineSet is a new worker MachineSet of the spoke, named
// <infra>-<suffix>, copied from the installer's (its providerSpec, user
// data and labels) with its own selector, as an admin adds a MachineSet.
// It is not created.
func WorkerMachineSet(ctx context.Context, spoke client.Client, suffix string, replicas int32) *machinev1beta1.MachineSet {
	installer := installerMachineSet(ctx, spoke)
	infra := installer.Labels[mapi.ClusterLabel]
	name := infra + "-" + suffix
	ms := &machinev1beta1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: MachineAPINamespace, Labels: installer.Labels}}
	ms.Spec = *installer.Spec.DeepCopy()
	ms.Spec.Replicas = ptr.To(replicas)
	ms.Spec.Selector = metav1.LabelSelector{MatchLabels: map[string]string{mapi.ClusterLabel: infra, mapi.MachineSetLabel: name}}
	ms.Spec.Template.Labels = map[string]string{mapi.ClusterLabel: infra, mapi.MachineSetLabel: name,
		mapi.RoleLabel: "worker", mapi.TypeLabel: "worker"}
	return ms
}

// SelectHosts has a MachineSet's Machines take only hosts that carry
// labels (the bare-metal providerSpec's hostSelector).
func SelectHosts(ms *machinev1beta1.MachineSet, labels map[string]string) error {
	spec := &mapi.BareMetalMachineProviderSpec{}
	if ps := ms.Spec.Template.Spec.ProviderSpec.Value; ps != nil {
		if err := json.Unmarshal(ps.Raw, spec); err != nil {
			return fmt.Errorf("decode MachineSet %s providerSpec: %w", ms.Name, err)
		}
	}
	spec.HostSelector.MatchLabels = labels
	raw, err := mapi.RawProviderSpec(*spec)
	if err != nil {
		return fmt.Errorf("MachineSet %s: %w", ms.Name, err)
	}
	ms.Spec.Template.Spec.ProviderSpec = *raw
	return nil
}

// installerMachineSet is the worker MachineSet the installer wrote
// (<infra>-worker-0).
func installerMachineSet(ctx context.Context, spoke client.Client) *machinev1beta1.MachineSet {
	list := &machinev1beta1.MachineSetList{}
	Expect(spoke.List(ctx, list, client.InNamespace(MachineAPINamespace))).To(Succeed())
	for i := range list.Items {
		if strings.HasSuffix(list.Items[i].Name, "-worker-0") {
			return &list.Items[i]
		}
	}
	Fail(fmt.Sprintf("the spoke has no installer worker MachineSet (<infra>-worker-0) among %d", len(list.Items)))
	return nil
}

// ExpectNodeReady expects a Node to exist with its Ready condition True.
func ExpectNodeReady(ctx context.Context, g Gomega, c client.Client, name string) *corev1.Node {
	node := &corev1.Node{}
	g.Expect(c.Get(ctx, client.ObjectKey{Name: name}, node)).To(Succeed())
	g.Expect(NodeReady(node)).To(BeTrue(), "node %s Ready", name)
	return node
}

// NodeReady tells whether a Node's Ready condition is True.
func NodeReady(node *corev1.Node) bool {
	for _, cond := range node.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}
