package agentmachine

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	capiagentv1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
	agentv1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

// +kubebuilder:rbac:groups=cluster.x-k8s.io,resources=machines,verbs=get;list;watch;update;patch

// unbindPollInterval is how often a Machine held at the hook looks again
// at an Agent on its way back to discovery (upstream L372).
const unbindPollInterval = 5 * time.Second

// unboundStates are the Agent states in which the Machine's deletion may go
// on: the host is back in discovery unbound, or waits for someone to
// reboot it, or failed (upstream L351-359).
var unboundStates = []string{
	agentv1.AgentStateDiscoveringUnbound,
	agentv1.AgentStateKnownUnbound,
	agentv1.AgentStateDisconnectedUnbound,
	agentv1.AgentStateInsufficientUnbound,
	agentv1.AgentStateDisabledUnbound,
	agentv1.AgentStateUnbindingPendingUserAction,
	agentv1.AgentStateError,
}

// reconcileDeleteHook handles deletion, first thing after the owner
// Machine is found (upstream L133-136, L252-373; plan rule 12). It reports
// done, with the result to return, when the reconcile must stop there.
//
// While the Machine lives, it holds the Machine's deletion at a
// pre-terminate hook and the AgentMachine at a finalizer. Once Cluster API
// waits on the hook (the drain is over), it unbinds the Agent, which
// sends the host back to discovery, and lets the deletion go on when the
// Agent is unbound, failed or gone. A paused AgentMachine being deleted
// lets go at once, without unbinding (a move between hubs).
func (r *Reconciler) reconcileDeleteHook(ctx context.Context, s *scope) (done bool, result ctrl.Result, err error) {
	am, machine := s.agentMachine, s.machine
	if _, ok := machine.Annotations[capiagentv1.MachineDeleteHookAnnotation]; !ok && machine.DeletionTimestamp.IsZero() {
		if err := r.setDeleteHook(ctx, machine); err != nil {
			return true, ctrl.Result{}, err
		}
	}
	if am.DeletionTimestamp.IsZero() {
		controllerutil.AddFinalizer(am, capiagentv1.AgentMachineFinalizerName)
	}
	if am.Annotations[clusterv1.PausedAnnotation] == "true" {
		if am.DeletionTimestamp.IsZero() {
			return false, ctrl.Result{}, nil
		}
		ctrl.LoggerFrom(ctx).Info("The AgentMachine is paused: letting it go without unbinding its Agent")
		return true, ctrl.Result{}, r.releaseMachine(ctx, machine, am)
	}
	switch atHook, hookDone := waitingForHook(machine); {
	case hookDone:
		controllerutil.RemoveFinalizer(am, capiagentv1.AgentMachineFinalizerName)
		return true, ctrl.Result{}, nil
	case !atHook:
		return false, ctrl.Result{}, nil
	}
	requeue, err := r.unbind(ctx, s)
	if err != nil || requeue {
		return true, ctrl.Result{RequeueAfter: unbindPollInterval}, err
	}
	return true, ctrl.Result{}, r.releaseMachine(ctx, machine, am)
}

// waitingForHook says whether the Machine's deletion waits on the
// pre-terminate hooks: its Deleting condition's reason (Cluster API
// v1beta2), or else the v1beta1 PreTerminateDeleteHookSucceeded condition
// being there and not True (upstream L294-316). hookDone is that v1beta1
// condition True: the hook was dealt with before, only the finalizer is
// left. Upstream looks the v1beta1 condition up among the v1beta2
// conditions, where Cluster API v1.13 never writes it; this reads it where
// Cluster API keeps it (status.deprecated.v1beta1.conditions), which only
// matters when an earlier removal of the finalizer failed.
func waitingForHook(machine *clusterv1.Machine) (atHook, hookDone bool) {
	if c := meta.FindStatusCondition(machine.Status.Conditions, clusterv1.MachineDeletingCondition); c != nil &&
		c.Reason == clusterv1.MachineDeletingWaitingForPreTerminateHookReason {
		return true, false
	}
	d := machine.Status.Deprecated
	if d == nil || d.V1Beta1 == nil {
		return false, false
	}
	for _, c := range d.V1Beta1.Conditions {
		if c.Type == clusterv1.PreTerminateDeleteHookSucceededV1Beta1Condition {
			return c.Status != corev1.ConditionTrue, c.Status == corev1.ConditionTrue
		}
	}
	return false, false
}

// unbind clears everything binding put on the AgentMachine's Agent
// (upstream L336-349) and says whether to look again later because the
// Agent is still on its way back to discovery. An AgentMachine that never
// bound one, or whose Agent is gone, has nothing to wait for.
func (r *Reconciler) unbind(ctx context.Context, s *scope) (requeue bool, err error) {
	if s.agentMachine.Status.AgentRef == nil {
		return false, nil
	}
	agent, err := r.boundAgent(ctx, s.agentMachine)
	if apierrors.IsNotFound(err) {
		ctrl.LoggerFrom(ctx).Info("The bound Agent is gone", "Agent", s.agentMachine.Status.AgentRef.Name)
		return false, nil
	}
	if err != nil {
		return false, err
	}
	log := ctrl.LoggerFrom(ctx).WithValues("Agent", klog.KObj(agent))
	if _, labelled := agent.Labels[capiagentv1.AgentMachineRefLabelKey]; labelled || agent.Spec.ClusterDeploymentName != nil {
		log.Info("Unbinding the Agent")
		delete(agent.Labels, capiagentv1.AgentMachineRefLabelKey)
		delete(agent.Annotations, capiagentv1.AgentMachineRefNamespace)
		agent.Spec.MachineConfigPool = ""
		agent.Spec.IgnitionEndpointTokenReference = nil
		agent.Spec.IgnitionEndpointHTTPHeaders = nil
		agent.Spec.ClusterDeploymentName = nil
		if err := r.Client.Update(ctx, agent); err != nil {
			return false, fmt.Errorf("unbind Agent %s: %w", agent.Name, err)
		}
	}
	if slices.Contains(unboundStates, agent.Status.DebugInfo.State) {
		log.Info("The Agent is unbound: letting the Machine's deletion go on", "state", agent.Status.DebugInfo.State)
		return false, nil
	}
	log.Info("Waiting for the Agent to return to discovery", "state", agent.Status.DebugInfo.State)
	return true, nil
}

func (r *Reconciler) setDeleteHook(ctx context.Context, machine *clusterv1.Machine) error {
	ctrl.LoggerFrom(ctx).Info("Adding the pre-terminate hook to the Machine")
	base := machine.DeepCopy()
	if machine.Annotations == nil {
		machine.Annotations = map[string]string{}
	}
	machine.Annotations[capiagentv1.MachineDeleteHookAnnotation] = ""
	if err := r.Client.Patch(ctx, machine, client.MergeFrom(base)); err != nil {
		return fmt.Errorf("add the pre-terminate hook to Machine %s: %w", machine.Name, err)
	}
	return nil
}

// releaseMachine removes the Machine's hook and the AgentMachine's
// finalizer (upstream L240-251).
func (r *Reconciler) releaseMachine(ctx context.Context, machine *clusterv1.Machine, am *capiagentv1.AgentMachine) error {
	if _, ok := machine.Annotations[capiagentv1.MachineDeleteHookAnnotation]; ok {
		base := machine.DeepCopy()
		delete(machine.Annotations, capiagentv1.MachineDeleteHookAnnotation)
		if err := r.Client.Patch(ctx, machine, client.MergeFrom(base)); err != nil {
			return fmt.Errorf("remove the pre-terminate hook from Machine %s: %w", machine.Name, err)
		}
	}
	controllerutil.RemoveFinalizer(am, capiagentv1.AgentMachineFinalizerName)
	return nil
}
