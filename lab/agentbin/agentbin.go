// Package agentbin provides the lab-agent binary the lab bakes into guest
// images: $PARITYLAB_AGENT if set, else lab-agent next to the running
// executable (make build puts it there), else a static build from this
// module's source into the cache (tests, and `go run`).
//
// It imports nothing from the rest of the lab.
package agentbin

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Env names a prebuilt agent binary.
const Env = "PARITYLAB_AGENT"

// Package is the agent's import path.
const Package = "github.com/paritylab/paritylab/cmd/lab-agent"

// Path returns a lab-agent binary.
func Path(ctx context.Context, cacheDir string) (string, error) {
	if p := os.Getenv(Env); p != "" {
		return p, nil
	}
	if self, err := os.Executable(); err == nil {
		beside := filepath.Join(filepath.Dir(self), "lab-agent")
		if info, err := os.Stat(beside); err == nil && info.Mode()&0o111 != 0 {
			return beside, nil
		}
	}
	return build(ctx, cacheDir)
}

// build compiles the agent statically (it runs in a busybox initramfs).
// The go command's cache makes a rebuild of unchanged sources cheap.
func build(ctx context.Context, cacheDir string) (string, error) {
	dir := filepath.Join(cacheDir, "lab-agent")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create agent build dir: %w", err)
	}
	out := filepath.Join(dir, "lab-agent")
	tmp := fmt.Sprintf("%s.partial.%d", out, os.Getpid())
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", tmp, Package)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("build lab-agent (run `make build` to get bin/lab-agent, or set %s): %w: %s", Env, err, strings.TrimSpace(stderr.String()))
	}
	if err := os.Rename(tmp, out); err != nil {
		return "", fmt.Errorf("store lab-agent: %w", err)
	}
	return out, nil
}
