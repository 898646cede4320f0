package mapi

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// External remediation (MachineHealthCheck annotation
// machine.openshift.io/remediation-strategy: external-baremetal), ported
// from the upstream bare-metal actuator's remediateIfNeeded: MAO's MHC
// controller annotates an unhealthy Machine with
// ExternalRemediationAnnotation instead of deleting it, and the actuator
//  1. asks the bare-metal operator to power the host off (a hard reboot
//     annotation held on the host) and waits until it is off,
//  2. backs the Node's labels and annotations up on the Machine and
//     deletes the Node, so that its workloads move only once the host is
//     surely off,
//  3. marks the Machine powered off for remediation,
//  4. powers the host on and notes by when the Node must be back (the
//     MHC's nodeStartupTimeout, else 20 minutes),
//  5. waits for the Node; when it is late and the Machine can be
//     reprovisioned (its host not externally provisioned, a controller
//     owns it, not a master) it deletes the Machine so that its owner
//     replaces it,
//  6. restores the Node's labels and annotations and removes its own
//     annotations.
//
// Each step is one call of Update: the state lives in the annotations.
// Upstream records no events for any of it.
const (
	// ExternalRemediationAnnotation is what the MHC controller sets.
	ExternalRemediationAnnotation = "host.metal3.io/external-remediation"
	// PowerOffAnnotation on the host keeps its power off while present
	// (a reboot.metal3.io/<key> annotation, hard).
	PowerOffAnnotation = bmov1alpha1.RebootAnnotationPrefix + "/capbm-requested-power-off"
	// PoweredOffForRemediationAnnotation on the Machine says steps 1-3
	// are done.
	PoweredOffForRemediationAnnotation = "remediation.metal3.io/powered-off-for-remediation"
	// NodeLabelsBackupAnnotation and NodeAnnotationsBackupAnnotation hold
	// the deleted Node's labels and annotations (JSON maps) on the
	// Machine until the Node is back.
	NodeLabelsBackupAnnotation      = "remediation.metal3.io/node-labels-backup"
	NodeAnnotationsBackupAnnotation = "remediation.metal3.io/node-annotations-backup"
	// PowerOnTimeoutAtAnnotation on the Machine is when the Node must be
	// back after the power on (RFC 3339).
	PowerOnTimeoutAtAnnotation = "remediation.metal3.io/power-on-will-timeout-at"
	// defaultPowerOnTimeout applies when no MHC with a nodeStartupTimeout
	// selects the Machine.
	defaultPowerOnTimeout = 20 * time.Minute
	// machineRoleLabel names a Machine's role; masters are never deleted.
	machineRoleLabel = "machine.openshift.io/cluster-api-machine-role"
)

func externalRemediationRequested(m *machinev1beta1.Machine) bool {
	_, ok := m.Annotations[ExternalRemediationAnnotation]
	return ok
}

// remediate takes the next step of the remediation; it returns a requeue
// error while a step waits, nil once a step is done or the host is still
// powering off (the host's events bring the Machine back).
func (a *Actuator) remediate(ctx context.Context, m *machinev1beta1.Machine, h *bmov1alpha1.BareMetalHost) error {
	node, err := a.nodeOfRef(ctx, m)
	if err != nil {
		return err
	}
	_, poweredOff := m.Annotations[PoweredOffForRemediationAnnotation]
	_, powerOffRequested := h.Annotations[PowerOffAnnotation]
	switch {
	case !poweredOff && !powerOffRequested:
		a.log.Info("Remediation: unhealthy machine, requesting power off", "machine", m.Name, "host", h.Name)
		if err := annotateHost(ctx, a.client, h, PowerOffAnnotation, `{"mode":"hard"}`); err != nil {
			return err
		}
		return a.requeue("power off")
	case !poweredOff && h.Status.PoweredOn:
		return nil
	case !poweredOff && node != nil:
		return a.backUpAndDeleteNode(ctx, m, node)
	case !poweredOff:
		return a.setMachineAnnotations(ctx, m, map[string]string{PoweredOffForRemediationAnnotation: ""})
	case powerOffRequested:
		return a.powerOn(ctx, m, h)
	case node == nil:
		return a.waitForNode(ctx, m, h)
	}
	if _, ok := m.Annotations[NodeAnnotationsBackupAnnotation]; ok {
		return a.restoreNode(ctx, m, node)
	}
	a.log.Info("Remediation: node is back, done", "machine", m.Name, "node", node.Name)
	return a.removeMachineAnnotations(ctx, m, PoweredOffForRemediationAnnotation, ExternalRemediationAnnotation, PowerOnTimeoutAtAnnotation)
}

// backUpAndDeleteNode stores the Node's labels and annotations on the
// Machine, then deletes the Node; the host is off by now.
func (a *Actuator) backUpAndDeleteNode(ctx context.Context, m *machinev1beta1.Machine, node *corev1.Node) error {
	nodeLabels, err := json.Marshal(node.Labels)
	if err != nil {
		return fmt.Errorf("encode labels of node %s: %w", node.Name, err)
	}
	nodeAnnotations, err := json.Marshal(node.Annotations)
	if err != nil {
		return fmt.Errorf("encode annotations of node %s: %w", node.Name, err)
	}
	if err := a.setMachineAnnotations(ctx, m, map[string]string{
		NodeLabelsBackupAnnotation: string(nodeLabels), NodeAnnotationsBackupAnnotation: string(nodeAnnotations)}); err != nil {
		return err
	}
	if node.DeletionTimestamp.IsZero() {
		if err := a.client.Delete(ctx, node); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete node %s of machine %s: %w", node.Name, m.Name, err)
		}
		a.log.Info("Remediation: node deleted", "machine", m.Name, "node", node.Name)
	}
	return a.requeue("node deleted")
}

// powerOn notes by when the Node must be back and lets the host power on.
func (a *Actuator) powerOn(ctx context.Context, m *machinev1beta1.Machine, h *bmov1alpha1.BareMetalHost) error {
	deadline := time.Now().Add(a.powerOnTimeout(ctx, m)).Format(time.RFC3339)
	if err := a.setMachineAnnotations(ctx, m, map[string]string{PowerOnTimeoutAtAnnotation: deadline}); err != nil {
		return err
	}
	if err := annotateHost(ctx, a.client, h, PowerOffAnnotation, ""); err != nil {
		return err
	}
	a.log.Info("Remediation: host powering on", "machine", m.Name, "host", h.Name, "nodeDueBy", deadline)
	return a.requeue("power on")
}

// powerOnTimeout is the nodeStartupTimeout of the first MHC in the
// Machine's namespace that selects it, else 20 minutes.
func (a *Actuator) powerOnTimeout(ctx context.Context, m *machinev1beta1.Machine) time.Duration {
	list := &machinev1beta1.MachineHealthCheckList{}
	if err := a.client.List(ctx, list, client.InNamespace(m.Namespace)); err != nil {
		a.log.Error(err, "List MachineHealthChecks; using the default node startup timeout", "machine", m.Name)
		return defaultPowerOnTimeout
	}
	for _, mhc := range list.Items {
		sel, err := metav1.LabelSelectorAsSelector(&mhc.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(m.Labels)) {
			continue
		}
		if mhc.Spec.NodeStartupTimeout != nil && mhc.Spec.NodeStartupTimeout.Duration != 0 {
			return mhc.Spec.NodeStartupTimeout.Duration
		}
		return defaultPowerOnTimeout
	}
	return defaultPowerOnTimeout
}

// waitForNode waits for the Node to register again; a Machine that can be
// reprovisioned and whose Node is late is deleted for its owner to
// replace.
func (a *Actuator) waitForNode(ctx context.Context, m *machinev1beta1.Machine, h *bmov1alpha1.BareMetalHost) error {
	if powerOnTimedOut(m) && canReprovision(m, h) {
		a.log.Info("Remediation: the node did not come back in time; deleting the machine", "machine", m.Name,
			"dueBy", m.Annotations[PowerOnTimeoutAtAnnotation])
		if err := a.client.Delete(ctx, m); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete machine %s whose node did not come back: %w", m.Name, err)
		}
	}
	return a.requeue("node")
}

func powerOnTimedOut(m *machinev1beta1.Machine) bool {
	at, err := time.Parse(time.RFC3339, m.Annotations[PowerOnTimeoutAtAnnotation])
	return err == nil && time.Now().After(at)
}

// canReprovision: upstream deletes only a Machine whose host is not
// externally provisioned, that a controller owns, and that is no master.
func canReprovision(m *machinev1beta1.Machine, h *bmov1alpha1.BareMetalHost) bool {
	return !h.Spec.ExternallyProvisioned && metav1.GetControllerOf(m) != nil && m.Labels[machineRoleLabel] != "master"
}

// restoreNode gives the Node back the labels and annotations it had (what
// it has now wins) and drops the backup.
func (a *Actuator) restoreNode(ctx context.Context, m *machinev1beta1.Machine, node *corev1.Node) error {
	var backedUpLabels, backedUpAnnotations map[string]string
	// An unreadable backup is skipped, as upstream does: it would not
	// become readable on a later try.
	if err := json.Unmarshal([]byte(m.Annotations[NodeLabelsBackupAnnotation]), &backedUpLabels); err != nil {
		a.log.Error(err, "Remediation: unreadable node labels backup", "machine", m.Name)
	}
	if err := json.Unmarshal([]byte(m.Annotations[NodeAnnotationsBackupAnnotation]), &backedUpAnnotations); err != nil {
		a.log.Error(err, "Remediation: unreadable node annotations backup", "machine", m.Name)
	}
	patch := client.MergeFrom(node.DeepCopy())
	node.Labels = merged(node.Labels, backedUpLabels)
	node.Annotations = merged(node.Annotations, backedUpAnnotations)
	if err := a.client.Patch(ctx, node, patch); err != nil {
		return fmt.Errorf("restore labels and annotations of node %s: %w", node.Name, err)
	}
	return a.removeMachineAnnotations(ctx, m, NodeLabelsBackupAnnotation, NodeAnnotationsBackupAnnotation)
}

// nodeOfRef is the Node the Machine's nodeRef names, nil if none.
func (a *Actuator) nodeOfRef(ctx context.Context, m *machinev1beta1.Machine) (*corev1.Node, error) {
	if m.Status.NodeRef == nil {
		return nil, nil
	}
	n := &corev1.Node{}
	if err := a.client.Get(ctx, client.ObjectKey{Name: m.Status.NodeRef.Name}, n); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("get node %s of machine %s: %w", m.Status.NodeRef.Name, m.Name, err)
	}
	return n, nil
}

// merged adds the backed-up entries the Node lacks; what it has now wins.
func merged(now, backup map[string]string) map[string]string {
	if len(backup) == 0 {
		return now
	}
	if now == nil {
		now = map[string]string{}
	}
	for k, v := range backup {
		if _, ok := now[k]; !ok {
			now[k] = v
		}
	}
	return now
}

// setMachineAnnotations sets annotations of the Machine.
func (a *Actuator) setMachineAnnotations(ctx context.Context, m *machinev1beta1.Machine, kv map[string]string) error {
	patch := client.MergeFrom(m.DeepCopy())
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	for k, v := range kv {
		m.Annotations[k] = v
	}
	if err := a.client.Patch(ctx, m, patch); err != nil {
		return fmt.Errorf("annotate machine %s for remediation: %w", m.Name, err)
	}
	return nil
}

// removeMachineAnnotations deletes annotations of the Machine.
func (a *Actuator) removeMachineAnnotations(ctx context.Context, m *machinev1beta1.Machine, keys ...string) error {
	patch := client.MergeFrom(m.DeepCopy())
	for _, k := range keys {
		delete(m.Annotations, k)
	}
	if err := a.client.Patch(ctx, m, patch); err != nil {
		return fmt.Errorf("remove remediation annotations of machine %s: %w", m.Name, err)
	}
	return nil
}
