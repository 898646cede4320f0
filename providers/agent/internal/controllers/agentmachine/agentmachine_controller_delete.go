package agentmachine

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	capiagentv1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
)

// reconcileDeleteHook is where deletion is handled, first thing after the
// owner Machine is found (upstream L133-136, L252-373; plan rule 12). It
// reports done when the reconcile must stop there.
//
// Only the finalizer of rule 1 is written so far (upstream L268-271), so
// that AgentMachines created now are already held for the unbinding to
// come. Plan step P4 adds here: the Machine's pre-terminate hook
// annotation while the Machine is not being deleted; on a paused deleting
// AgentMachine, removing hook and finalizer without unbinding; once the
// Machine waits on the hook, unbinding the Agent and removing hook and
// finalizer when the Agent is back in an unbound state or gone. P4 also
// drops the finalizer of a deleting AgentMachine whose Machine is gone
// (upstream L116-124), in Reconcile where the owner Machine is read.
//
// Until then a deleting AgentMachine is reconciled like any other, as
// upstream does while its Machine has not reached the hook (L300-303),
// and keeps its finalizer.
func (r *Reconciler) reconcileDeleteHook(_ context.Context, s *scope) (done bool, err error) {
	if s.agentMachine.DeletionTimestamp.IsZero() {
		controllerutil.AddFinalizer(s.agentMachine, capiagentv1.AgentMachineFinalizerName)
	}
	return false, nil
}
