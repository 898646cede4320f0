package mapi

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-logr/logr"
	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	maomachine "github.com/openshift/machine-api-operator/pkg/controller/machine"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// HostAnnotation on a Machine names its BareMetalHost, <ns>/<name>.
const HostAnnotation = "metal3.io/BareMetalHost"

// ProviderIDPrefix starts the providerID of a bare-metal Machine and Node.
const ProviderIDPrefix = "baremetalhost:///"

// Actuator is the bare-metal actuator behind MAO's Machine controller.
type Actuator struct {
	client   client.Client
	recorder record.EventRecorder
	log      logr.Logger
	// retry is how soon the Machine controller tries again while the
	// actuator waits for a host (none free, deprovisioning, remediation).
	retry time.Duration
}

var _ maomachine.Actuator = (*Actuator)(nil)

// NewActuator makes an Actuator that reads and writes with c.
func NewActuator(c client.Client, recorder record.EventRecorder, log logr.Logger, retry time.Duration) *Actuator {
	return &Actuator{client: c, recorder: recorder, log: log, retry: retry}
}

// ProviderID is the providerID of a Machine on host h.
func ProviderID(h *bmov1alpha1.BareMetalHost) string {
	return fmt.Sprintf("%s%s/%s/%s", ProviderIDPrefix, h.Namespace, h.Name, h.UID)
}

func (a *Actuator) requeue(why string) error {
	return &maomachine.RequeueAfterError{RequeueAfter: a.retry}
}

// Create takes a host for the Machine and has it provisioned with the
// providerSpec's image and user data. As upstream's actuator it writes no
// addresses (the Machine controller would take a Machine with addresses
// whose instance does not exist yet for a lost one), and marks a Machine
// for which no host is free with the InsufficientResources error until
// one is.
func (a *Actuator) Create(ctx context.Context, m *machinev1beta1.Machine) error {
	spec, err := providerSpec(m)
	if err != nil {
		return err
	}
	host, err := a.host(ctx, m)
	if err != nil {
		return err
	}
	if host == nil {
		if host, err = chooseHost(ctx, a.client, m, spec.HostSelector); err != nil {
			return err
		}
		if host == nil {
			return a.noHostFree(ctx, m)
		}
	}
	if err := a.claim(ctx, m, host, spec); err != nil {
		return err
	}
	// No event: upstream's actuator records none when it claims a host.
	if err := a.ensureAnnotations(ctx, m, host); err != nil {
		return err
	}
	return a.clearInsufficientResources(ctx, m)
}

// noHostFree sets the Machine's InsufficientResources error (MachineSets
// delete Machines with an error first) and waits for a host.
func (a *Actuator) noHostFree(ctx context.Context, m *machinev1beta1.Machine) error {
	a.log.Info("No available host; waiting", "machine", m.Name)
	reason := machinev1beta1.InsufficientResourcesMachineError
	if m.Status.ErrorReason == nil || *m.Status.ErrorReason != reason {
		patch := client.MergeFrom(m.DeepCopy())
		m.Status.ErrorReason, m.Status.ErrorMessage = &reason, ptr.To(noHostMessage)
		if err := a.client.Status().Patch(ctx, m, patch); err != nil {
			return fmt.Errorf("set the insufficient resources error of machine %s: %w", m.Name, err)
		}
	}
	return a.requeue("no host")
}

// noHostMessage is upstream's error message of a Machine without a host.
const noHostMessage = "No available BareMetalHost found"

// clearInsufficientResources removes the InsufficientResources error once
// the Machine has a host, and restarts the MachineHealthCheck's clock
// (lastUpdated) as upstream does.
func (a *Actuator) clearInsufficientResources(ctx context.Context, m *machinev1beta1.Machine) error {
	if m.Status.ErrorReason == nil || *m.Status.ErrorReason != machinev1beta1.InsufficientResourcesMachineError {
		return nil
	}
	patch := client.MergeFrom(m.DeepCopy())
	now := metav1.Now()
	m.Status.ErrorReason, m.Status.ErrorMessage, m.Status.LastUpdated = nil, nil, &now
	if err := a.client.Status().Patch(ctx, m, patch); err != nil {
		return fmt.Errorf("clear the insufficient resources error of machine %s: %w", m.Name, err)
	}
	a.log.Info("Host found; insufficient resources error cleared", "machine", m.Name)
	return a.requeue("error cleared")
}

// claim sets the consumerRef, image, user data and power on the host.
func (a *Actuator) claim(ctx context.Context, m *machinev1beta1.Machine, h *bmov1alpha1.BareMetalHost, spec *BareMetalMachineProviderSpec) error {
	before := h.DeepCopy()
	h.Spec.ConsumerRef = &corev1.ObjectReference{Kind: machineKind, APIVersion: machineAPIVersion, Name: m.Name, Namespace: m.Namespace}
	// An externally provisioned host (an installed one the Machine was
	// written for) already runs its image, and a host the hub provisioned
	// with a custom deploy (a ZTP day-2 host's copy) ran its deploy step:
	// nothing to provision. Upstream's provisionHost writes the
	// providerSpec's image over both when MAO calls Create before the
	// cluster's bare-metal operator made the host unmanaged, a race the
	// lab does not reproduce.
	if h.Spec.Image == nil && !h.Spec.ExternallyProvisioned && h.Spec.CustomDeploy == nil {
		h.Spec.Image = &bmov1alpha1.Image{URL: spec.Image.URL, Checksum: spec.Image.Checksum}
		h.Spec.UserData = spec.UserData
		if h.Spec.UserData != nil && h.Spec.UserData.Namespace == "" {
			h.Spec.UserData = &corev1.SecretReference{Name: spec.UserData.Name, Namespace: m.Namespace}
		}
	}
	h.Spec.Online = true
	// An Update, not a patch: the resourceVersion makes two Machines that
	// picked the same host race safely, one of them fails and picks again.
	if err := a.client.Update(ctx, h); err != nil {
		return fmt.Errorf("claim BareMetalHost %s/%s for machine %s: %w", h.Namespace, h.Name, m.Name, err)
	}
	if before.Spec.ConsumerRef == nil {
		a.log.Info("Host claimed", "machine", m.Name, "host", h.Name)
	}
	return nil
}

// InstanceStateAnnotation on a Machine is its host's provisioning state,
// as the actuator last saw it (MAO's instance-state annotation).
const InstanceStateAnnotation = "machine.openshift.io/instance-state"

// ensureAnnotations records the host and its provisioning state on the
// Machine; after a change it asks to be called again, as upstream does.
func (a *Actuator) ensureAnnotations(ctx context.Context, m *machinev1beta1.Machine, h *bmov1alpha1.BareMetalHost) error {
	want := map[string]string{HostAnnotation: h.Namespace + "/" + h.Name, InstanceStateAnnotation: string(h.Status.Provisioning.State)}
	patch := client.MergeFrom(m.DeepCopy())
	changed := false
	for k, v := range want {
		if got, ok := m.Annotations[k]; ok && got == v {
			continue
		}
		if m.Annotations == nil {
			m.Annotations = map[string]string{}
		}
		m.Annotations[k], changed = v, true
	}
	if !changed {
		return nil
	}
	if err := a.client.Patch(ctx, m, patch); err != nil {
		return fmt.Errorf("annotate machine %s with its host: %w", m.Name, err)
	}
	return a.requeue("annotations changed")
}

// host is the BareMetalHost the Machine's annotation names, nil if none.
func (a *Actuator) host(ctx context.Context, m *machinev1beta1.Machine) (*bmov1alpha1.BareMetalHost, error) {
	ref, ok := m.Annotations[HostAnnotation]
	if !ok || ref == "" {
		return nil, nil
	}
	ns, name, ok := strings.Cut(ref, "/")
	if !ok {
		return nil, maomachine.InvalidMachineConfiguration("machine %s: annotation %s=%q is not <namespace>/<name>", m.Name, HostAnnotation, ref)
	}
	h := &bmov1alpha1.BareMetalHost{}
	if err := a.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, h); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("get BareMetalHost %s of machine %s: %w", ref, m.Name, err)
	}
	return h, nil
}

// Exists: the Machine consumes a host that is provisioned, externally
// provisioned, unmanaged or registering (upstream's list). Otherwise the
// Machine's addresses are cleared, so that a new Node with the same
// address is not linked to it. The Machine controller calls Create while
// this is false, and fails a Machine that had a providerID or addresses.
func (a *Actuator) Exists(ctx context.Context, m *machinev1beta1.Machine) (bool, error) {
	h, err := a.host(ctx, m)
	if err != nil {
		return false, err
	}
	if h != nil && consumedBy(h, m) && instanceExists(h) {
		return true, nil
	}
	return false, a.clearAddresses(ctx, m)
}

func instanceExists(h *bmov1alpha1.BareMetalHost) bool {
	switch h.Status.Provisioning.State {
	case bmov1alpha1.StateProvisioned, bmov1alpha1.StateExternallyProvisioned, bmov1alpha1.StateUnmanaged, bmov1alpha1.StateRegistering:
		return true
	}
	return false
}

func (a *Actuator) clearAddresses(ctx context.Context, m *machinev1beta1.Machine) error {
	if !m.DeletionTimestamp.IsZero() || len(m.Status.Addresses) == 0 {
		return nil
	}
	patch := client.MergeFrom(m.DeepCopy())
	m.Status.Addresses = nil
	if err := a.client.Status().Patch(ctx, m, patch); err != nil {
		return fmt.Errorf("clear addresses of machine %s: %w", m.Name, err)
	}
	a.log.Info("Addresses cleared: the host is not provisioned for the machine", "machine", m.Name)
	return nil
}

// Update, in upstream's order: the Machine's providerID (set once, never
// rewritten), its addresses, annotations, the Node's providerID, then
// external remediation.
func (a *Actuator) Update(ctx context.Context, m *machinev1beta1.Machine) error {
	h, err := a.host(ctx, m)
	if err != nil {
		return err
	}
	if h == nil || !consumedBy(h, m) {
		return fmt.Errorf("machine %s has no BareMetalHost", m.Name)
	}
	if err := a.ensureMachineProviderID(ctx, m, h); err != nil {
		return err
	}
	if err := a.updateStatus(ctx, m, h); err != nil {
		return err
	}
	if err := a.ensureAnnotations(ctx, m, h); err != nil {
		return err
	}
	if err := a.ensureNodeProviderID(ctx, m); err != nil {
		return err
	}
	if externalRemediationRequested(m) {
		return a.remediate(ctx, m, h)
	}
	return nil
}

// ensureMachineProviderID gives the Machine its host's providerID once;
// a providerID it has is never rewritten (the Node's cannot change).
func (a *Actuator) ensureMachineProviderID(ctx context.Context, m *machinev1beta1.Machine, h *bmov1alpha1.BareMetalHost) error {
	if ptr.Deref(m.Spec.ProviderID, "") != "" {
		return nil
	}
	patch := client.MergeFrom(m.DeepCopy())
	m.Spec.ProviderID = ptr.To(ProviderID(h))
	if err := a.client.Patch(ctx, m, patch); err != nil {
		return fmt.Errorf("set providerID of machine %s: %w", m.Name, err)
	}
	return a.requeue("providerID set")
}

// ensureNodeProviderID writes the Machine's providerID to its Node, whose
// providerID may only go from empty to set.
func (a *Actuator) ensureNodeProviderID(ctx context.Context, m *machinev1beta1.Machine) error {
	node, err := a.node(ctx, m)
	if err != nil || node == nil || node.Spec.ProviderID != "" {
		return err
	}
	id := ptr.Deref(m.Spec.ProviderID, "")
	patch := client.MergeFrom(node.DeepCopy())
	node.Spec.ProviderID = id
	if err := a.client.Patch(ctx, node, patch); err != nil {
		return fmt.Errorf("set providerID of node %s: %w", node.Name, err)
	}
	a.log.Info("Node providerID set", "machine", m.Name, "node", node.Name, "providerID", id)
	return nil
}

// node is the Machine's Node: the one its nodeRef names, else (before the
// nodelink controller linked them) the one named as its host name.
func (a *Actuator) node(ctx context.Context, m *machinev1beta1.Machine) (*corev1.Node, error) {
	name := ""
	if m.Status.NodeRef != nil {
		name = m.Status.NodeRef.Name
	} else {
		name = addressOf(m.Status.Addresses, corev1.NodeHostName)
	}
	if name == "" {
		return nil, nil
	}
	n := &corev1.Node{}
	if err := a.client.Get(ctx, client.ObjectKey{Name: name}, n); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("get node %s of machine %s: %w", name, m.Name, err)
	}
	return n, nil
}

// updateStatus writes the host's addresses into the Machine's status.
func (a *Actuator) updateStatus(ctx context.Context, m *machinev1beta1.Machine, h *bmov1alpha1.BareMetalHost) error {
	addrs := nodeAddresses(h)
	if equalAddresses(m.Status.Addresses, addrs) {
		return nil
	}
	patch := client.MergeFrom(m.DeepCopy())
	m.Status.Addresses = addrs
	if err := a.client.Status().Patch(ctx, m, patch); err != nil {
		return fmt.Errorf("write addresses of machine %s: %w", m.Name, err)
	}
	return nil
}

// Delete has the Machine's host deprovisioned and then releases it; it
// returns a requeue error until the host is deprovisioned, and the
// Machine controller keeps calling it until it returns nil.
func (a *Actuator) Delete(ctx context.Context, m *machinev1beta1.Machine) error {
	h, err := a.host(ctx, m)
	if err != nil || h == nil || !consumedBy(h, m) {
		return err
	}
	if h.Spec.Image != nil || h.Spec.UserData != nil || h.Spec.Online {
		h.Spec.Image, h.Spec.UserData, h.Spec.Online = nil, nil, false
		if err := a.client.Update(ctx, h); err != nil {
			return fmt.Errorf("deprovision BareMetalHost %s of machine %s: %w", h.Name, m.Name, err)
		}
		a.log.Info("Host deprovisioning", "machine", m.Name, "host", h.Name)
		return a.requeue("deprovisioning")
	}
	if !deprovisioned(h) {
		return a.requeue("deprovisioning")
	}
	h.Spec.ConsumerRef = nil
	if err := a.client.Update(ctx, h); err != nil {
		return fmt.Errorf("release BareMetalHost %s of machine %s: %w", h.Name, m.Name, err)
	}
	a.log.Info("Host released", "machine", m.Name, "host", h.Name)
	return nil
}

// deprovisioned: the host holds no image any more (or never got one).
func deprovisioned(h *bmov1alpha1.BareMetalHost) bool {
	switch h.Status.Provisioning.State {
	case bmov1alpha1.StateNone, bmov1alpha1.StateUnmanaged, bmov1alpha1.StateRegistering,
		bmov1alpha1.StateInspecting, bmov1alpha1.StateMatchProfile, bmov1alpha1.StatePreparing,
		bmov1alpha1.StateReady, bmov1alpha1.StateAvailable:
		return true
	}
	return false
}
