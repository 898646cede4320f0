package machines

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"

	"libvirt.org/go/libvirt"

	"github.com/paritylab/paritylab/lab/libvirtd"
	"github.com/paritylab/paritylab/lab/state"
)

// RegisterReapers teaches the ledger to remove lab domains and pools. The
// reapers work without a running lab: when no libvirt daemon answers (it
// died with a crashed lab), one is started for the teardown and stopped
// when the ledger has been walked.
func RegisterReapers() {
	registerOnce.Do(func() {
		state.RegisterReaper(KindDomain, reapDomain)
		state.RegisterReaper(KindPool, reapPool)
		state.RegisterReapDone(reapConn.release)
	})
}

var registerOnce sync.Once

// reapConn is the connection reapers share during one teardown.
var reapConn = &sharedConn{}

type sharedConn struct {
	mu     sync.Mutex
	conn   *libvirt.Connect
	daemon *libvirtd.Daemon
	logDir string
}

func (s *sharedConn) get(ctx context.Context) (*libvirt.Connect, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil {
		return s.conn, nil
	}
	dir, err := os.MkdirTemp("", "paritylab-reap-libvirtd-")
	if err != nil {
		return nil, fmt.Errorf("create libvirtd log dir: %w", err)
	}
	daemon, err := libvirtd.Ensure(ctx, libvirtd.Options{LogDir: dir})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("libvirt daemon for teardown: %w", err)
	}
	conn, err := daemon.Connect()
	if err != nil {
		return nil, fmt.Errorf("connect for teardown: %w", err)
	}
	s.conn, s.daemon, s.logDir = conn, daemon, dir
	return conn, nil
}

func (s *sharedConn) release() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		return nil
	}
	_, _ = s.conn.Close()
	err := s.daemon.Stop()
	os.RemoveAll(s.logDir)
	s.conn, s.daemon, s.logDir = nil, nil, ""
	return err
}

func reapDomain(ctx context.Context, r state.Resource) error {
	conn, err := reapConn.get(ctx)
	if err != nil {
		return err
	}
	return removeDomain(conn, r.ID)
}

func reapPool(ctx context.Context, r state.Resource) error {
	var rec poolRecord
	if err := json.Unmarshal(r.Data, &rec); err != nil {
		return fmt.Errorf("decode pool %s: %w", r.ID, err)
	}
	conn, err := reapConn.get(ctx)
	if err != nil {
		return err
	}
	return removePool(conn, r.ID, rec.Path)
}
