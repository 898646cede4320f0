package nodeproviderid_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	capiagentv1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
	"github.com/paritylab/paritylab/providers/agent/internal/controllers/nodeproviderid"
)

// Rule 16: a ready AgentMachine's provider ID goes onto the Node named by
// its InternalDNS address, in the cluster of the namespace's
// admin-kubeconfig Secret, which gets the backup label.
func TestSetsProviderID(t *testing.T) {
	f := newFixture(t)
	f.node("")
	f.startController()
	f.agentMachine(true)
	f.g.Eventually(f.nodeProviderID, timeout).Should(Equal(providerID))

	s := &corev1.Secret{}
	f.g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: "admin-kubeconfig"}, s)).To(Succeed())
	f.g.Expect(s.Labels).To(HaveKeyWithValue("cluster.open-cluster-management.io/backup", "true"))
}

// Rule 16: while the AgentMachine is not ready, the Node is left alone and
// the AgentMachine looked at again in 30 s (upstream L65-68); once ready,
// its Node gets the provider ID.
func TestWaitsUntilReady(t *testing.T) {
	f := newFixture(t)
	f.node("")
	f.agentMachine(false)
	result, err := f.reconcile()
	f.g.Expect(err).NotTo(HaveOccurred())
	f.g.Expect(result).To(Equal(ctrl.Result{RequeueAfter: 30 * time.Second}))

	f.startController()
	f.g.Consistently(f.nodeProviderID, quiet).Should(BeEmpty())
	f.setStatus(func(s *capiagentv1.AgentMachineStatus) { s.Ready = true })
	f.g.Eventually(f.nodeProviderID, timeout).Should(Equal(providerID))
}

// Rule 16: a Node with another provider ID is an error and keeps its own
// (upstream L98-101); one with the same is left alone (L102-105).
func TestExistingProviderID(t *testing.T) {
	t.Parallel()
	t.Run("another: error", func(t *testing.T) {
		f := newFixture(t)
		f.node("agent://other")
		f.agentMachine(true)
		remote := &countingClients{RemoteClients: nodeproviderid.NewRemoteClients(env.Client)}
		_, err := f.reconcileWith(remote)
		f.g.Expect(err).To(MatchError(And(ContainSubstring("agent://other"), ContainSubstring(providerID))))
		f.g.Expect(remote.writes.Load()).To(BeZero(), "no write is tried")
		f.g.Expect(f.nodeProviderID()).To(Equal("agent://other"))
	})
	t.Run("the same: nothing written", func(t *testing.T) {
		f := newFixture(t)
		f.node(providerID)
		f.agentMachine(true)
		remote := &countingClients{RemoteClients: nodeproviderid.NewRemoteClients(env.Client)}
		result, err := f.reconcileWith(remote)
		f.g.Expect(err).NotTo(HaveOccurred())
		f.g.Expect(result).To(BeZero())
		f.g.Expect(remote.clients).To(Equal(1), "the hosted cluster is reached")
		f.g.Expect(remote.writes.Load()).To(BeZero(), "nothing is written to it")
	})
}

// Rule 16: what a ready AgentMachine's Node cannot be found without is an
// error: an InternalDNS address, the kubeconfig Secret and its key
// kubeconfig (remote_client.go L45-60), the Node itself.
func TestErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		setup func(f *fixture)
		want  string
	}{
		{
			name: "no InternalDNS address",
			setup: func(f *fixture) {
				f.node("")
				f.agentMachine(true)
				f.setStatus(func(s *capiagentv1.AgentMachineStatus) {
					s.Addresses = []clusterv1.MachineAddress{{Type: clusterv1.MachineInternalIP, Address: "192.0.2.10"}}
				})
			},
			want: "has no InternalDNS address",
		},
		{
			name: "no kubeconfig Secret",
			setup: func(f *fixture) {
				f.node("")
				f.agentMachine(true)
				f.g.Expect(env.Client.Delete(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "admin-kubeconfig"}})).To(Succeed())
			},
			want: `secrets "admin-kubeconfig" not found`,
		},
		{
			name: "no kubeconfig key",
			setup: func(f *fixture) {
				f.node("")
				f.agentMachine(true)
				s := &corev1.Secret{}
				f.g.Expect(env.Update(client.ObjectKey{Namespace: f.ns, Name: "admin-kubeconfig"}, s, func() {
					s.Data = map[string][]byte{"value": s.Data["kubeconfig"]}
				}, false)).To(Succeed())
			},
			want: "has no key kubeconfig",
		},
		{
			name:  "no Node",
			setup: func(f *fixture) { f.agentMachine(true) },
			want:  `nodes "worker-0.`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			tc.setup(f)
			_, err := f.reconcile()
			f.g.Expect(err).To(MatchError(ContainSubstring(tc.want)))
		})
	}
}
