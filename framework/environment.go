package framework

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/paritylab/paritylab/lab"
)

// Components returns what the lab recorded it runs (lab.ComponentRecord),
// by name.
func (l *Lab) Components() (map[string]lab.ComponentRecord, error) {
	records, err := lab.ReadComponents(l.Info.StateDir)
	if err != nil {
		return nil, err
	}
	out := make(map[string]lab.ComponentRecord, len(records))
	for _, r := range records {
		out[r.Name] = r
	}
	return out, nil
}

// Environment describes where a run happens, for the report's run
// metadata: the paritylab commit, the lab machine's CPU, cores, memory and
// kernel, the hypervisor accelerator the hosts run with, and the Go
// version. A fact that cannot be read says "unknown".
func (l *Lab) Environment(ctx context.Context) map[string]string {
	env := map[string]string{
		"paritylab-commit": gitCommit(ctx),
		"machine-cpus":     strconv.Itoa(runtime.NumCPU()),
		"machine-cpu":      procField("/proc/cpuinfo", "model name"),
		"machine-memory":   memory(),
		"kernel":           firstLine("/proc/sys/kernel/osrelease"),
		"go":               runtime.Version(),
		"accel":            "unknown",
	}
	if l.Info.Accel != "" {
		env["accel"] = l.Info.Accel
	}
	return env
}

// gitCommit is the commit of the checkout the run's working directory is
// in, with "+dirty" when files differ from it.
func gitCommit(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	commit := strings.TrimSpace(string(out))
	status, err := exec.CommandContext(ctx, "git", "status", "--porcelain", "--untracked-files=no").Output()
	if err == nil && len(strings.TrimSpace(string(status))) > 0 {
		commit += "+dirty"
	}
	return commit
}

func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

func memory() string {
	kb := procField("/proc/meminfo", "MemTotal")
	n, err := strconv.ParseInt(strings.TrimSuffix(kb, " kB"), 10, 64)
	if err != nil {
		return "unknown"
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<20))
}

func firstLine(path string) string {
	raw, err := os.ReadFile(path)
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(strings.SplitN(string(raw), "\n", 2)[0])
}
