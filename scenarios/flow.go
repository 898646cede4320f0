package scenarios

import (
	"context"
	"fmt"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	. "github.com/onsi/ginkgo/v2"

	"github.com/paritylab/paritylab/framework"
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
	Metal3Machines       = schema.GroupVersionResource{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Resource: "metal3machines"}
)

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

	recorders []*framework.Recorder
	cluster   string
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
	rec, err := framework.StartRecorder(ctx, framework.RecorderInput{RESTConfig: cfg, Watches: watches, EventNamespaces: eventNamespaces})
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
	// HostLists are the clients and namespaces whose BareMetalHosts the
	// flow used.
	HostLists []HostList
}

// HostList is where some of a flow's BareMetalHosts live.
type HostList struct {
	Client    client.Client
	Namespace string
}

// Stop stops the recorders, for a run whose observation is not wanted.
func (r *Run) Stop() {
	for _, rec := range r.recorders {
		rec.Stop()
	}
}

// Finish stops the recorders and builds the run's Observation.
func (r *Run) Finish(ctx context.Context, runID string, in FinishInput) *results.Observation {
	r.Stop()
	outcome := results.OutcomeSucceeded
	var errs []results.Error
	if in.Failed {
		outcome = results.OutcomeFailed
		errs = append(errs, results.Error{Source: "driver", Message: in.Err, At: time.Now().UTC()})
	}
	oi := framework.ObservationInput{Scenario: r.Scenario, Flow: r.Flow, RunID: runID, Cluster: r.cluster,
		Outcome: outcome, Started: r.Started, Finished: time.Now(), Backends: Backends(r.Flow), Fixture: r.Fixture,
		Recorders: r.recorders, Milestones: r.Milestones, Errors: errs}
	if in.Workload != nil {
		nodes := &corev1.NodeList{}
		if err := in.Workload.List(ctx, nodes); err == nil {
			oi.Nodes = nodes.Items
		}
	}
	for _, hl := range in.HostLists {
		hosts := &bmov1alpha1.BareMetalHostList{}
		if err := hl.Client.List(ctx, hosts, client.InNamespace(hl.Namespace)); err == nil {
			oi.Hosts = append(oi.Hosts, hosts.Items...)
		}
	}
	return framework.BuildObservation(oi)
}

// Backends says what implemented each component on the local profile.
func Backends(flow results.Flow) map[string]string {
	machineAPI := "capi-core"
	if flow == results.FlowMAPI {
		machineAPI = "machine-api-operator"
	}
	return map[string]string{"hub": "local", "bmc": "redfish-libvirt", "assisted": "lab-assisted", "infra": "lab-metal3", "machine-api": machineAPI}
}
