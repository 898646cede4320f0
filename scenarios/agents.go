package scenarios

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/framework"
	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

// WaitAgentsInput is whose control-plane agents to wait for.
type WaitAgentsInput struct {
	Hub       client.Client
	Namespace string
	// Count is how many control-plane hosts the cluster has.
	Count    int
	Interval framework.Interval
}

// WaitControlPlaneAgents waits until the control-plane hosts' agents in the
// namespace registered with role master and were approved: the first
// milestone of an install in both flows.
func WaitControlPlaneAgents(ctx context.Context, in WaitAgentsInput) {
	By(fmt.Sprintf("waiting for the %d control-plane hosts' agents to register and be approved", in.Count))
	Eventually(func(g Gomega) {
		agents := &agentv1beta1.AgentList{}
		g.Expect(in.Hub.List(ctx, agents, client.InNamespace(in.Namespace))).To(Succeed())
		n := 0
		for _, a := range agents.Items {
			if a.Spec.Role == agentv1beta1.HostRoleMaster && a.Spec.Approved {
				n++
			}
		}
		g.Expect(n).To(BeNumerically(">=", in.Count), "approved control-plane agents among %d", len(agents.Items))
	}).WithContext(ctx).WithTimeout(in.Interval.Timeout).WithPolling(in.Interval.Polling).Should(Succeed())
}
