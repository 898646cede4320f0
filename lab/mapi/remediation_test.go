package mapi

import (
	"context"
	"strings"
	"testing"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	maomhc "github.com/openshift/machine-api-operator/pkg/controller/machinehealthcheck"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/paritylab/paritylab/lab/workload"
)

// MAO's own MachineHealthCheck controller asks for external remediation
// of an unhealthy Machine; the actuator then power-cycles the host through
// the bare-metal operator's API (played here by the test), deletes the
// Node, and restores its labels and annotations when it registers again.
func TestExternalBaremetalRemediation(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	h := newHost(t, "remediate-host", nil, nil)
	m := newMachine(t, "remediate-m", HostSelector{})
	a := testActuator()
	create(t, a, m)
	setHostStatus(t, h, func(s *bmov1alpha1.BareMetalHostStatus) {
		s.Provisioning.State, s.PoweredOn = bmov1alpha1.StateProvisioned, true
	})
	node := unhealthyNode(t, "remediate-host")
	update(t, a, m)
	patch := client.MergeFrom(m.DeepCopy())
	m.Labels = map[string]string{"pool": "remediate"}
	if err := suite.client.Patch(ctx, m, patch); err != nil {
		t.Fatal(err)
	}
	setNodeRef(ctx, t, m, node)

	runMHCController(ctx, t)
	mhc := &machinev1beta1.MachineHealthCheck{
		ObjectMeta: metav1.ObjectMeta{Name: "remediate", Namespace: workload.MachineAPINamespace,
			Annotations: map[string]string{"machine.openshift.io/remediation-strategy": "external-baremetal"}},
		Spec: machinev1beta1.MachineHealthCheckSpec{
			Selector:            metav1.LabelSelector{MatchLabels: map[string]string{"pool": "remediate"}},
			UnhealthyConditions: []machinev1beta1.UnhealthyCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Timeout: metav1.Duration{Duration: time.Second}}},
		},
	}
	if err := suite.client.Create(ctx, mhc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = suite.client.Delete(context.Background(), mhc) })
	poll(ctx, t, "MHC annotates the Machine for external remediation", func() bool {
		get(t, m)
		return externalRemediationRequested(m)
	})

	step := stepper(ctx, t, a, m, h)
	step("power off requested", false)
	if h.Annotations[PowerOffAnnotation] != `{"mode":"hard"}` {
		t.Fatalf("host lacks %s (hard): %v", PowerOffAnnotation, h.Annotations)
	}
	step("still powered on: nothing to do until the host's next event", true)
	if _, ok := m.Annotations[NodeLabelsBackupAnnotation]; ok {
		t.Fatal("node backed up while the host is still on")
	}
	setHostStatus(t, h, func(s *bmov1alpha1.BareMetalHostStatus) { s.PoweredOn = false })
	step("node backed up and deleted", false)
	if err := suite.client.Get(ctx, client.ObjectKeyFromObject(node), &corev1.Node{}); !apierrors.IsNotFound(err) {
		t.Fatalf("node not deleted once the host is off: %v", err)
	}
	step("marked powered off for remediation", true)
	if _, ok := m.Annotations[PoweredOffForRemediationAnnotation]; !ok {
		t.Fatalf("machine lacks %s: %v", PoweredOffForRemediationAnnotation, m.Annotations)
	}
	before := time.Now()
	step("power on", false)
	if _, ok := h.Annotations[PowerOffAnnotation]; ok {
		t.Fatal("power-off annotation kept after the node was deleted")
	}
	due, err := time.Parse(time.RFC3339, m.Annotations[PowerOnTimeoutAtAnnotation])
	if want := before.Add(10 * time.Minute); err != nil || due.Before(want.Add(-time.Minute)) || due.After(want.Add(time.Minute)) {
		t.Errorf("%s = %q; want about 10 minutes from now (the MHC's nodeStartupTimeout, defaulted by its CRD)",
			PowerOnTimeoutAtAnnotation, m.Annotations[PowerOnTimeoutAtAnnotation])
	}
	step("waiting for the node", false)
	back := newNode(t, "remediate-host", nil)
	step("restored", true)
	get(t, back)
	if back.Labels["node-role.kubernetes.io/worker"] != "" || back.Labels["custom"] != "kept" || back.Annotations["example.com/note"] != "kept" {
		t.Errorf("node labels %v annotations %v not restored", back.Labels, back.Annotations)
	}
	if _, ok := back.Labels["node-role.kubernetes.io/worker"]; !ok {
		t.Errorf("node role label not restored: %v", back.Labels)
	}
	step("done", true)
	for _, k := range []string{ExternalRemediationAnnotation, PoweredOffForRemediationAnnotation, PowerOnTimeoutAtAnnotation,
		NodeLabelsBackupAnnotation, NodeAnnotationsBackupAnnotation} {
		if _, ok := m.Annotations[k]; ok {
			t.Errorf("remediation annotation %s left on the Machine", k)
		}
	}
}

// Upstream deletes a remediated Machine whose Node is not back by the
// MHC's nodeStartupTimeout, so that its owner replaces it, only if it can
// be reprovisioned: a controller owns it, it is no master, and its host is
// not externally provisioned. Otherwise it keeps waiting.
func TestRemediationDeletesOnlyReprovisionableMachinesWhoseNodeIsLate(t *testing.T) {
	for _, tc := range []struct {
		name       string
		owned      bool
		role       string
		external   bool
		wantDelete bool
	}{
		{name: "owned worker", owned: true, role: "worker", wantDelete: true},
		{name: "no owner", role: "worker"},
		{name: "owned master", owned: true, role: "master"},
		{name: "externally provisioned host", owned: true, role: "worker", external: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			name := "late-" + strings.ReplaceAll(tc.name, " ", "-")
			h := newHost(t, name, map[string]string{"late": name}, nil)
			m := newMachine(t, name, HostSelector{MatchLabels: map[string]string{"late": name}})
			a := testActuator()
			create(t, a, m)
			if tc.external {
				get(t, h)
				h.Spec.ExternallyProvisioned = true
				if err := suite.client.Update(ctx, h); err != nil {
					t.Fatal(err)
				}
			}
			setHostStatus(t, h, func(s *bmov1alpha1.BareMetalHostStatus) {
				s.Provisioning.State, s.PoweredOn = bmov1alpha1.StateProvisioned, false
			})
			update(t, a, m)
			labelMachine(ctx, t, m, name, tc.role, tc.owned)
			mhc := &machinev1beta1.MachineHealthCheck{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: workload.MachineAPINamespace},
				Spec: machinev1beta1.MachineHealthCheckSpec{
					Selector:           metav1.LabelSelector{MatchLabels: map[string]string{"pool": name}},
					NodeStartupTimeout: &metav1.Duration{Duration: time.Second},
				}}
			if err := suite.client.Create(ctx, mhc); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = suite.client.Delete(context.Background(), mhc) })
			step := stepper(ctx, t, a, m, h)
			step("power off requested", false)
			step("marked powered off (no node)", true)
			step("power on", false)
			time.Sleep(1500 * time.Millisecond)
			step("past the MHC's nodeStartupTimeout", false)
			err := suite.client.Get(ctx, client.ObjectKeyFromObject(m), &machinev1beta1.Machine{})
			if deleted := apierrors.IsNotFound(err); deleted != tc.wantDelete {
				t.Errorf("machine deleted = %v (%v); want %v", deleted, err, tc.wantDelete)
			}
		})
	}
}

// stepper returns a function that runs one Update of a Machine under
// remediation, as the Machine controller would, checks whether it asked
// to be requeued, and reads the Machine and its host back.
func stepper(ctx context.Context, t *testing.T, a *Actuator, m *machinev1beta1.Machine, h *bmov1alpha1.BareMetalHost) func(what string, wantDone bool) {
	return func(what string, wantDone bool) {
		t.Helper()
		get(t, m)
		err := a.Update(ctx, m)
		if wantDone && err != nil || !wantDone && !isRequeue(err) {
			t.Fatalf("%s: Update returned %v", what, err)
		}
		if err := suite.client.Get(ctx, client.ObjectKeyFromObject(m), m); client.IgnoreNotFound(err) != nil {
			t.Fatal(err)
		}
		get(t, h)
	}
}

// labelMachine gives the Machine the MHC's pool label, a role and, if
// owned, a MachineSet as its controller; then asks for its remediation as
// the MHC controller would.
func labelMachine(ctx context.Context, t *testing.T, m *machinev1beta1.Machine, pool, role string, owned bool) {
	t.Helper()
	poolMachine(ctx, t, m, pool, role, owned)
	patch := client.MergeFrom(m.DeepCopy())
	m.Annotations[ExternalRemediationAnnotation] = ""
	if err := suite.client.Patch(ctx, m, patch); err != nil {
		t.Fatal(err)
	}
}

// poolMachine gives the Machine the MHC's pool label, a role and, if
// owned, a MachineSet as its controller.
func poolMachine(ctx context.Context, t *testing.T, m *machinev1beta1.Machine, pool, role string, owned bool) {
	t.Helper()
	patch := client.MergeFrom(m.DeepCopy())
	m.Labels = map[string]string{"pool": pool, machineRoleLabel: role}
	if owned {
		ms := &machinev1beta1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: pool, Namespace: m.Namespace},
			Spec: machinev1beta1.MachineSetSpec{Selector: metav1.LabelSelector{MatchLabels: map[string]string{"set": pool}}}}
		if err := suite.client.Create(ctx, ms); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = suite.client.Delete(context.Background(), ms) })
		m.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(ms, machinev1beta1.SchemeGroupVersion.WithKind("MachineSet"))}
	}
	if err := suite.client.Patch(ctx, m, patch); err != nil {
		t.Fatal(err)
	}
}

// setNodeRef links the Machine to its Node, as the nodelink controller
// would.
func setNodeRef(ctx context.Context, t *testing.T, m *machinev1beta1.Machine, node *corev1.Node) {
	t.Helper()
	patch := client.MergeFrom(m.DeepCopy())
	m.Status.NodeRef = &corev1.ObjectReference{Kind: "Node", Name: node.Name, UID: node.UID}
	m.Status.LastUpdated = ptr.To(metav1.Now())
	if err := suite.client.Status().Patch(ctx, m, patch); err != nil {
		t.Fatal(err)
	}
}

// unhealthyNode is a Node whose Ready condition went Unknown an hour ago.
func unhealthyNode(t *testing.T, name string) *corev1.Node {
	t.Helper()
	n := newNode(t, name, map[string]string{"node-role.kubernetes.io/worker": "", "custom": "kept"})
	// Patches, not updates: the machine API controllers other tests run
	// on the same API server (nodelink) write Nodes too.
	ctx := context.Background()
	if err := suite.client.Patch(ctx, n, client.RawPatch(types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"example.com/note":"kept"}}}`))); err != nil {
		t.Fatal(err)
	}
	p := client.MergeFrom(n.DeepCopy())
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown,
		LastTransitionTime: metav1.NewTime(time.Now().Add(-time.Hour)), LastHeartbeatTime: metav1.NewTime(time.Now().Add(-time.Hour))}}
	if err := suite.client.Status().Patch(ctx, n, p); err != nil {
		t.Fatal(err)
	}
	return n
}

// runMHCController runs MAO's MachineHealthCheck controller until ctx ends.
func runMHCController(ctx context.Context, t *testing.T) {
	t.Helper()
	runManager(ctx, t, func(mgr manager.Manager, opts manager.Options) error { return maomhc.Add(mgr, opts) })
}

// runManager runs a manager of the test cluster with what add adds, until
// the test ends.
func runManager(ctx context.Context, t *testing.T, add func(manager.Manager, manager.Options) error) {
	t.Helper()
	s, err := Scheme()
	if err != nil {
		t.Fatal(err)
	}
	opts := manager.Options{Scheme: s, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Controller: config.Controller{SkipNameValidation: ptr.To(true)}}
	mgr, err := ctrl.NewManager(suite.cluster.RESTConfig(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := add(mgr, opts); err != nil {
		t.Fatal(err)
	}
	mctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = mgr.Start(mctx) }()
	t.Cleanup(func() { stop(); <-done })
}

func poll(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("timed out waiting: %s", what)
	}
}
