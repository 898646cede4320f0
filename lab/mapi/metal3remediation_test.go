package mapi

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	capm3v1beta1 "github.com/metal3-io/cluster-api-provider-metal3/api/v1beta1"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/paritylab/paritylab/lab/workload"
)

// MAO's MachineHealthCheck controller creates a Metal3Remediation from the
// MHC's template for an unhealthy Machine; the controller reboots the host
// through the bare-metal operator's API (played by the test), deletes the
// Node only once the host is off, restores its labels and annotations
// when it is back, and the MHC controller then deletes the remediation.
func TestMetal3RemediationRebootsTheHostAndRestoresTheNode(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	m, h, node := remediationTarget(ctx, t, "m3r-reboot", "worker", true)
	newRemediationTemplate(t, "m3r-reboot")
	runMHCController(ctx, t)
	mhc := &machinev1beta1.MachineHealthCheck{
		ObjectMeta: metav1.ObjectMeta{Name: "m3r-reboot", Namespace: workload.MachineAPINamespace},
		Spec: machinev1beta1.MachineHealthCheckSpec{
			Selector:            metav1.LabelSelector{MatchLabels: map[string]string{"pool": "m3r-reboot"}},
			UnhealthyConditions: []machinev1beta1.UnhealthyCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Timeout: metav1.Duration{Duration: time.Second}}},
			RemediationTemplate: &corev1.ObjectReference{APIVersion: capm3v1beta1.GroupVersion.String(), Kind: "Metal3RemediationTemplate", Name: "m3r-reboot"},
		},
	}
	if err := suite.client.Create(ctx, mhc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = suite.client.Delete(context.Background(), mhc) })
	rem := &capm3v1beta1.Metal3Remediation{ObjectMeta: metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace}}
	poll(ctx, t, "MHC creates the Metal3Remediation", func() bool {
		return suite.client.Get(ctx, client.ObjectKeyFromObject(rem), rem) == nil
	})
	if len(rem.OwnerReferences) != 1 || rem.OwnerReferences[0].UID != m.UID {
		t.Fatalf("remediation owners %+v; want the Machine, as MAO sets it", rem.OwnerReferences)
	}

	step := remediationStepper(ctx, t, rem, h)
	step("phase Running", remediationShortRequeue)
	if rem.Status.Phase != capm3v1beta1.PhaseRunning || rem.Status.LastRemediated == nil {
		t.Fatalf("status %+v; want Running with lastRemediated", rem.Status)
	}
	step("finalizer", remediationShortRequeue)
	if !controllerutil.ContainsFinalizer(rem, capm3v1beta1.RemediationFinalizer) {
		t.Fatalf("finalizers %v", rem.Finalizers)
	}
	step("power off requested", remediationPollRequeue)
	if got := h.Annotations["reboot.metal3.io/metal3-remediation-"+string(rem.UID)]; got != `{"mode":"hard"}` {
		t.Fatalf("host annotations %v; want a hard reboot annotation keyed by the remediation's UID", h.Annotations)
	}
	step("host still on", remediationPollRequeue)
	get(t, node)
	setHostStatus(t, h, func(s *bmov1alpha1.BareMetalHostStatus) { s.PoweredOn = false })
	step("node backed up", remediationShortRequeue)
	if !strings.Contains(rem.Annotations[NodeLabelsBackupAnnotation], `"custom":"kept"`) ||
		!strings.Contains(rem.Annotations[NodeAnnotationsBackupAnnotation], `"example.com/note":"kept"`) {
		t.Fatalf("remediation annotations %v; want the node's labels and annotations backed up", rem.Annotations)
	}
	step("node deleted", remediationPollRequeue)
	if err := suite.client.Get(ctx, client.ObjectKeyFromObject(node), &corev1.Node{}); !apierrors.IsNotFound(err) {
		t.Fatalf("node not deleted once the host is off: %v", err)
	}
	step("phase Waiting", remediationPollRequeue)
	if rem.Status.Phase != capm3v1beta1.PhaseWaiting {
		t.Fatalf("phase %q", rem.Status.Phase)
	}
	step("power on, host still off", remediationPollRequeue)
	if _, held := h.Annotations[Metal3RemediationPowerOffAnnotation(rem)]; held {
		t.Fatal("power-off annotation kept in phase Waiting")
	}
	setHostStatus(t, h, func(s *bmov1alpha1.BareMetalHostStatus) { s.PoweredOn = true })
	step("node not back yet", remediationPollRequeue)
	back := newNode(t, node.Name, nil)
	step("node restored", remediationPollRequeue)
	get(t, back)
	if back.Labels["custom"] != "kept" || back.Annotations["example.com/note"] != "kept" {
		t.Errorf("node labels %v annotations %v not restored", back.Labels, back.Annotations)
	}
	poll(ctx, t, "MHC deletes the remediation of the healthy Machine", func() bool {
		return apierrors.IsNotFound(suite.client.Get(ctx, client.ObjectKeyFromObject(rem), &capm3v1beta1.Metal3Remediation{}))
	})
	if get(t, h); h.Annotations[capm3v1beta1.UnhealthyAnnotation] != "" {
		t.Errorf("a successful remediation marked the host unhealthy: %v", h.Annotations)
	}
}

// When the Node stays away past spec.strategy.timeout the host is
// rebooted again until retryCount reaches retryLimit; then the Machine is
// deleted only if it can be reprovisioned, and the host is marked
// unhealthy either way.
func TestMetal3RemediationRetriesThenGivesUp(t *testing.T) {
	for _, tc := range []struct {
		role       string
		wantDelete bool
	}{{role: "worker", wantDelete: true}, {role: "master"}} {
		t.Run(tc.role, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			name := "m3r-retry-" + tc.role
			m, h, _ := remediationTarget(ctx, t, name, tc.role, true)
			holdDeletion(ctx, t, m)
			rem := newRemediation(ctx, t, m, 1)
			step := remediationStepper(ctx, t, rem, h)
			step("phase Running", remediationShortRequeue)
			step("finalizer", remediationShortRequeue)
			rebootWithoutNodeComingBack(t, step, h)
			step("not timed out yet", remediationPollRequeue)
			if rem.Status.Phase != capm3v1beta1.PhaseWaiting || rem.Status.RetryCount != 0 {
				t.Fatalf("status %+v before the timeout", rem.Status)
			}
			backdate(ctx, t, rem)
			step("timed out: retry", remediationShortRequeue)
			if rem.Status.Phase != capm3v1beta1.PhaseRunning || rem.Status.RetryCount != 1 || time.Since(rem.Status.LastRemediated.Time) > time.Minute {
				t.Fatalf("status %+v; want Running again, retryCount 1, lastRemediated now", rem.Status)
			}
			rebootWithoutNodeComingBack(t, step, h)
			backdate(ctx, t, rem)
			step("timed out at the retry limit: give up", 0)
			if rem.Status.Phase != capm3v1beta1.PhaseDeleting {
				t.Errorf("phase %q, want %q", rem.Status.Phase, capm3v1beta1.PhaseDeleting)
			}
			if h.Annotations[capm3v1beta1.UnhealthyAnnotation] != "capm3/UnhealthyNode" {
				t.Errorf("host annotations %v; want %s", h.Annotations, capm3v1beta1.UnhealthyAnnotation)
			}
			get(t, m)
			if deleted := !m.DeletionTimestamp.IsZero(); deleted != tc.wantDelete {
				t.Errorf("machine deleted = %v, want %v", deleted, tc.wantDelete)
			}
			step("done", 0)
		})
	}
}

// A host an operator powered off (spec.online false) is not remediated,
// and a Machine without a Node reference cannot be.
func TestMetal3RemediationRefusesOfflineHostsAndMachinesWithoutNode(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m, h, _ := remediationTarget(ctx, t, "m3r-offline", "worker", true)
	get(t, h)
	h.Spec.Online = false
	if err := suite.client.Update(ctx, h); err != nil {
		t.Fatal(err)
	}
	rem := newRemediation(ctx, t, m, 1)
	remediationStepper(ctx, t, rem, h)("host offline", 0)
	if rem.Status.Phase != capm3v1beta1.PhaseFailed || len(rem.Finalizers) != 0 || len(rebootAnnotations(h)) != 0 {
		t.Errorf("phase %q finalizers %v host annotations %v; want Failed and nothing touched", rem.Status.Phase, rem.Finalizers, h.Annotations)
	}

	m2, h2, _ := remediationTarget(ctx, t, "m3r-nonode", "worker", true)
	patch := client.MergeFrom(m2.DeepCopy())
	m2.Status.NodeRef = nil
	if err := suite.client.Status().Patch(ctx, m2, patch); err != nil {
		t.Fatal(err)
	}
	rem2 := newRemediation(ctx, t, m2, 1)
	r := &metal3RemediationReconciler{client: suite.client, log: logr.Discard()}
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(rem2)}
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatalf("first reconcile (phase Running): %v", err)
	}
	if _, err := r.Reconcile(ctx, req); err == nil || !strings.Contains(err.Error(), "no nodeRef") {
		t.Errorf("second reconcile: %v; want the missing nodeRef", err)
	}
	if get(t, h2); len(rebootAnnotations(h2)) != 0 {
		t.Errorf("host of a machine without node touched: %v", h2.Annotations)
	}
}

// rebootWithoutNodeComingBack steps one reboot, from the power-off
// request to the host on again; the Node, if still there, is backed up and
// deleted, and does not come back.
func rebootWithoutNodeComingBack(t *testing.T, step func(string, time.Duration), h *bmov1alpha1.BareMetalHost) {
	t.Helper()
	step("power off requested", remediationPollRequeue)
	setHostStatus(t, h, func(s *bmov1alpha1.BareMetalHostStatus) { s.PoweredOn = false })
	if err := suite.client.Get(context.Background(), client.ObjectKey{Name: h.Name}, &corev1.Node{}); err == nil {
		step("node backed up", remediationShortRequeue)
		step("node deleted", remediationPollRequeue)
	}
	step("phase Waiting", remediationPollRequeue)
	step("power on", remediationPollRequeue)
	setHostStatus(t, h, func(s *bmov1alpha1.BareMetalHostStatus) { s.PoweredOn = true })
}

// rebootAnnotations are the host's reboot.metal3.io annotations.
func rebootAnnotations(h *bmov1alpha1.BareMetalHost) []string {
	var out []string
	for k := range h.Annotations {
		if strings.HasPrefix(k, bmov1alpha1.RebootAnnotationPrefix) {
			out = append(out, k)
		}
	}
	return out
}

// remediationStepper returns a function that runs one reconcile of the
// remediation, checks the requeue interval, and reads the remediation
// (unless gone) and its host back.
func remediationStepper(ctx context.Context, t *testing.T, rem *capm3v1beta1.Metal3Remediation, h *bmov1alpha1.BareMetalHost) func(string, time.Duration) {
	r := &metal3RemediationReconciler{client: suite.client, log: logr.Discard()}
	return func(what string, wantRequeue time.Duration) {
		t.Helper()
		res, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(rem)})
		if err != nil || res.RequeueAfter != wantRequeue {
			t.Fatalf("%s: Reconcile = %+v, %v; want requeue after %v", what, res, err, wantRequeue)
		}
		if err := suite.client.Get(ctx, client.ObjectKeyFromObject(rem), rem); client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
		get(t, h)
	}
}

// remediationTarget is a provisioned, powered-on host and its Machine,
// whose Node went unhealthy: the Machine has the MHC pool label name, the
// role, and a MachineSet owner if owned.
func remediationTarget(ctx context.Context, t *testing.T, name, role string, owned bool) (*machinev1beta1.Machine, *bmov1alpha1.BareMetalHost, *corev1.Node) {
	t.Helper()
	h := newHost(t, name, map[string]string{"target": name}, nil)
	m := newMachine(t, name, HostSelector{MatchLabels: map[string]string{"target": name}})
	a := testActuator()
	create(t, a, m)
	setHostStatus(t, h, func(s *bmov1alpha1.BareMetalHostStatus) {
		s.Provisioning.State, s.PoweredOn = bmov1alpha1.StateProvisioned, true
	})
	get(t, h)
	h.Spec.Online = true
	if err := suite.client.Update(ctx, h); err != nil {
		t.Fatal(err)
	}
	node := unhealthyNode(t, name)
	update(t, a, m)
	poolMachine(ctx, t, m, name, role, owned)
	setNodeRef(ctx, t, m, node)
	return m, h, node
}

// newRemediationTemplate is a Reboot template with one retry and
// upstream's default timeout.
func newRemediationTemplate(t *testing.T, name string) {
	t.Helper()
	tmpl := &capm3v1beta1.Metal3RemediationTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: workload.MachineAPINamespace},
		Spec:       capm3v1beta1.Metal3RemediationTemplateSpec{Template: capm3v1beta1.Metal3RemediationTemplateResource{Spec: rebootSpec(1)}},
	}
	if err := suite.client.Create(context.Background(), tmpl); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = suite.client.Delete(context.Background(), tmpl) })
}

func rebootSpec(retryLimit int) capm3v1beta1.Metal3RemediationSpec {
	return capm3v1beta1.Metal3RemediationSpec{Strategy: &capm3v1beta1.RemediationStrategy{
		Type: capm3v1beta1.RebootRemediationStrategy, RetryLimit: retryLimit, Timeout: &metav1.Duration{Duration: 10 * time.Minute}}}
}

// newRemediation is what MAO's MHC controller creates for the Machine.
func newRemediation(ctx context.Context, t *testing.T, m *machinev1beta1.Machine, retryLimit int) *capm3v1beta1.Metal3Remediation {
	t.Helper()
	rem := &capm3v1beta1.Metal3Remediation{
		ObjectMeta: metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, OwnerReferences: []metav1.OwnerReference{{
			APIVersion: machinev1beta1.SchemeGroupVersion.String(), Kind: "Machine", Name: m.Name, UID: m.UID}}},
		Spec: rebootSpec(retryLimit),
	}
	if err := suite.client.Create(ctx, rem); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = suite.client.Get(context.Background(), client.ObjectKeyFromObject(rem), rem)
		rem.Finalizers = nil
		_ = suite.client.Update(context.Background(), rem)
		_ = suite.client.Delete(context.Background(), rem)
	})
	return rem
}

// backdate moves the last reboot past the timeout.
func backdate(ctx context.Context, t *testing.T, rem *capm3v1beta1.Metal3Remediation) {
	t.Helper()
	patch := client.MergeFrom(rem.DeepCopy())
	rem.Status.LastRemediated = &metav1.Time{Time: time.Now().Add(-rem.Spec.Strategy.Timeout.Duration - time.Second)}
	if err := suite.client.Status().Patch(ctx, rem, patch); err != nil {
		t.Fatal(err)
	}
}

// holdDeletion keeps a deleted Machine (and so its remediation) around
// until the test ends, as MAO's finalizer would while draining.
func holdDeletion(ctx context.Context, t *testing.T, m *machinev1beta1.Machine) {
	t.Helper()
	patch := client.MergeFrom(m.DeepCopy())
	controllerutil.AddFinalizer(m, "test.paritylab.io/hold")
	if err := suite.client.Patch(ctx, m, patch); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = suite.client.Get(context.Background(), client.ObjectKeyFromObject(m), m)
		patch := client.MergeFrom(m.DeepCopy())
		m.Finalizers = nil
		_ = suite.client.Patch(context.Background(), m, patch)
	})
}
