package agentmachine_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util/conditions"

	capiagentv1 "github.com/paritylab/paritylab/providers/agent/api/v1beta1"
	"github.com/paritylab/paritylab/providers/agent/internal/controllers/agentmachine"
	agentv1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
)

const (
	timeout = 30 * time.Second
	// quiet is how long Consistently watches for what must not happen.
	quiet = 3 * time.Second
)

// fixture is one test's world: a namespace holding the Cluster "c", whose
// infrastructure is the AgentCluster "c", whose ClusterDeployment
// reference is cdRef (in another namespace, to tell the two apart).
type fixture struct {
	t       *testing.T
	g       *WithT
	ns      string
	cluster *clusterv1.Cluster
	cdRef   capiagentv1.ClusterDeploymentReference
}

func newFixture(t *testing.T) *fixture {
	t.Parallel()
	ns := env.Namespace(t)
	f := &fixture{t: t, g: NewWithT(t), ns: ns, cdRef: capiagentv1.ClusterDeploymentReference{Namespace: ns + "-hive", Name: "cd-" + ns}}
	f.agentCluster("c", f.cdRef)
	f.cluster = &clusterv1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: ns},
		Spec: clusterv1.ClusterSpec{
			ControlPlaneEndpoint: clusterv1.APIEndpoint{Host: "api.c.example.com", Port: 6443},
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: capiagentv1.GroupVersion.Group, Kind: "AgentCluster", Name: "c",
			},
		},
	}
	env.Create(t, f.cluster)
	return f
}

// agentCluster creates an AgentCluster whose status names cdRef (empty:
// none yet).
func (f *fixture) agentCluster(name string, cdRef capiagentv1.ClusterDeploymentReference) {
	f.t.Helper()
	ac := &capiagentv1.AgentCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns},
		Spec:       capiagentv1.AgentClusterSpec{ControlPlaneEndpoint: clusterv1.APIEndpoint{Host: "api.c.example.com", Port: 6443}},
	}
	env.Create(f.t, ac)
	ac.Status.ClusterDeploymentRef = cdRef
	f.g.Expect(env.Client.Status().Update(context.Background(), ac)).To(Succeed())
}

// startController adds an AgentMachine controller to the running manager,
// reconciling only this test's AgentMachines (those machine() labels) and,
// unless an option says otherwise, seeing only this namespace's Agents.
func (f *fixture) startController(opts ...func(*agentmachine.Reconciler)) {
	f.t.Helper()
	r := &agentmachine.Reconciler{Client: env.Manager.GetClient(), AgentNamespace: f.ns, WatchFilterValue: f.ns}
	for _, o := range opts {
		o(r)
	}
	f.g.Expect(r.SetupWithManager(context.Background(), env.Manager, controller.Options{MaxConcurrentReconciles: 2})).To(Succeed())
}

// reconcile runs one Reconcile of r on an AgentMachine, outside any
// controller.
func (f *fixture) reconcile(r *agentmachine.Reconciler, name string) error {
	_, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Namespace: f.ns, Name: name}})
	return err
}

// machineSpec says how machine() builds a Machine and its AgentMachine.
type machineSpec struct {
	// dataSecret is the Machine's bootstrap data Secret; empty for none.
	dataSecret string
	// ownerAPIVersion is the apiVersion of the AgentMachine's owner
	// reference to the Machine: cluster.x-k8s.io/v1beta2 when empty, no
	// owner reference when "-".
	ownerAPIVersion string
	// selector is the AgentMachine's agentLabelSelector.
	selector *metav1.LabelSelector
	// annotations of the AgentMachine.
	annotations map[string]string
	// unwatched leaves out the watch-filter label: no test's controller
	// reconciles the AgentMachine, only direct calls (reconcile()).
	unwatched bool
}

// machine creates a Machine of Cluster "c" and its AgentMachine, both
// named name, as Cluster API would leave them.
func (f *fixture) machine(name string, spec machineSpec) *capiagentv1.AgentMachine {
	f.t.Helper()
	m := &clusterv1.Machine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns, Labels: map[string]string{clusterv1.ClusterNameLabel: "c"}},
		Spec: clusterv1.MachineSpec{
			ClusterName: "c",
			InfrastructureRef: clusterv1.ContractVersionedObjectReference{
				APIGroup: capiagentv1.GroupVersion.Group, Kind: "AgentMachine", Name: name,
			},
		},
	}
	if spec.dataSecret != "" {
		m.Spec.Bootstrap.DataSecretName = ptr.To(spec.dataSecret)
	} else {
		// A Machine names its bootstrap data or the config making it.
		m.Spec.Bootstrap.ConfigRef = clusterv1.ContractVersionedObjectReference{
			APIGroup: "bootstrap.cluster.x-k8s.io", Kind: "TestConfig", Name: name,
		}
	}
	env.Create(f.t, m)
	am := &capiagentv1.AgentMachine{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: f.ns, Annotations: spec.annotations,
			Labels: map[string]string{clusterv1.ClusterNameLabel: "c", clusterv1.WatchLabel: f.ns},
		},
		Spec: capiagentv1.AgentMachineSpec{AgentLabelSelector: spec.selector},
	}
	if spec.unwatched {
		delete(am.Labels, clusterv1.WatchLabel)
	}
	switch spec.ownerAPIVersion {
	case "-":
	case "":
		spec.ownerAPIVersion = clusterv1.GroupVersion.String()
		fallthrough
	default:
		am.OwnerReferences = []metav1.OwnerReference{{APIVersion: spec.ownerAPIVersion, Kind: "Machine", Name: name, UID: m.UID}}
	}
	env.Create(f.t, am)
	return am
}

// userData names the bootstrap data Secret of boundWithUserData, as
// HyperShift names it (user-data-<NodePool>-<hash>).
const userData = "user-data-np-1"

// boundWithUserData starts the controller and has it bind an eligible
// Agent to the Machine "m", whose bootstrap data is HyperShift's user data
// (hypershiftSource) in the Secret userData; it returns the bound Agent.
func (f *fixture) boundWithUserData() *agentv1.Agent {
	f.t.Helper()
	f.startController()
	f.createAgent(f.eligibleAgent("a"))
	f.bootstrapSecret(userData, hypershiftSource("tok"))
	f.machine("m", machineSpec{dataSecret: userData})
	return f.eventuallyReserved("m")
}

// newAgent is an Agent of the fixture's namespace, approved or not, with
// the given conditions and, as every registered Agent, a host name in its
// inventory.
func (f *fixture) newAgent(name string, approved bool, conds ...conditionsv1.Condition) *agentv1.Agent {
	return &agentv1.Agent{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns},
		Spec:       agentv1.AgentSpec{Role: agentv1.HostRoleAutoAssign, Approved: approved},
		Status: agentv1.AgentStatus{
			Conditions: conds,
			Inventory:  agentv1.HostInventory{Hostname: name + ".hosts.example.com"},
		},
	}
}

// eligibleAgent is an Agent the provider may bind: approved, Validated
// and Connected True, Bound False.
func (f *fixture) eligibleAgent(name string) *agentv1.Agent {
	return f.newAgent(name, true, eligibleConditions()...)
}

func eligibleConditions() []conditionsv1.Condition {
	return []conditionsv1.Condition{
		cond(agentv1.ConditionValidated, corev1.ConditionTrue, agentv1.ReasonValidationsPassing, "The agent's validations are passing"),
		cond(agentv1.ConditionConnected, corev1.ConditionTrue, agentv1.ReasonAgentConnected, "The agent's connection to the installation service is unimpaired"),
		cond(agentv1.ConditionBound, corev1.ConditionFalse, agentv1.ReasonUnbound, "The agent is not bound to any cluster deployment"),
	}
}

func cond(t conditionsv1.ConditionType, s corev1.ConditionStatus, reason, message string) conditionsv1.Condition {
	now := metav1.Now()
	return conditionsv1.Condition{Type: t, Status: s, Reason: reason, Message: message, LastTransitionTime: now, LastHeartbeatTime: now}
}

// createAgent creates a and then writes its status, as assisted-service
// does, and returns it as stored.
func (f *fixture) createAgent(a *agentv1.Agent) *agentv1.Agent {
	f.t.Helper()
	status := a.Status.DeepCopy()
	env.Create(f.t, a)
	f.g.Expect(env.Update(client.ObjectKeyFromObject(a), a, func() { a.Status = *status }, true)).To(Succeed())
	return a
}

// changeAgent changes a stored Agent (its status when status is true).
func (f *fixture) changeAgent(a *agentv1.Agent, status bool, change func(*agentv1.Agent)) {
	f.t.Helper()
	f.g.Expect(env.Update(client.ObjectKeyFromObject(a), a, func() { change(a) }, status)).To(Succeed())
}

func (f *fixture) agentMachine(name string) *capiagentv1.AgentMachine {
	f.t.Helper()
	am := &capiagentv1.AgentMachine{}
	f.g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: name}, am)).To(Succeed())
	return am
}

func (f *fixture) get(obj client.Object) {
	f.t.Helper()
	f.g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)).To(Succeed())
}

// eventuallyReserved waits for the AgentMachine to record an Agent and
// returns that Agent as stored.
func (f *fixture) eventuallyReserved(name string) *agentv1.Agent {
	f.t.Helper()
	var ref *capiagentv1.AgentReference
	f.g.Eventually(func() *capiagentv1.AgentReference {
		ref = f.agentMachine(name).Status.AgentRef
		return ref
	}, timeout).ShouldNot(BeNil(), "AgentMachine %s should reserve an Agent", name)
	a := &agentv1.Agent{ObjectMeta: metav1.ObjectMeta{Namespace: ref.Namespace, Name: ref.Name}}
	f.get(a)
	return a
}

// eventuallyCondition waits for a condition of the AgentMachine to have
// status and reason, and returns the AgentMachine.
func (f *fixture) eventuallyCondition(name, condition string, status metav1.ConditionStatus, reason string) *capiagentv1.AgentMachine {
	f.t.Helper()
	var am *capiagentv1.AgentMachine
	f.g.Eventually(func(g Gomega) {
		am = &capiagentv1.AgentMachine{}
		g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: name}, am)).To(Succeed())
		got := conditions.Get(am, condition)
		g.Expect(got).NotTo(BeNil(), "condition %s", condition)
		g.Expect(got.Status).To(Equal(status), "condition %s: %s", condition, got.Message)
		g.Expect(got.Reason).To(Equal(reason), "condition %s: %s", condition, got.Message)
	}, timeout).Should(Succeed())
	return am
}

// consistentlyUnbound checks for a while that none of the Agents gets the
// agentMachineRef label.
func (f *fixture) consistentlyUnbound(agents ...*agentv1.Agent) {
	f.t.Helper()
	f.g.Consistently(func(g Gomega) {
		for _, a := range agents {
			got := &agentv1.Agent{}
			g.Expect(env.Client.Get(context.Background(), client.ObjectKeyFromObject(a), got)).To(Succeed())
			g.Expect(got.Labels).NotTo(HaveKey(capiagentv1.AgentMachineRefLabelKey), "Agent %s must stay unbound", a.Name)
		}
	}, quiet, 200*time.Millisecond).Should(Succeed())
}

// header is an HTTP header of an Ignition merge source.
type header struct{ name, value string }

// bootstrapSecret creates a bootstrap data Secret whose value is an
// Ignition config with the given merge sources (each a URL and headers).
func (f *fixture) bootstrapSecret(name string, sources ...mergeSource) *corev1.Secret {
	f.t.Helper()
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns},
		Data:       map[string][]byte{"value": ignitionConfig(f.t, sources...), "format": []byte("ignition")},
	}
	env.Create(f.t, s)
	return s
}

type mergeSource struct {
	url     string
	headers []header
}

// ignitionConfig is an Ignition 3.2.0 config merging sources, shaped as
// HyperShift's user data.
func ignitionConfig(t testing.TB, sources ...mergeSource) []byte {
	t.Helper()
	type httpHeader struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	type resource struct {
		Source      string       `json:"source"`
		HTTPHeaders []httpHeader `json:"httpHeaders,omitempty"`
	}
	merge := []resource{}
	for _, s := range sources {
		r := resource{Source: s.url}
		for _, h := range s.headers {
			r.HTTPHeaders = append(r.HTTPHeaders, httpHeader{Name: h.name, Value: h.value})
		}
		merge = append(merge, r)
	}
	cfg := map[string]any{"ignition": map[string]any{
		"version": "3.2.0",
		"config":  map[string]any{"merge": merge},
		"security": map[string]any{"tls": map[string]any{"certificateAuthorities": []map[string]string{
			{"source": "data:text/plain;base64,Q0E="},
		}}},
	}}
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// hypershiftSource is a merge source as HyperShift writes it: the
// Ignition server's /ignition path, the bearer token and two more headers.
func hypershiftSource(token string) mergeSource {
	return mergeSource{url: "https://ignition.example.com/ignition", headers: []header{
		{"Authorization", "Bearer " + token},
		{"NodePool", "clusters/np"},
		{"TargetConfigVersionHash", "abc123"},
	}}
}
