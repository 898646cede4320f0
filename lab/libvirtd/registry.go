package libvirtd

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/paritylab/paritylab/lab/process"
)

// RegistryDir coordinates every paritylab process on the machine that uses
// a libvirt daemon paritylab started: one user file per handle, and the
// daemon's identity. The daemon is stopped when its last live user lets go,
// so two labs (or two test binaries) never stop each other's daemon.
var RegistryDir = "/run/paritylab/libvirtd"

// daemonRecord names the daemons paritylab started.
type daemonRecord struct {
	Processes []process.Identity `json:"processes"`
	LogDir    string             `json:"logDir"`
}

// libvirtdAlive says whether the recorded libvirtd (started last) runs.
func (d *daemonRecord) libvirtdAlive() bool {
	return len(d.Processes) > 0 && d.Processes[len(d.Processes)-1].Alive()
}

// userRecord is one handle on the daemon.
type userRecord struct {
	Owner process.Identity `json:"owner"`
}

func daemonFile() string { return filepath.Join(RegistryDir, "daemon.json") }
func usersDir() string   { return filepath.Join(RegistryDir, "users") }

// withRegistryLock runs fn holding the registry's exclusive lock.
func withRegistryLock(ctx context.Context, fn func() error) error {
	if err := os.MkdirAll(usersDir(), 0o755); err != nil {
		return fmt.Errorf("create libvirtd registry: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(RegistryDir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("open libvirtd registry lock: %w", err)
	}
	defer f.Close()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return fmt.Errorf("lock libvirtd registry: %w", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("lock libvirtd registry: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return fn()
}

// addUser registers a handle of this process and returns its file.
func addUser() (string, error) {
	self, err := process.IdentityOf("paritylab", os.Getpid())
	if err != nil {
		return "", err
	}
	raw := make([]byte, 4)
	_, _ = rand.Read(raw)
	path := filepath.Join(usersDir(), fmt.Sprintf("%d-%d-%s.json", self.PID, self.StartTicks, hex.EncodeToString(raw)))
	data, _ := json.Marshal(userRecord{Owner: self})
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return "", fmt.Errorf("register libvirtd user: %w", err)
	}
	return path, nil
}

// liveUsers removes the files of users whose process is gone and counts
// the others.
func liveUsers() (int, error) {
	entries, err := os.ReadDir(usersDir())
	if err != nil {
		return 0, fmt.Errorf("read libvirtd users: %w", err)
	}
	live := 0
	for _, e := range entries {
		path := filepath.Join(usersDir(), e.Name())
		raw, err := os.ReadFile(path)
		var u userRecord
		if err != nil || json.Unmarshal(raw, &u) != nil || !u.Owner.Alive() {
			_ = os.Remove(path)
			continue
		}
		live++
	}
	return live, nil
}

func readDaemon() (*daemonRecord, error) {
	raw, err := os.ReadFile(daemonFile())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read libvirtd record: %w", err)
	}
	var d daemonRecord
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("parse libvirtd record: %w", err)
	}
	return &d, nil
}

func writeDaemon(d daemonRecord) error {
	raw, _ := json.Marshal(d)
	if err := os.WriteFile(daemonFile(), raw, 0o644); err != nil {
		return fmt.Errorf("write libvirtd record: %w", err)
	}
	return nil
}

// stopRecorded ends the daemons paritylab started, libvirtd first, and
// forgets them.
func stopRecorded(ctx context.Context, d *daemonRecord) error {
	var errs []error
	for i := len(d.Processes) - 1; i >= 0; i-- {
		errs = append(errs, process.Terminate(ctx, d.Processes[i], 30*time.Second))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := os.Remove(daemonFile()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove libvirtd record: %w", err)
	}
	return nil
}

// isUserFile says whether a path is a user file of the registry.
func isUserFile(path string) bool {
	return strings.HasPrefix(path, usersDir()+string(filepath.Separator))
}
