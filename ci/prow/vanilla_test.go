package prow

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

const (
	vanillaConfig = "vanilla/config.yaml"
	vanillaJobs   = "vanilla/jobs"
)

// periodic is the part of a Prow periodic (sigs.k8s.io/prow pkg/config)
// these tests read; checkconfig reads all of it.
type periodic struct {
	Name      string `json:"name"`
	Cron      string `json:"cron"`
	Decorate  *bool  `json:"decorate"`
	ExtraRefs []struct {
		Org     string `json:"org"`
		Repo    string `json:"repo"`
		BaseRef string `json:"base_ref"`
		WorkDir bool   `json:"workdir"`
	} `json:"extra_refs"`
	Spec *corev1.PodSpec `json:"spec"`
}

func loadPeriodics(t *testing.T) []periodic {
	t.Helper()
	var all []periodic
	err := filepath.WalkDir(vanillaJobs, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var f struct {
			Periodics []periodic `json:"periodics"`
		}
		if err := yaml.Unmarshal(raw, &f); err != nil {
			t.Errorf("%s: %v", path, err)
		}
		all = append(all, f.Periodics...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) == 0 {
		t.Fatalf("no periodics under %s", vanillaJobs)
	}
	return all
}

// Each vanilla periodic runs `make e2e-parity` from a clone of the
// repository in a decorated, privileged pod with /dev/kvm, and leaves its
// artifacts in /logs/artifacts, which the sidecar uploads.
func TestVanillaPeriodics(t *testing.T) {
	for _, p := range loadPeriodics(t) {
		t.Run(p.Name, func(t *testing.T) {
			if p.Decorate == nil || !*p.Decorate {
				t.Error("decorate: true is needed (the pod utilities clone the repository and upload the artifacts)")
			}
			if len(p.ExtraRefs) != 1 || p.ExtraRefs[0].Org != "paritylab" || p.ExtraRefs[0].Repo != "paritylab" || !p.ExtraRefs[0].WorkDir {
				t.Errorf("extra_refs %+v: want paritylab/paritylab as the working directory", p.ExtraRefs)
			}
			if p.Spec == nil || len(p.Spec.Containers) != 1 {
				t.Fatal("want a pod spec with one container")
			}
			c := p.Spec.Containers[0]
			if !slices.Equal(c.Command, []string{"make"}) || len(c.Args) == 0 || c.Args[0] != "e2e-parity" {
				t.Errorf("runs %q %q, want make e2e-parity", c.Command, c.Args)
			}
			if _, ok := labelFilterArg(c.Args); !ok {
				t.Errorf("args %q set no E2E_LABEL_FILTER", c.Args)
			}
			if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "ARTIFACTS" && e.Value == "/logs/artifacts" }) {
				t.Error("ARTIFACTS=/logs/artifacts is needed: the sidecar uploads that directory")
			}
			if c.SecurityContext == nil || c.SecurityContext.Privileged == nil || !*c.SecurityContext.Privileged {
				t.Error("the container must be privileged: the lab runs libvirt and network namespaces of its own")
			}
			if !mountsKVM(p.Spec, c) {
				t.Error("/dev/kvm of the node must be mounted at /dev/kvm")
			}
		})
	}
}

func labelFilterArg(args []string) (string, bool) {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "E2E_LABEL_FILTER="); ok {
			return v, true
		}
	}
	return "", false
}

func mountsKVM(spec *corev1.PodSpec, c corev1.Container) bool {
	for _, v := range spec.Volumes {
		if v.HostPath == nil || v.HostPath.Path != "/dev/kvm" {
			continue
		}
		for _, m := range c.VolumeMounts {
			if m.Name == v.Name && m.MountPath == "/dev/kvm" {
				return true
			}
		}
	}
	return false
}

// The vanilla periodics and the ci-operator tests are the same jobs: the
// same label filters on the same schedules (and Prow's checkconfig parses
// those schedules with the cron library ci-operator uses).
func TestBothConfigsHaveTheSameJobs(t *testing.T) {
	vanilla := map[string]string{}
	for _, p := range loadPeriodics(t) {
		filter, _ := labelFilterArg(p.Spec.Containers[0].Args)
		vanilla[filter] = p.Cron
	}
	reg := loadRegistry(t)
	for _, f := range loadCIOperatorConfigs(t) {
		ciop := map[string]string{}
		for _, test := range f.config.Tests {
			steps := resolveSteps(t, test.As, test, reg)
			if test.Cron != nil {
				ciop[steps.Env["E2E_LABEL_FILTER"]] = *test.Cron
			}
		}
		if !mapsEqual(vanilla, ciop) {
			t.Errorf("%s: label filter -> cron %v, the vanilla periodics %v", f.path, ciop, vanilla)
		}
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// checkconfig runs Prow's checkconfig (built from the pinned module by
// `make tools`; make exports CHECKCONFIG) on a Prow config and job dir.
func checkconfig(t *testing.T, config, jobs string) (string, error) {
	t.Helper()
	bin := os.Getenv("CHECKCONFIG")
	if bin == "" {
		t.Fatal("CHECKCONFIG is not set: run `make test`, or `make tools` and set it to the checkconfig it built")
	}
	out, err := exec.Command(bin, checkconfigArgs(config, jobs)...).CombinedOutput()
	return string(out), err
}

// checkconfigArgs are the flags `make test` runs checkconfig with: every
// warning is an error, with unknown fields in job configs and incomplete
// decoration configs among them.
func checkconfigArgs(config, jobs string) []string {
	return []string{"--config-path=" + config, "--job-config-path=" + jobs, "--strict", "--include-default-warnings",
		"--warnings=unknown-fields-all", "--warnings=valid-decoration-config"}
}

// Prow's own loader accepts the jobs, and rejects them, with its own
// message, once they are broken the ways a hand edit breaks them.
func TestCheckconfig(t *testing.T) {
	if out, err := checkconfig(t, vanillaConfig, vanillaJobs); err != nil {
		t.Fatalf("checkconfig rejects ci/prow/vanilla: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		name, after, insert, want string
	}{
		{"two schedules on one job", "  cron: ", "  interval: 24h", "cron, interval, and minimum_interval are mutually exclusive"},
		{"a misspelt field", "  decorate: true", "  decorte: true", `unknown field \"decorte\"`},
		{"an invalid schedule", "  decorate: true", "  minimum_interval: every day", "minimum_interval"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			jobs := brokenJobs(t, tc.after, tc.insert)
			out, err := checkconfig(t, vanillaConfig, jobs)
			if err == nil {
				t.Fatalf("checkconfig accepted jobs with %s:\n%s", tc.name, out)
			}
			if !strings.Contains(out, tc.want) {
				t.Errorf("checkconfig's output lacks %q:\n%s", tc.want, out)
			}
		})
	}
}

// brokenJobs copies the vanilla jobs to a temp dir with a line inserted
// after the first line that starts with after.
func brokenJobs(t *testing.T, after, insert string) string {
	t.Helper()
	dir := t.TempDir()
	done := false
	err := filepath.WalkDir(vanillaJobs, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		lines := strings.Split(string(raw), "\n")
		for i, l := range lines {
			if !done && strings.HasPrefix(l, after) {
				lines = slices.Insert(lines, i+1, insert)
				done = true
				break
			}
		}
		rel, _ := filepath.Rel(vanillaJobs, path)
		target := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		return os.WriteFile(target, []byte(strings.Join(lines, "\n")), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if !done {
		t.Fatalf("no line starts with %q in %s", after, vanillaJobs)
	}
	return dir
}
