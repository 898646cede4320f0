package results

import "time"

// SchemaVersion names the Observation format this package writes and reads.
// A change that older readers would misread gets a new version.
const SchemaVersion = "paritylab.io/observation/v2"

// Flow is the machine-management flow an Observation was made with.
type Flow string

// The two flows most scenarios compare, side A and side B (see SidesOf;
// sides.go has the HyperShift scenarios' other flows).
const (
	FlowMAPI Flow = "mapi"
	FlowCAPI Flow = "capi"
)

// Outcome is how a flow's run of a scenario ended.
type Outcome string

// Outcomes of a run.
const (
	OutcomeSucceeded Outcome = "succeeded"
	OutcomeFailed    Outcome = "failed"
	OutcomeTimedOut  Outcome = "timedOut"
)

// Observation is the record of one flow's run of one scenario: what a
// scenario driver saw, tagged with the backends that produced it.
type Observation struct {
	// SchemaVersion is always "paritylab.io/observation/v2" for this format.
	SchemaVersion string `json:"schemaVersion"`
	// Scenario names the scenario, the same for both flows (e.g. day1, day2-scale).
	Scenario string `json:"scenario"`
	// Flow is the machine-management flow, one of the two its scenario compares: mapi or capi, in the HyperShift scenarios capi and capi-private (hypershift-private-types) or capi and capi-migrated (hypershift-migration).
	Flow Flow `json:"flow"`
	// RunID identifies the run that made this observation (free form).
	RunID string `json:"runID,omitempty"`
	// StartedAt is when the driver started the flow.
	StartedAt time.Time `json:"startedAt"`
	// FinishedAt is when the driver stopped observing.
	FinishedAt time.Time `json:"finishedAt"`
	// Cluster is the name of the workload cluster the flow built or changed.
	Cluster string `json:"cluster,omitempty"`
	// Outcome is how the run ended: succeeded, failed or timedOut.
	Outcome Outcome `json:"outcome"`
	// Backends maps each component the flow went through to the implementation and version that ran it, as the lab recorded them when it started them, e.g. infra=capm3 v1.13.2, hub=local (kube-apiserver v1.34.4).
	Backends map[string]string `json:"backends"`
	// Environment describes where the run happened, e.g. paritylab commit, the lab machine's CPUs and memory, the hypervisor accelerator (kvm or tcg). Shown in reports, not diffed.
	Environment map[string]string `json:"environment,omitempty"`
	// Fixture is what the flow ran on: hosts with the hardware they reported, versions the cluster reported, cluster shape.
	Fixture Fixture `json:"fixture"`
	// Identifiers are generated values the flow's objects carry that are not object names, e.g. the OpenShift infrastructure ID in machine API labels; normalisation replaces each with <kind>, whatever its random part.
	Identifiers []Identifier `json:"identifiers,omitempty"`
	// Objects are the state timelines of the API objects the scenario watched.
	Objects []Object `json:"objects,omitempty"`
	// Nodes are the workload cluster's Nodes at the end of the run.
	Nodes []Node `json:"nodes,omitempty"`
	// Hosts are the BareMetalHosts the run touched, in their final state.
	Hosts []Host `json:"hosts,omitempty"`
	// Milestones are the scenario's milestones, declared once for both flows and in order, each with when this flow reached it (absent when it did not). Durations are compared between milestones only.
	Milestones []Milestone `json:"milestones,omitempty"`
	// Events are the Kubernetes events recorded for the watched objects.
	Events []Event `json:"events,omitempty"`
	// Errors are the errors the driver or the flow reported.
	Errors []Error `json:"errors,omitempty"`
}

// Identifier is a generated value (not an object name) of a flow.
type Identifier struct {
	// Kind names what the value is, lower-case words and dashes, e.g. infra-id; it becomes the placeholder <kind>.
	Kind string `json:"kind"`
	// Value is the identifier itself.
	Value string `json:"value"`
}

// Milestone is an observable event of a scenario, the same on both sides,
// e.g. "3 control-plane agents registered and approved".
type Milestone struct {
	// Name names the milestone, lower-case words and dashes.
	Name string `json:"name"`
	// Description says which observable event marks it.
	Description string `json:"description"`
	// ReachedAt is when the flow saw the event; absent when it never did.
	ReachedAt *time.Time `json:"reachedAt,omitempty"`
}

// Fixture is the lab set-up a flow ran on. Both flows of a pair must have
// run on the same fixture for their diff to mean anything.
type Fixture struct {
	// Name names the fixture (e.g. local-3cp-2w).
	Name string `json:"name"`
	// Hosts are the servers of the fixture and their hardware.
	Hosts []FixtureHost `json:"hosts,omitempty"`
	// Versions maps a product to its version, e.g. openshift=4.17.3, kubernetes=v1.30.4.
	Versions map[string]string `json:"versions,omitempty"`
	// Shape maps a machine pool to its replica count, e.g. controlPlane=3, workers=2.
	Shape map[string]int `json:"shape,omitempty"`
}

// FixtureHost is one server of a fixture.
type FixtureHost struct {
	// Name is the host's name in the lab.
	Name string `json:"name"`
	// Hardware is what the host's BMC and inventory report.
	Hardware Hardware `json:"hardware"`
}

// Hardware describes a host's hardware.
type Hardware struct {
	// Arch is the CPU architecture, e.g. x86_64.
	Arch string `json:"arch,omitempty"`
	// CPUs is the number of logical CPUs.
	CPUs int `json:"cpus"`
	// MemoryMiB is the memory size in MiB.
	MemoryMiB int `json:"memoryMiB"`
	// Disks are the host's disks.
	Disks []Disk `json:"disks,omitempty"`
	// NICs are the host's network interfaces.
	NICs []NIC `json:"nics,omitempty"`
}

// Disk is one disk of a host.
type Disk struct {
	// Name is the device name, e.g. sda.
	Name string `json:"name"`
	// SizeGiB is the disk size in GiB.
	SizeGiB int `json:"sizeGiB"`
}

// NIC is one network interface of a host.
type NIC struct {
	// Name is the interface name, e.g. enp1s0.
	Name string `json:"name"`
	// MAC is the interface's MAC address.
	MAC string `json:"mac,omitempty"`
}

// Object is the timeline of one API object a scenario watched.
type Object struct {
	// Role is the part the object plays in the scenario, the same in both flows (e.g. machine, host, machine-set); objects with the same role are compared across flows. Objects without a counterpart in the other flow leave it empty: they are kept and shown but not diffed.
	Role string `json:"role,omitempty"`
	// APIVersion is the object's apiVersion, e.g. machine.openshift.io/v1beta1.
	APIVersion string `json:"apiVersion"`
	// Kind is the object's kind.
	Kind string `json:"kind"`
	// Namespace is the object's namespace; empty for cluster-scoped objects.
	Namespace string `json:"namespace,omitempty"`
	// Name is the object's name.
	Name string `json:"name"`
	// UID is the object's UID.
	UID string `json:"uid,omitempty"`
	// CreatedAt is the object's creationTimestamp.
	CreatedAt time.Time `json:"createdAt"`
	// DeletedAt is when the object was seen gone; absent if it still exists.
	DeletedAt *time.Time `json:"deletedAt,omitempty"`
	// Phases are the values of status.phase (or the kind's equivalent state field) in the order seen.
	Phases []PhaseTransition `json:"phases,omitempty"`
	// Conditions are condition transitions in the order seen.
	Conditions []ConditionTransition `json:"conditions,omitempty"`
	// Labels are the object's labels at the end of the run (only those the scenario cares about).
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations are the object's annotations at the end of the run (only those the scenario cares about).
	Annotations map[string]string `json:"annotations,omitempty"`
	// Properties are other facts the driver observed about the object, e.g. consumerRef.kind=Machine.
	Properties map[string]string `json:"properties,omitempty"`
	// Interchangeable marks an object the flow picked from a pool at random (a scale-up takes any free host): objects of its role are compared by the transitions they made together, not one phase sequence each.
	Interchangeable bool `json:"interchangeable,omitempty"`
	// ProviderID is spec.providerID at the end (machines).
	ProviderID string `json:"providerID,omitempty"`
	// NodeRef is the name of the Node status.nodeRef points to at the end (machines).
	NodeRef string `json:"nodeRef,omitempty"`
	// Replicas are a set's replica counts each time they changed (machine sets).
	Replicas []ReplicaSample `json:"replicas,omitempty"`
	// Provisioning is each image and user data a host was given to provision (hosts), oldest first.
	Provisioning []Provisioning `json:"provisioning,omitempty"`
}

// ReplicaSample is a set's replica counts at one time.
type ReplicaSample struct {
	// At is when the counts were seen.
	At time.Time `json:"at"`
	// Desired is spec.replicas.
	Desired int `json:"desired"`
	// Ready is status.readyReplicas.
	Ready int `json:"ready"`
	// Available is status.availableReplicas.
	Available int `json:"available"`
}

// Provisioning is an image or custom deploy, and user data, a host was given.
type Provisioning struct {
	// At is when the host's spec was seen with them.
	At time.Time `json:"at"`
	// Image identifies the image: its checksum when the host's spec gives one, else a SHA-256 of its URL; empty for a custom deploy without an image.
	Image string `json:"image"`
	// CustomDeploy is the custom deploy method (spec.customDeploy.method), e.g. start_assisted_install; empty when the host got none.
	CustomDeploy string `json:"customDeploy,omitempty"`
	// Format is the image's disk format, e.g. live-iso, raw, qcow2; empty when the spec gives none.
	Format string `json:"format,omitempty"`
	// UserData is sha256:<hex> of the user data Secret's content; empty when the host got none.
	UserData string `json:"userData,omitempty"`
}

// PhaseTransition is an object entering a phase.
type PhaseTransition struct {
	// Phase is the phase entered.
	Phase string `json:"phase"`
	// At is when the phase was first seen.
	At time.Time `json:"at"`
}

// ConditionTransition is a condition taking a new status.
type ConditionTransition struct {
	// Type is the condition type, e.g. Ready.
	Type string `json:"type"`
	// Status is True, False or Unknown.
	Status string `json:"status"`
	// Reason is the condition's reason.
	Reason string `json:"reason,omitempty"`
	// Message is the condition's message.
	Message string `json:"message,omitempty"`
	// At is when the recorder saw the condition take this status or reason
	// (not its lastTransitionTime, which controllers set in their own ways).
	At time.Time `json:"at"`
}

// Node is a workload-cluster Node at the end of the run.
type Node struct {
	// Name is the Node's name.
	Name string `json:"name"`
	// UID is the Node's UID.
	UID string `json:"uid,omitempty"`
	// Roles are the Node's roles; derived from node-role.kubernetes.io/* labels when empty.
	Roles []string `json:"roles,omitempty"`
	// Labels are the Node's labels.
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations are the Node's annotations that machine management sets (others may be left out).
	Annotations map[string]string `json:"annotations,omitempty"`
	// Taints are the Node's taints.
	Taints []Taint `json:"taints,omitempty"`
	// ProviderID is spec.providerID.
	ProviderID string `json:"providerID,omitempty"`
	// Addresses are status.addresses.
	Addresses []Address `json:"addresses,omitempty"`
	// Ready is the status of the Node's Ready condition at the end of the run.
	Ready bool `json:"ready"`
}

// Taint is a Node taint.
type Taint struct {
	// Key is the taint key.
	Key string `json:"key"`
	// Value is the taint value.
	Value string `json:"value,omitempty"`
	// Effect is NoSchedule, PreferNoSchedule or NoExecute.
	Effect string `json:"effect"`
}

// Address is a Node address.
type Address struct {
	// Type is Hostname, InternalIP, ExternalIP, InternalDNS or ExternalDNS.
	Type string `json:"type"`
	// Address is the address itself.
	Address string `json:"address"`
}

// Host is a BareMetalHost the run touched, in its final state.
type Host struct {
	// Namespace is the host's namespace.
	Namespace string `json:"namespace,omitempty"`
	// Name is the host's name.
	Name string `json:"name"`
	// UID is the host's UID.
	UID string `json:"uid,omitempty"`
	// ProvisioningState is status.provisioning.state, e.g. available, provisioned, externally provisioned, unmanaged.
	ProvisioningState string `json:"provisioningState"`
	// OperationalStatus is status.operationalStatus, e.g. OK, detached, error.
	OperationalStatus string `json:"operationalStatus,omitempty"`
	// PoweredOn is status.poweredOn.
	PoweredOn bool `json:"poweredOn"`
	// Online is spec.online.
	Online bool `json:"online"`
	// ConsumerRef is spec.consumerRef; absent when the host is free.
	ConsumerRef *ObjectRef `json:"consumerRef,omitempty"`
	// ErrorType is status.errorType; empty when the host has no error.
	ErrorType string `json:"errorType,omitempty"`
	// Annotations are the host's annotations that machine management sets.
	Annotations map[string]string `json:"annotations,omitempty"`
	// Hardware is what the host reported: its BareMetalHost's status.hardware, else its agent's inventory.
	Hardware *Hardware `json:"hardware,omitempty"`
	// Interchangeable marks a host the flow picked from a pool at random (see Object.Interchangeable).
	Interchangeable bool `json:"interchangeable,omitempty"`
	// BMC is what the host's BMC was asked to do during the flow, from the Redfish emulator's operation log, oldest first.
	BMC []BMCOperation `json:"bmc,omitempty"`
}

// BMCOperation is one request a BMC carried out.
type BMCOperation struct {
	// At is when the BMC carried it out.
	At time.Time `json:"at"`
	// Operation is what it did: power:<ResetType> (On, ForceOff, GracefulShutdown, ForceRestart, ...), media:insert, media:eject, boot:<target>/<enabled> (a boot source override); or fault:hang, when the lab made the server hang (its BMC still reporting it On).
	Operation string `json:"operation"`
}

// ObjectRef points to an API object.
type ObjectRef struct {
	// APIVersion is the object's apiVersion.
	APIVersion string `json:"apiVersion,omitempty"`
	// Kind is the object's kind.
	Kind string `json:"kind"`
	// Namespace is the object's namespace.
	Namespace string `json:"namespace,omitempty"`
	// Name is the object's name.
	Name string `json:"name,omitempty"`
}

// Phase is the stretch of a run up to a milestone, from the one before (or
// the start of the run).
type Phase struct {
	// Name is the milestone that ends the phase.
	Name string `json:"name"`
	// Start is when the phase started.
	Start time.Time `json:"start"`
	// End is when the phase ended.
	End time.Time `json:"end"`
}

// Duration is how long the phase took.
func (p Phase) Duration() time.Duration { return p.End.Sub(p.Start) }

// Event is a Kubernetes event about a watched object.
type Event struct {
	// Role is the role of the involved object (see Object.Role); empty if it has none.
	Role string `json:"role,omitempty"`
	// Object is the involved object.
	Object ObjectRef `json:"object"`
	// Type is Normal or Warning.
	Type string `json:"type"`
	// Reason is the event reason.
	Reason string `json:"reason"`
	// Message is the event message.
	Message string `json:"message,omitempty"`
	// Count is how often the event was seen.
	Count int `json:"count,omitempty"`
	// At is when the event was last seen.
	At time.Time `json:"at"`
}

// Error is an error the driver or the flow reported.
type Error struct {
	// Source is what reported the error, e.g. driver, machine-controller.
	Source string `json:"source"`
	// Message is the error text.
	Message string `json:"message"`
	// At is when the error was seen.
	At time.Time `json:"at"`
}

// Phases are the stretches between reached milestones: each from the
// milestone before it (or the start of the run) to the milestone it is
// named after. A milestone not reached ends no phase, and the next
// reached one counts from the last reached before it.
func (o *Observation) Phases() []Phase {
	var out []Phase
	last := o.StartedAt
	for _, m := range o.Milestones {
		if m.ReachedAt == nil {
			continue
		}
		out = append(out, Phase{Name: m.Name, Start: last, End: *m.ReachedAt})
		last = *m.ReachedAt
	}
	return out
}
