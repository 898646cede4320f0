package prow

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The leased host of a real job is out of reach here, so the test step's
// commands run against stand-ins for its two remote parts: an ssh that
// runs the remote command in a directory standing for root's home on the
// host, and a podman that does what `make e2e-parity` leaves behind (the
// JUnit files in the artifacts mount) and exits as the suite would. The
// host address is loopback: were the stand-in not found, nothing leaves
// the machine.
const (
	fakeSSH = `#!/usr/bin/env bash
# ssh [options] destination command...: runs command in $FAKE_HOST_HOME.
set -euo pipefail
while [[ $1 == -* ]]; do
	case $1 in -i|-p|-o) echo "$1 $2" >>"$FAKE_LOG"; shift 2 ;; *) shift ;; esac
done
echo "destination $1" >>"$FAKE_LOG"
shift
cd "$FAKE_HOST_HOME"
HOME=$FAKE_HOST_HOME exec bash -c "$*"
`
	fakePodman = `#!/usr/bin/env bash
# podman run ... -v <dir>:/artifacts:Z ... image make e2e-parity ...
set -euo pipefail
echo "podman $*" >>"$FAKE_LOG"
artifacts= src=
for arg in "$@"; do
	case $arg in *:/artifacts:Z) artifacts=${arg%%:*} ;; *:/src:Z) src=${arg%%:*} ;; esac
done
test -f "$src/Makefile"
mkdir -p "$artifacts/observations"
echo '<testsuites/>' >"$artifacts/junit.e2e.xml"
echo '<testsuites/>' >"$artifacts/junit.parity.xml"
echo '{}' >"$artifacts/observations/day1.mapi.json"
exit "$FAKE_SUITE_STATUS"
`
)

func TestTestStepCopiesArtifactsBack(t *testing.T) {
	script, err := filepath.Abs(filepath.Join(registryRoot, "paritylab/parity/metal/test/paritylab-parity-metal-test-commands.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name        string
		filter      string
		suiteStatus string
		wantFailure bool
	}{
		{"the suite passes", "day1", "0", false},
		{"the suite fails", "day1", "1", true},
		{"the whole suite (an empty filter)", "", "0", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, dirs := stepEnvironment(t, tc.filter, tc.suiteStatus)
			cmd := exec.Command("bash", script)
			cmd.Dir, cmd.Env = dirs.checkout, env
			out, err := cmd.CombinedOutput()
			if (err != nil) != tc.wantFailure {
				t.Fatalf("step exit: %v, want failure %v\n%s", err, tc.wantFailure, out)
			}
			for _, f := range []string{"junit.e2e.xml", "junit.parity.xml", "observations/day1.mapi.json"} {
				if _, err := os.Stat(filepath.Join(dirs.artifacts, f)); err != nil {
					t.Errorf("%s not copied into ${ARTIFACT_DIR}: %v\n%s", f, err, out)
				}
			}
			log, err := os.ReadFile(dirs.log)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"destination root@127.0.0.1", "-p 2222", "-i " + dirs.profile + "/packet-ssh-key",
				"make e2e-parity E2E_LABEL_FILTER=" + tc.filter + "\n"} {
				if !strings.Contains(string(log), want) {
					t.Errorf("the step did not use %q:\n%s", want, log)
				}
			}
		})
	}
}

type stepDirs struct{ checkout, artifacts, profile, log string }

// stepEnvironment is what ci-operator gives the step (SHARED_DIR with the
// files ofcir-acquire wrote, CLUSTER_PROFILE_DIR, ARTIFACT_DIR, the
// step's parameters), with the stand-ins first on PATH.
func stepEnvironment(t *testing.T, filter, suiteStatus string) ([]string, stepDirs) {
	t.Helper()
	root := t.TempDir()
	d := stepDirs{checkout: filepath.Join(root, "src"), artifacts: filepath.Join(root, "artifacts"),
		profile: filepath.Join(root, "profile"), log: filepath.Join(root, "calls.log")}
	shared, bin, host := filepath.Join(root, "shared"), filepath.Join(root, "bin"), filepath.Join(root, "host-root")
	files := map[string]string{
		filepath.Join(shared, "server-ip"):         "127.0.0.1\n",
		filepath.Join(shared, "server-sshport"):    "2222\n",
		filepath.Join(d.profile, "packet-ssh-key"): "not a key\n",
		filepath.Join(d.checkout, "Makefile"):      "e2e-parity:\n",
		filepath.Join(bin, "ssh"):                  fakeSSH,
		filepath.Join(bin, "podman"):               fakePodman,
	}
	for path, content := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, dir := range []string{d.artifacts, host} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "SHARED_DIR="+shared, "CLUSTER_PROFILE_DIR="+d.profile,
		"ARTIFACT_DIR="+d.artifacts, "E2E_LABEL_FILTER="+filter, "PARITYLAB_IMAGE=docker.io/library/golang:1.26-bookworm",
		"FAKE_HOST_HOME="+host, "FAKE_LOG="+d.log, "FAKE_SUITE_STATUS="+suiteStatus)
	return env, d
}
