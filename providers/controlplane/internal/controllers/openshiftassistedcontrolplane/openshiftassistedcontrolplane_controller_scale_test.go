package openshiftassistedcontrolplane_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"

	bootstrapv1 "github.com/paritylab/paritylab/providers/bootstrap/api/v1alpha2"
	controlplanev1 "github.com/paritylab/paritylab/providers/controlplane/api/v1alpha3"
	"github.com/paritylab/paritylab/providers/internal/testenv"
)

func TestScaleUpOneMachinePerReconcile(t *testing.T) {
	f := newFixture(t, func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
		cp.Spec.OpenshiftAssistedConfigSpec.NodeRegistration.KubeletExtraLabels = []string{"rack=r1"}
		cp.Spec.MachineTemplate.Spec.ReadinessGates = []clusterv1.MachineReadinessGate{{ConditionType: "EtcdMemberHealthy"}}
	})
	g, ctx := f.g, context.Background()
	f.begin()
	for want := 1; want <= 3; want++ {
		g.Expect(f.machines()).To(HaveLen(want), "one Machine per reconcile")
		f.reconcile()
	}
	g.Expect(f.machines()).To(HaveLen(3))
	f.expectCondition(controlplanev1.MachinesCreatedCondition, metav1.ConditionTrue, controlplanev1.MachinesCreatedReason)

	cp := f.get()
	for _, m := range f.machines() {
		g.Expect(m.Labels).To(Equal(map[string]string{
			clusterv1.ClusterNameLabel: "c", clusterv1.MachineControlPlaneLabel: "", clusterv1.MachineControlPlaneNameLabel: "cp", "team": "metal",
		}))
		g.Expect(m.Annotations).To(Equal(map[string]string{"note": "cp", "bmac.agent-install.openshift.io/role": "master"}),
			"the template's annotations and the one CAPOA adds to control-plane Machines, no other")
		g.Expect(metav1.IsControlledBy(&m, cp)).To(BeTrue())
		g.Expect(m.Spec.ClusterName).To(Equal("c"))
		g.Expect(m.Spec.Deletion.NodeDrainTimeoutSeconds).To(HaveValue(BeEquivalentTo(120)))
		g.Expect(m.Spec.ReadinessGates).To(Equal(cp.Spec.MachineTemplate.Spec.ReadinessGates))
		g.Expect(conditions.IsTrue(&m, clusterv1.MachineUpToDateCondition)).To(BeTrue(), "the control plane sets the contract's UpToDate")

		config := &bootstrapv1.OpenshiftAssistedConfig{}
		g.Expect(m.Spec.Bootstrap.ConfigRef).To(Equal(clusterv1.ContractVersionedObjectReference{
			APIGroup: bootstrapv1.GroupName, Kind: "OpenshiftAssistedConfig", Name: m.Name}))
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: m.Name}, config)).To(Succeed())
		g.Expect(config.Spec.NodeRegistration.KubeletExtraLabels).To(Equal([]string{"rack=r1"}))
		g.Expect(config.Labels).To(HaveKeyWithValue(clusterv1.MachineControlPlaneLabel, ""))
		g.Expect(metav1.IsControlledBy(config, cp)).To(BeTrue(), "owned by the control plane until Cluster API hands it to the Machine")

		infra := &unstructured.Unstructured{}
		infra.SetAPIVersion(testenv.InfraGroup + "/" + testenv.InfraVersion)
		infra.SetKind("TestMachine")
		g.Expect(m.Spec.InfrastructureRef).To(Equal(clusterv1.ContractVersionedObjectReference{APIGroup: testenv.InfraGroup, Kind: "TestMachine", Name: m.Name}))
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: m.Name}, infra)).To(Succeed())
		g.Expect(infra.Object["spec"]).To(Equal(map[string]any{"flavor": "large"}), "cloned from the template")
		g.Expect(infra.GetAnnotations()).To(HaveKeyWithValue(clusterv1.TemplateClonedFromNameAnnotation, "cp-template"))
		g.Expect(infra.GetLabels()).To(HaveKeyWithValue(clusterv1.ClusterNameLabel, "c"))
	}
	g.Expect(cp.Status.Replicas).To(HaveValue(BeEquivalentTo(3)))
	g.Expect(cp.Status.UpToDateReplicas).To(HaveValue(BeEquivalentTo(3)))
	g.Expect(cp.Status.ReadyReplicas).To(HaveValue(BeEquivalentTo(0)))
	g.Expect(cp.Status.AvailableReplicas).To(HaveValue(BeEquivalentTo(0)))
	sel, err := labels.Parse(cp.Status.Selector)
	g.Expect(err).NotTo(HaveOccurred())
	list := &clusterv1.MachineList{}
	g.Expect(env.Client.List(ctx, list, client.InNamespace(f.ns), client.MatchingLabelsSelector{Selector: sel})).To(Succeed())
	g.Expect(list.Items).To(HaveLen(3), "status.selector selects the control plane's Machines")

	By(t, "changing the template metadata: propagated in place, no new Machines")
	f.update(func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
		cp.Spec.MachineTemplate.ObjectMeta.Labels["tier"] = "gold"
	})
	f.reconcile()
	ms := f.machines()
	g.Expect(ms).To(HaveLen(3))
	for _, m := range ms {
		g.Expect(m.Labels).To(HaveKeyWithValue("tier", "gold"))
	}

	By(t, "pointing at another infrastructure template: Machines are out of date, not rolled")
	env.InfraMachineTemplate(t, f.ns, "cp-template-2", map[string]any{"flavor": "huge"})
	f.update(func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
		cp.Spec.MachineTemplate.Spec.InfrastructureRef.Name = "cp-template-2"
	})
	f.reconcile()
	g.Expect(f.machines()).To(HaveLen(3))
	g.Expect(f.get().Status.UpToDateReplicas).To(HaveValue(BeEquivalentTo(0)))
	m := f.machines()[0]
	g.Expect(conditions.GetMessage(&m, clusterv1.MachineUpToDateCondition)).To(ContainSubstring("cp-template-2"))
}

// scale sets replicas through the /scale subresource, as kubectl scale and
// autoscalers do (no admission webhook runs for it).
func (f *fixture) scale(n int32) {
	f.t.Helper()
	scale := &autoscalingv1.Scale{}
	f.g.Expect(env.Client.SubResource("scale").Get(context.Background(), f.get(), scale)).To(Succeed())
	scale.Spec.Replicas = n
	f.g.Expect(env.Client.SubResource("scale").Update(context.Background(), f.get(), client.WithSubResourceBody(scale))).To(Succeed())
	f.g.Expect(*f.get().Spec.Replicas).To(Equal(n))
}

func TestScaleSubresource(t *testing.T) {
	f := newFixture(t)
	f.begin()
	f.reconcileN(2)
	scale := &autoscalingv1.Scale{}
	f.g.Expect(env.Client.SubResource("scale").Get(context.Background(), f.get(), scale)).To(Succeed())
	f.g.Expect(scale.Spec.Replicas).To(BeEquivalentTo(3))
	f.g.Expect(scale.Status.Replicas).To(BeEquivalentTo(3))
	f.g.Expect(scale.Status.Selector).To(Equal(f.get().Status.Selector))
}

func TestScaleDown(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// prepare marks the Machines (oldest first) and says which are
		// expected to go.
		prepare func(f *fixture, ms []string) (deleted []string)
	}{
		{
			name:    "oldest first",
			prepare: func(_ *fixture, ms []string) []string { return ms[:1] },
		},
		{
			name: "delete annotation before age",
			prepare: func(f *fixture, ms []string) []string {
				f.annotate(ms[3], clusterv1.DeleteMachineAnnotation)
				return ms[3:4]
			},
		},
		{
			name: "a Machine that never became a node before members",
			prepare: func(f *fixture, ms []string) []string {
				for _, n := range []string{ms[0], ms[1], ms[3]} {
					f.joined(n)
				}
				return ms[2:3]
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, withReplicas(4))
			f.reconcileN(2)
			ms := f.scaleUpSlowly(4)
			want := tc.prepare(f, ms)
			f.update(func(cp *controlplanev1.OpenshiftAssistedControlPlane) { *cp.Spec.Replicas = 3 })
			f.reconcile()
			f.g.Expect(names(f.machines())).To(ConsistOf(without(ms, want)), "deleted %v", want)
			f.expectCondition(controlplanev1.MachinesCreatedCondition, metav1.ConditionFalse, controlplanev1.ScalingDownReason)
			f.reconcile()
			f.expectCondition(controlplanev1.MachinesCreatedCondition, metav1.ConditionTrue, controlplanev1.MachinesCreatedReason)
			f.g.Expect(f.machines()).To(HaveLen(3))
		})
	}
}

func TestScaleDownKeepsEtcdQuorum(t *testing.T) {
	f := newFixture(t)
	f.begin()
	f.reconcileN(3)
	before := names(f.machines())
	f.g.Expect(before).To(HaveLen(3))
	f.scale(2)
	f.reconcileN(2)
	f.g.Expect(names(f.machines())).To(ConsistOf(before), "no etcd member is removed")
	c := f.expectCondition(controlplanev1.MachinesCreatedCondition, metav1.ConditionFalse, controlplanev1.ScaleDownBlockedReason)
	f.g.Expect(c.Message).To(ContainSubstring("refusing to scale from 3 to 2"))
	f.g.Expect(c.Message).To(ContainSubstring("set replicas to 3 or more"))
	f.expectCondition(controlplanev1.ReadyCondition, metav1.ConditionFalse, "")
}

// TestScaleDownWhileConfigsQueued scales 4 -> 2 while the bootstrap
// provider has not got to the new Machines' configs: the delete-annotated
// Machine goes, the control plane stops at 3 (etcd quorum), and the config
// of the deleted Machine, reconciled after its Machine is gone, waits
// instead of failing.
func TestScaleDownWhileConfigsQueued(t *testing.T) {
	f := newFixture(t, withReplicas(4))
	g, ctx := f.g, context.Background()
	f.reconcileN(2)
	ms := f.scaleUpSlowly(4)
	By(t, "holding the bootstrap provider's work on the new configs, which Cluster API gave to their Machines")
	for _, n := range ms {
		f.pauseConfig(n, true)
		f.adoptConfig(n)
	}
	f.annotate(ms[1], clusterv1.DeleteMachineAnnotation)

	f.scale(2)
	f.reconcileN(3)
	g.Expect(names(f.machines())).To(ConsistOf(ms[0], ms[2], ms[3]), "the annotated Machine goes, then etcd quorum stops the scale-down")
	f.expectCondition(controlplanev1.MachinesCreatedCondition, metav1.ConditionFalse, controlplanev1.ScaleDownBlockedReason)

	By(t, "the bootstrap provider catching up")
	for _, n := range ms {
		f.pauseConfig(n, false)
	}
	g.Eventually(func(g Gomega) {
		c := &bootstrapv1.OpenshiftAssistedConfig{}
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: ms[1]}, c)).To(Succeed())
		g.Expect(conditions.GetReason(c, bootstrapv1.DataSecretAvailableCondition)).To(Equal(bootstrapv1.WaitingForMachineReason))
		g.Expect(conditions.GetMessage(c, bootstrapv1.DataSecretAvailableCondition)).To(ContainSubstring("does not exist"))
	}, 20*time.Second).Should(Succeed(), "the config of the deleted Machine waits; its reconcile does not fail")
	for _, n := range []string{ms[0], ms[2], ms[3]} {
		g.Eventually(func() string {
			c := &bootstrapv1.OpenshiftAssistedConfig{}
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: n}, c)).To(Succeed())
			return c.Status.InfraEnvName
		}, 20*time.Second).Should(Equal(n), "the remaining Machines get their InfraEnv")
	}

	By(t, "Cluster API deleting the config of the deleted Machine")
	c := &bootstrapv1.OpenshiftAssistedConfig{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: ms[1]}, c)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, c)).To(Succeed())
	g.Eventually(func() bool { return apierrors.IsNotFound(env.Client.Get(ctx, client.ObjectKeyFromObject(c), c)) }, 20*time.Second).Should(BeTrue())
}

func TestNothingCreatedOrDeletedWhileAMachineIsDeleted(t *testing.T) {
	f := newFixture(t)
	g, ctx := f.g, context.Background()
	f.begin()
	f.reconcileN(2)
	ms := f.machines()
	g.Expect(ms).To(HaveLen(3))
	m := &ms[0]
	g.Expect(env.Update(client.ObjectKeyFromObject(m), m, func() { m.Finalizers = []string{"test/hold"} }, false)).To(Succeed())
	g.Expect(env.Client.Delete(ctx, m)).To(Succeed())
	f.reconcileN(2)
	g.Expect(f.machines()).To(HaveLen(3), "no replacement while the Machine is being deleted")
	f.expectCondition(controlplanev1.MachinesCreatedCondition, metav1.ConditionFalse, controlplanev1.WaitingForMachineDeletionReason)

	g.Expect(env.Update(client.ObjectKeyFromObject(m), m, func() { m.Finalizers = nil }, false)).To(Succeed())
	f.reconcile()
	g.Expect(f.machines()).To(HaveLen(3))
	g.Expect(names(f.machines())).NotTo(ContainElement(m.Name), "a new Machine replaces it")
}

func TestRemediation(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		replicas  int32
		unhealthy int
		remediate bool
	}{
		{name: "one of three unhealthy: replaced", replicas: 3, unhealthy: 1, remediate: true},
		{name: "two of three unhealthy: quorum would be lost", replicas: 3, unhealthy: 2},
		{name: "single node unhealthy: nothing to replace it from", replicas: 1, unhealthy: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := []option{withReplicas(tc.replicas)}
			if tc.replicas == 1 {
				opts = append(opts, func(cp *controlplanev1.OpenshiftAssistedControlPlane) {
					cp.Spec.Config.APIVIPs, cp.Spec.Config.IngressVIPs = nil, nil
				})
			}
			f := newFixture(t, opts...)
			f.begin()
			f.reconcileN(int(tc.replicas))
			ms := names(f.machines())
			f.g.Expect(ms).To(HaveLen(int(tc.replicas)))
			for _, n := range ms[:tc.unhealthy] {
				f.ownerRemediate(n)
			}
			f.reconcile()
			if !tc.remediate {
				f.g.Expect(names(f.machines())).To(ConsistOf(ms))
				f.expectCondition(controlplanev1.MachinesCreatedCondition, metav1.ConditionFalse, controlplanev1.RemediationBlockedReason)
				return
			}
			f.g.Expect(names(f.machines())).To(ConsistOf(ms[1:]), "the unhealthy Machine is deleted")
			f.expectCondition(controlplanev1.MachinesCreatedCondition, metav1.ConditionFalse, controlplanev1.RemediatingReason)
			f.reconcile()
			f.g.Expect(f.machines()).To(HaveLen(3), "and replaced")
		})
	}
}

func (f *fixture) annotate(machine, key string) {
	f.t.Helper()
	m := &clusterv1.Machine{}
	f.g.Expect(env.Update(client.ObjectKey{Namespace: f.ns, Name: machine}, m, func() {
		if m.Annotations == nil {
			m.Annotations = map[string]string{}
		}
		m.Annotations[key] = ""
	}, false)).To(Succeed())
}

// joined sets the Machine's node as Cluster API does once it joined.
func (f *fixture) joined(machine string) {
	f.t.Helper()
	m := &clusterv1.Machine{}
	f.g.Expect(env.Update(client.ObjectKey{Namespace: f.ns, Name: machine}, m, func() {
		m.Status.NodeRef = clusterv1.MachineNodeReference{Name: machine}
	}, true)).To(Succeed())
}

// ownerRemediate marks the Machine as a MachineHealthCheck does when it
// leaves remediation to the Machine's owner.
func (f *fixture) ownerRemediate(machine string) {
	f.t.Helper()
	m := &clusterv1.Machine{}
	f.g.Expect(env.Update(client.ObjectKey{Namespace: f.ns, Name: machine}, m, func() {
		conditions.Set(m, metav1.Condition{
			Type: clusterv1.MachineOwnerRemediatedCondition, Status: metav1.ConditionFalse,
			Reason: clusterv1.MachineOwnerRemediatedWaitingForRemediationReason, Message: "Waiting for remediation",
		})
	}, true)).To(Succeed())
}

// adoptConfig makes the Machine the controller of its config, as Cluster
// API's Machine controller does.
func (f *fixture) adoptConfig(name string) {
	f.t.Helper()
	m := &clusterv1.Machine{}
	f.g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: name}, m)).To(Succeed())
	c := &bootstrapv1.OpenshiftAssistedConfig{}
	f.g.Expect(env.Update(client.ObjectKey{Namespace: f.ns, Name: name}, c, func() {
		c.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(m, clusterv1.GroupVersion.WithKind("Machine"))}
	}, false)).To(Succeed())
}

func (f *fixture) pauseConfig(name string, pause bool) {
	f.t.Helper()
	c := &bootstrapv1.OpenshiftAssistedConfig{}
	f.g.Expect(env.Update(client.ObjectKey{Namespace: f.ns, Name: name}, c, func() {
		if c.Annotations == nil {
			c.Annotations = map[string]string{}
		}
		if pause {
			c.Annotations[clusterv1.PausedAnnotation] = ""
		} else {
			delete(c.Annotations, clusterv1.PausedAnnotation)
		}
	}, false)).To(Succeed())
}

func without(all, drop []string) []string {
	var out []string
	for _, a := range all {
		keep := true
		for _, d := range drop {
			keep = keep && a != d
		}
		if keep {
			out = append(out, a)
		}
	}
	return out
}
