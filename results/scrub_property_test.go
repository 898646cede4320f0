package results

import (
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The lab's names are fixed words around random parts: generateName
// suffixes, the infrastructure ID's hex, UUIDs, hashes, addresses. These
// tests render one structure twice with different random parts and
// require the same aspects, and no random part in them.

// The test spells out the lab's alphabets itself rather than use the
// scrubber's constants, so that it checks them too.
const (
	// suffixAlphabet is what Kubernetes' generateName draws its 5-character
	// suffixes from.
	suffixAlphabet = "bcdfghjklmnpqrstvwxz2456789"
	// hexInAlphabet are the hex digits that are also generateName
	// characters: an infrastructure ID drawn from them looks like a
	// generated suffix.
	hexInAlphabet = "bcdf2456789"
)

// labRandom draws the random parts of one rendering of a lab structure.
// The same key always gets the same value; every value drawn is kept in
// parts, for the leak check.
type labRandom struct {
	r     *rand.Rand
	memo  map[string]string
	used  map[string]bool
	parts []string
	// infraHexInAlphabet makes the infrastructure ID's hex suffix consist of
	// generateName characters only (the case that used to be scrubbed into
	// <cluster>-<rand><rand>); otherwise it has at least one hex character
	// outside the alphabet.
	infraHexInAlphabet bool
	// base is when the rendering's run started; zone is how times are
	// written in messages.
	base time.Time
	zone *time.Location
}

func newLabRandom(seed int64, infraHexInAlphabet bool) *labRandom {
	r := rand.New(rand.NewSource(seed))
	return &labRandom{r: r, memo: map[string]string{}, used: map[string]bool{}, infraHexInAlphabet: infraHexInAlphabet,
		base: time.Date(2025, 3, 4, 9, 0, 0, 0, time.UTC).Add(time.Duration(r.Intn(1e6)) * time.Second),
		zone: time.FixedZone(pick(r, "UTC", "CET", "X"), pick(r, 0, 3600, 5*3600+1800))}
}

// draw returns key's value, making a new one with mk the first time;
// values are unique within a rendering.
func (lr *labRandom) draw(key string, mk func() string) string {
	if v, ok := lr.memo[key]; ok {
		return v
	}
	v := mk()
	for lr.used[v] {
		v = mk()
	}
	lr.memo[key], lr.used[v] = v, true
	lr.parts = append(lr.parts, v)
	return v
}

func (lr *labRandom) chars(alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[lr.r.Intn(len(alphabet))]
	}
	return string(b)
}

// suffix is a generateName suffix.
func (lr *labRandom) suffix(key string) string {
	return lr.draw("suffix/"+key, func() string { return lr.chars(suffixAlphabet, 5) })
}

// infraHex is the 5 hex characters of the infrastructure ID, in or out of
// the generateName alphabet as the rendering says.
func (lr *labRandom) infraHex() string {
	return lr.draw("infra-hex", func() string {
		if lr.infraHexInAlphabet {
			return lr.chars(hexInAlphabet, 5)
		}
		b := []byte(lr.chars("0123456789abcdef", 5))
		b[lr.r.Intn(5)] = "013ae"[lr.r.Intn(5)]
		return string(b)
	})
}

// labHex is the hex of the lab's run ID (pl-<hex>): 6 characters in
// lab/lab.go newRunID, 5 in older runs.
func (lr *labRandom) labHex() string {
	return lr.draw("lab-hex", func() string { return lr.chars("0123456789abcdef", 5+lr.r.Intn(2)) })
}

func (lr *labRandom) uuid(key string) string {
	return lr.draw("uuid/"+key, func() string {
		return fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x", lr.r.Uint32(), lr.r.Intn(1<<16), lr.r.Intn(1<<12), 0x8000|lr.r.Intn(1<<14), lr.r.Int63n(1<<48))
	})
}

// templateHash is a machine-template-hash label value: <uint32>-<suffix>.
// The hash has 10 digits so that the leak check cannot mistake a fixed
// number for it.
func (lr *labRandom) templateHash(key string) string {
	return lr.draw("hash/"+key, func() string { return fmt.Sprint(1_000_000_000 + lr.r.Int63n(3_000_000_000)) }) + "-" + lr.suffix("hash/"+key)
}

func (lr *labRandom) mac(key string) string {
	return lr.draw("mac/"+key, func() string {
		return fmt.Sprintf("52:54:00:%02x:%02x:%02x", lr.r.Intn(256), lr.r.Intn(256), lr.r.Intn(256))
	})
}

func (lr *labRandom) ipv4(key string) string {
	return lr.draw("ip/"+key, func() string {
		return fmt.Sprintf("192.168.%d.%d", lr.r.Intn(256), 10+lr.r.Intn(240))
	})
}

// ipv6 is written in full or compressed, as the rendering draws.
func (lr *labRandom) ipv6(key string) string {
	return lr.draw("ip6/"+key, func() string {
		if lr.r.Intn(2) == 0 {
			return fmt.Sprintf("fd00:%x:%x:%x:%x:%x:%x:%x", 1+lr.r.Intn(0xfff), lr.r.Intn(0xffff), lr.r.Intn(0xffff), lr.r.Intn(0xffff), lr.r.Intn(0xffff), lr.r.Intn(0xffff), 1+lr.r.Intn(0xfff))
		}
		return fmt.Sprintf("fd00::%x:%x", lr.r.Intn(0xffff), 1+lr.r.Intn(0xfff))
	})
}

// labStructure is what two renderings share: the scenario, flow and shape,
// drawn from a structure seed.
type labStructure struct {
	flow    Flow
	day2    bool
	masters int
	workers int
	// scaled is how many Machines the day-2 scale set made.
	scaled int
	// nodesByLabName names Nodes like the lab's VMs (pl-<hex>-host-<n>)
	// instead of like their BareMetalHosts.
	nodesByLabName bool
	// workloadIsNamespace: the workload cluster is named like the namespace,
	// not <namespace>-<name> (both give an infrastructure ID prefix).
	workloadIsNamespace bool
	seed                int64
}

func newLabStructure(seed int64) labStructure {
	r := rand.New(rand.NewSource(seed))
	return labStructure{flow: pick(r, FlowMAPI, FlowCAPI), day2: r.Intn(2) == 0, masters: 1 + r.Intn(3), workers: r.Intn(3),
		scaled: r.Intn(3), nodesByLabName: r.Intn(2) == 0, workloadIsNamespace: r.Intn(3) == 0, seed: seed}
}

// labGen renders one structure with one labRandom.
type labGen struct {
	st labStructure
	lr *labRandom
	// r makes the structure's choices; it is seeded by the structure, so
	// both renderings choose the same.
	r     *rand.Rand
	o     *Observation
	ns    string
	infra string
}

// renderLab builds the observation of st with the random parts of lr, as
// the lab's recorders would: hub objects (hosts, agents, install), the
// flow's machines and sets, the workload's Nodes, events and errors.
func renderLab(st labStructure, lr *labRandom) *Observation {
	g := &labGen{st: st, lr: lr, r: rand.New(rand.NewSource(st.seed))}
	g.ns = "day1-" + string(st.flow) + "-" + lr.suffix("namespace")
	cluster := g.ns + "-" + g.ns
	if st.workloadIsNamespace {
		cluster = g.ns
	}
	g.infra = labInfraID(cluster, lr.infraHex())
	scenario := "day1"
	if st.day2 {
		scenario = "day2-scale"
	}
	g.o = &Observation{SchemaVersion: SchemaVersion, Scenario: scenario, Flow: st.flow, RunID: "pl-" + lr.labHex(),
		StartedAt: g.at(0), FinishedAt: g.at(3600), Cluster: g.ns, Outcome: OutcomeSucceeded,
		Backends:    map[string]string{"hub": "local"},
		Fixture:     Fixture{Name: "local-3cp-2w", Versions: map[string]string{"openshift": "4.17.3"}},
		Identifiers: []Identifier{{Kind: "infra-id", Value: g.infra}},
	}
	g.hub()
	if st.flow == FlowMAPI {
		g.mapi()
	} else {
		g.capi()
	}
	return g.o
}

// labInfraID is lab/workload's infraID: the cluster name cut to 21
// characters without trailing dashes, a dash and 5 hex characters.
func labInfraID(cluster, hex string) string {
	return strings.TrimRight(cluster[:min(len(cluster), 21)], "-") + "-" + hex
}

func (g *labGen) at(sec int) time.Time { return g.lr.base.Add(time.Duration(sec) * time.Second) }

// stamp writes a time into a message the way controllers do: RFC 3339 in
// UTC or with an offset, or Go's time.String.
func (g *labGen) stamp(sec int) string {
	t := g.at(sec).In(g.lr.zone)
	switch g.r.Intn(3) {
	case 0:
		return t.UTC().Format(time.RFC3339)
	case 1:
		return t.Format(time.RFC3339Nano)
	}
	return t.String()
}

// labHostNames are the BareMetalHosts' fixed names: master-<i>, worker-<i>,
// scale-<i> (day-2 pool) or day2-worker-0.
func labHostNames(st labStructure) []string {
	var out []string
	for i := range st.masters {
		out = append(out, fmt.Sprintf("master-%d", i))
	}
	for i := range st.workers {
		out = append(out, fmt.Sprintf("worker-%d", i))
	}
	if st.day2 {
		for i := range st.scaled {
			out = append(out, fmt.Sprintf("scale-%d", i))
		}
		out = append(out, "day2-worker-0")
	}
	return out
}

// nodeName is the Node of host i: named like the host, or like the lab's
// VM of it.
func (g *labGen) nodeName(i int, host string) string {
	if g.st.nodesByLabName {
		return fmt.Sprintf("pl-%s-host-%d", g.lr.labHex(), i)
	}
	return host
}

// hub adds the hub objects both flows go through: BareMetalHosts, Agents
// (named by UUID), the install and the fixture's hosts.
func (g *labGen) hub() {
	for i, h := range labHostNames(g.st) {
		g.o.Fixture.Hosts = append(g.o.Fixture.Hosts, FixtureHost{Name: fmt.Sprintf("pl-%s-host-%d", g.lr.labHex(), i),
			Hardware: Hardware{CPUs: 4, MemoryMiB: 8192, NICs: []NIC{{Name: "enp1s0", MAC: g.lr.mac(h)}}}})
		g.o.Objects = append(g.o.Objects, g.object("host", "metal3.io/v1alpha1", "BareMetalHost", g.ns, h,
			map[string]string{"infraenvs.agent-install.openshift.io": g.ns},
			map[string]string{"bmac.agent-install.openshift.io/hostname": g.nodeName(i, h)}))
		agent := g.lr.uuid("agent/" + h)
		g.o.Objects = append(g.o.Objects, g.object("agent", "agent-install.openshift.io/v1beta1", "Agent", g.ns, agent,
			map[string]string{"agent-install.openshift.io/bmh": h, "infraenvs.agent-install.openshift.io": g.ns},
			map[string]string{"inventory.mac": g.lr.mac(h), "inventory.ip": g.lr.ipv4(h)}))
		g.event("agent", "Agent", g.ns, agent, "Normal", "Registered",
			fmt.Sprintf("Agent %s (host %s, MAC %s, IP %s, %s) registered at %s", agent, h, g.lr.mac(h), g.lr.ipv4(h), g.lr.ipv6(h), g.stamp(100+i)))
	}
	g.o.Objects = append(g.o.Objects,
		g.object("cluster-install", "extensions.hive.openshift.io/v1beta1", "AgentClusterInstall", g.ns, g.ns, nil, nil),
		g.object("cluster", "hive.openshift.io/v1", "ClusterDeployment", g.ns, g.ns,
			map[string]string{"hive.openshift.io/cluster-deployment-name": g.ns}, nil))
	g.o.Errors = append(g.o.Errors, Error{Source: "recorder", At: g.at(50),
		Message: fmt.Sprintf("cluster %s (infrastructure %s, id %s) reported at %s", g.ns, g.infra, g.lr.uuid("cluster-id"), g.stamp(50))})
}

// machine is one Machine the flow made for host i.
type machine struct {
	name, set, host, node string
	labels                map[string]string
}

// mapi adds the spoke's machine API objects: the installer's Machines
// (<infra>-master-<i>, <infra>-worker-0-<suffix>) and MachineSet
// (<infra>-worker-0), and on day 2 the scale set (<infra>-scale) and the
// day-2 Machine (<clusterdeployment>-<host>).
func (g *labGen) mapi() {
	const ns = "openshift-machine-api"
	workerSet := g.infra + "-worker-0"
	sets := []string{workerSet}
	if g.st.day2 {
		sets = append(sets, g.infra+"-scale")
	}
	for _, set := range sets {
		g.o.Objects = append(g.o.Objects, g.object("machine-set", "machine.openshift.io/v1beta1", "MachineSet", ns, set,
			map[string]string{"machine.openshift.io/cluster-api-cluster": g.infra}, nil))
	}
	var ms []machine
	for i, h := range labHostNames(g.st) {
		m := machine{host: h, node: g.nodeName(i, h)}
		switch {
		case strings.HasPrefix(h, "master-"):
			m.name = g.infra + "-" + h
		case strings.HasPrefix(h, "worker-"):
			m.name, m.set = workerSet+"-"+g.lr.suffix("machine/"+h), workerSet
		case strings.HasPrefix(h, "scale-"):
			m.name, m.set = g.infra+"-scale-"+g.lr.suffix("machine/"+h), g.infra+"-scale"
		default:
			m.name = g.ns + "-" + h
		}
		m.labels = map[string]string{"machine.openshift.io/cluster-api-cluster": g.infra,
			"machine.openshift.io/cluster-api-machine-role": strings.TrimSuffix(strings.TrimRight(h, "0123456789"), "-")}
		if m.set != "" {
			m.labels["machine.openshift.io/cluster-api-machineset"] = m.set
		}
		ms = append(ms, m)
	}
	g.machines(ns, "machine.openshift.io/v1beta1", "baremetalhost:///", ms)
	// Names made of the infrastructure ID that are no object's name.
	unwatched := g.infra + "-worker-1"
	g.o.Errors = append(g.o.Errors, Error{Source: "machineset-controller", At: g.at(600),
		Message: fmt.Sprintf("MachineSet %s/%s made Machine %s-%s; %s-master-%d.lab.example is not a Node of %s", ns, unwatched, unwatched,
			g.lr.suffix("unwatched"), g.infra, g.st.masters, g.infra)})
}

// capi adds Cluster API objects: the control plane's Machines
// (<controlplane>-<suffix>), the MachineDeployment's MachineSet
// (<deployment>-<suffix>) and its Machines (<machineset>-<suffix>) with
// machine-template-hash labels, and the Metal3Machines and InfraEnvs
// named after the Machines.
func (g *labGen) capi() {
	deployments := []string{g.ns + "-workers"}
	if g.st.day2 {
		deployments = append(deployments, g.ns+"-scale")
	}
	sets, deploymentOf := map[string]string{}, map[string]string{}
	for _, md := range deployments {
		set := md + "-" + g.lr.suffix("set/"+md)
		sets[md], deploymentOf[set] = set, md
		g.o.Objects = append(g.o.Objects, g.object("", "cluster.x-k8s.io/v1beta2", "MachineDeployment", g.ns, md,
			map[string]string{"cluster.x-k8s.io/cluster-name": g.ns}, nil),
			g.object("machine-set", "cluster.x-k8s.io/v1beta2", "MachineSet", g.ns, set,
				map[string]string{"cluster.x-k8s.io/cluster-name": g.ns, "cluster.x-k8s.io/deployment-name": md,
					"machine-template-hash": g.lr.templateHash(md)}, nil))
	}
	var ms []machine
	for i, h := range labHostNames(g.st) {
		m := machine{host: h, node: g.nodeName(i, h), labels: map[string]string{"cluster.x-k8s.io/cluster-name": g.ns}}
		switch {
		case strings.HasPrefix(h, "master-"):
			m.name = g.ns + "-" + g.lr.suffix("machine/"+h)
			m.labels["cluster.x-k8s.io/control-plane-name"] = g.ns
		case strings.HasPrefix(h, "scale-"):
			m.set = sets[g.ns+"-scale"]
		default:
			m.set = sets[g.ns+"-workers"]
		}
		if m.set != "" {
			m.name = m.set + "-" + g.lr.suffix("machine/"+h)
			m.labels["cluster.x-k8s.io/set-name"] = m.set
			m.labels["machine-template-hash"] = g.lr.templateHash(deploymentOf[m.set])
		}
		g.o.Objects = append(g.o.Objects,
			g.object("", "infrastructure.cluster.x-k8s.io/v1beta1", "Metal3Machine", g.ns, m.name,
				map[string]string{"cluster.x-k8s.io/cluster-name": g.ns}, map[string]string{"metal3.io/BareMetalHost": g.ns + "/" + h}),
			g.object("", "agent-install.openshift.io/v1beta1", "InfraEnv", g.ns, m.name, nil, nil))
		g.event("", "Metal3Machine", g.ns, m.name, "Normal", "Associated",
			fmt.Sprintf("Metal3Machine %s/%s associated with host %s (%s) at %s", g.ns, m.name, h, g.lr.uuid("host/"+h), g.stamp(200+i)))
		ms = append(ms, m)
	}
	g.machines(g.ns, "cluster.x-k8s.io/v1beta2", "metal3://", ms)
	// Names made of known ones and suffixes that are no object's name.
	md := deployments[0]
	g.o.Errors = append(g.o.Errors, Error{Source: "machinedeployment-controller", At: g.at(600),
		Message: fmt.Sprintf("MachineDeployment %s/%s rolled out MachineSet %s-%s (Machine %s-%s-%s); kubeconfig %s-kubeconfig of workload %s",
			g.ns, md, md, g.lr.suffix("rollout"), md, g.lr.suffix("rollout"), g.lr.suffix("rollout-machine"), g.ns, g.infra)})
}

// machines adds the Machines, their hosts (consumed by them) and Nodes.
func (g *labGen) machines(ns, apiVersion, scheme string, ms []machine) {
	for i, m := range ms {
		obj := g.object("machine", apiVersion, "Machine", ns, m.name, m.labels,
			map[string]string{"metal3.io/BareMetalHost": g.ns + "/" + m.host})
		obj.Properties = map[string]string{"nodeRef": m.node, "host": g.ns + "/" + m.host}
		obj.NodeRef = m.node
		obj.ProviderID = scheme + g.ns + "/" + m.host + "/" + g.lr.uuid("host/"+m.host)
		obj.Phases = []PhaseTransition{{Phase: "Provisioning", At: g.at(300)}, {Phase: "Running", At: g.at(900 + i)}}
		obj.Conditions = []ConditionTransition{{Type: "Ready", Status: "True", At: g.at(900 + i),
			Message: fmt.Sprintf("Node %s is ready since %s", m.node, g.stamp(900+i))}}
		g.o.Objects = append(g.o.Objects, obj)
		g.o.Hosts = append(g.o.Hosts, Host{Namespace: g.ns, Name: m.host, UID: g.lr.uuid("host/" + m.host),
			ProvisioningState: "provisioned", OperationalStatus: "OK", PoweredOn: true, Online: true,
			ConsumerRef: &ObjectRef{APIVersion: apiVersion, Kind: "Machine", Namespace: ns, Name: m.name},
			Annotations: map[string]string{"bmac.agent-install.openshift.io/hostname": m.node}})
		g.o.Nodes = append(g.o.Nodes, g.node(m, scheme))
		g.event("machine", "Machine", ns, m.name, pick(g.r, "Normal", "Warning"), pick(g.r, "Provisioned", "FailedDrain"),
			fmt.Sprintf("Machine %s/%s (set %q) got host %s/%s, node %s.lab.example at %s", ns, m.name, m.set, g.ns, m.host, m.node, g.stamp(400+i)))
		g.o.Errors = append(g.o.Errors, Error{Source: "machine-controller", At: g.at(500 + i),
			Message: fmt.Sprintf("machine %s/%s (uid %s): node %s.lab.example (%s, %s, MAC %s) did not answer before %s; host %s would become Machine %s-%s",
				ns, m.name, obj.UID, m.node, g.lr.ipv4(m.host), g.lr.ipv6(m.host), g.lr.mac(m.host), g.stamp(500+i), "day2-worker-0", g.ns, "day2-worker-0")})
	}
}

func (g *labGen) node(m machine, scheme string) Node {
	role := "worker"
	if strings.HasPrefix(m.host, "master-") {
		role = "master"
	}
	ann := map[string]string{"machine.openshift.io/machine": "openshift-machine-api/" + m.name}
	if scheme == "metal3://" {
		ann = map[string]string{"cluster.x-k8s.io/machine": m.name, "cluster.x-k8s.io/cluster-name": g.ns, "cluster.x-k8s.io/owner-name": m.set}
	}
	return Node{Name: m.node, UID: g.lr.uuid("node/" + m.host), Ready: true,
		Labels:      map[string]string{"kubernetes.io/hostname": m.node, "node-role.kubernetes.io/" + role: ""},
		Annotations: ann,
		Taints:      []Taint{{Key: "example.com/owner", Value: m.host, Effect: "NoSchedule"}},
		ProviderID:  scheme + g.ns + "/" + m.host + "/" + g.lr.uuid("host/"+m.host),
		Addresses:   []Address{{Type: "InternalIP", Address: g.lr.ipv4(m.host)}, {Type: "InternalIP", Address: g.lr.ipv6(m.host)}, {Type: "Hostname", Address: m.node}},
	}
}

func (g *labGen) object(role, apiVersion, kind, ns, name string, labels, annotations map[string]string) Object {
	return Object{Role: role, APIVersion: apiVersion, Kind: kind, Namespace: ns, Name: name,
		UID: g.lr.uuid("uid/" + kind + "/" + name), CreatedAt: g.at(10), Labels: labels, Annotations: annotations}
}

func (g *labGen) event(role, kind, ns, name, typ, reason, message string) {
	g.o.Events = append(g.o.Events, Event{Role: role, Object: ObjectRef{Kind: kind, Namespace: ns, Name: name},
		Type: typ, Reason: reason, Message: message, Count: 1, At: g.at(400)})
}

// leakedParts returns the random parts of lr that text contains: whole
// words for the short ones (a 5-character suffix), substrings for the
// rest.
func leakedParts(text string, lr *labRandom) []string {
	words := map[string]bool{}
	for _, w := range strings.FieldsFunc(text, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_')
	}) {
		words[w] = true
	}
	var out []string
	for _, p := range lr.parts {
		if words[p] || len(p) >= 8 && strings.Contains(text, p) {
			out = append(out, p)
		}
	}
	return out
}

// labRenderings is how many structures the property tests render.
const labRenderings = 600

// Two renderings of the same structure give the same aspects, and no
// random part survives into them. Every fourth structure puts the
// infrastructure ID's hex in the generateName alphabet in one rendering
// and not in the other: the case the old scrubber got wrong.
func TestScrubbingIgnoresTheRandomPartsOfLabNames(t *testing.T) {
	failures := 0
	for i := range labRenderings {
		st := newLabStructure(int64(i))
		inA, inB := i%4 == 0, i%4 != 0 && i%2 == 0
		if i%4 == 3 {
			inA, inB = rand.New(rand.NewSource(int64(i))).Intn(2) == 0, true
		}
		lrA, lrB := newLabRandom(int64(2*i+1000), inA), newLabRandom(int64(2*i+1001), inB)
		a, b := Aspects(renderLab(st, lrA)), Aspects(renderLab(st, lrB))
		if !reflect.DeepEqual(a, b) {
			t.Errorf("structure %d (%+v): aspects differ with other random parts:\n%s", i, st, aspectDiff(a, b))
			failures++
		}
		for _, lr := range []*labRandom{lrA, lrB} {
			o := renderLab(st, lr)
			if leaks := leakedParts(aspectText(Aspects(o)), lr); len(leaks) > 0 {
				t.Errorf("structure %d (%+v): random parts %q leak into aspects:\n%s", i, st, leaks, aspectText(Aspects(o)))
				failures++
			}
		}
		if failures >= 3 {
			t.Fatal("stopping after 3 failing structures")
		}
	}
}

// Scrubbing an aspect line of a lab observation again changes nothing.
func TestScrubbedLabLinesAreFixedPoints(t *testing.T) {
	for i := range labRenderings / 4 {
		o := renderLab(newLabStructure(int64(i)), newLabRandom(int64(i), i%2 == 0))
		s := newScrubber(o)
		for _, a := range Aspects(o) {
			for _, line := range a.Lines {
				if got := s.scrub(line); got != line {
					t.Fatalf("structure %d, %s: scrub(%q) = %q", i, a.Name, line, got)
				}
			}
		}
	}
}
