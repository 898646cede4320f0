package results

import (
	"strings"
	"testing"
)

// ruleDoc is a registry declaring day1 and day2-scale with one entry.
func ruleDoc(entry string) []byte {
	return []byte("apiVersion: paritylab.io/known-divergences/v1\nscenarios: [day1, day2-scale]\ndivergences:\n" + entry)
}

// entryYAML is an entry with the required prose and the fields given.
func entryYAML(id, fields string) string {
	return "- id: " + id + "\n  summary: s\n  explanation: e\n  upstream: [{url: \"https://example.invalid\"}]\n" + fields
}

// Each loader rule rejects the over-broad entry it is for, in a message
// that names the entry and says what to fix.
func TestLoaderRejectsOverBroadEntries(t *testing.T) {
	for _, tc := range []struct {
		rule, id, fields, want string
	}{
		{"entries name lines", "no-patterns", "  aspect: events/warnings\n", "names no line"},
		{"no catch-all: .*", "dot-star", "  aspect: nodes/labels\n  mapi: ['.*']\n", "catch-all"},
		{"no catch-all: .+", "dot-plus", "  aspect: nodes/labels\n  capi: ['.+']\n", "catch-all"},
		{`no catch-all: \S+`, "non-space", "  aspect: nodes/labels\n  mapi: ['\\S+']\n", "catch-all"},
		{"no catch-all: [^=]*", "negated-class", "  aspect: nodes/labels\n  mapi: ['[^=]*']\n", "catch-all"},
		{"no catch-all: label .*", "any-label", "  aspect: objects/*/metadata\n  mapi: ['label .*']\n", "catch-all"},
		{"no catch-all: Type=Status", "any-pair", "  aspect: events/warnings\n  capi: ['\\w+=\\w+']\n", "catch-all"},
		{"condition aspects take no regex", "regex-conditions", "  aspect: objects/machine/conditions\n  capi: ['live: Ready=True']\n", "take no mapi, capi or except patterns"},
		{"condition globs take no regex either", "wide-glob", "  aspect: objects/machine/*\n  capi: ['live: Ready=True']\n", "take no mapi, capi or except patterns"},
		{"conditions only on condition aspects", "conditions-elsewhere", "  aspect: nodes/labels\n  conditions: {capi: {live: {Ready: \"True\"}}}\n", "objects/<role>/conditions aspects only"},
		{"one status per condition", "any-status", "  aspect: objects/machine/conditions\n  conditions: {capi: {deleted: {Ready: \"True|False\"}}}\n", "is not one status"},
		{"statuses are quoted", "unquoted", "  aspect: objects/machine/conditions\n  conditions: {capi: {live: {Ready: True}}}\n", "quoted"},
		{"live positive conditions are True", "unready", "  aspect: objects/machine/conditions\n  conditions: {capi: {live: {Ready: \"False\"}}}\n", "ended unhealthy"},
		{"live negative conditions are False", "deleting", "  aspect: objects/machine/conditions\n  conditions: {capi: {live: {Deleting: \"True\"}}}\n", "ended unhealthy"},
		{"live conditions are not Unknown", "unknown-ready", "  aspect: objects/machine/conditions\n  conditions: {mapi: {live: {InstanceExists: Unknown}}}\n", "ended unhealthy"},
		{"live condition types have a polarity", "no-polarity", "  aspect: objects/machine/conditions\n  conditions: {capi: {live: {Frobnicated: \"True\"}}}\n", "registry_polarity.go"},
		{"leftover states only as upstream leaves them", "leftover-reason", "  aspect: objects/machine/conditions\n  conditions: {capi: {live: {ExternallyRemediated: \"False(RemediationTemplateNotFound)\"}}}\n", "as upstream leaves it"},
		{"leftover states pin their reason", "leftover-any", "  aspect: objects/machine/conditions\n  conditions: {capi: {live: {ExternallyRemediated: \"False\"}}}\n", "as upstream leaves it"},
		{"conditions name something", "empty-conditions", "  aspect: objects/machine/conditions\n  conditions: {capi: {}}\n", "name the condition types"},
		{`host states pin power=: \S+`, "any-power", "  aspect: hosts/state\n  mapi: ['provisioned operational=OK power=\\S+ online=true']\n", "a wildcard"},
		{"host states pin operational=: negated class", "any-operational", "  aspect: hosts/*\n  mapi: ['provisioned operational=[^ ]+ power=on online=true']\n", "a wildcard"},
		{"host states pin online=: .*", "any-online", "  aspect: hosts/state\n  capi: ['provisioned operational=OK power=on online=.*']\n", "a wildcard"},
		{"host states pin every key", "missing-keys", "  aspect: hosts/state\n  mapi: ['provisioned operational=OK .+']\n", "not all"},
		{"host states without keys are no wildcard", "any-host-state", "  aspect: hosts/state\n  mapi: ['externally provisioned .+']\n", "accepts any operational status"},
		{"host state keys not inside repetitions", "repeated-key", "  aspect: hosts/state\n  mapi: ['provisioned( operational=OK)+ power=on online=true']\n", "inside a repetition"},
		{"scenarios must be declared", "future-scenario", "  scenarios: ['remediation*']\n  aspect: events/warnings\n  mapi: ['machine: Remediated']\n", "matches no declared scenario"},
		{"outcome is never explained", "both-failed", "  aspect: outcome\n  mapi: ['failed']\n  capi: ['failed']\n", "no entry may explain"},
		{"globs covering outcome are rejected", "everything", "  aspect: '*'\n  mapi: ['failed']\n", "no entry may explain"},
		{"milestones are never explained", "other-plan", "  aspect: milestones\n  mapi: ['a → b']\n", "no entry may explain"},
		{"durations are judged by the tolerance", "slow-capi", "  aspect: durations/*\n  capi: ['\\d+m\\d+s']\n", "tolerance"},
		{"presentIn names a flow", "present-nowhere", "  aspect: nodes/labels\n  presentIn: both\n  capi: ['a=b']\n", "must be mapi or capi"},
		{"presentIn names lines of its flow only", "present-both", "  aspect: nodes/labels\n  presentIn: capi\n  mapi: ['a=b']\n  capi: ['a=c']\n", "names lines of the other flow"},
		{"countsDiffer on two-sided entries only", "counts-one-side", "  aspect: nodes/labels\n  countsDiffer: because\n  capi: ['a=b']\n", "countsDiffer applies"},
		{"requireAll fixes the counts", "all-and-counts", "  aspect: events/normal\n  requireAll: true\n  countsDiffer: because\n  mapi: ['a: B']\n  capi: ['a: C', 'a: D']\n", "no countsDiffer"},
		{"lines is positive", "lines-negative", "  aspect: nodes/labels\n  lines: -1\n  capi: ['a=b']\n", "must be positive"},
		{"lines counts pattern lines only", "lines-and-counts", "  aspect: nodes/labels\n  lines: 1\n  countsDiffer: because\n  mapi: ['a=c']\n  capi: ['a=b']\n", "takes no conditions, requireAll or countsDiffer"},
		{"unhealthy by design names its scenarios", "unhealthy-everywhere", "  aspect: objects/machine/conditions\n  unhealthyByDesign: hangs two\n  conditions: {capi: {live: {Ready: \"False\"}}}\n", "scenarios named one by one"},
		{"unhealthy by design takes no glob", "unhealthy-glob", "  scenarios: ['day2-*']\n  aspect: objects/machine/conditions\n  unhealthyByDesign: hangs two\n  conditions: {capi: {live: {Ready: \"False\"}}}\n", "not the glob"},
		{"unhealthy by design says why", "unhealthy-blank", "  scenarios: [day1]\n  aspect: objects/machine/conditions\n  unhealthyByDesign: ' '\n  conditions: {capi: {live: {Ready: \"False\"}}}\n", "must say why"},
		{"unhealthy by design is for conditions", "unhealthy-labels", "  scenarios: [day1]\n  aspect: nodes/labels\n  unhealthyByDesign: hangs two\n  capi: ['a=b']\n", "conditions only"},
		{"unhealthy by design keeps polarity known", "unhealthy-unknown-type", "  scenarios: [day1]\n  aspect: objects/machine/conditions\n  unhealthyByDesign: hangs two\n  conditions: {capi: {live: {Frobnicated: \"False\"}}}\n", "registry_polarity.go"},
		{"intermittent names its scenarios", "race-everywhere", "  aspect: hosts/bmc\n  intermittent: a race\n  lines: 1\n  mapi: ['power:On']\n  capi: ['power:On']\n", "scenarios named one by one"},
		{"intermittent takes no glob", "race-glob", "  scenarios: ['day*']\n  aspect: hosts/bmc\n  intermittent: a race\n  lines: 1\n  mapi: ['power:On']\n  capi: ['power:On']\n", "not the glob"},
		{"intermittent names the same lines for both flows", "race-one-sided", "  scenarios: [day1]\n  aspect: hosts/bmc\n  intermittent: a race\n  lines: 1\n  capi: ['power:On']\n", "same mapi and capi patterns"},
		{"intermittent is bounded", "race-unbounded", "  scenarios: [day1]\n  aspect: hosts/bmc\n  intermittent: a race\n  mapi: ['power:On']\n  capi: ['power:On']\n", "needs lines"},
		{"intermittent says which race", "race-blank", "  scenarios: [day1]\n  aspect: hosts/bmc\n  intermittent: ' '\n  lines: 1\n  mapi: ['power:On']\n  capi: ['power:On']\n", "which race"},
		{"requireAll takes patterns", "all-conditions", "  aspect: objects/machine/conditions\n  requireAll: true\n  conditions: {capi: {live: {Ready: \"True\"}}}\n", "not conditions"},
	} {
		_, err := ParseRegistry(ruleDoc(entryYAML(tc.id, tc.fields)))
		if err == nil {
			t.Errorf("%s: entry %s loaded", tc.rule, tc.id)
			continue
		}
		if !strings.Contains(err.Error(), `"`+tc.id+`"`) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error does not name entry %s and say %q:\n%v", tc.rule, tc.id, tc.want, err)
		}
	}
}

// Entries the rules are not about still load: named lines, literal host
// states (alternatives spelt out), healthy structured conditions with and
// without a pinned reason, one-flow presence.
func TestLoaderAcceptsNarrowEntries(t *testing.T) {
	for id, fields := range map[string]string{
		"literal-host-states": "  aspect: hosts/*\n  mapi: ['(externally provisioned|unmanaged) operational=(OK|detached) power=on online=true', '\\(none\\)', 'inspect\\.metal3\\.io=disabled']\n  capi: ['provisioned operational=OK power=on online=true']\n",
		"healthy-conditions":  "  aspect: objects/machine/conditions\n  conditions:\n    capi:\n      live: {Ready: \"True(AsExpected)\", NodeHealthy: \"True\", Paused: \"False\"}\n      deleted: {Deleting: \"True\", Ready: \"False\"}\n",
		"leftover-condition":  "  aspect: objects/machine/conditions\n  conditions: {capi: {live: {Ready: \"True\", ExternallyRemediated: \"False(WaitingForRemediation)\"}}}\n",
		"capi-only-aspect":    "  aspect: objects/machine-set/conditions\n  presentIn: capi\n  conditions: {capi: {live: {MachinesReady: \"True\"}}}\n",
		"whole-behaviour":     "  aspect: events/normal\n  requireAll: true\n  mapi: ['machine: DrainSucceeded']\n  capi: ['machine: SuccessfulDrainNode', 'machine: NodeVolumesDetached']\n",
		"one-object":          "  aspect: objects/machine/metadata\n  lines: 1\n  mapi: ['label a=<cluster>']\n",
		"unhealthy-by-design": "  scenarios: [day1]\n  aspect: objects/machine/conditions\n  unhealthyByDesign: the scenario hangs the host and forbids remediation\n  conditions: {capi: {live: {Ready: \"False(NotReady)\", HealthCheckSucceeded: \"False\"}}}\n",
		"paired-counts":       "  aspect: nodes/annotations\n  countsDiffer: one annotation against five\n  mapi: ['machine\\.openshift\\.io/machine=<namespace>/<name>']\n  capi: ['cluster\\.x-k8s\\.io/machine=<name>']\n",
	} {
		if _, err := ParseRegistry(ruleDoc(entryYAML(id, fields))); err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
}

// The built-in registry declares the scenarios the suites run, and its
// entries for scenarios that do not exist yet wait in the catalogue,
// which decodes as a registry but is not one the loader reads.
func TestRegistryDeclaresScenariosAndCatalogueStaysOut(t *testing.T) {
	reg, err := DefaultRegistry()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(reg.Scenarios(), ","); got != "day1,day2-scale,replacement-reboot,replacement-reboot-annotation,replacement-reboot-bmc-outage,replacement-stays-dead,replacement-short-circuit,replacement-owner-less,replacement-control-plane,replacement-control-plane-stays-dead,upgrade,disconnected,hypershift-private-types,hypershift-migration" {
		t.Errorf("declared scenarios %q", got)
	}
	var pending Registry
	if err := decodeRegistry(mustRead(t, "catalogue/pending-divergences.yaml"), &pending); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"remediation-owner", "delete-annotation-empty-value", "node-label-propagation", "taint-propagation"} {
		if reg.Entry(id) != nil || pending.Entry(id) == nil {
			t.Errorf("%s: want it in the catalogue, not in the registry", id)
		}
	}
}
