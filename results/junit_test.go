package results

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/GoogleCloudPlatform/testgrid/metadata/junit"
)

// junitDocs are the JUnit documents the checks below run on: the golden
// run, the acceptance pair, and one with stale entries allowed.
func junitDocs(t *testing.T) map[string][]byte {
	t.Helper()
	docs := map[string][]byte{}
	for name, r := range map[string]*Report{
		"golden":      goldenReport(t),
		"acceptance":  acceptanceReport(t, acceptanceRegistry(t)),
		"allow-stale": withAllowStale(goldenReport(t)),
	} {
		var buf bytes.Buffer
		if err := r.WriteJUnit(&buf); err != nil {
			t.Fatal(err)
		}
		docs[name] = buf.Bytes()
	}
	return docs
}

func withAllowStale(r *Report) *Report {
	r.Options.AllowStale = true
	return r
}

// Prow's Spyglass and TestGrid read JUnit with TestGrid's parser; what it
// sees must add up.
func TestJUnitReadsLikeTestGrid(t *testing.T) {
	for name, doc := range junitDocs(t) {
		t.Run(name, func(t *testing.T) {
			suites, err := junit.Parse(doc)
			if err != nil {
				t.Fatal(err)
			}
			if len(suites.Suites) < 2 {
				t.Fatalf("want a suite per scenario plus the registry, got %d", len(suites.Suites))
			}
			seen := map[string]bool{}
			for _, s := range suites.Suites {
				checkSuiteCounts(t, s)
				for _, r := range s.Results {
					if seen[r.Name] {
						t.Errorf("test name %q is not unique", r.Name)
					}
					seen[r.Name] = true
					if r.Failure != nil && r.Message(0) == "" {
						t.Errorf("%s: failure without a message", r.Name)
					}
				}
			}
		})
	}
}

func checkSuiteCounts(t *testing.T, s junit.Suite) {
	t.Helper()
	failures, skipped := 0, 0
	for _, r := range s.Results {
		if r.Failure != nil {
			failures++
		}
		if r.Skipped != nil {
			skipped++
		}
	}
	if s.Tests != len(s.Results) || s.Failures != failures || s.Skipped != skipped {
		t.Errorf("suite %q says tests=%d failures=%d skipped=%d, has %d/%d/%d",
			s.Name, s.Tests, s.Failures, s.Skipped, len(s.Results), failures, skipped)
	}
}

// Jenkins reads JUnit by its junit-10.xsd rules; testdata/jenkins-junit.xsd
// writes them down and xmllint holds our output to them.
func TestJUnitMatchesJenkinsSchema(t *testing.T) {
	xmllint := requireTool(t, "xmllint", "libxml2-utils")
	dir := t.TempDir()
	for name, doc := range junitDocs(t) {
		file := filepath.Join(dir, name+".xml")
		if err := os.WriteFile(file, doc, 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(xmllint, "--noout", "--schema", "testdata/jenkins-junit.xsd", file).CombinedOutput(); err != nil {
			t.Errorf("%s does not validate: %v\n%s", name, err, out)
		}
	}
	// The schema must have teeth: a failure before skipped, and a testcase
	// without a name, are rejected.
	bad := `<testsuites><testsuite name="s" tests="1"><testcase><failure/><skipped/></testcase></testsuite></testsuites>`
	file := filepath.Join(dir, "bad.xml")
	if err := os.WriteFile(file, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := exec.Command(xmllint, "--noout", "--schema", "testdata/jenkins-junit.xsd", file).Run(); err == nil {
		t.Error("the Jenkins schema accepted an invalid document")
	}
}

// Invalid XML characters from observed messages never reach the document.
func TestJUnitSanitisesControlCharacters(t *testing.T) {
	r := acceptanceReport(t, acceptanceRegistry(t))
	r.Scenarios[0].B.Errors = []Error{{Source: "driver", Message: "\x1b[31mboom\x1b[0m \x00"}}
	r = mustBuild(t, []Pair{{Scenario: "scale-sample", A: r.Scenarios[0].A, B: r.Scenarios[0].B}}, acceptanceRegistry(t), DefaultOptions())
	var buf bytes.Buffer
	if err := r.WriteJUnit(&buf); err != nil {
		t.Fatal(err)
	}
	if bytes.ContainsAny(buf.Bytes(), "\x1b\x00") {
		t.Fatal("control characters in JUnit output")
	}
	if _, err := junit.Parse(buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "boom") {
		t.Fatal("error text lost")
	}
}

// requireTool finds a Debian-packaged tool `make deps` installs; without it
// the test fails and says what to install.
func requireTool(t *testing.T, name, pkg string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s not found: install Debian package %s (make deps does)", name, pkg)
	}
	return path
}

// A failed aspect's message (what TestGrid shows of a failed cell, and
// Spyglass first) says what each side has that the other lacks.
func TestJUnitFailureMessageShowsBothSides(t *testing.T) {
	suites, err := junit.Parse(junitDocs(t)["golden"])
	if err != nil {
		t.Fatal(err)
	}
	regressions := 0
	for _, s := range suites.Suites {
		for _, r := range s.Results {
			if r.Failure == nil || r.Failure.Type != string(Regression) {
				continue
			}
			regressions++
			msg := r.Failure.Message
			mapi, capi := strings.Index(msg, "MAPI "), strings.Index(msg, "; CAPI ")
			if mapi < 0 || capi < mapi {
				t.Errorf("%s: message does not name both sides: %q", r.Name, msg)
			}
		}
	}
	if regressions == 0 {
		t.Fatal("the golden run has no regression to check (it should keep one)")
	}
}

func TestRegressionMessageQuotesEachSide(t *testing.T) {
	long := strings.Repeat("x", 200)
	for _, tc := range []struct {
		name string
		a    AspectResult
		want []string
	}{{
		name: "lines on both sides",
		a:    AspectResult{Aspect: "nodes/taints", UnexplainedMAPI: []string{"a:NoSchedule"}, UnexplainedCAPI: []string{"b:NoExecute", "c", "d", "e"}},
		want: []string{`MAPI has "a:NoSchedule" that CAPI lacks`, `CAPI has "b:NoExecute", "c", "d" and 1 more that MAPI lacks`},
	}, {
		name: "one side has nothing",
		a:    AspectResult{Aspect: "hosts/count", OnlyCAPI: []string{"3"}},
		want: []string{"MAPI has nothing CAPI lacks", `CAPI has "3" that MAPI lacks`},
	}, {
		name: "aspect absent on one side, with a note",
		a:    AspectResult{Aspect: "objects/x/count", MAPIAbsent: true, OnlyCAPI: []string{long}, Note: "only the CAPI flow has it"},
		want: []string{"MAPI has no such aspect", `CAPI has "` + strings.Repeat("x", 119) + `…" that MAPI lacks`, "(only the CAPI flow has it)"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := regressionMessage(defaultSides, tc.a)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("message %q lacks %q", got, w)
				}
			}
		})
	}
}
