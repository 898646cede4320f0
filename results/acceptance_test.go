package results

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/GoogleCloudPlatform/testgrid/metadata/junit"
)

// The acceptance pair (testdata/acceptance) differs in two aspects: the
// providerID scheme, a known divergence of the built-in registry, and a
// taint CAPI left on the node, which nobody explains.

// acceptanceRegistry holds the built-in providerid-format entry, so the
// known difference is explained by the real, reviewed text.
func acceptanceRegistry(t testing.TB, extra ...*Entry) *Registry {
	t.Helper()
	def, err := DefaultRegistry()
	if err != nil {
		t.Fatal(err)
	}
	e := withSampleScenario(def).Entry("providerid-format")
	if e == nil {
		t.Fatal("built-in registry has no providerid-format entry")
	}
	return &Registry{APIVersion: RegistryAPIVersion, Entries: append([]*Entry{e}, extra...)}
}

// sampleScenario is the acceptance pair's scenario: a MAPI/CAPI pair
// shaped like day2-scale, under a name of its own.
const sampleScenario = "scale-sample"

// withSampleScenario scopes the registry's entries that cover every
// MAPI/CAPI scenario to the sample pair too: they explain a difference of
// the two flows wherever it shows, the sample being one more MAPI/CAPI
// pair. Entries of some scenarios only stay off it.
func withSampleScenario(reg *Registry) *Registry {
	for _, e := range reg.Entries {
		mapiCAPI := func(s string) bool { return SidesOf(s).A == FlowMAPI && SidesOf(s).B == FlowCAPI }
		if len(e.Scenarios) > 0 && !slices.ContainsFunc(reg.Scenarios(), func(s string) bool { return mapiCAPI(s) && !e.inScenario(s) }) {
			e.Scenarios = append(slices.Clip(e.Scenarios), sampleScenario)
		}
	}
	return reg
}

func acceptanceReport(t testing.TB, reg *Registry) *Report {
	t.Helper()
	pairs, err := LoadDir("testdata/acceptance")
	if err != nil {
		t.Fatal(err)
	}
	return mustBuild(t, pairs, reg, DefaultOptions())
}

func TestAcceptanceOneKnownOneUnknownDifference(t *testing.T) {
	r := acceptanceReport(t, acceptanceRegistry(t))
	var buf bytes.Buffer
	if err := r.WriteJUnit(&buf); err != nil {
		t.Fatal(err)
	}
	suites, err := junit.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var failures, explained []junit.Result
	for _, s := range suites.Suites {
		for _, res := range s.Results {
			if res.Failure != nil {
				failures = append(failures, res)
			}
			if res.Output != nil && strings.Contains(*res.Output, "Known divergence:") {
				explained = append(explained, res)
			}
		}
	}
	if len(failures) != 1 || failures[0].Name != "scale-sample: nodes/taints" {
		t.Fatalf("want exactly one failure, nodes/taints; got %v", names(failures))
	}
	body := failures[0].Failure.Value
	for _, want := range []string{"MAPI", "CAPI", "(none)", "+        | node.kubernetes.io/unschedulable:NoSchedule"} {
		if !strings.Contains(body, want) {
			t.Errorf("failure body lacks %q:\n%s", want, body)
		}
	}
	if len(explained) != 1 || explained[0].Name != "scale-sample: nodes/providerID" {
		t.Fatalf("want exactly one explained divergence, nodes/providerID; got %v", names(explained))
	}
	out := *explained[0].Output
	for _, want := range []string{"providerid-format", "openshift/cluster-api-provider-baremetal", "~ baremetalhost:// | metal3://"} {
		if !strings.Contains(out, want) {
			t.Errorf("system-out lacks %q:\n%s", want, out)
		}
	}
	if !r.Failed() {
		t.Error("a report with a regression must fail")
	}
}

func TestAcceptanceReportsShowBoth(t *testing.T) {
	r := acceptanceReport(t, acceptanceRegistry(t))
	var md, html bytes.Buffer
	if err := r.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteHTML(&html); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"### scale-sample: nodes/taints", "| scale-sample | nodes/providerID | `providerid-format` |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	for _, want := range []string{
		`id="d-scale-sample--nodes_taints"`, `id="d-scale-sample--nodes_providerID"`,
		`<span class="badge Regression">Regression</span>`, `<span class="badge KnownDivergence">KnownDivergence</span>`,
		`<td class="r" title="scale-sample · nodes/taints: Regression">`, `<td class="k" title="scale-sample · nodes/providerID: KnownDivergence">`,
	} {
		if !strings.Contains(html.String(), want) {
			t.Errorf("html lacks %q", want)
		}
	}
}

func TestStaleEntryIsReported(t *testing.T) {
	stale := &Entry{
		ID: "labels-differ", Summary: "node labels differ", Aspect: "nodes/labels", MAPI: []string{`kubernetes\.io/os=linux`},
		Explanation: "they used to", Upstream: []Reference{{URL: "https://example.invalid/doc"}},
	}
	if err := stale.compile(); err != nil {
		t.Fatal(err)
	}
	idle := &Entry{
		ID: "remediation-only", Summary: "not run here", Scenarios: []string{"remediation"}, Aspect: "nodes/labels", MAPI: []string{`example\.com/remediated=true`},
		Explanation: "x", Upstream: []Reference{{URL: "https://example.invalid/doc"}},
	}
	if err := idle.compile(); err != nil {
		t.Fatal(err)
	}
	r := acceptanceReport(t, acceptanceRegistry(t, stale, idle))

	statuses := map[string]EntryStatus{}
	for _, e := range r.Entries {
		statuses[e.Entry.ID] = e.Status
	}
	want := map[string]EntryStatus{"providerid-format": Reproduced, "labels-differ": Stale, "remediation-only": NotExercised}
	for id, st := range want {
		if statuses[id] != st {
			t.Errorf("entry %s: status %s, want %s", id, statuses[id], st)
		}
	}

	var buf bytes.Buffer
	if err := r.WriteJUnit(&buf); err != nil {
		t.Fatal(err)
	}
	suites, err := junit.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	res := findResult(suites, "known divergence labels-differ")
	if res == nil || res.Failure == nil || res.Failure.Type != "StaleKnownDivergence" || !strings.Contains(res.Failure.Message, "stale") {
		t.Fatalf("stale entry not a StaleKnownDivergence failure: %+v", res)
	}
	if res := findResult(suites, "known divergence remediation-only"); res == nil || res.Skipped == nil {
		t.Errorf("unexercised entry not skipped: %+v", res)
	}

	var md, html bytes.Buffer
	_ = r.WriteMarkdown(&md)
	_ = r.WriteHTML(&html)
	if !strings.Contains(md.String(), "**STALE** `labels-differ`") {
		t.Error("markdown does not show the stale entry")
	}
	if !strings.Contains(html.String(), `id="stale-labels-differ"`) {
		t.Error("html does not show the stale entry")
	}

	// --allow-stale keeps it visible but not failing.
	r.Options.AllowStale = true
	buf.Reset()
	_ = r.WriteJUnit(&buf)
	suites, _ = junit.Parse(buf.Bytes())
	if res := findResult(suites, "known divergence labels-differ"); res == nil || res.Failure != nil || res.Skipped == nil {
		t.Errorf("allowed stale entry should be skipped, not failed: %+v", res)
	}
}

func findResult(s *junit.Suites, name string) *junit.Result {
	for _, suite := range s.Suites {
		for i := range suite.Results {
			if suite.Results[i].Name == name {
				return &suite.Results[i]
			}
		}
	}
	return nil
}

func names(rs []junit.Result) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.Name)
	}
	return out
}
