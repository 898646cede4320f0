package results

import (
	"fmt"
	"math/rand"
	"time"
)

// identities hands out the names, UIDs and addresses of one rendering of a
// generated observation: the same key always gets the same value, different
// keys different values. Two identities render the same structure with
// everything normalisation must remove changed.
type identities struct {
	r     *rand.Rand
	names map[string]string
	used  map[string]bool
}

func newIdentities(seed int64) *identities {
	return &identities{r: rand.New(rand.NewSource(seed)), names: map[string]string{}, used: map[string]bool{}}
}

const nameAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

// name returns a DNS-label name with a digit, so it never collides with the
// fixed words of generated text.
func (id *identities) name(key string) string {
	if n, ok := id.names[key]; ok {
		return n
	}
	for {
		b := []byte{byte('a' + id.r.Intn(26))}
		for i := 0; i < 6+id.r.Intn(6); i++ {
			b = append(b, nameAlphabet[id.r.Intn(len(nameAlphabet))])
			if i == 2 && id.r.Intn(2) == 0 {
				b = append(b, '-')
			}
		}
		b = append(b, byte('0'+id.r.Intn(10)))
		n := string(b)
		if !id.used[n] {
			id.used[n] = true
			id.names[key] = n
			return n
		}
	}
}

func (id *identities) uid(key string) string {
	return id.lazy("uid/"+key, func() string {
		return fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", id.r.Uint32(), id.r.Intn(1<<16), id.r.Intn(1<<12), id.r.Intn(1<<12), id.r.Int63n(1<<48))
	})
}

func (id *identities) ip(key string) string {
	return id.lazy("ip/"+key, func() string {
		return fmt.Sprintf("10.%d.%d.%d", id.r.Intn(256), id.r.Intn(256), 1+id.r.Intn(254))
	})
}

func (id *identities) mac(key string) string {
	return id.lazy("mac/"+key, func() string {
		return fmt.Sprintf("52:54:00:%02x:%02x:%02x", id.r.Intn(256), id.r.Intn(256), id.r.Intn(256))
	})
}

// infraID is an OpenShift infrastructure ID derived from the cluster's
// name: <cluster>-<5 hex>, the hex drawn half of the time from the digits
// that are also generateName characters, so that it looks like a suffix.
func (id *identities) infraID() string {
	return id.lazy("infra-id", func() string {
		hex := "0123456789abcdef"
		if id.r.Intn(2) == 0 {
			hex = "bcdf2456789"
		}
		b := make([]byte, 5)
		for i := range b {
			b[i] = hex[id.r.Intn(len(hex))]
		}
		return id.name("cluster") + "-" + string(b)
	})
}

func (id *identities) lazy(key string, mk func() string) string {
	if v, ok := id.names[key]; ok {
		return v
	}
	v := mk()
	id.names[key] = v
	return v
}

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.Intn(len(xs))] }

// genObservation renders the observation the structure seed describes with
// the names, UIDs and addresses of id and times from base. shuffle permutes
// every list whose order carries no meaning.
func genObservation(seed int64, id *identities, base time.Time, shuffle bool) *Observation {
	r := rand.New(rand.NewSource(seed))
	at := func(sec int) time.Time { return base.Add(time.Duration(sec) * time.Second) }
	o := &Observation{
		SchemaVersion: SchemaVersion, Scenario: pick(r, "day1", "day2-scale"), Flow: pick(r, FlowMAPI, FlowCAPI),
		RunID: id.name("run"), Cluster: id.name("cluster"), StartedAt: at(0), FinishedAt: at(600 + r.Intn(900)),
		Outcome:     pick(r, OutcomeSucceeded, OutcomeFailed),
		Backends:    map[string]string{"hub": "local", "infra": pick(r, "lab-metal3", "capm3")},
		Fixture:     Fixture{Name: "fixture-a", Versions: map[string]string{"openshift": "4.17.3"}, Shape: map[string]int{"workers": 2}},
		Identifiers: []Identifier{{Kind: "infra-id", Value: id.infraID()}},
	}
	g := &gen{r: r, id: id, at: at, o: o, ns: id.name("namespace")}
	for i := 0; i < 1+r.Intn(4); i++ {
		g.host(i)
	}
	for i := 0; i < r.Intn(4); i++ {
		reached := at(i*100 + 30 + r.Intn(60))
		o.Milestones = append(o.Milestones, Milestone{Name: fmt.Sprintf("milestone-%d", i), Description: "generated", ReachedAt: &reached})
	}
	if shuffle {
		shuffleObservation(id.r, o)
	}
	return o
}

type gen struct {
	r  *rand.Rand
	id *identities
	at func(int) time.Time
	o  *Observation
	ns string
}

// host adds a fixture host, its BareMetalHost, Machine and Node, and some
// events and errors that mention them.
func (g *gen) host(i int) {
	hk, mk := fmt.Sprintf("host%d", i), fmt.Sprintf("machine%d", i)
	nk := hk // Nodes are often named like their host.
	if g.r.Intn(2) == 0 {
		nk = fmt.Sprintf("node%d", i)
	}
	g.o.Fixture.Hosts = append(g.o.Fixture.Hosts, FixtureHost{Name: g.id.name(hk), Hardware: Hardware{
		CPUs: pick(g.r, 2, 4), MemoryMiB: 8192, Disks: []Disk{{Name: "sda", SizeGiB: 120}},
		NICs: []NIC{{Name: "enp1s0", MAC: g.id.mac(hk)}},
	}})
	g.o.Hosts = append(g.o.Hosts, Host{
		Namespace: g.ns, Name: g.id.name(hk), UID: g.id.uid(hk), ProvisioningState: pick(g.r, "provisioned", "available"),
		OperationalStatus: "OK", PoweredOn: g.r.Intn(2) == 0, Online: true,
		ConsumerRef: &ObjectRef{APIVersion: "cluster.x-k8s.io/v1beta2", Kind: "Machine", Namespace: g.ns, Name: g.id.name(mk)},
		Annotations: map[string]string{"metal3.io/BareMetalHost": g.ns + "/" + g.id.name(hk)},
	})
	g.o.Objects = append(g.o.Objects, g.machine(mk, hk))
	g.o.Nodes = append(g.o.Nodes, g.node(nk, mk, hk))
	g.o.Events = append(g.o.Events, Event{
		Role: "machine", Object: ObjectRef{Kind: "Machine", Namespace: g.ns, Name: g.id.name(mk)},
		Type: pick(g.r, "Normal", "Warning"), Reason: pick(g.r, "Provisioned", "FailedDrain"), Count: 1 + g.r.Intn(3), At: g.at(50),
		Message: fmt.Sprintf("machine %s/%s got host %s (uid %s) at %s", g.ns, g.id.name(mk), g.id.name(hk), g.id.uid(hk), g.at(50).Format(time.RFC3339)),
	})
	if g.r.Intn(3) == 0 {
		g.o.Errors = append(g.o.Errors, Error{Source: "driver", At: g.at(70),
			Message: fmt.Sprintf("node %s.lab.local at %s of %s did not answer before %s", g.id.name(nk), g.id.ip(nk), g.id.infraID(), g.at(70).Format(time.RFC3339Nano))})
	}
}

func (g *gen) machine(mk, hk string) Object {
	phases := []PhaseTransition{{Phase: "Provisioning", At: g.at(10)}, {Phase: "Provisioning", At: g.at(11)}, {Phase: "Running", At: g.at(60 + g.r.Intn(30))}}
	obj := Object{
		Role: pick(g.r, "machine", "worker-machine"), APIVersion: "cluster.x-k8s.io/v1beta2", Kind: "Machine",
		Namespace: g.ns, Name: g.id.name(mk), UID: g.id.uid(mk), CreatedAt: g.at(5), Phases: phases[:1+g.r.Intn(3)],
		Conditions: []ConditionTransition{
			{Type: "InfrastructureReady", Status: "False", At: g.at(10)},
			{Type: "InfrastructureReady", Status: "True", Reason: "Provisioned", Message: "host " + g.id.name(hk), At: g.at(40)},
			{Type: "Ready", Status: "True", At: g.at(61)},
		},
		Annotations: map[string]string{"metal3.io/BareMetalHost": g.ns + "/" + g.id.name(hk)},
		Labels: map[string]string{"machine.openshift.io/cluster-api-cluster": g.id.infraID(),
			"example.com/machineset": g.id.infraID() + "-" + pick(g.r, "worker-0", "scale")},
		Properties: map[string]string{"nodeRef": g.id.name(mk), "deletion.selectedBy": pick(g.r, "policy", "delete-annotation")},
	}
	if g.r.Intn(3) == 0 {
		d := g.at(500)
		obj.DeletedAt = &d
	}
	return obj
}

func (g *gen) node(nk, mk, hk string) Node {
	return Node{
		Name: g.id.name(nk), UID: g.id.uid(nk), Ready: g.r.Intn(4) > 0,
		Labels: map[string]string{
			"kubernetes.io/hostname": g.id.name(nk), "beta.kubernetes.io/arch": "amd64", "kubernetes.io/arch": "amd64",
			"node-role.kubernetes.io/" + pick(g.r, "worker", "master"): "", "example.com/host": g.id.name(hk) + ".lab.local",
			"example.com/machine-uid": g.id.uid(mk), "example.com/pool": pick(g.r, "blue", "green"),
		},
		Annotations: map[string]string{"machine.openshift.io/machine": g.ns + "/" + g.id.name(mk), "example.com/ip": g.id.ip(nk)},
		Taints:      []Taint{{Key: "example.com/dedicated", Value: pick(g.r, "", "infra"), Effect: "NoSchedule"}, {Key: "example.com/owner", Value: g.id.name(hk), Effect: "NoExecute"}},
		ProviderID:  pick(g.r, "metal3://", "baremetalhost:///") + g.ns + "/" + g.id.name(hk) + "/" + g.id.uid(hk),
		Addresses:   []Address{{Type: "InternalIP", Address: g.id.ip(nk)}, {Type: "Hostname", Address: g.id.name(nk)}},
	}
}

func shuffleObservation(r *rand.Rand, o *Observation) {
	shuffle(r, o.Objects)
	shuffle(r, o.Nodes)
	shuffle(r, o.Hosts)
	shuffle(r, o.Events)
	shuffle(r, o.Errors)
	shuffle(r, o.Fixture.Hosts)
	for i := range o.Nodes {
		shuffle(r, o.Nodes[i].Taints)
		shuffle(r, o.Nodes[i].Addresses)
	}
}

func shuffle[T any](r *rand.Rand, xs []T) {
	r.Shuffle(len(xs), func(i, j int) { xs[i], xs[j] = xs[j], xs[i] })
}
