package mapi

import (
	"context"
	"encoding/json"
	"fmt"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// External remediation (MachineHealthCheck annotation
// machine.openshift.io/remediation-strategy: external-baremetal): MAO's
// MHC controller annotates an unhealthy Machine with
// ExternalRemediationAnnotation instead of deleting it, and the actuator
// power-cycles the host, deletes the Node so that its workloads move, and
// restores the Node's labels and annotations when it registers again.
const (
	// ExternalRemediationAnnotation is what the MHC controller sets.
	ExternalRemediationAnnotation = "host.metal3.io/external-remediation"
	// PowerOffAnnotation keeps the host's power off while present (a
	// reboot.metal3.io/<key> annotation, hard).
	PowerOffAnnotation = bmov1alpha1.RebootAnnotationPrefix + "/machine-api-remediation"
	// NodeBackupAnnotation holds the deleted Node's labels and
	// annotations on the Machine until the Node is back.
	NodeBackupAnnotation = "machine-api.paritylab.io/remediation-node-backup"
)

// nodeBackup is what remediation restores on the Node.
type nodeBackup struct {
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

func externalRemediationRequested(m *machinev1beta1.Machine) bool {
	_, ok := m.Annotations[ExternalRemediationAnnotation]
	return ok
}

// remediate takes the next step of a power cycle and returns a requeue
// error until the Node is back; each step is idempotent, its state kept
// in annotations of the host and the Machine.
func (a *Actuator) remediate(ctx context.Context, m *machinev1beta1.Machine, h *bmov1alpha1.BareMetalHost) error {
	raw, nodeDeleted := m.Annotations[NodeBackupAnnotation]
	_, powerOffRequested := h.Annotations[PowerOffAnnotation]
	switch {
	case !nodeDeleted && !powerOffRequested:
		return a.stepPowerOff(ctx, m, h)
	case !nodeDeleted && h.Status.PoweredOn:
		a.log.V(1).Info("Remediation: waiting for the host to power off", "machine", m.Name, "host", h.Name)
		return a.requeue("power off")
	case !nodeDeleted:
		return a.stepDeleteNode(ctx, m)
	case powerOffRequested:
		return a.stepPowerOn(ctx, m, h)
	}
	return a.stepRestore(ctx, m, raw)
}

func (a *Actuator) stepPowerOff(ctx context.Context, m *machinev1beta1.Machine, h *bmov1alpha1.BareMetalHost) error {
	if err := a.setHostAnnotation(ctx, h, PowerOffAnnotation, `{"mode":"hard"}`); err != nil {
		return err
	}
	a.recorder.Eventf(m, corev1.EventTypeNormal, "RemediationPowerOff", "powering BareMetalHost %s off", h.Name)
	a.log.Info("Remediation: host powering off", "machine", m.Name, "host", h.Name)
	return a.requeue("power off")
}

// stepDeleteNode backs the Node's labels and annotations up on the
// Machine, then deletes the Node.
func (a *Actuator) stepDeleteNode(ctx context.Context, m *machinev1beta1.Machine) error {
	node, err := a.node(ctx, m)
	if err != nil {
		return err
	}
	backup := nodeBackup{}
	if node != nil {
		backup = nodeBackup{Labels: node.Labels, Annotations: node.Annotations}
	}
	raw, err := json.Marshal(backup)
	if err != nil {
		return fmt.Errorf("encode node backup of machine %s: %w", m.Name, err)
	}
	patch := client.MergeFrom(m.DeepCopy())
	m.Annotations[NodeBackupAnnotation] = string(raw)
	if err := a.client.Patch(ctx, m, patch); err != nil {
		return fmt.Errorf("back up the node of machine %s: %w", m.Name, err)
	}
	if node != nil {
		if err := a.client.Delete(ctx, node); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete node %s of machine %s: %w", node.Name, m.Name, err)
		}
		a.recorder.Eventf(m, corev1.EventTypeNormal, "RemediationNodeDeleted", "deleted Node %s", node.Name)
		a.log.Info("Remediation: node deleted", "machine", m.Name, "node", node.Name)
	}
	return a.requeue("node deleted")
}

func (a *Actuator) stepPowerOn(ctx context.Context, m *machinev1beta1.Machine, h *bmov1alpha1.BareMetalHost) error {
	if err := a.setHostAnnotation(ctx, h, PowerOffAnnotation, ""); err != nil {
		return err
	}
	a.recorder.Eventf(m, corev1.EventTypeNormal, "RemediationPowerOn", "powering BareMetalHost %s on", h.Name)
	a.log.Info("Remediation: host powering on", "machine", m.Name, "host", h.Name)
	return a.requeue("power on")
}

// stepRestore waits for the Node to register again, gives it back what
// it lost, and ends the remediation.
func (a *Actuator) stepRestore(ctx context.Context, m *machinev1beta1.Machine, raw string) error {
	node, err := a.node(ctx, m)
	if err != nil {
		return err
	}
	if node == nil {
		a.log.V(1).Info("Remediation: waiting for the node to register", "machine", m.Name)
		return a.requeue("node")
	}
	var backup nodeBackup
	if err := json.Unmarshal([]byte(raw), &backup); err != nil {
		return fmt.Errorf("decode node backup of machine %s: %w", m.Name, err)
	}
	patch := client.MergeFrom(node.DeepCopy())
	node.Labels = merged(node.Labels, backup.Labels)
	node.Annotations = merged(node.Annotations, backup.Annotations)
	if err := a.client.Patch(ctx, node, patch); err != nil {
		return fmt.Errorf("restore labels and annotations of node %s: %w", node.Name, err)
	}
	mpatch := client.MergeFrom(m.DeepCopy())
	delete(m.Annotations, NodeBackupAnnotation)
	delete(m.Annotations, ExternalRemediationAnnotation)
	if err := a.client.Patch(ctx, m, mpatch); err != nil {
		return fmt.Errorf("end remediation of machine %s: %w", m.Name, err)
	}
	a.recorder.Eventf(m, corev1.EventTypeNormal, "RemediationDone", "Node %s is back", node.Name)
	a.log.Info("Remediation: done", "machine", m.Name, "node", node.Name)
	return nil
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

// setHostAnnotation sets (value != "") or removes an annotation.
func (a *Actuator) setHostAnnotation(ctx context.Context, h *bmov1alpha1.BareMetalHost, key, value string) error {
	patch := client.MergeFrom(h.DeepCopy())
	if value == "" {
		delete(h.Annotations, key)
	} else {
		if h.Annotations == nil {
			h.Annotations = map[string]string{}
		}
		h.Annotations[key] = value
	}
	if err := a.client.Patch(ctx, h, patch); err != nil {
		return fmt.Errorf("annotate BareMetalHost %s: %w", h.Name, err)
	}
	return nil
}
