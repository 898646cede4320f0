package results

import (
	"strings"
	"testing"
)

// checkScrub checks s.scrub on each input, and that each result is a
// fixed point.
func checkScrub(t *testing.T, s *scrubber, cases map[string]string) {
	t.Helper()
	for in, want := range cases {
		if got := s.scrub(in); got != want {
			t.Errorf("scrub(%q) = %q, want %q", in, got, want)
		}
		if again := s.scrub(want); again != want {
			t.Errorf("scrub(%q) = %q: not a fixed point", want, again)
		}
	}
}

// labScrubber knows the names of a small MAPI day-1 observation whose
// infrastructure ID is infra.
func labScrubber(infra string) *scrubber {
	return newScrubber(&Observation{
		Cluster:     "day1-mapi-x7k2p",
		Identifiers: []Identifier{{Kind: "infra-id", Value: infra}},
		Objects: []Object{
			{Kind: "MachineSet", Namespace: "openshift-machine-api", Name: infra + "-worker-0"},
			{Kind: "BareMetalHost", Namespace: "day1-mapi-x7k2p", Name: "worker-0"},
		},
		Nodes: []Node{{Name: "master-0"}},
		Hosts: []Host{{Namespace: "day1-mapi-x7k2p", Name: "master-0"}, {Namespace: "day1-mapi-x7k2p", Name: "worker-0"}},
	})
}

// The infrastructure ID is scrubbed the same whether or not its hex
// happens to be made of generateName characters (2b4d6 is, 3f9a2 is not):
// the case that used to give <cluster>-<rand><rand> one time in seven.
func TestScrubInfraIDWhateverItsHex(t *testing.T) {
	for _, hex := range []string{"2b4d6", "3f9a2", "bcdf2", "00000"} {
		infra := "day1-mapi-x7k2p-day1-" + hex
		s := labScrubber(infra)
		t.Log("hex " + hex)
		checkScrub(t, s, map[string]string{
			"machine.openshift.io/cluster-api-cluster=" + infra:     "machine.openshift.io/cluster-api-cluster=<infra-id>",
			infra + "-worker-0-b2c4d":                               "<name>-<rand>",
			infra + "-worker-1-b2c4d":                               "<infra-id>-worker-1-<rand>",
			infra + "-master-2.lab.example":                         "<infra-id>-master-2.lab.example",
			"infrastructure " + infra + ", cluster day1-mapi-x7k2p": "infrastructure <infra-id>, cluster <cluster>",
		})
	}
}

// Known names are replaced at segment boundaries only, the longest first,
// and keep what follows them.
func TestScrubKnownNamesAtSegmentBoundaries(t *testing.T) {
	s := scrubberKnowing(map[string]string{
		"worker-0": phHost, "worker-0-extra": phName, "site-a": phCluster, "a": phName, "x7k2p": phNode,
	})
	checkScrub(t, s, map[string]string{
		"worker-0":                  "<host>",
		"worker-0.lab.local":        "<host>.lab.local",
		"worker-0-extra":            "<name>",
		"worker-0-extra-1":          "<name>-1",
		"worker-0-extras":           "<host>-extras",
		"worker-01":                 "worker-01",
		"site-a-x7f3q":              "<cluster>-x7f3q",
		"site-a-kubeconfig":         "<cluster>-kubeconfig",
		"api.site-a.lab.example":    "api.<cluster>.lab.example",
		"ns/site-a, site-ab":        "ns/<cluster>, site-ab",
		"a_b a-b":                   "a_b <name>-b",
		"<node> <host>-x <a>":       "<node> <host>-x <<name>>",
		"x7k2p foo-x7k2p foo.x7k2p": "<node> foo-<node> foo.<node>",
	})
}

// A segment shaped like a generateName suffix after another segment is
// <rand>; nothing else is, whatever its letters.
func TestScrubGeneratedSuffixes(t *testing.T) {
	s := scrubberKnowing(map[string]string{"site-a": phCluster})
	checkScrub(t, s, map[string]string{
		"foo-x7k2p":           "foo-<rand>",
		"foo-bar-x7k2p-b2c4d": "foo-bar-<rand>-<rand>",
		"site-a-x7k2p":        "<cluster>-<rand>",
		"foo-x7k2p.lab":       "foo-<rand>.lab",
		"x7k2p":               "x7k2p",
		"-x7k2p":              "-x7k2p",
		"foo.x7k2p":           "foo.x7k2p",
		"foo-x7k2pq":          "foo-x7k2pq",
		"foo-x7k2":            "foo-x7k2",
		"foo-X7K2P":           "foo-X7K2P",
		"foo-3f9a2":           "foo-3f9a2",
		"foo-scale":           "foo-scale",
		"foo-<rand>":          "foo-<rand>",
	})
}

// UUIDs, times, MACs and addresses are scrubbed anywhere, messages
// included.
func TestScrubPatterns(t *testing.T) {
	s := scrubberKnowing(nil)
	checkScrub(t, s, map[string]string{
		"agent 0F5E2A61-8c1e-4a4e-9a37-8f0e3c2d1b00 registered":  "agent <uid> registered",
		"at 2025-03-04T09:00:00Z, 2025-03-04T14:00:00.123+05:00": "at <time>, <time>",
		"since 2025-03-04 09:00:00.5 +0000 UTC.":                 "since <time>.",
		"2025-03-04T09:00:00Z2025-03-04T09:00:00Z":               "<time><time>",
		"nic 52:54:00:AA:bb:cc up":                               "nic <mac> up",
		"10.1.2.3:6443 and 10.1.2.3/24":                          "<ip>:6443 and <ip>/24",
		"fd00:1:2:3:4:5:6:7 fe80::5054:ff:fe12:3456 and fd00::1": "<ip> <ip> and <ip>",
		"::1 and fe80:: and dead:beef:cafe and 09:00:00 stay":    "::1 and fe80:: and dead:beef:cafe and 09:00:00 stay",
		"image 4.17.3 and v1.30.4":                               "image 4.17.3 and v1.30.4",
	})
}

// Where one string is several things, the category decides, not the
// order of the observation's lists.
func TestScrubPrecedenceIsByCategory(t *testing.T) {
	host := Host{Name: "master-0", Namespace: "ns1", ConsumerRef: &ObjectRef{Name: "ns1"}}
	node := Node{Name: "master-0"}
	objs := []Object{{Name: "ns1", Namespace: "other"}, {Name: "master-0", Namespace: "ns1"}}
	ids := []Identifier{{Kind: "b-id", Value: "shared-1"}, {Kind: "a-id", Value: "shared-1"}}
	for _, reversed := range []bool{false, true} {
		o := &Observation{Cluster: "other", Nodes: []Node{node}, Hosts: []Host{host}, Objects: objs, Identifiers: ids}
		if reversed {
			o.Objects = []Object{objs[1], objs[0]}
			o.Identifiers = []Identifier{ids[1], ids[0]}
		}
		s := newScrubber(o)
		t.Logf("reversed=%t", reversed)
		checkScrub(t, s, map[string]string{
			"master-0": "<node>", "ns1": "<name>", "other": "<cluster>", "shared-1": "<a-id>",
		})
	}
}

// Identifiers become <kind>; a kind that cannot be a placeholder word
// still hides the value.
func TestScrubIdentifierPlaceholders(t *testing.T) {
	s := newScrubber(&Observation{Identifiers: []Identifier{
		{Kind: "infra-id", Value: "c1-abcde"}, {Kind: "Bad Kind>", Value: "secret-1"}, {Kind: "cluster-id", Value: "0f5e2a61-8c1e-4a4e-9a37-8f0e3c2d1b00"},
	}})
	checkScrub(t, s, map[string]string{
		"c1-abcde-worker-0":                    "<infra-id>-worker-0",
		"<infra-id>-worker-0":                  "<infra-id>-worker-0",
		"id secret-1":                          "id <identifier>",
		"0f5e2a61-8c1e-4a4e-9a37-8f0e3c2d1b00": "<uid>",
	})
}

// Values of keys that carry hashes or random IDs are replaced by key,
// whatever their shape.
func TestNormalizeLabelsReplacesRandomValuesByKey(t *testing.T) {
	s := scrubberKnowing(map[string]string{"site-a": phCluster})
	got := normalizeLabels(map[string]string{
		"machine-template-hash":                    "3729506336-x7k2p",
		"pod-template-hash":                        "5d4f8c7b9",
		"machine.openshift.io/cluster-api-cluster": "site-a-3f9a2",
		"cluster.x-k8s.io/cluster-name":            "site-a",
		"example.com/empty":                        "",
	}, s)
	// The machine API's cluster label is not replaced by key: its value is
	// the infrastructure ID on installer Machines but the
	// ClusterDeployment's name on BMAC day-2 Machines, and that must show.
	want := []string{
		"cluster.x-k8s.io/cluster-name=<cluster>", "example.com/empty", "machine-template-hash=<hash>-<rand>",
		"machine.openshift.io/cluster-api-cluster=<cluster>-3f9a2", "pod-template-hash=<hash>",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("normalizeLabels = %q, want %q", got, want)
	}
}

// A name that contains a UUID is known in its scrubbed form.
func TestScrubNamesContainingPatterns(t *testing.T) {
	s := newScrubber(&Observation{Objects: []Object{
		{Name: "0f5e2a61-8c1e-4a4e-9a37-8f0e3c2d1b00-boot"}, {Name: "0f5e2a61-8c1e-4a4e-9a37-8f0e3c2d1b00"},
	}})
	checkScrub(t, s, map[string]string{
		"secret 0f5e2a61-8c1e-4a4e-9a37-8f0e3c2d1b00-boot": "secret <name>",
		"agent 0f5e2a61-8c1e-4a4e-9a37-8f0e3c2d1b00":       "agent <uid>",
	})
}
