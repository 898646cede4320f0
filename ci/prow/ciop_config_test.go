package prow

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Limits ci-tools puts on tests (pkg/validation/test.go).
const (
	maxTestNameLength = 61
	maxJobTimeout     = 72 * time.Hour
)

// cronField is one field of a five-field cron schedule: numbers, ranges,
// steps, lists and *. Prow's checkconfig parses the vanilla jobs' cron with
// the library ci-operator uses; the configs must carry the same schedules
// (TestBothConfigsHaveTheSameJobs).
var cronField = regexp.MustCompile(`^(\*|\d+(-\d+)?)(/\d+)?(,(\*|\d+(-\d+)?)(/\d+)?)*$`)

// ciOperatorConfigFile is one config file with the path it was read from.
type ciOperatorConfigFile struct {
	path   string
	config ciOperatorConfig
}

// loadCIOperatorConfigs reads every ci-operator config under configRoot.
func loadCIOperatorConfigs(t *testing.T) []ciOperatorConfigFile {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(configRoot, "*", "*", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("no ci-operator config under %s/<org>/<repo>/", configRoot)
	}
	var files []ciOperatorConfigFile
	for _, p := range paths {
		f := ciOperatorConfigFile{path: p}
		decodeStrict(t, p, &f.config)
		files = append(files, f)
	}
	return files
}

func TestCIOperatorConfig(t *testing.T) {
	reg := loadRegistry(t)
	suite := dryRunParitySuite(t, 1)
	for _, f := range loadCIOperatorConfigs(t) {
		t.Run(f.path, func(t *testing.T) {
			checkMetadata(t, f)
			checkBuildRootAndResources(t, f.config)
			if len(f.config.Tests) == 0 {
				t.Fatal("you must define at least one test")
			}
			seen := map[string]bool{}
			for i, test := range f.config.Tests {
				field := fmt.Sprintf("tests[%d] (%s)", i, test.As)
				if seen[test.As] {
					t.Errorf("%s: found duplicated test", field)
				}
				seen[test.As] = true
				checkTestName(t, field, test.As)
				checkSchedule(t, field, test)
				checkTimeout(t, field, test, reg)
				checkSteps(t, field, test, reg, suite)
			}
			checkEveryLabelHasAJob(t, f.config, reg, suite)
		})
	}
}

// checkMetadata: the file is <org>-<repo>-<branch>.yaml in <org>/<repo>/,
// and zz_generated_metadata says the same.
func checkMetadata(t *testing.T, f ciOperatorConfigFile) {
	t.Helper()
	m := f.config.Metadata
	want := filepath.Join(configRoot, m.Org, m.Repo, fmt.Sprintf("%s-%s-%s.yaml", m.Org, m.Repo, m.Branch))
	if m.Variant != "" {
		want = strings.TrimSuffix(want, ".yaml") + "__" + m.Variant + ".yaml"
	}
	if m.Org == "" || m.Repo == "" || m.Branch == "" || f.path != want {
		t.Errorf("zz_generated_metadata %+v does not match the file's path (want the file at %s)", m, want)
	}
}

func checkBuildRootAndResources(t *testing.T, c ciOperatorConfig) {
	t.Helper()
	if c.BuildRoot == nil {
		t.Error("build_root is needed: the test step runs from the src image")
	} else if set := countTrue(c.BuildRoot.ImageStreamTag != nil, c.BuildRoot.ProjectImage != nil, c.BuildRoot.FromRepository); set != 1 {
		t.Errorf("build_root: specify exactly one of project_image, image_stream_tag or from_repository (%d set)", set)
	}
	blanket, ok := c.Resources["*"]
	if !ok {
		t.Error("'resources' must specify a blanket policy for '*'")
	} else if len(blanket.Requests)+len(blanket.Limits) == 0 {
		t.Error("'*' should have at least one request or limit")
	}
}

func checkTestName(t *testing.T, field, name string) {
	t.Helper()
	switch {
	case name == "":
		t.Errorf("%s.as: is required", field)
	case len(name) > maxTestNameLength:
		t.Errorf("%s.as: %d characters long, maximum length is %d", field, len(name), maxTestNameLength)
	case len(validation.IsDNS1123Subdomain(name)) > 0:
		t.Errorf("%s.as: %q is not a valid Kubernetes object name", field, name)
	case strings.Contains(name, "."):
		t.Errorf("%s.as: %q is not a valid name, '.' is forbidden in multi-stage tests", field, name)
	}
}

// checkSchedule: every test is a periodic with exactly one schedule.
func checkSchedule(t *testing.T, field string, test testStepConfiguration) {
	t.Helper()
	if n := countTrue(test.Cron != nil, test.Interval != nil, test.MinimumInterval != nil); n != 1 {
		t.Errorf("%s: a periodic needs exactly one of cron, interval or minimum_interval (%d set)", field, n)
		return
	}
	if test.Postsubmit || test.Optional {
		t.Errorf("%s: cron/interval are mutually exclusive with postsubmit and optional", field)
	}
	for _, iv := range []*string{test.Interval, test.MinimumInterval} {
		if iv != nil {
			if d, err := time.ParseDuration(*iv); err != nil || d <= 0 {
				t.Errorf("%s: cannot parse interval %q", field, *iv)
			}
		}
	}
	if test.Cron != nil {
		fields := strings.Fields(*test.Cron)
		ok := len(fields) == 5
		for _, f := range fields {
			ok = ok && cronField.MatchString(f)
		}
		if !ok {
			t.Errorf("%s: cannot parse cron %q (want five fields)", field, *test.Cron)
		}
	}
}

// checkTimeout: the job's timeout is set, within ci-operator's limit, and
// longer than its test step may run.
func checkTimeout(t *testing.T, field string, test testStepConfiguration, reg stepRegistry) {
	t.Helper()
	timeout := mustDuration(t, field+".timeout", test.Timeout)
	if timeout <= 0 || timeout > maxJobTimeout {
		t.Errorf("%s: timeout %q must be set and at most %s", field, test.Timeout, maxJobTimeout)
		return
	}
	for _, s := range resolveSteps(t, field, test, reg).Test {
		if f, ok := reg.refs[s.Ref]; ok {
			if step := mustDuration(t, "ref "+s.Ref+" timeout", f.Ref.Timeout) + mustDuration(t, "ref "+s.Ref+" grace_period", f.Ref.GracePeriod); step >= timeout {
				t.Errorf("%s: timeout %s does not leave room for the lease and step %s (%s with its grace period)", field, timeout, s.Ref, step)
			}
		}
	}
}

// resolveSteps merges a test's steps with its workflow's, as ci-operator
// does: the test's own fields win, env is merged.
func resolveSteps(t *testing.T, field string, test testStepConfiguration, reg stepRegistry) multiStageTestConfiguration {
	t.Helper()
	if test.Steps == nil {
		t.Errorf("%s: steps are needed (a multi-stage test)", field)
		return multiStageTestConfiguration{}
	}
	out := *test.Steps
	if out.Workflow != "" {
		wf, ok := reg.workflows[out.Workflow]
		if !ok {
			t.Errorf("%s: no workflow named %s", field, out.Workflow)
			return out
		}
		w := wf.Workflow.Steps
		if out.ClusterProfile == "" {
			out.ClusterProfile = w.ClusterProfile
		}
		for _, phase := range []struct{ own, from *[]testStep }{{&out.Pre, &w.Pre}, {&out.Test, &w.Test}, {&out.Post, &w.Post}} {
			if len(*phase.own) == 0 {
				*phase.own = *phase.from
			}
		}
		env := map[string]string{}
		for k, v := range w.Env {
			env[k] = v
		}
		for k, v := range out.Env {
			env[k] = v
		}
		out.Env = env
	}
	return out
}

// checkSteps: the resolved steps exist, have a cluster profile (the leased
// host's credentials), every env key is a declared parameter and every
// parameter without a default is given; a test step runs the parity suite
// and writes its JUnit under ${ARTIFACT_DIR}; E2E_LABEL_FILTER selects
// specs of the suite by labels it has.
func checkSteps(t *testing.T, field string, test testStepConfiguration, reg stepRegistry, suite paritySuite) {
	t.Helper()
	steps := resolveSteps(t, field, test, reg)
	if steps.ClusterProfile == "" {
		t.Errorf("%s: no cluster_profile: the ofcir steps need its token and SSH key", field)
	}
	for _, s := range steps.steps() {
		if !reg.knows(s.Ref) {
			t.Errorf("%s: invalid step reference: %s", field, s.Ref)
		}
	}
	params := reg.parameters(steps.steps())
	for k := range steps.Env {
		if _, ok := params[k]; !ok {
			t.Errorf("%s: parameter %q is overridden but not declared in any step", field, k)
		}
	}
	for k, def := range params {
		if _, given := steps.Env[k]; def == nil && !given {
			t.Errorf("%s: unresolved parameter: %s", field, k)
		}
	}
	if !writesJUnit(steps.Test, reg) {
		t.Errorf("%s: no test step runs `make e2e-parity` and copies its artifacts (JUnit) into ${ARTIFACT_DIR}", field)
	}
	filter, ok := steps.Env["E2E_LABEL_FILTER"]
	if !ok {
		if def := params["E2E_LABEL_FILTER"]; def != nil {
			filter = *def
		}
	}
	if err := suite.checkFilter(filter); err != nil {
		t.Errorf("%s: E2E_LABEL_FILTER %q: %v", field, filter, err)
	}
}

// writesJUnit: a test-phase step of ours runs the suite and copies what it
// left into ${ARTIFACT_DIR}, from where ci-operator uploads junit*.xml.
func writesJUnit(test []testStep, reg stepRegistry) bool {
	for _, s := range test {
		cmds := reg.commands[s.Ref]
		if strings.Contains(cmds, "make e2e-parity") && strings.Contains(cmds, `E2E_LABEL_FILTER`) &&
			regexp.MustCompile(`tar -C "\$\{ARTIFACT_DIR\}" -x`).MatchString(cmds) {
			return true
		}
	}
	return false
}

// checkEveryLabelHasAJob: one job per scenario label of the suite and one
// that runs it whole.
func checkEveryLabelHasAJob(t *testing.T, c ciOperatorConfig, reg stepRegistry, suite paritySuite) {
	t.Helper()
	filters := map[string]bool{}
	for _, test := range c.Tests {
		if steps := resolveSteps(t, test.As, test, reg); steps.Env != nil {
			filters[steps.Env["E2E_LABEL_FILTER"]] = true
		}
	}
	for _, label := range append([]string{""}, suite.labels()...) {
		if !filters[label] {
			t.Errorf("no periodic runs %s", describeFilter(label))
		}
	}
}

func describeFilter(label string) string {
	if label == "" {
		return "the whole suite (E2E_LABEL_FILTER empty)"
	}
	return "label " + label + " (E2E_LABEL_FILTER=" + label + ")"
}

func countTrue(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// mustDuration parses a ci-operator duration ("4h0m0s"); empty is 0.
func mustDuration(t *testing.T, what, s string) time.Duration {
	t.Helper()
	if s == "" {
		return 0
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Errorf("%s: %v", what, err)
	}
	return d
}
