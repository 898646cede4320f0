package mapi

import (
	"context"
	"strings"
	"testing"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/workload"
)

// Only the two "good" hosts are eligible: every other one breaks one
// upstream rule or the Machine's hostSelector.
func TestCreateChoosesEligibleHostsOnly(t *testing.T) {
	ctx := context.Background()
	worker := map[string]string{"role": "worker", "rack": "a"}
	newHost(t, "choice-taken", worker, func(h *bmov1alpha1.BareMetalHost) {
		h.Spec.ConsumerRef = &corev1.ObjectReference{Kind: "Machine", Name: "other", Namespace: h.Namespace}
	})
	deleting := newHost(t, "choice-deleting", worker, func(h *bmov1alpha1.BareMetalHost) { h.Finalizers = []string{"test.paritylab.io/keep"} })
	if err := suite.client.Delete(ctx, deleting); err != nil {
		t.Fatal(err)
	}
	newHost(t, "choice-error", worker, func(h *bmov1alpha1.BareMetalHost) { h.Status.ErrorMessage = "BMC unreachable" })
	newHost(t, "choice-external", worker, func(h *bmov1alpha1.BareMetalHost) { h.Spec.ExternallyProvisioned = true })
	newHost(t, "choice-inspecting", worker, func(h *bmov1alpha1.BareMetalHost) { h.Status.Provisioning.State = bmov1alpha1.StateInspecting })
	newHost(t, "choice-otherrack", map[string]string{"role": "worker", "rack": "b"}, nil)
	newHost(t, "choice-master", map[string]string{"role": "master", "rack": "a"}, nil)
	newHost(t, "choice-good-ready", worker, func(h *bmov1alpha1.BareMetalHost) { h.Status.Provisioning.State = bmov1alpha1.StateReady })
	newHost(t, "choice-good-available", worker, nil)

	sel := HostSelector{
		MatchLabels:      map[string]string{"role": "worker"},
		MatchExpressions: []HostSelectorRequirement{{Key: "rack", Operator: "in", Values: []string{"a"}}},
	}
	a := testActuator()
	chosen := map[string]bool{}
	for _, name := range []string{"choice-m1", "choice-m2"} {
		m := newMachine(t, name, sel)
		create(t, a, m)
		ns, host, _ := strings.Cut(m.Annotations[HostAnnotation], "/")
		if ns != m.Namespace || !strings.HasPrefix(host, "choice-good-") || chosen[host] {
			t.Fatalf("machine %s got host %q; want a free choice-good-* host", name, m.Annotations[HostAnnotation])
		}
		chosen[host] = true
		h := &bmov1alpha1.BareMetalHost{}
		if err := suite.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: host}, h); err != nil {
			t.Fatal(err)
		}
		ref := h.Spec.ConsumerRef
		if ref == nil || ref.Kind != "Machine" || ref.APIVersion != "machine.openshift.io/v1beta1" || ref.Name != name {
			t.Errorf("host %s consumerRef %+v", host, ref)
		}
		if h.Spec.Image == nil || h.Spec.Image.URL != "http://127.0.0.1/node.iso" || !h.Spec.Online ||
			h.Spec.UserData == nil || h.Spec.UserData.Name != WorkerUserDataSecret {
			t.Errorf("host %s not set up for provisioning: image %+v online %v userData %+v", host, h.Spec.Image, h.Spec.Online, h.Spec.UserData)
		}
		if len(m.Status.Addresses) != 0 {
			t.Errorf("machine %s has addresses %v before its host is provisioned", name, m.Status.Addresses)
		}
	}
	m3 := newMachine(t, "choice-m3", sel)
	if err := a.Create(ctx, m3); !isRequeue(err) {
		t.Fatalf("third machine: want a requeue error with no eligible host left, got %v", err)
	}
	if ok, err := a.Exists(ctx, m3); err != nil || ok {
		t.Errorf("Exists(choice-m3) = %v, %v; want false", ok, err)
	}
}

// Upstream's Exists is true only for a consumed host that is provisioned,
// externally provisioned, unmanaged or registering; else it is false and
// clears the Machine's addresses, so that the Machine controller calls
// Create while the host provisions and fails a provisioned Machine whose
// host left those states.
func TestExistsFollowsTheHostsProvisioningState(t *testing.T) {
	ctx := context.Background()
	a := testActuator()
	h := newHost(t, "exists-host", nil, nil)
	m := newMachine(t, "exists-m", HostSelector{})
	create(t, a, m)
	for _, tc := range []struct {
		state  bmov1alpha1.ProvisioningState
		exists bool
	}{
		{bmov1alpha1.StateAvailable, false}, {bmov1alpha1.StateProvisioning, false},
		{bmov1alpha1.StateProvisioned, true}, {bmov1alpha1.StateExternallyProvisioned, true},
		{bmov1alpha1.StateUnmanaged, true}, {bmov1alpha1.StateRegistering, true},
		{bmov1alpha1.StateInspecting, false}, {bmov1alpha1.StateDeprovisioning, false},
		{bmov1alpha1.StatePoweringOffBeforeDelete, false}, {bmov1alpha1.StateDeleting, false},
	} {
		setHostStatus(t, h, func(s *bmov1alpha1.BareMetalHostStatus) { s.Provisioning.State = tc.state })
		setAddresses(t, m, "10.0.0.9")
		ok, err := a.Exists(ctx, m)
		if err != nil || ok != tc.exists {
			t.Errorf("host %s: Exists = %v, %v; want %v", tc.state, ok, err, tc.exists)
		}
		get(t, m)
		if cleared := len(m.Status.Addresses) == 0; cleared == tc.exists {
			t.Errorf("host %s: addresses %v; want them cleared exactly when the instance does not exist", tc.state, m.Status.Addresses)
		}
	}
	setHostStatus(t, h, func(s *bmov1alpha1.BareMetalHostStatus) { s.Provisioning.State = bmov1alpha1.StateProvisioned })
	get(t, h)
	h.Spec.ConsumerRef.Name = "someone-else"
	if err := suite.client.Update(ctx, h); err != nil {
		t.Fatal(err)
	}
	if ok, err := a.Exists(ctx, m); err != nil || ok {
		t.Errorf("Exists with the host consumed by another Machine = %v, %v; want false", ok, err)
	}
}

// Upstream: a Machine for which no host is free gets errorReason
// InsufficientResources and errorMessage "No available BareMetalHost
// found" (MachineSets delete such Machines first); once a host is free it
// is claimed and the error cleared, lastUpdated restarting the
// MachineHealthCheck's clock.
func TestNoFreeHostIsInsufficientResources(t *testing.T) {
	ctx := context.Background()
	a := testActuator()
	sel := HostSelector{MatchLabels: map[string]string{"pool": "insufficient"}}
	m := newMachine(t, "insufficient-m", sel)
	if err := a.Create(ctx, m); !isRequeue(err) {
		t.Fatalf("Create with no host: want a requeue, got %v", err)
	}
	get(t, m)
	if m.Status.ErrorReason == nil || *m.Status.ErrorReason != machinev1beta1.InsufficientResourcesMachineError ||
		m.Status.ErrorMessage == nil || *m.Status.ErrorMessage != "No available BareMetalHost found" {
		t.Fatalf("errorReason %v errorMessage %v; want InsufficientResources, No available BareMetalHost found",
			ptr.Deref(m.Status.ErrorReason, ""), ptr.Deref(m.Status.ErrorMessage, ""))
	}
	before := time.Now().Add(-time.Second)
	newHost(t, "insufficient-host", map[string]string{"pool": "insufficient"}, nil)
	create(t, a, m)
	if m.Annotations[HostAnnotation] != workload.MachineAPINamespace+"/insufficient-host" {
		t.Errorf("host annotation %q", m.Annotations[HostAnnotation])
	}
	if m.Status.ErrorReason != nil || m.Status.ErrorMessage != nil {
		t.Errorf("error not cleared: %v %v", ptr.Deref(m.Status.ErrorReason, ""), ptr.Deref(m.Status.ErrorMessage, ""))
	}
	if m.Status.LastUpdated == nil || m.Status.LastUpdated.Time.Before(before) {
		t.Errorf("lastUpdated %v not restarted when the error was cleared", m.Status.LastUpdated)
	}
}

// Upstream writes machine.openshift.io/instance-state, the host's
// provisioning state, beside metal3.io/BareMetalHost on every Create and
// Update.
func TestInstanceStateAnnotationFollowsTheHost(t *testing.T) {
	ctx := context.Background()
	a := testActuator()
	h := newHost(t, "state-host", nil, nil)
	m := newMachine(t, "state-m", HostSelector{})
	create(t, a, m)
	if got := m.Annotations[InstanceStateAnnotation]; got != string(bmov1alpha1.StateAvailable) {
		t.Errorf("after Create: instance-state %q, want %q", got, bmov1alpha1.StateAvailable)
	}
	setHostStatus(t, h, func(s *bmov1alpha1.BareMetalHostStatus) { s.Provisioning.State = bmov1alpha1.StateProvisioning })
	create(t, a, m)
	if got := m.Annotations[InstanceStateAnnotation]; got != string(bmov1alpha1.StateProvisioning) {
		t.Errorf("after Create while provisioning: instance-state %q", got)
	}
	setHostStatus(t, h, func(s *bmov1alpha1.BareMetalHostStatus) { s.Provisioning.State = bmov1alpha1.StateProvisioned })
	if ok, err := a.Exists(ctx, m); err != nil || !ok {
		t.Fatalf("Exists once provisioned = %v, %v", ok, err)
	}
	update(t, a, m)
	if got := m.Annotations[InstanceStateAnnotation]; got != string(bmov1alpha1.StateProvisioned) {
		t.Errorf("after Update: instance-state %q, want %q", got, bmov1alpha1.StateProvisioned)
	}
}

// Upstream sets a Machine's providerID only when it has none: the Node's
// providerID cannot change, so neither does the Machine's.
func TestProviderIDIsNeverRewritten(t *testing.T) {
	a := testActuator()
	h := newHost(t, "pid-host", nil, nil)
	m := newMachine(t, "pid-m", HostSelector{})
	create(t, a, m)
	setHostStatus(t, h, func(s *bmov1alpha1.BareMetalHostStatus) { s.Provisioning.State = bmov1alpha1.StateProvisioned })
	if err := suite.client.Patch(context.Background(), m, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"providerID":"baremetalhost:///elsewhere"}}`))); err != nil {
		t.Fatal(err)
	}
	update(t, a, m)
	if got := ptr.Deref(m.Spec.ProviderID, ""); got != "baremetalhost:///elsewhere" {
		t.Errorf("providerID rewritten to %q", got)
	}
}

// Update writes the providerID to the Machine and to the Node named after
// the host; Delete deprovisions, waits, then releases the host.
func TestUpdateAndDelete(t *testing.T) {
	ctx := context.Background()
	h := newHost(t, "life-host", nil, nil)
	m := newMachine(t, "life-m", HostSelector{})
	a := testActuator()
	create(t, a, m)
	node := newNode(t, "life-host", nil)
	setHostStatus(t, h, func(s *bmov1alpha1.BareMetalHostStatus) { s.Provisioning.State = bmov1alpha1.StateProvisioned })
	update(t, a, m)
	get(t, h)
	if addressOf(m.Status.Addresses, corev1.NodeHostName) != "life-host" {
		t.Errorf("machine addresses %v lack the host name", m.Status.Addresses)
	}
	want := "baremetalhost:///openshift-machine-api/life-host/" + string(h.UID)
	if m.Spec.ProviderID == nil || *m.Spec.ProviderID != want {
		t.Errorf("machine providerID %v, want %s", m.Spec.ProviderID, want)
	}
	get(t, node)
	if node.Spec.ProviderID != want {
		t.Errorf("node providerID %q, want %s", node.Spec.ProviderID, want)
	}

	if err := a.Delete(ctx, m); !isRequeue(err) {
		t.Fatalf("first Delete: want requeue while deprovisioning, got %v", err)
	}
	get(t, h)
	if h.Spec.Image != nil || h.Spec.UserData != nil || h.Spec.Online || h.Spec.ConsumerRef == nil {
		t.Fatalf("after Delete: image %v userData %v online %v consumerRef %v; want cleared, off, still consumed", h.Spec.Image, h.Spec.UserData, h.Spec.Online, h.Spec.ConsumerRef)
	}
	setHostStatus(t, h, func(s *bmov1alpha1.BareMetalHostStatus) { s.Provisioning.State = bmov1alpha1.StateDeprovisioning })
	if err := a.Delete(ctx, m); !isRequeue(err) {
		t.Fatalf("Delete while deprovisioning: want requeue, got %v", err)
	}
	setHostStatus(t, h, func(s *bmov1alpha1.BareMetalHostStatus) { s.Provisioning.State = bmov1alpha1.StateAvailable })
	if err := a.Delete(ctx, m); err != nil {
		t.Fatalf("Delete once available: %v", err)
	}
	get(t, h)
	if h.Spec.ConsumerRef != nil {
		t.Errorf("host still consumed: %+v", h.Spec.ConsumerRef)
	}
	if ok, err := a.Exists(ctx, m); err != nil || ok {
		t.Errorf("Exists after Delete = %v, %v; want false", ok, err)
	}
}

func TestInvalidProviderSpec(t *testing.T) {
	m := newMachine(t, "invalid-m", HostSelector{})
	m.Spec.ProviderSpec.Value.Raw = []byte(`{"image":{"url":""}}`)
	err := testActuator().Create(context.Background(), m)
	if err == nil || !strings.Contains(err.Error(), "image.url is required") {
		t.Fatalf("want an invalid configuration error, got %v", err)
	}
}

// create calls Create as the Machine controller does, again while it asks
// to be requeued after a change it made, and reads the Machine back.
func create(t *testing.T, a *Actuator, m *machinev1beta1.Machine) {
	t.Helper()
	untilDone(t, "Create", m, func() error { return a.Create(context.Background(), m) })
}

// update is create's counterpart for Update.
func update(t *testing.T, a *Actuator, m *machinev1beta1.Machine) {
	t.Helper()
	untilDone(t, "Update", m, func() error { return a.Update(context.Background(), m) })
}

func untilDone(t *testing.T, what string, m *machinev1beta1.Machine, call func() error) {
	t.Helper()
	for range 5 {
		err := call()
		get(t, m)
		if err == nil {
			return
		}
		if !isRequeue(err) {
			t.Fatalf("%s %s: %v", what, m.Name, err)
		}
	}
	t.Fatalf("%s %s still asks to be requeued after 5 calls", what, m.Name)
}

func setAddresses(t *testing.T, m *machinev1beta1.Machine, ip string) {
	t.Helper()
	get(t, m)
	m.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}
	if err := suite.client.Status().Update(context.Background(), m); err != nil {
		t.Fatal(err)
	}
}
