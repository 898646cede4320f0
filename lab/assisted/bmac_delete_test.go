package assisted

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/paritylab/paritylab/lab/controllers"
	"github.com/paritylab/paritylab/lab/crds"
	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

// testHold stands for the finalizer of a controller the test does not
// run (the bare-metal operator, the cluster's machine controller), so
// that what the service deleted can still be read.
const testHold = "test.paritylab.io/hold"

// removalSite is an installed converged-flow site whose workload cluster
// is the hub itself (its admin kubeconfig is the hub's), with the
// cluster's machine API kinds served; spoke reads and writes them.
type removalSite struct {
	*hub
	ns    string
	spoke client.Client
}

func startRemovalSite(t *testing.T) *removalSite {
	t.Helper()
	h := startHubWithOptions(t, Options{Spokes: noSpokes{}, ConvergedFlow: true, AgentDeprovision: true, ImageCooldown: testCooldown},
		&controllers.CRDsOnly{ComponentName: "machine-api", Sets: []crds.Set{crds.MachineAPI()}})
	ns := h.namespace(t)
	h.installedSite(t, ns, siteACI("10.100.254.10", "10.100.254.11", "10.100.0.0/16"))
	kc := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kc", Namespace: ns}, Data: map[string][]byte{"kubeconfig": h.cp.Kubeconfig()}}
	spoke, err := client.New(h.cp.RESTConfig(), client.Options{Scheme: spokeScheme})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []client.Object{kc, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "openshift-machine-api"}}} {
		if err := h.c.Create(context.Background(), o); client.IgnoreAlreadyExists(err) != nil {
			t.Fatal(err)
		}
	}
	h.infraEnv(t, ns, &agentv1beta1.ClusterReference{Name: "site-cd", Namespace: ns})
	return &removalSite{hub: h, ns: ns, spoke: spoke}
}

// installedHost writes a ZTP day-2 worker that installed and joined: the
// hub host (provisioned, detached, with annots), its Agent, and in the
// cluster its Node, Machine (no MachineSet) and BareMetalHost.
func (s *removalSite) installedHost(t *testing.T, name, node string, annots map[string]string) *bmov1alpha1.BareMetalHost {
	t.Helper()
	ctx := context.Background()
	bmh := s.bmh(t, s.ns, name, "52:54:00:00:60:01", map[string]string{agentv1beta1.InfraEnvNameLabel: "site"})
	patch := client.MergeFrom(bmh.DeepCopy())
	bmh.Annotations = annots
	bmh.Finalizers = append(bmh.Finalizers, testHold)
	if err := s.c.Patch(ctx, bmh, patch); err != nil {
		t.Fatal(err)
	}
	s.updateStatus(t, bmh, func() {
		bmh.Status.Provisioning.State = bmov1alpha1.StateProvisioned
		bmh.Status.OperationalStatus = bmov1alpha1.OperationalStatusDetached
	})
	s.agent(t, installedAgent(s.ns, name, node, agentv1beta1.HostRoleWorker, agentv1beta1.HostKindAddToExistingClusterHost))
	s.eventually(t, "the hub host paused by the BMAC", func() bool {
		_ = s.c.Get(ctx, client.ObjectKeyFromObject(bmh), bmh)
		return bmh.Annotations[bmov1alpha1.PausedAnnotation] == bmacController && controllerutil.ContainsFinalizer(bmh, bmacFinalizer)
	})
	s.eventually(t, "the Agent's finalizer", func() bool {
		a := &agentv1beta1.Agent{}
		_ = s.c.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: "agent-" + node}, a)
		return controllerutil.ContainsFinalizer(a, agentFinalizer)
	})
	return bmh
}

// spokeObjects writes a Node linked to a Machine that names its
// BareMetalHost, all held by testHold; set labels the Machine as one of a
// MachineSet.
func (s *removalSite) spokeObjects(t *testing.T, node, set string) (*corev1.Node, *machinev1beta1.Machine, *bmov1alpha1.BareMetalHost) {
	t.Helper()
	const ns = "openshift-machine-api"
	host := &bmov1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Name: node, Namespace: ns, Finalizers: []string{testHold}}}
	m := &machinev1beta1.Machine{ObjectMeta: metav1.ObjectMeta{Name: "site-cd-" + node, Namespace: ns, Finalizers: []string{testHold},
		Annotations: map[string]string{machineHostAnnotation: ns + "/" + node}, Labels: map[string]string{}}}
	if set != "" {
		m.Labels[machineSetLabel] = set
	}
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node, Finalizers: []string{testHold},
		Annotations: map[string]string{nodeMachineAnnotation: ns + "/" + m.Name}}}
	for _, o := range []client.Object{host, m, n} {
		if err := s.spoke.Create(context.Background(), o); err != nil {
			t.Fatal(err)
		}
	}
	return n, m, host
}

func (s *removalSite) deleting(t *testing.T, obj client.Object) bool {
	t.Helper()
	if err := s.spoke.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
	return !obj.GetDeletionTimestamp().IsZero()
}

func (s *removalSite) agentGone(name string) bool {
	err := s.c.Get(context.Background(), client.ObjectKey{Namespace: s.ns, Name: name}, &agentv1beta1.Agent{})
	return apierrors.IsNotFound(err)
}

// A ZTP day-2 worker's hub host annotated remove-agent-and-node-on-delete
// and deleted: the BMAC cordons and drains its Node, recording the
// drain, gives the host back to the bare-metal operator to clean
// (attached, unpaused, cleaning "metadata") and keeps it and its Agent
// until the operator has deprovisioned it; then the Agent is deleted,
// whose finalizer marks the Machine for deletion without a drain and
// deletes it with its BareMetalHost, and the host is let go.
func TestRemoveAgentAndNodeOnDelete(t *testing.T) {
	t.Parallel()
	s := startRemovalSite(t)
	ctx := context.Background()
	node, machine, host := s.spokeObjects(t, "worker-extra", "")
	bmh := s.installedHost(t, "extra-0", "worker-extra", map[string]string{removeAgentOnDeleteAnnotation: "true"})

	if err := s.c.Delete(ctx, bmh); err != nil {
		t.Fatal(err)
	}
	s.eventually(t, "the node drained and the host handed back for cleaning", func() bool {
		_ = s.c.Get(ctx, client.ObjectKeyFromObject(bmh), bmh)
		return bmh.Annotations[drainStatusAnnotation] == drainSucceeded && bmh.Spec.AutomatedCleaningMode == bmov1alpha1.CleaningModeMetadata
	})
	if _, err := time.Parse(time.RFC3339, bmh.Annotations[drainStartAnnotation]); err != nil {
		t.Errorf("drain start %q: %v", bmh.Annotations[drainStartAnnotation], err)
	}
	for _, key := range []string{detachedAnnotation, bmov1alpha1.PausedAnnotation} {
		if _, has := bmh.Annotations[key]; has {
			t.Errorf("host still has %s while it should be cleaned", key)
		}
	}
	if !s.deleting(t, node) && !node.Spec.Unschedulable {
		t.Errorf("node %s not cordoned", node.Name)
	}
	time.Sleep(2 * time.Second) // the operator has not deprovisioned the host yet
	if s.agentGone("agent-worker-extra") || s.deleting(t, machine) || !controllerutil.ContainsFinalizer(bmh, bmacFinalizer) {
		t.Fatalf("the Agent or the Machine went before the host deprovisioned (host finalizers %v)", bmh.Finalizers)
	}

	s.updateStatus(t, bmh, func() { bmh.Status.Provisioning.State = bmov1alpha1.StateDeleting })
	s.eventually(t, "the Agent deleted and the host let go", func() bool {
		_ = s.c.Get(ctx, client.ObjectKeyFromObject(bmh), bmh)
		return s.agentGone("agent-worker-extra") && !controllerutil.ContainsFinalizer(bmh, bmacFinalizer)
	})
	if !s.deleting(t, machine) || !s.deleting(t, host) {
		t.Errorf("Machine deleting %v, its BareMetalHost deleting %v: want both", machine.DeletionTimestamp, host.DeletionTimestamp)
	}
	if machine.Annotations[deleteMachineAnnotation] != "true" || machine.Annotations[excludeNodeDrainingAnnotation] != "true" {
		t.Errorf("Machine annotations %v", machine.Annotations)
	}
	if s.deleting(t, node) {
		t.Error("node deleted directly: its Machine's controller deletes it")
	}
	if !slices.ContainsFunc(s.svc.events.list(s.ns, "agent-worker-extra", 0), func(e Event) bool { return strings.Contains(e.Message, "deregistered") }) {
		t.Error("no event of the host deregistered")
	}
}

// A drain that fails is recorded on the host and retried until the
// host's drain timeout, after which the deletion goes on; an Agent
// annotated skip-spoke-cleanup leaves its Node alone when deleted.
func TestRemovalDrainTimeoutAndSkippedCleanup(t *testing.T) {
	t.Parallel()
	s := startRemovalSite(t)
	ctx := context.Background()
	bmh := s.installedHost(t, "extra-1", "worker-gone", map[string]string{removeAgentOnDeleteAnnotation: "", drainTimeoutAnnotation: "3s"})
	a := &agentv1beta1.Agent{}
	if err := s.c.Get(ctx, client.ObjectKey{Namespace: s.ns, Name: "agent-worker-gone"}, a); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(a.DeepCopy())
	metav1.SetMetaDataAnnotation(&a.ObjectMeta, skipSpokeCleanupAnnotation, "true")
	if err := s.c.Patch(ctx, a, patch); err != nil {
		t.Fatal(err)
	}

	if err := s.c.Delete(ctx, bmh); err != nil {
		t.Fatal(err)
	}
	s.eventually(t, "the failed drain recorded", func() bool {
		_ = s.c.Get(ctx, client.ObjectKeyFromObject(bmh), bmh)
		return strings.HasPrefix(bmh.Annotations[drainStatusAnnotation], "failed to drain node: node worker-gone")
	})
	s.eventually(t, "the drain given up", func() bool {
		_ = s.c.Get(ctx, client.ObjectKeyFromObject(bmh), bmh)
		return bmh.Annotations[drainStatusAnnotation] == drainTimedOut && bmh.Spec.AutomatedCleaningMode == bmov1alpha1.CleaningModeMetadata
	})
	// The node joins late; the Agent's deletion must not touch it.
	node, machine, _ := s.spokeObjects(t, "worker-gone", "")
	s.updateStatus(t, bmh, func() { bmh.Status.Provisioning.State = bmov1alpha1.StateDeleting })
	s.eventually(t, "the Agent deleted", func() bool { return s.agentGone("agent-worker-gone") })
	if s.deleting(t, node) || s.deleting(t, machine) || machine.Annotations[deleteMachineAnnotation] != "" {
		t.Errorf("skip-spoke-cleanup Agent's node or Machine touched: machine annotations %v", machine.Annotations)
	}
}

// removeSpokeResources on its own: a Machine of a MachineSet leaves by
// the set autoscaling to hosts while its BareMetalHost is deleted (the
// set then scales down); a node without a Machine is deleted; a node
// already gone is nothing to do.
func TestRemoveSpokeResources(t *testing.T) {
	t.Parallel()
	s := startRemovalSite(t)
	ctx := context.Background()
	set := &machinev1beta1.MachineSet{ObjectMeta: metav1.ObjectMeta{Name: "site-cd-worker-0", Namespace: "openshift-machine-api"}}
	if err := s.spoke.Create(ctx, set); err != nil {
		t.Fatal(err)
	}
	node, machine, host := s.spokeObjects(t, "worker-set", set.Name)
	if err := s.svc.removeSpokeResources(ctx, s.spoke, node.Name); err != nil {
		t.Fatal(err)
	}
	if err := s.spoke.Get(ctx, client.ObjectKeyFromObject(set), set); err != nil {
		t.Fatal(err)
	}
	if set.Annotations[autoscaleToHostsAnnotation] != "true" || !s.deleting(t, host) || s.deleting(t, machine) || s.deleting(t, node) {
		t.Errorf("MachineSet annotations %v; host deleting %v, Machine deleting %v, node deleting %v: want the set autoscaling and only the host deleted",
			set.Annotations, host.DeletionTimestamp, machine.DeletionTimestamp, node.DeletionTimestamp)
	}
	if machine.Annotations[deleteMachineAnnotation] != "true" {
		t.Errorf("Machine of the set not marked for deletion: %v", machine.Annotations)
	}

	alone := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-alone", Finalizers: []string{testHold}}}
	if err := s.spoke.Create(ctx, alone); err != nil {
		t.Fatal(err)
	}
	if err := s.svc.removeSpokeResources(ctx, s.spoke, alone.Name); err != nil {
		t.Fatal(err)
	}
	if !s.deleting(t, alone) {
		t.Error("a node without a Machine not deleted")
	}
	if err := s.svc.removeSpokeResources(ctx, s.spoke, "worker-never"); err != nil {
		t.Errorf("node already gone: %v", err)
	}
}

func TestDrainTimeoutPassed(t *testing.T) {
	start := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return start.Add(d) }
	for _, tc := range []struct {
		name    string
		annots  map[string]string
		now     time.Time
		want    bool
		wantErr string
	}{
		{name: "no timeout", annots: map[string]string{drainStartAnnotation: start.Format(time.RFC3339)}, now: at(time.Hour)},
		{name: "not started", annots: map[string]string{drainTimeoutAnnotation: "1m"}, now: at(time.Hour)},
		{name: "within", annots: map[string]string{drainTimeoutAnnotation: "1m", drainStartAnnotation: start.Format(time.RFC3339)}, now: at(59 * time.Second)},
		{name: "passed", annots: map[string]string{drainTimeoutAnnotation: "1m", drainStartAnnotation: start.Format(time.RFC3339)}, now: at(time.Minute), want: true},
		{name: "bad timeout", annots: map[string]string{drainTimeoutAnnotation: "soon", drainStartAnnotation: start.Format(time.RFC3339)}, now: at(0),
			wantErr: "annotation " + drainTimeoutAnnotation},
		{name: "bad start", annots: map[string]string{drainTimeoutAnnotation: "1m", drainStartAnnotation: "noon"}, now: at(0),
			wantErr: "annotation " + drainStartAnnotation},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bmh := &bmov1alpha1.BareMetalHost{ObjectMeta: metav1.ObjectMeta{Annotations: tc.annots}}
			got, err := drainTimeoutPassed(bmh, tc.now)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one naming %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}
