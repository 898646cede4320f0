package replacement

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/redfish"
	"github.com/paritylab/paritylab/results"
	"github.com/paritylab/paritylab/scenarios"
)

// NameControlPlaneStaysDead: a control-plane host hangs on every
// power-on; the remediation's retries run out, and nothing replaces the
// Machine on either side (OpenShift's Metal3Remediation never deletes a
// master; CAPM3 asks the owner with the deprecated v1beta1
// OwnerRemediated only, which the control-plane provider does not read).
const NameControlPlaneStaysDead = "replacement-control-plane-stays-dead"

const (
	// propertyAfterGaveUp says what became of the set settleWindow after
	// the remediation gave up.
	propertyAfterGaveUp = "remediation.afterGaveUp"
	// propertyDeadNode says what became of the dead host's Node.
	propertyDeadNode = "remediation.deadNode"
)

// ControlPlaneStaysDeadMilestones are the stays-dead milestones said of a
// control-plane host, the first saying what the lab does not model.
func ControlPlaneStaysDeadMilestones() []results.Milestone {
	ms := StaysDeadMilestones()
	ms[0].Description = "a control-plane host's server hangs on every power-on (a hang fault that stays); " + noEtcd
	for i := range ms {
		ms[i].Description = strings.ReplaceAll(ms[i].Description, "worker's", "control-plane host's")
	}
	return ms
}

// nodeFate says what the Node named name with the UID uid is at the end:
// gone, or kept with its Ready status and taints. A Node of that name
// with another UID is a new one (a replacement on the same host, whose
// Node takes the host's name): the one asked about is gone.
func nodeFate(ctx context.Context, c client.Client, name string, uid types.UID) string {
	node := &corev1.Node{}
	err := c.Get(ctx, client.ObjectKey{Name: name}, node)
	if apierrors.IsNotFound(err) || (err == nil && node.UID != uid) {
		return "gone"
	}
	Expect(err).NotTo(HaveOccurred())
	ready := "Ready"
	if !scenarios.NodeReady(node) {
		ready = "NotReady"
	}
	var taints []string
	for _, t := range node.Spec.Taints {
		taints = append(taints, t.Key+":"+string(t.Effect))
	}
	sort.Strings(taints)
	return fmt.Sprintf("kept, %s, taints %s", ready, orNone(taints))
}

// controlPlaneStaysDeadSpec: the control plane's target host hangs for
// good; the run follows the remediation until it gives up, waits
// settleWindow and records that the set is the same three Machines, and
// what the dead Machine's remediation request is.
func controlPlaneStaysDeadSpec(ctx SpecContext, in scenarios.Input, flow results.Flow, s side) {
	ws := s.ensureWorkers(ctx)
	w := target(ws)
	DeferCleanup(func(ctx SpecContext) { s.deleteHealthCheck(ctx) })
	s.createHealthCheck(ctx, staysDeadHealthCheck)
	mhcUID, before := waitHealthy(ctx, in, s, len(ws))

	run := scenarios.NewRunAfterSetUp(ctx, NameControlPlaneStaysDead, flow, Fixture(), ControlPlaneStaysDeadMilestones())
	s.record(ctx, run, ws)
	run.SetProperty(mhcUID, propertyHealthBefore, before.String())
	DeferCleanup(func(ctx SpecContext) {
		scenarios.KeepObservation(ctx, in, func(ctx context.Context, failed bool, why string) *results.Observation {
			return s.finish(ctx, failed, why)
		})
	})
	host := s.host(ctx, Default, w)
	w.Host = host.Name
	deadNode := nodeOf(ctx, Default, s.workload(), w.Node).UID
	DeferCleanup(func(ctx SpecContext) {
		Expect(scenarios.ClearHostFault(ctx, in.Lab, host)).To(Succeed())
	})
	By("hanging a control-plane host's server through its BMC, on every power-on")
	hungAt := time.Now()
	Expect(scenarios.HangHost(ctx, in.Lab, host, redfish.HangAlways)).To(Succeed())
	run.Reach(milestoneHung)
	followDeath(ctx, in, run, s, w, hungAt)

	By(fmt.Sprintf("watching the control plane for %s after the remediation gave up", settleWindow))
	Consistently(func(g Gomega) {
		var uids []string
		for _, m := range s.liveMachines(ctx, g) {
			uids = append(uids, string(m.Machine))
		}
		g.Expect(uids).To(HaveLen(len(ws)), "the control plane's Machines")
		g.Expect(uids).To(ContainElement(string(w.Machine)), "the dead Machine")
	}).WithContext(ctx).WithTimeout(settleWindow).WithPolling(2 * time.Second).Should(Succeed())
	run.SetProperty(w.Machine, propertyAfterGaveUp, fmt.Sprintf("no Machine replaced or deleted %s after the remediation gave up", settleWindow))
	// The dead host's Node: its fate is one property, and the Node aspects
	// compare the two live members only (a Node one flow deleted would
	// otherwise show as one Node fewer in each of them).
	run.SetProperty(w.Machine, propertyDeadNode, nodeFate(ctx, s.workload(), w.Node, deadNode))
	s.forgetNode(w.Node)
	run.SetProperty(w.Machine, propertyRequestAtEnd, s.requestState(ctx, Default, w))
	_, after := s.healthCounts(ctx, Default)
	run.SetProperty(mhcUID, propertyHealthAfter, after.String())
	AddReportEntry(fmt.Sprintf("%s %s flow", NameControlPlaneStaysDead, strings.ToUpper(string(flow))), time.Since(run.Started).Round(time.Second).String())
}
