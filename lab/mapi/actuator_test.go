package mapi

import (
	"context"
	"strings"
	"testing"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
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
		if err := a.Create(ctx, m); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		get(t, m)
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
		if addressOf(m.Status.Addresses, corev1.NodeHostName) != host {
			t.Errorf("machine %s addresses %v lack host name %s", name, m.Status.Addresses, host)
		}
		if ok, err := a.Exists(ctx, m); err != nil || !ok {
			t.Errorf("Exists(%s) = %v, %v", name, ok, err)
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

// Update writes the providerID to the Machine and to the Node named after
// the host; Delete deprovisions, waits, then releases the host.
func TestUpdateAndDelete(t *testing.T) {
	ctx := context.Background()
	h := newHost(t, "life-host", nil, nil)
	m := newMachine(t, "life-m", HostSelector{})
	a := testActuator()
	if err := a.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	node := newNode(t, "life-host", nil)
	get(t, m)
	if err := a.Update(ctx, m); err != nil {
		t.Fatal(err)
	}
	get(t, m)
	get(t, h)
	want := "baremetalhost:///openshift-machine-api/life-host/" + string(h.UID)
	if m.Spec.ProviderID == nil || *m.Spec.ProviderID != want {
		t.Errorf("machine providerID %v, want %s", m.Spec.ProviderID, want)
	}
	get(t, node)
	if node.Spec.ProviderID != want {
		t.Errorf("node providerID %q, want %s", node.Spec.ProviderID, want)
	}

	setHostStatus(t, h, func(s *bmov1alpha1.BareMetalHostStatus) { s.Provisioning.State = bmov1alpha1.StateProvisioned })
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
