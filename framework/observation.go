package framework

import (
	"sort"
	"sync"
	"time"

	bmov1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"

	"github.com/paritylab/paritylab/results"
)

// ObservationInput is what one flow of a scenario saw.
type ObservationInput struct {
	Scenario string
	Flow     results.Flow
	RunID    string
	// Cluster is the workload cluster's name.
	Cluster  string
	Outcome  results.Outcome
	Started  time.Time
	Finished time.Time
	// Backends names what implemented each component (hub, bmc, ...).
	Backends map[string]string
	Fixture  results.Fixture
	// Recorders watched the flow's objects (hub, workload cluster).
	Recorders []*Recorder
	// Nodes are the workload cluster's Nodes at the end.
	Nodes []corev1.Node
	// Hosts are the flow's BareMetalHosts at the end.
	Hosts  []bmov1alpha1.BareMetalHost
	Phases *PhaseClock
	Errors []results.Error
}

// BuildObservation makes a results.Observation of what a flow did.
func BuildObservation(in ObservationInput) *results.Observation {
	o := &results.Observation{
		SchemaVersion: results.SchemaVersion, Scenario: in.Scenario, Flow: in.Flow, RunID: in.RunID,
		Cluster: in.Cluster, Outcome: in.Outcome, StartedAt: in.Started.UTC(), FinishedAt: in.Finished.UTC(),
		Backends: in.Backends, Fixture: in.Fixture, Errors: in.Errors,
	}
	for _, r := range in.Recorders {
		o.Objects = append(o.Objects, r.Objects()...)
		o.Events = append(o.Events, r.Events()...)
	}
	sort.SliceStable(o.Events, func(i, j int) bool { return o.Events[i].At.Before(o.Events[j].At) })
	for i := range in.Nodes {
		o.Nodes = append(o.Nodes, NodeOf(&in.Nodes[i]))
	}
	for i := range in.Hosts {
		o.Hosts = append(o.Hosts, HostOf(&in.Hosts[i]))
	}
	if in.Phases != nil {
		o.Phases = in.Phases.Phases()
	}
	return o
}

// NodeOf records a Node.
func NodeOf(n *corev1.Node) results.Node {
	out := results.Node{Name: n.Name, UID: string(n.UID), Labels: n.Labels, Annotations: scenarioAnnotations(n.Annotations), ProviderID: n.Spec.ProviderID}
	for _, t := range n.Spec.Taints {
		out.Taints = append(out.Taints, results.Taint{Key: t.Key, Value: t.Value, Effect: string(t.Effect)})
	}
	for _, a := range n.Status.Addresses {
		out.Addresses = append(out.Addresses, results.Address{Type: string(a.Type), Address: a.Address})
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			out.Ready = c.Status == corev1.ConditionTrue
		}
	}
	return out
}

// HostOf records a BareMetalHost.
func HostOf(h *bmov1alpha1.BareMetalHost) results.Host {
	out := results.Host{Namespace: h.Namespace, Name: h.Name, UID: string(h.UID),
		ProvisioningState: string(h.Status.Provisioning.State), OperationalStatus: string(h.Status.OperationalStatus),
		PoweredOn: h.Status.PoweredOn, Online: h.Spec.Online, ErrorType: string(h.Status.ErrorType),
		Annotations: scenarioAnnotations(h.Annotations)}
	if ref := h.Spec.ConsumerRef; ref != nil {
		out.ConsumerRef = &results.ObjectRef{APIVersion: ref.APIVersion, Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name}
	}
	return out
}

// PhaseClock times a flow's phases (results.Phase), named the same in
// both flows.
type PhaseClock struct {
	mu     sync.Mutex
	phases []results.Phase
	now    func() time.Time
}

// NewPhaseClock returns an empty clock.
func NewPhaseClock() *PhaseClock { return &PhaseClock{now: time.Now} }

// Start starts a phase; calling the returned function ends it.
func (c *PhaseClock) Start(name string) (end func()) {
	c.mu.Lock()
	i := len(c.phases)
	start := c.now().UTC()
	c.phases = append(c.phases, results.Phase{Name: name, Start: start, End: start})
	c.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			c.phases[i].End = c.now().UTC()
			c.mu.Unlock()
		})
	}
}

// Phases returns the phases started so far.
func (c *PhaseClock) Phases() []results.Phase {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]results.Phase(nil), c.phases...)
}
