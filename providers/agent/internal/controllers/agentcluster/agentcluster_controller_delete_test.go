package agentcluster_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	capiagentv1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
	hiveextv1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

// otherOwner is an owner reference of the ClusterDeployment that is not
// the provider's, which orphaning must keep.
var otherOwner = metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "other", UID: "5b3a6a0e-0000-4000-8000-000000000002"}

// readyWithOtherOwner starts the controller, has it make the AgentCluster
// ready, and adds otherOwner to its ClusterDeployment.
func (f *fixture) readyWithOtherOwner() *capiagentv1.AgentCluster {
	f.t.Helper()
	f.startController()
	f.agentCluster(withEndpoint(nil))
	ac := f.eventuallyReady()
	cd := &hivev1.ClusterDeployment{}
	f.g.Expect(env.Update(client.ObjectKey{Namespace: f.ns, Name: f.name}, cd, func() {
		cd.OwnerReferences = append(cd.OwnerReferences, otherOwner)
	}, false)).To(Succeed())
	return ac
}

func (f *fixture) setPaused(paused bool) {
	f.t.Helper()
	ac := &capiagentv1.AgentCluster{}
	f.g.Expect(env.Update(client.ObjectKey{Namespace: f.ns, Name: f.name}, ac, func() {
		if paused {
			metav1.SetMetaDataAnnotation(&ac.ObjectMeta, clusterv1.PausedAnnotation, "true")
		} else {
			delete(ac.Annotations, clusterv1.PausedAnnotation)
		}
	}, false)).To(Succeed())
}

// Rule 15: pausing an AgentCluster removes its owner reference from the
// ClusterDeployment, and only that one (upstream L116-122, L485-517);
// unpausing owns it again (L365-386).
func TestPausedOrphans(t *testing.T) {
	f := newFixture(t)
	ac := f.readyWithOtherOwner()

	f.setPaused(true)
	f.g.Eventually(f.ownerRefs, timeout).Should(Equal([]metav1.OwnerReference{otherOwner}))
	f.g.Expect(f.clusterDeployment().Labels).To(HaveKeyWithValue("agentClusterRef", f.name), "the label stays")

	f.setPaused(false)
	f.g.Eventually(f.ownerRefs, timeout).Should(ConsistOf(otherOwner, ownerRefOf(ac)))
}

// Rule 15: an AgentCluster paused from the start gets its finalizer and
// nothing else: no ClusterDeployment, no status, no backup label (upstream
// L112-122).
func TestPausedFromTheStart(t *testing.T) {
	f := newFixture(t)
	f.startController()
	f.agentCluster(withEndpoint(nil), func(ac *capiagentv1.AgentCluster) {
		ac.Annotations = map[string]string{clusterv1.PausedAnnotation: "true"}
	})
	f.g.Eventually(func() []string { return f.getAgentCluster().Finalizers }, timeout).
		Should(ConsistOf(capiagentv1.AgentClusterFinalizerName))
	f.g.Consistently(func(g Gomega) {
		ac := f.getAgentCluster()
		g.Expect(ac.Status.ClusterDeploymentRef).To(BeZero())
		g.Expect(ac.Status.Ready).To(BeFalse())
		g.Expect(ac.Labels).NotTo(HaveKey(capiagentv1.BackupLabel))
		g.Expect(f.clusterDeployment()).To(BeNil())
	}, quiet).Should(Succeed())

	f.setPaused(false)
	f.eventuallyReady()
}

// Rule 15, deletion (upstream L104-110, L474-483): the finalizer goes at
// once. Unpaused, the ClusterDeployment keeps the owner reference, by
// which the garbage collector deletes it (envtest runs none, so the test
// stops there); paused, the ClusterDeployment is orphaned first and stays.
// The AgentClusterInstall is not the provider's to delete.
func TestDelete(t *testing.T) {
	t.Parallel()
	for _, paused := range []bool{false, true} {
		name := "unpaused"
		if paused {
			name = "paused"
		}
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			ac := f.readyWithOtherOwner()
			if paused {
				// Orphaned by the deletion's reconcile, not by an earlier one.
				f.g.Expect(env.Update(client.ObjectKeyFromObject(ac), ac, func() {
					ac.Finalizers = append(ac.Finalizers, "test.paritylab.io/hold")
				}, false)).To(Succeed())
				f.g.Expect(env.Client.Delete(context.Background(), ac)).To(Succeed())
				f.g.Eventually(func() []string { return f.getAgentCluster().Finalizers }, timeout).
					Should(ConsistOf("test.paritylab.io/hold"))
				f.g.Expect(f.ownerRefs(f.g)).To(ConsistOf(otherOwner, ownerRefOf(ac)), "not paused yet")
				f.setPaused(true)
				f.g.Eventually(f.ownerRefs, timeout).Should(Equal([]metav1.OwnerReference{otherOwner}))
				f.g.Expect(env.Update(client.ObjectKeyFromObject(ac), ac, func() { ac.Finalizers = nil }, false)).To(Succeed())
			} else {
				f.g.Expect(env.Client.Delete(context.Background(), ac)).To(Succeed())
			}
			f.g.Eventually(func() bool {
				err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(ac), &capiagentv1.AgentCluster{})
				return apierrors.IsNotFound(err)
			}, timeout).Should(BeTrue(), "the AgentCluster should go")
			if paused {
				f.g.Expect(f.ownerRefs(f.g)).To(Equal([]metav1.OwnerReference{otherOwner}))
			} else {
				f.g.Expect(f.ownerRefs(f.g)).To(ConsistOf(otherOwner, ownerRefOf(ac)))
			}
			f.get(&hiveextv1.AgentClusterInstall{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: f.name}})
		})
	}
}
