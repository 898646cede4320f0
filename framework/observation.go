package framework

import (
	"fmt"
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
	Hosts      []bmov1alpha1.BareMetalHost
	Milestones *MilestoneClock
	Errors     []results.Error
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
	if in.Milestones != nil {
		o.Milestones = in.Milestones.Milestones()
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
		Annotations: scenarioAnnotations(h.Annotations), Hardware: HardwareOfHost(h)}
	if ref := h.Spec.ConsumerRef; ref != nil {
		out.ConsumerRef = &results.ObjectRef{APIVersion: ref.APIVersion, Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name}
	}
	return out
}

// MilestoneClock records when a flow reached each of its scenario's
// milestones. A scenario declares its milestones once, for both flows
// (results.Milestone without ReachedAt); each flow reaches them by the same
// observable event.
type MilestoneClock struct {
	mu      sync.Mutex
	plan    []results.Milestone
	reached map[string]time.Time
	now     func() time.Time
}

// NewMilestoneClock returns a clock for the declared milestones.
func NewMilestoneClock(plan []results.Milestone) *MilestoneClock {
	p := make([]results.Milestone, len(plan))
	for i, m := range plan {
		p[i] = results.Milestone{Name: m.Name, Description: m.Description}
	}
	return &MilestoneClock{plan: p, reached: map[string]time.Time{}, now: time.Now}
}

// Reach records that the flow reached the named milestone now; reaching
// it again keeps the first time. A name the plan does not declare is a
// programming error.
func (c *MilestoneClock) Reach(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.plan {
		if m.Name == name {
			if _, ok := c.reached[name]; !ok {
				c.reached[name] = c.now().UTC()
			}
			return
		}
	}
	panic(fmt.Sprintf("milestone %q is not declared by the scenario", name))
}

// Milestones returns the plan with the times reached so far.
func (c *MilestoneClock) Milestones() []results.Milestone {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]results.Milestone, len(c.plan))
	for i, m := range c.plan {
		out[i] = m
		if at, ok := c.reached[m.Name]; ok {
			out[i].ReachedAt = &at
		}
	}
	return out
}
