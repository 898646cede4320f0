package scenarios

import (
	"context"
	"fmt"
	"slices"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	. "github.com/onsi/ginkgo/v2"

	"github.com/paritylab/paritylab/framework"
	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
	"github.com/paritylab/paritylab/results"
)

// Resources the recorders watch, by the role they play in both flows.
var (
	BareMetalHosts       = schema.GroupVersionResource{Group: "metal3.io", Version: "v1alpha1", Resource: "baremetalhosts"}
	Agents               = schema.GroupVersionResource{Group: "agent-install.openshift.io", Version: "v1beta1", Resource: "agents"}
	AgentClusterInstalls = schema.GroupVersionResource{Group: "extensions.hive.openshift.io", Version: "v1beta1", Resource: "agentclusterinstalls"}
	ClusterDeployments   = schema.GroupVersionResource{Group: "hive.openshift.io", Version: "v1", Resource: "clusterdeployments"}
	MAPIMachines         = schema.GroupVersionResource{Group: "machine.openshift.io", Version: "v1beta1", Resource: "machines"}
	MAPIMachineSets      = schema.GroupVersionResource{Group: "machine.openshift.io", Version: "v1beta1", Resource: "machinesets"}
	CAPIMachines         = schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta2", Resource: "machines"}
	CAPIMachineSets      = schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta2", Resource: "machinesets"}
	CAPIMachineDeploys   = schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta2", Resource: "machinedeployments"}
	Metal3Machines       = schema.GroupVersionResource{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta2", Resource: "metal3machines"}
)

// NodeIdentities watches a workload cluster's Nodes for whether each was
// kept, joined or recreated (their state is compared from the Nodes at
// the end).
var NodeIdentities = framework.Watch{Resource: corev1.SchemeGroupVersion.WithResource("nodes"), Role: "node", IdentityOnly: true}

// MachineAPINamespace is where OpenShift keeps its machine API objects.
const MachineAPINamespace = "openshift-machine-api"

// Run is one flow of a scenario in progress: its milestones, its recorders
// and what it hands to BuildObservation at the end, whether the flow
// passed or failed.
type Run struct {
	Scenario   string
	Flow       results.Flow
	Started    time.Time
	Milestones *framework.MilestoneClock
	Fixture    results.Fixture

	// EventsOnlyFromStart leaves out of the run the events last seen
	// before it started: a run that starts from a set-up (a worker made
	// for it, a cluster another scenario left) compares what it did.
	EventsOnlyFromStart bool

	recorders []*framework.Recorder
	cluster   string
}

// NewRunAfterSetUp starts a run, with EventsOnlyFromStart, at the start
// of a wall-clock second at least a second after its set-up finished.
// Events keep time to the second and the recorder keeps those of the run's
// first second: an event the set-up raised in that same second (CAPI's
// SuccessfulSetNodeRef on a worker made for the run, whose Node had just
// become Ready) would otherwise count as the run's, or not, by chance.
func NewRunAfterSetUp(ctx context.Context, scenario string, flow results.Flow, fixture results.Fixture, milestones []results.Milestone) *Run {
	sleepUntil(ctx, runStartAfter(time.Now()))
	r := NewRun(scenario, flow, fixture, milestones)
	r.EventsOnlyFromStart = true
	return r
}

// runStartAfter is the first whole second at least a second after
// setUpDone.
func runStartAfter(setUpDone time.Time) time.Time {
	return setUpDone.Add(time.Second).Truncate(time.Second).Add(time.Second)
}

func sleepUntil(ctx context.Context, t time.Time) {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-ctx.Done():
	case <-timer.C:
	}
}

// NewRun starts a flow's run of a scenario with the scenario's milestones.
func NewRun(scenario string, flow results.Flow, fixture results.Fixture, milestones []results.Milestone) *Run {
	return &Run{Scenario: scenario, Flow: flow, Started: time.Now(), Milestones: framework.NewMilestoneClock(milestones), Fixture: fixture}
}

// Reach records that the flow reached one of the scenario's milestones.
func (r *Run) Reach(milestone string) {
	By("milestone reached: " + milestone)
	r.Milestones.Reach(milestone)
}

// Record starts a recorder whose observations become part of the run.
func (r *Run) Record(ctx context.Context, cfg *rest.Config, eventNamespaces []string, watches ...framework.Watch) error {
	in := framework.RecorderInput{RESTConfig: cfg, Watches: watches, EventNamespaces: eventNamespaces}
	if r.EventsOnlyFromStart {
		in.EventsSince = r.Started
	}
	rec, err := framework.StartRecorder(ctx, in)
	if err != nil {
		return fmt.Errorf("record %s %s: %w", r.Scenario, r.Flow, err)
	}
	r.recorders = append(r.recorders, rec)
	return nil
}

// SetProperty records a fact about an object every recorder of the run
// may have seen (results.Object.Properties).
func (r *Run) SetProperty(uid types.UID, key, value string) {
	for _, rec := range r.recorders {
		rec.SetProperty(uid, key, value)
	}
}

// SetCluster names the workload cluster.
func (r *Run) SetCluster(name string) { r.cluster = name }

// FinishInput is what the end of a flow saw.
type FinishInput struct {
	Failed bool
	// Err, when the flow failed, says why.
	Err string
	// Workload lists the workload cluster's Nodes; nil when the flow
	// never reached one.
	Workload client.Client
	// NodeNames limits the Nodes compared to those named; empty: all.
	NodeNames []string
	// WorkloadConfig reaches the workload cluster (its server version).
	WorkloadConfig *rest.Config
	// HostLists are the clients and namespaces whose BareMetalHosts the
	// flow used.
	HostLists []HostList
	// AgentNamespace is the hub namespace whose Agents' inventories
	// describe hosts that report no hardware themselves (ZTP hosts skip
	// inspection).
	AgentNamespace string
	// PoolHosts name the hosts the flow picked from a pool at random
	// (results.Host.Interchangeable).
	PoolHosts []string
}

// HostList is where some of a flow's BareMetalHosts live.
type HostList struct {
	Client    client.Client
	Namespace string
	// Labels, when set, limits the list to the hosts carrying them (a
	// pool's among others in the namespace).
	Labels client.MatchingLabels
	// Name, when set, limits the list to the host of that name (a ZTP
	// day-2 host's copy in the spoke, which carries no labels of its own).
	Name string
}

// Stop stops the recorders, for a run whose observation is not wanted.
func (r *Run) Stop() {
	for _, rec := range r.recorders {
		rec.Stop()
	}
}

// Finish stops the recorders and builds the run's Observation from what
// the flow observed: the backends the lab recorded it ran, the hardware
// the hosts reported, the versions the workload cluster reports.
func (r *Run) Finish(ctx context.Context, l *framework.Lab, in FinishInput) *results.Observation {
	r.Stop()
	outcome := results.OutcomeSucceeded
	var errs []results.Error
	if in.Failed {
		outcome = results.OutcomeFailed
		errs = append(errs, results.Error{Source: "driver", Message: in.Err, At: time.Now().UTC()})
	}
	oi := framework.ObservationInput{Scenario: r.Scenario, Flow: r.Flow, RunID: l.Info.RunID, Cluster: r.cluster,
		Outcome: outcome, Started: r.Started, Finished: time.Now(), Backends: Backends(l, r.Flow), Fixture: r.Fixture,
		Recorders: r.recorders, Milestones: r.Milestones, Errors: errs}
	if in.Workload != nil {
		nodes := &corev1.NodeList{}
		if err := in.Workload.List(ctx, nodes); err != nil {
			oi.Errors = append(oi.Errors, listError("nodes", err))
		}
		oi.Nodes = namedNodes(nodes.Items, in.NodeNames)
	}
	for _, hl := range in.HostLists {
		hosts := &bmov1alpha1.BareMetalHostList{}
		opts := []client.ListOption{client.InNamespace(hl.Namespace), hl.Labels}
		if hl.Name != "" {
			opts = append(opts, client.MatchingFields{"metadata.name": hl.Name})
		}
		if err := hl.Client.List(ctx, hosts, opts...); err != nil {
			oi.Errors = append(oi.Errors, listError("hosts", err))
		}
		oi.Hosts = append(oi.Hosts, hosts.Items...)
	}
	o := framework.BuildObservation(oi)
	o.Environment = l.Environment(ctx)
	r.addWorkloadFacts(ctx, o, in)
	r.completeHosts(ctx, l, o, oi.Hosts, in)
	return o
}

// namedNodes keeps the Nodes named, or all when no name is given.
func namedNodes(nodes []corev1.Node, names []string) []corev1.Node {
	if len(names) == 0 {
		return nodes
	}
	var out []corev1.Node
	for _, n := range nodes {
		if slices.Contains(names, n.Name) {
			out = append(out, n)
		}
	}
	return out
}

// listError records a failed list at the end of a flow as an error of
// the run, so that an empty list is not taken for behaviour.
func listError(what string, err error) results.Error {
	return results.Error{Source: "recorder", Message: fmt.Sprintf("list %s at the end of the flow: %v", what, err), At: time.Now().UTC()}
}

// addWorkloadFacts records the versions the workload cluster reports and
// its infrastructure ID.
func (r *Run) addWorkloadFacts(ctx context.Context, o *results.Observation, in FinishInput) {
	if in.Workload == nil {
		return
	}
	facts, err := framework.ReadWorkloadFacts(ctx, in.Workload, in.WorkloadConfig)
	if err != nil {
		o.Errors = append(o.Errors, results.Error{Source: "recorder", Message: err.Error(), At: time.Now().UTC()})
	}
	if o.Fixture.Versions == nil {
		o.Fixture.Versions = map[string]string{}
	}
	o.Fixture.Versions["openshift"] = facts.OpenShiftVersion
	o.Fixture.Versions["kubernetes"] = facts.KubernetesVersion
	if facts.InfrastructureName != "" {
		o.Identifiers = append(o.Identifiers, results.Identifier{Kind: "infra-id", Value: facts.InfrastructureName})
	}
}

// completeHosts gives hosts that report no hardware their agent's
// inventory, and marks pool hosts; raw are the BareMetalHosts o.Hosts
// were made of, in the same order.
func (r *Run) completeHosts(ctx context.Context, l *framework.Lab, o *results.Observation, raw []bmov1alpha1.BareMetalHost, in FinishInput) {
	var agents []agentv1beta1.Agent
	if in.AgentNamespace != "" {
		list := &agentv1beta1.AgentList{}
		if err := l.Client().List(ctx, list, client.InNamespace(in.AgentNamespace)); err != nil {
			o.Errors = append(o.Errors, listError("agents", err))
		}
		agents = list.Items
	}
	pool := map[string]bool{}
	for _, name := range in.PoolHosts {
		pool[name] = true
	}
	for i := range o.Hosts {
		h := &o.Hosts[i]
		h.Interchangeable = pool[h.Name]
		ops, err := bmcOperations(ctx, l, &raw[i], r.Started)
		if err != nil {
			o.Errors = append(o.Errors, results.Error{Source: "recorder", Message: "BMC operations of host " + h.Name + ": " + err.Error(), At: time.Now().UTC()})
		}
		h.BMC = ops
		if h.Hardware == nil {
			if a := framework.AgentWithMAC(agents, raw[i].Spec.BootMACAddress); a != nil {
				h.Hardware = framework.HardwareOfAgent(a)
			}
		}
	}
}

// Backends are what implemented each component this flow went through,
// as the lab recorded it ran them, and the accelerator the hosts ran
// with.
func Backends(l *framework.Lab, flow results.Flow) map[string]string {
	names := []string{"hub", "bmc", "bmo", "assisted", "machine-api", "mapi-actuator"}
	if flow == results.FlowCAPI {
		names = []string{"hub", "bmc", "bmo", "assisted", "capi-core", "infra", "bootstrap", "control-plane"}
	}
	return backendsOf(l, names)
}

// HostedBackends are the backends of a HyperShift flow: the hosted
// cluster's CAPI (core, the agent infrastructure provider, the HyperShift
// operator) over the same hosts, and which CAPI types it is on.
func HostedBackends(l *framework.Lab, capiTypes string) map[string]string {
	out := backendsOf(l, []string{"hub", "bmc", "bmo", "assisted", "capi-core", "infra-agent", "hypershift"})
	out["capi-types"] = capiTypes
	return out
}

func backendsOf(l *framework.Lab, names []string) map[string]string {
	out := map[string]string{"accel": l.Info.Accel}
	components, err := l.Components()
	for _, n := range names {
		switch c, ok := components[n]; {
		case err != nil:
			out[n] = "unknown: " + err.Error()
		case !ok:
			out[n] = "unknown: the lab recorded no " + n
		default:
			out[n] = c.String()
		}
	}
	return out
}
