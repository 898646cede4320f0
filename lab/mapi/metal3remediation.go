package mapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-logr/logr"
	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	capm3v1beta1 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta1"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// Metal3Remediation in the machine API, ported from the upstream bare-metal
// machine controller's Metal3Remediation controller and its remediation
// manager. A MachineHealthCheck whose remediationTemplate names a
// Metal3RemediationTemplate makes MAO's MHC controller create a
// Metal3Remediation named and owned by the unhealthy Machine (and delete it
// once the Machine is healthy). For the Reboot strategy the controller then
//  1. (phase Running) adds its finalizer, holds the host off with a hard
//     reboot.metal3.io/metal3-remediation-<UID> annotation and waits until
//     it is off; backs the Node's annotations and labels up on the
//     remediation and deletes the Node; switches to Waiting;
//  2. (phase Waiting) lets the host power on and waits until it is on;
//     when the Node is back, restores what was backed up and drops its
//     finalizer;
//  3. after spec.strategy.timeout from the last reboot with the Machine
//     still unhealthy, reboots again (retryCount+1) until retryCount equals
//     retryLimit; then deletes the Machine if it can be reprovisioned (as
//     the external-baremetal remediation decides), marks the host
//     capi.metal3.io/unhealthy and ends in phase "Deleting machine".
//
// A host whose spec.online is false fails the remediation. Upstream
// watches only Metal3Remediations and polls the host and the Node by
// requeueing; it records no events. Unlike CAPM3 it deletes the Machine
// itself, as MAPI has no owner-remediated handshake.
const (
	// metal3RemediationPowerOffPrefix + the remediation's UID names the
	// host annotation that holds its power off.
	metal3RemediationPowerOffPrefix = bmov1alpha1.RebootAnnotationPrefix + "/metal3-remediation-"
	// unhealthyHostValue is what the unhealthy annotation says.
	unhealthyHostValue = "capm3/UnhealthyNode"
	// Upstream's requeue intervals.
	remediationShortRequeue = time.Second
	remediationPollRequeue  = 5 * time.Second
)

// Metal3RemediationPowerOffAnnotation is the host annotation by which a
// Metal3Remediation holds the host's power off.
func Metal3RemediationPowerOffAnnotation(rem *capm3v1beta1.Metal3Remediation) string {
	return metal3RemediationPowerOffPrefix + string(rem.UID)
}

// metal3RemediationReconciler reconciles Metal3Remediations of a workload
// cluster's machine API.
type metal3RemediationReconciler struct {
	client client.Client
	log    logr.Logger
}

func (r *metal3RemediationReconciler) setupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("metal3remediation").
		For(&capm3v1beta1.Metal3Remediation{}).Complete(r)
}

// Reconcile takes the next step of one remediation and writes the
// remediation's metadata and status back, as upstream's patch helper does
// after every reconcile.
func (r *metal3RemediationReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, retErr error) {
	rem := &capm3v1beta1.Metal3Remediation{}
	if err := r.client.Get(ctx, req.NamespacedName, rem); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := rem.DeepCopy()
	defer func() { retErr = errors.Join(retErr, r.writeBack(ctx, before, rem)) }()
	m, err := r.machineOf(ctx, rem)
	if err != nil {
		return ctrl.Result{}, err
	}
	run := &remediationRun{client: r.client, rem: rem, machine: m,
		log: r.log.WithValues("metal3remediation", req.NamespacedName, "machine", m.Name)}
	return run.reconcile(ctx)
}

// machineOf is the Machine among the remediation's owners.
func (r *metal3RemediationReconciler) machineOf(ctx context.Context, rem *capm3v1beta1.Metal3Remediation) (*machinev1beta1.Machine, error) {
	for _, ref := range rem.OwnerReferences {
		if ref.Kind != "Machine" {
			continue
		}
		m := &machinev1beta1.Machine{}
		err := r.client.Get(ctx, client.ObjectKey{Namespace: rem.Namespace, Name: ref.Name}, m)
		if err == nil {
			return m, nil
		}
		if !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("get machine %s owning metal3remediation %s: %w", ref.Name, rem.Name, err)
		}
	}
	return nil, fmt.Errorf("metal3remediation %s/%s has no Machine owner", rem.Namespace, rem.Name)
}

// writeBack patches the remediation's metadata and status with what the
// step changed; a remediation deleted meanwhile (its Machine was) is gone.
func (r *metal3RemediationReconciler) writeBack(ctx context.Context, before, after *capm3v1beta1.Metal3Remediation) error {
	if !equality.Semantic.DeepEqual(before.ObjectMeta, after.ObjectMeta) {
		if err := r.client.Patch(ctx, after.DeepCopy(), client.MergeFrom(before)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("patch metal3remediation %s: %w", after.Name, err)
		}
	}
	if !equality.Semantic.DeepEqual(before.Status, after.Status) {
		if err := r.client.Status().Patch(ctx, after.DeepCopy(), client.MergeFrom(before)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("patch status of metal3remediation %s: %w", after.Name, err)
		}
	}
	return nil
}

// remediationRun is one reconcile of one remediation.
type remediationRun struct {
	client  client.Client
	rem     *capm3v1beta1.Metal3Remediation
	machine *machinev1beta1.Machine
	log     logr.Logger
}

func (run *remediationRun) reconcile(ctx context.Context) (ctrl.Result, error) {
	host, err := run.host(ctx)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("find the host of unhealthy machine %s: %w", run.machine.Name, err)
	}
	if !host.Spec.Online {
		run.log.Info("Unable to remediate, host is powered off (spec.online is false)", "host", host.Name)
		run.setPhase(capm3v1beta1.PhaseFailed)
		return ctrl.Result{}, nil
	}
	if s := run.rem.Spec.Strategy; s == nil || s.Type != capm3v1beta1.RebootRemediationStrategy {
		run.log.Info("Unsupported remediation strategy")
		return ctrl.Result{}, nil
	}
	if run.rem.Status.Phase == "" {
		run.setPhase(capm3v1beta1.PhaseRunning)
		run.rem.Status.LastRemediated = ptrNow()
		return ctrl.Result{RequeueAfter: remediationShortRequeue}, nil
	}
	node, err := run.node(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	switch run.rem.Status.Phase {
	case capm3v1beta1.PhaseRunning:
		return run.reboot(ctx, host, node)
	case capm3v1beta1.PhaseWaiting:
		return run.wait(ctx, host, node)
	case capm3v1beta1.PhaseDeleting, capm3v1beta1.PhaseFailed:
		return ctrl.Result{}, nil
	default:
		run.log.Error(nil, "Unknown remediation phase", "phase", run.rem.Status.Phase)
		return ctrl.Result{}, nil
	}
}

// reboot is phase Running: finalizer, power off, Node backed up and
// deleted once the host is off.
func (run *remediationRun) reboot(ctx context.Context, host *bmov1alpha1.BareMetalHost, node *corev1.Node) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(run.rem, capm3v1beta1.RemediationFinalizer) {
		controllerutil.AddFinalizer(run.rem, capm3v1beta1.RemediationFinalizer)
		return ctrl.Result{RequeueAfter: remediationShortRequeue}, nil
	}
	key := Metal3RemediationPowerOffAnnotation(run.rem)
	if _, requested := host.Annotations[key]; !requested {
		run.log.Info("Powering off the host", "host", host.Name)
		if err := annotateHost(ctx, run.client, host, key, `{"mode":"hard"}`); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: remediationPollRequeue}, nil
	}
	if host.Status.PoweredOn {
		return ctrl.Result{RequeueAfter: remediationPollRequeue}, nil
	}
	if node != nil {
		// Only once the host is off may the Node go: its workloads then
		// cannot run twice.
		if run.backUpNode(node) {
			run.log.Info("Backing up the node", "node", node.Name)
			return ctrl.Result{RequeueAfter: remediationShortRequeue}, nil
		}
		run.log.Info("Deleting the node", "node", node.Name)
		if node.DeletionTimestamp.IsZero() {
			if err := run.client.Delete(ctx, node); client.IgnoreNotFound(err) != nil {
				return ctrl.Result{}, fmt.Errorf("delete node %s of machine %s: %w", node.Name, run.machine.Name, err)
			}
		}
		return ctrl.Result{RequeueAfter: remediationPollRequeue}, nil
	}
	run.setPhase(capm3v1beta1.PhaseWaiting)
	return ctrl.Result{RequeueAfter: remediationPollRequeue}, nil
}

// wait is phase Waiting: power on, Node restored when back; on timeout
// another reboot, or the end of the remediation.
func (run *remediationRun) wait(ctx context.Context, host *bmov1alpha1.BareMetalHost, node *corev1.Node) (ctrl.Result, error) {
	key := Metal3RemediationPowerOffAnnotation(run.rem)
	if _, requested := host.Annotations[key]; requested {
		run.log.Info("Powering on the host", "host", host.Name)
		if err := annotateHost(ctx, run.client, host, key, ""); err != nil {
			return ctrl.Result{}, err
		}
	}
	if !host.Status.PoweredOn {
		return ctrl.Result{RequeueAfter: remediationPollRequeue}, nil
	}
	if node != nil && controllerutil.ContainsFinalizer(run.rem, capm3v1beta1.RemediationFinalizer) {
		run.log.Info("Restoring the node; remediation done", "node", node.Name)
		run.restoreNode(ctx, node)
		delete(run.rem.Annotations, NodeAnnotationsBackupAnnotation)
		delete(run.rem.Annotations, NodeLabelsBackupAnnotation)
		controllerutil.RemoveFinalizer(run.rem, capm3v1beta1.RemediationFinalizer)
		return ctrl.Result{RequeueAfter: remediationPollRequeue}, nil
	}
	if !run.timedOut() {
		return ctrl.Result{RequeueAfter: remediationPollRequeue}, nil
	}
	if s := run.rem.Spec.Strategy; s.RetryLimit > 0 && s.RetryLimit != run.rem.Status.RetryCount {
		run.log.Info("Remediation timed out, will retry", "retryCount", run.rem.Status.RetryCount+1)
		run.setPhase(capm3v1beta1.PhaseRunning)
		run.rem.Status.LastRemediated = ptrNow()
		run.rem.Status.RetryCount++
		return ctrl.Result{RequeueAfter: remediationShortRequeue}, nil
	}
	return ctrl.Result{}, run.giveUp(ctx, host)
}

// timedOut: spec.strategy.timeout has passed since the last reboot. A
// remediation without a timeout never times out (upstream dereferences
// it and fails every reconcile from here on, to the same effect).
func (run *remediationRun) timedOut() bool {
	last, timeout := run.rem.Status.LastRemediated, run.rem.Spec.Strategy.Timeout
	if last == nil || timeout == nil {
		return false
	}
	return last.Add(timeout.Duration).Before(time.Now())
}

// giveUp ends a remediation that ran out of retries: the Machine is
// deleted if it can be reprovisioned, and the host is marked unhealthy.
func (run *remediationRun) giveUp(ctx context.Context, host *bmov1alpha1.BareMetalHost) error {
	run.log.Info("Remediation timed out and retry limit reached")
	if canReprovision(run.machine, host) {
		run.log.Info("Deleting the machine")
		if err := run.client.Delete(ctx, run.machine); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete machine %s: %w", run.machine.Name, err)
		}
	} else {
		run.log.Info("Machine can't be reprovisioned, will not delete it")
	}
	if err := annotateHost(ctx, run.client, host, capm3v1beta1.UnhealthyAnnotation, unhealthyHostValue); err != nil {
		return err
	}
	run.setPhase(capm3v1beta1.PhaseDeleting)
	return nil
}

// host is the BareMetalHost the Machine's annotation names.
func (run *remediationRun) host(ctx context.Context) (*bmov1alpha1.BareMetalHost, error) {
	ref, ok := run.machine.Annotations[HostAnnotation]
	if !ok {
		return nil, fmt.Errorf("machine %s has no %s annotation", run.machine.Name, HostAnnotation)
	}
	ns, name, found := strings.Cut(ref, "/")
	if !found {
		return nil, fmt.Errorf("machine %s: annotation %s=%q is not <namespace>/<name>", run.machine.Name, HostAnnotation, ref)
	}
	h := &bmov1alpha1.BareMetalHost{}
	if err := run.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, h); err != nil {
		return nil, fmt.Errorf("get BareMetalHost %s: %w", ref, err)
	}
	return h, nil
}

// node is the Machine's Node, nil once deleted. A Machine without a
// nodeRef cannot be remediated: upstream fails every reconcile.
func (run *remediationRun) node(ctx context.Context) (*corev1.Node, error) {
	if run.machine.Status.NodeRef == nil {
		return nil, fmt.Errorf("node of machine %s: the machine has no nodeRef", run.machine.Name)
	}
	n := &corev1.Node{}
	err := run.client.Get(ctx, client.ObjectKey{Name: run.machine.Status.NodeRef.Name}, n)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get node %s of machine %s: %w", run.machine.Status.NodeRef.Name, run.machine.Name, err)
	}
	return n, nil
}

// backUpNode stores the Node's annotations and labels (JSON maps) on the
// remediation and says whether that changed anything.
func (run *remediationRun) backUpNode(node *corev1.Node) bool {
	annotations, labels := jsonMap(node.Annotations), jsonMap(node.Labels)
	if run.rem.Annotations[NodeAnnotationsBackupAnnotation] == annotations && run.rem.Annotations[NodeLabelsBackupAnnotation] == labels {
		return false
	}
	if run.rem.Annotations == nil {
		run.rem.Annotations = map[string]string{}
	}
	run.rem.Annotations[NodeAnnotationsBackupAnnotation] = annotations
	run.rem.Annotations[NodeLabelsBackupAnnotation] = labels
	return true
}

// restoreNode adds the backed-up annotations and labels the Node lacks.
// Upstream goes on when this fails: the remediation is done either way.
func (run *remediationRun) restoreNode(ctx context.Context, node *corev1.Node) {
	annotations, labels := run.rem.Annotations[NodeAnnotationsBackupAnnotation], run.rem.Annotations[NodeLabelsBackupAnnotation]
	if annotations == "" && labels == "" {
		return
	}
	node.Annotations = merged(node.Annotations, run.backup(annotations))
	node.Labels = merged(node.Labels, run.backup(labels))
	if err := run.client.Update(ctx, node); err != nil {
		run.log.Error(err, "Could not restore the node's annotations and labels", "node", node.Name)
	}
}

func (run *remediationRun) backup(raw string) map[string]string {
	out := map[string]string{}
	if raw == "" {
		return out
	}
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		run.log.Error(err, "Unreadable node backup; skipped")
	}
	return out
}

func (run *remediationRun) setPhase(phase string) {
	run.log.Info("Switching remediation phase", "phase", phase)
	run.rem.Status.Phase = phase
}

// jsonMap encodes a string map; nil is "".
func jsonMap(m map[string]string) string {
	if m == nil {
		return ""
	}
	raw, _ := json.Marshal(m) // a string map always encodes
	return string(raw)
}

func ptrNow() *metav1.Time {
	now := metav1.Now()
	return &now
}

// annotateHost sets (value != "") or removes an annotation of a host.
func annotateHost(ctx context.Context, c client.Client, h *bmov1alpha1.BareMetalHost, key, value string) error {
	patch := client.MergeFrom(h.DeepCopy())
	if value == "" {
		delete(h.Annotations, key)
	} else {
		if h.Annotations == nil {
			h.Annotations = map[string]string{}
		}
		h.Annotations[key] = value
	}
	if err := c.Patch(ctx, h, patch); err != nil {
		return fmt.Errorf("annotate BareMetalHost %s: %w", h.Name, err)
	}
	return nil
}
