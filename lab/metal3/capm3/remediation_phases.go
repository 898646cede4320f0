package capm3

import (
	"context"
	"fmt"
	"time"

	capm3v1beta1 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"
	v1beta1conditions "sigs.k8s.io/cluster-api/util/conditions/deprecated/v1beta1"
)

// defaultTimeout is how long a reboot is given to heal the Machine when
// the strategy names no timeout.
const defaultTimeout = 5 * time.Minute

// reconcileReboot moves the Reboot strategy along: Running power-cycles
// the host (reboot annotation on until the host is off, then off so the
// operator powers it on again); Waiting gives the Machine the timeout to
// become healthy, after which it reboots again or, with the retries spent,
// hands the Machine to its owner.
func (r *remediationReconciler) reconcileReboot(ctx context.Context, s *remediationScope) (ctrl.Result, error) {
	rem := s.rem
	switch rem.Status.Phase {
	case "":
		rem.Status.Phase = capm3v1beta1.PhaseRunning
		return ctrl.Result{Requeue: true}, nil
	case capm3v1beta1.PhaseRunning:
		return r.reboot(ctx, s)
	case capm3v1beta1.PhaseWaiting:
		return r.wait(ctx, s)
	case capm3v1beta1.PhaseDeleting:
		return ctrl.Result{}, r.handOver(ctx, s)
	}
	return ctrl.Result{}, nil
}

// reboot power-cycles the host once.
func (r *remediationReconciler) reboot(ctx context.Context, s *remediationScope) (ctrl.Result, error) {
	key := rebootAnnotation(s.rem)
	if _, on := s.host.Annotations[key]; !on {
		if err := r.setRebootAnnotation(ctx, s, true); err != nil {
			return ctrl.Result{}, err
		}
		s.log.Info("Powering the host off", "BareMetalHost", s.host.Name, "retry", s.rem.Status.RetryCount+1)
		return ctrl.Result{RequeueAfter: r.requeueAfter}, nil
	}
	if s.host.Status.PoweredOn {
		return ctrl.Result{RequeueAfter: r.requeueAfter}, nil // the operator has not powered it off yet
	}
	if err := r.setRebootAnnotation(ctx, s, false); err != nil {
		return ctrl.Result{}, err
	}
	now := metav1.Now()
	s.rem.Status.LastRemediated = &now
	s.rem.Status.RetryCount++
	s.rem.Status.Phase = capm3v1beta1.PhaseWaiting
	s.log.Info("Host powered off; powering it on again", "BareMetalHost", s.host.Name, "retryCount", s.rem.Status.RetryCount)
	return ctrl.Result{RequeueAfter: timeout(s.rem)}, nil
}

// wait lets the timeout pass since the last reboot. The remediation
// still existing then means the MachineHealthCheck still finds the
// Machine unhealthy.
func (r *remediationReconciler) wait(ctx context.Context, s *remediationScope) (ctrl.Result, error) {
	rem := s.rem
	if rem.Status.LastRemediated != nil {
		if left := time.Until(rem.Status.LastRemediated.Add(timeout(rem))); left > 0 {
			return ctrl.Result{RequeueAfter: left}, nil
		}
	}
	if rem.Status.RetryCount < rem.Spec.Strategy.RetryLimit {
		rem.Status.Phase = capm3v1beta1.PhaseRunning
		return ctrl.Result{Requeue: true}, nil
	}
	rem.Status.Phase = capm3v1beta1.PhaseDeleting
	return ctrl.Result{}, r.handOver(ctx, s)
}

func timeout(rem *capm3v1beta1.Metal3Remediation) time.Duration {
	if t := rem.Spec.Strategy.Timeout; t != nil && t.Duration > 0 {
		return t.Duration
	}
	return defaultTimeout
}

// handOver marks the host unhealthy (no Metal3Machine will choose it) and
// sets the Machine's OwnerRemediated condition to False, which is what
// makes a MachineSet delete the Machine.
func (r *remediationReconciler) handOver(ctx context.Context, s *remediationScope) error {
	if _, ok := s.host.Annotations[capm3v1beta1.UnhealthyAnnotation]; !ok {
		before := s.host.DeepCopy()
		if s.host.Annotations == nil {
			s.host.Annotations = map[string]string{}
		}
		s.host.Annotations[capm3v1beta1.UnhealthyAnnotation] = "capm3/UnhealthyNode"
		if err := r.client.Patch(ctx, s.host, client.MergeFrom(before)); err != nil {
			return fmt.Errorf("mark BareMetalHost %s unhealthy: %w", s.host.Name, err)
		}
	}
	m := s.machine
	if conditions.IsFalse(m, clusterv1.MachineOwnerRemediatedCondition) &&
		conditions.GetReason(m, clusterv1.MachineOwnerRemediatedCondition) == clusterv1.MachineOwnerRemediatedWaitingForRemediationReason {
		return nil
	}
	before := m.DeepCopy()
	msg := fmt.Sprintf("Metal3Remediation %s spent its %d reboot(s); the owner replaces the Machine", s.rem.Name, s.rem.Status.RetryCount)
	conditions.Set(m, metav1.Condition{Type: clusterv1.MachineOwnerRemediatedCondition, Status: metav1.ConditionFalse,
		Reason: clusterv1.MachineOwnerRemediatedWaitingForRemediationReason, Message: msg})
	setMachineV1Beta1OwnerRemediated(m, msg)
	if err := r.client.Status().Patch(ctx, m, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("set OwnerRemediated on Machine %s: %w", m.Name, err)
	}
	s.log.Info("Handed the Machine to its owner for replacement", "Machine", m.Name)
	return nil
}

// setMachineV1Beta1OwnerRemediated keeps the deprecated v1beta1
// condition, which owners on the older contract read, in step.
func setMachineV1Beta1OwnerRemediated(m *clusterv1.Machine, msg string) {
	v1beta1conditions.MarkFalse(m, clusterv1.MachineOwnerRemediatedV1Beta1Condition, clusterv1.WaitingForRemediationV1Beta1Reason,
		clusterv1.ConditionSeverityWarning, "%s", msg)
}
