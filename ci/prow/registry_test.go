package prow

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// Where the openshift/release layout starts.
const (
	configRoot   = "openshift/ci-operator/config"
	registryRoot = "openshift/ci-operator/step-registry"
)

// upstreamRefs are the openshift/release steps the workflow uses and the
// parameters each declares (ofcir/*/ofcir-*-ref.yaml there).
var upstreamRefs = map[string][]string{
	"ofcir-acquire": {"CLUSTERTYPE", "PACKET_METRO", "PACKET_PLAN", "PACKET_PROVISION_WAIT", "PACKET_OS"},
	"ofcir-gather":  nil,
	"ofcir-release": nil,
}

// stepRegistry is what ci/prow's step registry holds.
type stepRegistry struct {
	refs      map[string]refFile
	workflows map[string]workflowFile
	// commands is each ref's commands script, by ref name.
	commands map[string]string
	// dirs are the directories holding a component.
	dirs map[string]bool
}

// loadRegistry reads the step registry by ci-tools' rules (pkg/load): a
// component's file is named after its directory (slashes become dashes)
// and its `as` is that name; a ref's commands file is <name>-commands.sh;
// registry files decode strictly.
func loadRegistry(t *testing.T) stepRegistry {
	t.Helper()
	reg := stepRegistry{refs: map[string]refFile{}, workflows: map[string]workflowFile{}, commands: map[string]string{}, dirs: map[string]bool{}}
	err := filepath.WalkDir(registryRoot, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(registryRoot, path)
		if err != nil {
			return err
		}
		prefix := strings.ReplaceAll(filepath.Dir(rel), string(filepath.Separator), "-")
		base := d.Name()
		switch {
		case base == "OWNERS", strings.HasSuffix(base, ".md"), strings.HasSuffix(base, ".metadata.json"):
			return nil
		case !strings.HasPrefix(base, prefix+"-"):
			t.Errorf("%s: file has incorrect prefix, it should be %s", path, prefix)
		case base == prefix+"-ref.yaml":
			var f refFile
			decodeStrict(t, path, &f)
			if f.Ref.As != prefix {
				t.Errorf("%s: the reference's as is %q, it should be %q", path, f.Ref.As, prefix)
			}
			reg.refs[prefix] = f
			reg.dirs[filepath.Dir(path)] = true
		case base == prefix+"-workflow.yaml":
			var f workflowFile
			decodeStrict(t, path, &f)
			if f.Workflow.As != prefix {
				t.Errorf("%s: the workflow's as is %q, it should be %q", path, f.Workflow.As, prefix)
			}
			reg.workflows[prefix] = f
			reg.dirs[filepath.Dir(path)] = true
		case strings.HasPrefix(base, prefix+"-commands"):
			raw, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			reg.commands[prefix] = string(raw)
		default:
			t.Errorf("%s: not a step-registry file name (want %s-ref.yaml, -workflow.yaml or -commands.sh)", path, prefix)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func decodeStrict(t *testing.T, path string, into any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(raw, into); err != nil {
		t.Errorf("%s: %v", path, err)
	}
}

func TestStepRegistry(t *testing.T) {
	reg := loadRegistry(t)
	if len(reg.workflows) == 0 || len(reg.refs) == 0 {
		t.Fatalf("the step registry under %s has no workflow or no ref", registryRoot)
	}
	for dir := range reg.dirs {
		if _, err := os.Stat(filepath.Join(dir, "OWNERS")); err != nil {
			t.Errorf("%s: every step-registry component needs an OWNERS file beside it", dir)
		}
	}
	for name, f := range reg.refs {
		checkRef(t, name, f, reg.commands[name])
	}
	for name, f := range reg.workflows {
		for _, s := range f.Workflow.Steps.steps() {
			if !reg.knows(s.Ref) {
				t.Errorf("workflow %s: no step %q in the registry (nor upstream)", name, s.Ref)
			}
		}
		if strings.TrimSpace(f.Workflow.Documentation) == "" {
			t.Errorf("workflow %s: no documentation", name)
		}
	}
	for name := range reg.commands {
		if _, ok := reg.refs[name]; !ok {
			t.Errorf("commands of %s belong to no ref", name)
		}
	}
}

func checkRef(t *testing.T, name string, f refFile, commands string) {
	t.Helper()
	r := f.Ref
	if r.Commands != name+"-commands.sh" {
		t.Errorf("ref %s: commands should be set to %s-commands.sh, is %q", name, name, r.Commands)
	}
	if commands == "" {
		t.Errorf("ref %s: no %s-commands.sh beside it", name, name)
	}
	if r.From == "" {
		t.Errorf("ref %s: from is required", name)
	}
	if len(r.Resources.Requests)+len(r.Resources.Limits) == 0 {
		t.Errorf("ref %s: resources should have at least one request or limit", name)
	}
	if mustDuration(t, "ref "+name+" timeout", r.Timeout) <= 0 {
		t.Errorf("ref %s: a timeout is needed (the suite runs for hours)", name)
	}
	if strings.Contains(commands, "trap ") && mustDuration(t, "ref "+name+" grace_period", r.GracePeriod) <= 0 {
		t.Errorf("ref %s: its commands trap signals, so it needs a grace_period", name)
	}
	for _, p := range r.Env {
		if p.Documentation == "" {
			t.Errorf("ref %s: parameter %s is not documented", name, p.Name)
		}
	}
	if strings.TrimSpace(r.Documentation) == "" {
		t.Errorf("ref %s: no documentation", name)
	}
}

// steps lists a multi-stage test's steps, pre, test and post.
func (m multiStageTestConfiguration) steps() []testStep {
	return append(append(append([]testStep{}, m.Pre...), m.Test...), m.Post...)
}

func (r stepRegistry) knows(ref string) bool {
	_, ours := r.refs[ref]
	_, upstream := upstreamRefs[ref]
	return ours || upstream
}

// parameters are the env parameters the steps of a test declare.
func (r stepRegistry) parameters(steps []testStep) map[string]*string {
	params := map[string]*string{}
	for _, s := range steps {
		if f, ok := r.refs[s.Ref]; ok {
			for _, p := range f.Ref.Env {
				params[p.Name] = p.Default
			}
		}
		for _, name := range upstreamRefs[s.Ref] {
			def := "upstream"
			params[name] = &def
		}
	}
	return params
}

// The steps' commands are bash that runs once a day on a leased host: bash
// must parse them and shellcheck (at its default severity) find nothing.
func TestStepCommandsPassShellcheck(t *testing.T) {
	shellcheck, err := exec.LookPath("shellcheck")
	if err != nil {
		t.Fatal("shellcheck not found: install Debian package shellcheck (make deps does)")
	}
	all := 0
	err = filepath.WalkDir(registryRoot, func(path string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, "-commands.sh") {
			all++
			if out, err := exec.Command("bash", "-n", path).CombinedOutput(); err != nil {
				t.Errorf("bash -n %s: %v\n%s", path, err, out)
			}
			if out, err := exec.Command(shellcheck, "--shell=bash", path).CombinedOutput(); err != nil {
				t.Errorf("shellcheck %s: %v\n%s", path, err, out)
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if all == 0 {
		t.Fatalf("no *-commands.sh under %s", registryRoot)
	}
}
