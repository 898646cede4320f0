package agentmachine_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	capiagentv1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
	"github.com/paritylab/paritylab/providers/agent/internal/controllers/agentmachine"
	agentv1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

// Rule 6: of the 16 combinations of spec.approved and the Validated,
// Connected and Bound conditions, only approved ∧ Validated ∧ Connected ∧
// ¬Bound is eligible. Two AgentMachines compete: one binds the eligible
// Agent, the other finds none, so no other combination may be eligible.
func TestEligibility(t *testing.T) {
	f := newFixture(t)
	f.startController()
	status := func(b bool) corev1.ConditionStatus {
		if b {
			return corev1.ConditionTrue
		}
		return corev1.ConditionFalse
	}
	var eligible *agentv1.Agent
	var others []*agentv1.Agent
	for i := range 16 {
		approved, validated, connected, bound := i&8 != 0, i&4 != 0, i&2 != 0, i&1 != 0
		a := f.createAgent(f.newAgent(fmt.Sprintf("a-%t-%t-%t-%t", approved, validated, connected, bound), approved,
			cond(agentv1.ConditionValidated, status(validated), "Test", ""),
			cond(agentv1.ConditionConnected, status(connected), "Test", ""),
			cond(agentv1.ConditionBound, status(bound), "Test", ""),
		))
		if approved && validated && connected && !bound {
			eligible = a
		} else {
			others = append(others, a)
		}
	}
	f.machine("m1", machineSpec{})
	f.machine("m2", machineSpec{})
	f.g.Eventually(func() []string {
		var reserved []string
		for _, name := range []string{"m1", "m2"} {
			if ref := f.agentMachine(name).Status.AgentRef; ref != nil {
				reserved = append(reserved, ref.Name)
			}
		}
		return reserved
	}, timeout).Should(ConsistOf(eligible.Name))
	loser := "m1"
	if f.agentMachine("m1").Status.AgentRef != nil {
		loser = "m2"
	}
	f.eventuallyCondition(loser, capiagentv1.AgentReservedCondition, metav1.ConditionFalse, capiagentv1.NoSuitableAgentsReason)
	f.consistentlyUnbound(others...)
}

// Rule 5: the agentLabelSelector is honoured, and an Agent labelled for
// another AgentMachine is never chosen.
func TestAgentLabelSelector(t *testing.T) {
	f := newFixture(t)
	f.startController()
	pool := func(name, value string) *agentv1.Agent {
		a := f.eligibleAgent(name)
		a.Labels = map[string]string{"pool": value}
		return a
	}
	wrongPool := f.createAgent(pool("wrong-pool", "b"))
	taken := pool("taken", "a")
	taken.Labels[capiagentv1.AgentMachineRefLabelKey] = "someone-else"
	taken = f.createAgent(taken)
	right := f.createAgent(pool("right", "a"))

	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"pool": "a"}}
	f.machine("m1", machineSpec{selector: selector})
	f.g.Expect(f.eventuallyReserved("m1").Name).To(Equal(right.Name))
	// A second AgentMachine of the same pool finds nothing left.
	f.machine("m2", machineSpec{selector: selector})
	f.eventuallyCondition("m2", capiagentv1.AgentReservedCondition, metav1.ConditionFalse, capiagentv1.NoSuitableAgentsReason)
	f.consistentlyUnbound(wrongPool)
	f.get(taken)
	f.g.Expect(taken.Labels).To(HaveKeyWithValue(capiagentv1.AgentMachineRefLabelKey, "someone-else"))
	f.g.Expect(taken.Spec.ClusterDeploymentName).To(BeNil())
}

// Rule 5: an Agent already labelled for this AgentMachine (a restored hub)
// is taken back as it is, eligible or not, before any other is picked.
func TestRestore(t *testing.T) {
	f := newFixture(t)
	f.startController()
	other := f.createAgent(f.eligibleAgent("eligible"))
	restored := f.newAgent("restored", false)
	restored.Labels = map[string]string{capiagentv1.AgentMachineRefLabelKey: "m"}
	restored = f.createAgent(restored)
	f.machine("m", machineSpec{})

	got := f.eventuallyReserved("m")
	f.g.Expect(got.Name).To(Equal(restored.Name))
	f.g.Expect(*f.agentMachine("m").Spec.ProviderID).To(Equal("agent://restored"))
	// Re-association is not a bind: upstream writes nothing else.
	f.g.Expect(got.Spec.ClusterDeploymentName).To(BeNil())
	f.g.Expect(got.Annotations).NotTo(HaveKey(capiagentv1.AgentMachineRefNamespace))
	f.consistentlyUnbound(other)
}

// Rule 5: when the update binding the first eligible Agent fails (here a
// real conflict: someone else changed that Agent after it was listed), the
// next eligible Agent is bound.
//
// The conflict is made by an interceptor around a real client: before
// passing on the first Agent update, it changes that Agent through the API
// server, so the update carries a stale resourceVersion and the API server
// answers 409. This is the only way to place a concurrent writer exactly
// between the provider's list and its update; the error comes from the API
// server, not from the interceptor, which fakes nothing. The reconcile is
// called directly (on an AgentMachine no controller watches) so that one
// known reconcile makes the attempts.
func TestConflictFallsThrough(t *testing.T) {
	f := newFixture(t)
	f.createAgent(f.eligibleAgent("a1"))
	f.createAgent(f.eligibleAgent("a2"))
	f.machine("m", machineSpec{unwatched: true})

	var (
		mu         sync.Mutex
		conflicted string
	)
	base, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Client.Scheme()})
	f.g.Expect(err).NotTo(HaveOccurred())
	c := interceptor.NewClient(base, interceptor.Funcs{
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			mu.Lock()
			defer mu.Unlock()
			if _, isAgent := obj.(*agentv1.Agent); isAgent && conflicted == "" {
				conflicted = obj.GetName()
				concurrent := &agentv1.Agent{}
				f.g.Expect(env.Update(client.ObjectKeyFromObject(obj), concurrent, func() {
					metav1.SetMetaDataLabel(&concurrent.ObjectMeta, "touched-by", "someone-else")
				}, false)).To(Succeed())
			}
			return c.Update(ctx, obj, opts...)
		},
	})
	r := &agentmachine.Reconciler{Client: c, AgentNamespace: f.ns}
	f.g.Expect(f.reconcile(r, "m")).To(Succeed())

	am := f.agentMachine("m")
	f.g.Expect(conflicted).NotTo(BeEmpty(), "the interceptor saw no Agent update")
	f.g.Expect(am.Status.AgentRef).NotTo(BeNil())
	f.g.Expect(am.Status.AgentRef.Name).NotTo(Equal(conflicted), "the conflicted Agent must not be bound")
	first := &agentv1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: conflicted}}
	f.get(first)
	f.g.Expect(first.Labels).To(HaveKeyWithValue("touched-by", "someone-else"), "the concurrent write landed")
	f.g.Expect(first.Labels).NotTo(HaveKey(capiagentv1.AgentMachineRefLabelKey))
	second := &agentv1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: am.Status.AgentRef.Name}}
	f.get(second)
	f.g.Expect(second.Labels).To(HaveKeyWithValue(capiagentv1.AgentMachineRefLabelKey, "m"))
}

// Rule 7: binding writes the label, the annotation, the ClusterDeployment
// of the AgentCluster's status and the bootstrap data's pool, token
// reference and headers.
func TestBindFields(t *testing.T) {
	f := newFixture(t)
	agent := f.boundWithUserData()
	f.g.Expect(agent.Labels).To(HaveKeyWithValue(capiagentv1.AgentMachineRefLabelKey, "m"))
	f.g.Expect(agent.Annotations).To(HaveKeyWithValue(capiagentv1.AgentMachineRefNamespace, f.ns))
	f.g.Expect(agent.Spec.ClusterDeploymentName).To(Equal(&agentv1.ClusterReference{Namespace: f.cdRef.Namespace, Name: f.cdRef.Name}))
	f.g.Expect(agent.Spec.MachineConfigPool).To(Equal("ignition"))
	f.g.Expect(agent.Spec.IgnitionEndpointTokenReference).To(Equal(&agentv1.IgnitionEndpointTokenReference{Namespace: f.ns, Name: "agent-" + userData}))
	f.g.Expect(agent.Spec.IgnitionEndpointHTTPHeaders).To(Equal(map[string]string{"NodePool": "clusters/np", "TargetConfigVersionHash": "abc123"}))
	// Untouched: what the bind does not own.
	f.g.Expect(agent.Spec.Approved).To(BeTrue())
	f.g.Expect(agent.Spec.Role).To(Equal(agentv1.HostRoleAutoAssign))
}

// Rule 9: the bootstrap data. The pool is the source's last path segment;
// the bearer token goes to agent-<data Secret> under ignition-token with
// the watch and backup labels; the data Secret and the AgentMachine get the
// backup label.
func TestBootstrapData(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		source  mergeSource
		pool    string
		token   string
		headers map[string]string
	}{
		{name: "HyperShift's user data", source: hypershiftSource("tok"), pool: "ignition", token: "tok",
			headers: map[string]string{"NodePool": "clusters/np", "TargetConfigVersionHash": "abc123"}},
		{name: "pool in the path", source: mergeSource{url: "https://api.example.com:22623/config/worker-gpu", headers: []header{
			{"Authorization", "Bearer t2"},
		}}, pool: "worker-gpu", token: "t2"},
		{name: "no token", source: mergeSource{url: "http://x/config/infra", headers: []header{{"X-Extra", "1"}}},
			pool: "infra", headers: map[string]string{"X-Extra": "1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.startController()
			f.createAgent(f.eligibleAgent("a"))
			f.bootstrapSecret("ud", tc.source)
			f.machine("m", machineSpec{dataSecret: "ud"})

			agent := f.eventuallyReserved("m")
			f.g.Expect(agent.Spec.MachineConfigPool).To(Equal(tc.pool))
			if tc.headers == nil {
				f.g.Expect(agent.Spec.IgnitionEndpointHTTPHeaders).To(BeEmpty())
			} else {
				f.g.Expect(agent.Spec.IgnitionEndpointHTTPHeaders).To(Equal(tc.headers))
			}
			token := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "agent-ud"}}
			f.get(token)
			f.g.Expect(token.Data).To(Equal(map[string][]byte{"ignition-token": []byte(tc.token)}))
			f.g.Expect(token.Labels).To(Equal(map[string]string{
				"agent-install.openshift.io/watch":          "true",
				"cluster.open-cluster-management.io/backup": "true",
			}))
			data := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "ud"}}
			f.get(data)
			f.g.Expect(data.Labels).To(HaveKeyWithValue("cluster.open-cluster-management.io/backup", "true"))
			f.g.Expect(f.agentMachine("m").Labels).To(HaveKeyWithValue("cluster.open-cluster-management.io/backup", "true"))
		})
	}
}

// Rule 9: bootstrap data the provider cannot use is an error of the
// reconcile, before any Agent is looked for (upstream returns it without
// touching the status), and binds nothing.
func TestBootstrapDataErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		sources []mergeSource
		err     string
	}{
		{name: "token without the Bearer prefix", sources: []mergeSource{{url: "https://x/ignition", headers: []header{{"Authorization", "tok"}}}},
			err: `lacks the "Bearer " prefix`},
		{name: "no merge source", err: "found 0"},
		{name: "two merge sources", sources: []mergeSource{hypershiftSource("a"), hypershiftSource("b")}, err: "found 2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			agent := f.createAgent(f.eligibleAgent("a"))
			f.bootstrapSecret("ud", tc.sources...)
			f.machine("m", machineSpec{dataSecret: "ud", unwatched: true})

			r := &agentmachine.Reconciler{Client: env.Client, AgentNamespace: f.ns}
			err := f.reconcile(r, "m")
			f.g.Expect(err).To(MatchError(ContainSubstring(tc.err)))
			am := f.agentMachine("m")
			f.g.Expect(am.Status.AgentRef).To(BeNil())
			f.g.Expect(am.Status.Conditions).To(BeEmpty())
			f.get(agent)
			f.g.Expect(agent.Labels).NotTo(HaveKey(capiagentv1.AgentMachineRefLabelKey))
			err = env.Client.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: "agent-ud"}, &corev1.Secret{})
			f.g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "no token Secret: %v", err)
		})
	}
}

// Rule 10: drift of the bound Agent's pool, token reference or headers from
// the bootstrap data is undone.
func TestAgentSpecDrift(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		drift func(a *agentv1.Agent)
	}{
		{name: "header value", drift: func(a *agentv1.Agent) { a.Spec.IgnitionEndpointHTTPHeaders["NodePool"] = "clusters/other" }},
		{name: "header removed", drift: func(a *agentv1.Agent) { delete(a.Spec.IgnitionEndpointHTTPHeaders, "TargetConfigVersionHash") }},
		{name: "token reference", drift: func(a *agentv1.Agent) {
			a.Spec.IgnitionEndpointTokenReference = &agentv1.IgnitionEndpointTokenReference{Namespace: a.Namespace, Name: "stale"}
		}},
		{name: "machine config pool", drift: func(a *agentv1.Agent) { a.Spec.MachineConfigPool = "master" }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			agent := f.boundWithUserData()
			want := agent.Spec.DeepCopy()
			f.g.Expect(want.IgnitionEndpointHTTPHeaders).NotTo(BeEmpty())

			f.changeAgent(agent, false, tc.drift)
			f.g.Eventually(func(g Gomega) {
				f.get(agent)
				g.Expect(agent.Spec.MachineConfigPool).To(Equal(want.MachineConfigPool))
				g.Expect(agent.Spec.IgnitionEndpointTokenReference).To(Equal(want.IgnitionEndpointTokenReference))
				g.Expect(agent.Spec.IgnitionEndpointHTTPHeaders).To(Equal(want.IgnitionEndpointHTTPHeaders))
			}, timeout).Should(Succeed())
		})
	}
}

// Upstream's drift check (DeepDerivative of a spec holding only the
// bootstrap data, L195-202) compares spec.approved too, which a bound Agent
// always has true: the fields are rewritten on every reconcile, so a
// header the bootstrap data does not name is dropped as well.
func TestAgentSpecExtraHeaderDropped(t *testing.T) {
	f := newFixture(t)
	agent := f.boundWithUserData()
	f.changeAgent(agent, false, func(a *agentv1.Agent) { a.Spec.IgnitionEndpointHTTPHeaders["X-Extra"] = "dropped" })
	f.g.Eventually(func() map[string]string { f.get(agent); return agent.Spec.IgnitionEndpointHTTPHeaders }, timeout).
		Should(Equal(map[string]string{"NodePool": "clusters/np", "TargetConfigVersionHash": "abc123"}))
}
