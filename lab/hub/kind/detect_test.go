package kind

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// These tests use the real kind provider and its engine detection; they
// pin the environment so that no engine answers on any machine.

// assertNoEngine checks Create's error and that Create left nothing behind.
func assertNoEngine(t *testing.T, tmp, kubeconfigPath string, err error) {
	t.Helper()
	if !errors.Is(err, ErrNoContainerEngine) {
		t.Fatalf("Create = %v, want ErrNoContainerEngine", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "create kind cluster paritylab-test: no container engine available") {
		t.Errorf("error %q does not say the container engine is missing", msg)
	}
	if _, err := os.Stat(kubeconfigPath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("kubeconfig written: %v", err)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("Create left files in TMPDIR: %v", entries)
	}
}

func TestCreateWithoutEngineBinaries(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Setenv("PATH", t.TempDir()) // no docker, podman, nerdctl, finch
	kubeconfigPath := filepath.Join(t.TempDir(), "kubeconfig")
	h := New(Options{Name: "paritylab-test", KubeconfigPath: kubeconfigPath})

	err := h.Create(context.Background())
	assertNoEngine(t, tmp, kubeconfigPath, err)
	if !strings.Contains(err.Error(), "failed to detect any supported node provider") {
		t.Errorf("error %q lacks kind's detection failure", err)
	}
	if err := h.Dispose(context.Background()); err != nil {
		t.Errorf("Dispose after failed Create: %v", err)
	}
}

// TestCreateWithEngineNotRunning is this machine's situation: an engine
// client is installed (docker here) but no daemon answers. DOCKER_HOST and
// CONTAINER_HOST point at a socket that does not exist so that a machine
// with a running engine behaves the same.
func TestCreateWithEngineNotRunning(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	sock := "unix://" + filepath.Join(t.TempDir(), "absent.sock")
	t.Setenv("DOCKER_HOST", sock)
	t.Setenv("CONTAINER_HOST", sock)
	kubeconfigPath := filepath.Join(t.TempDir(), "kubeconfig")
	h := New(Options{Name: "paritylab-test", KubeconfigPath: kubeconfigPath})

	err := h.Create(context.Background())
	assertNoEngine(t, tmp, kubeconfigPath, err)
	t.Logf("Create: %v", err)
	if err := h.Dispose(context.Background()); err != nil {
		t.Errorf("Dispose after failed Create: %v", err)
	}
}
