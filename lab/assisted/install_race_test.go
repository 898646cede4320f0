package assisted

import (
	"context"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

// A reconcile that works from a cache older than a host's install (the
// ACI still "preparing") must not start the install again: the host had
// already reported progress, and restarting sent it back from
// installing-in-progress to installing, a state change of the lab that no
// flow made (seen as a flapping agent phase in a parity run).
func TestStartInstallLeavesAnInstallingHostAlone(t *testing.T) {
	h := startHub(t)
	ctx := context.Background()
	ns := h.namespace(t)
	a := installedAgent(ns, "", "host-0", agentv1beta1.HostRoleMaster, agentv1beta1.HostKindHost)
	stale := *a.DeepCopy()
	stale.Status.DebugInfo.State = agentv1beta1.AgentStateKnown
	stale.Status.Progress.CurrentStage = ""
	a.Status.DebugInfo.State = agentv1beta1.AgentStateInstallingInProgress
	a.Status.Progress.CurrentStage = agentv1beta1.HostStageWritingImageToDisk
	h.agent(t, a)

	// No spoke: a start that went ahead would fail asking it for the
	// node's credentials.
	if err := h.svc.startInstall(ctx, &install{}, &stale, nil, false, false); err != nil {
		t.Fatalf("startInstall on an installing host: %v", err)
	}
	got := &agentv1beta1.Agent{}
	if err := h.c.Get(ctx, client.ObjectKeyFromObject(&a), got); err != nil {
		t.Fatal(err)
	}
	if got.Status.DebugInfo.State != agentv1beta1.AgentStateInstallingInProgress {
		t.Fatalf("state %q, want it left at %q", got.Status.DebugInfo.State, agentv1beta1.AgentStateInstallingInProgress)
	}
}
