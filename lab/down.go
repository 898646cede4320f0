package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/paritylab/paritylab/lab/process"
	"github.com/paritylab/paritylab/lab/state"
)

// ErrNoLab says the state dir holds no lab.
var ErrNoLab = errors.New("no lab in this state dir")

// ownerStopTimeout is how long Down waits for a live owner to tear down its
// own lab after SIGTERM before it kills it and reaps the leftovers itself.
const ownerStopTimeout = 2 * time.Minute

// Down tears down the lab recorded in stateDir from any process. A live
// owner (the process that ran Up) is asked to stop with SIGTERM and given
// time to undo its steps; then everything the ledger still lists is removed,
// which also covers an owner that crashed or was killed.
func Down(ctx context.Context, stateDir string, progress Progress) error {
	if progress == nil {
		progress = discardProgress{}
	}
	if _, err := os.Stat(stateDir); errors.Is(err, os.ErrNotExist) {
		return ErrNoLab
	}
	lk, err := acquireLock(stateDir)
	if errors.Is(err, errLocked) {
		lk, err = stopOwner(ctx, stateDir, progress)
	}
	if err != nil {
		return err
	}
	defer lk.release()
	return reap(ctx, stateDir, progress)
}

// stopOwner signals the owner recorded in the ledger and waits for its lock.
func stopOwner(ctx context.Context, stateDir string, progress Progress) (*lock, error) {
	ledger, err := state.Open(ledgerPath(stateDir))
	if err != nil {
		return nil, fmt.Errorf("lab is locked by a live process but its ledger cannot be read: %w", err)
	}
	owner, err := decodeIdentity(ledger.Record().Values[valueOwner])
	if err != nil {
		return nil, err
	}
	step := fmt.Sprintf("Stopping the lab's owner %s", owner)
	progress.Started(step)
	start := time.Now()
	err = process.Terminate(ctx, owner, ownerStopTimeout)
	progress.Finished(step, time.Since(start), err)
	if err != nil {
		return nil, err
	}
	return waitLock(ctx, stateDir)
}

// waitLock takes the lock once the kernel released it (the owner is gone).
func waitLock(ctx context.Context, stateDir string) (*lock, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		lk, err := acquireLock(stateDir)
		if !errors.Is(err, errLocked) || time.Now().After(deadline) {
			return lk, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// reap removes whatever the ledger still lists, then the state dir.
func reap(ctx context.Context, stateDir string, progress Progress) error {
	if _, err := os.Stat(ledgerPath(stateDir)); errors.Is(err, os.ErrNotExist) {
		// The owner finished its own teardown, or died before recording.
		return removeStateDir(stateDir)
	}
	ledger, err := state.Open(ledgerPath(stateDir))
	if err != nil {
		return err
	}
	n := len(ledger.Record().Resources)
	step := fmt.Sprintf("Removing %d leftover resources of run %s", n, ledger.Record().RunID)
	progress.Started(step)
	start := time.Now()
	err = errors.Join(ledger.Reap(ctx), ledger.Remove())
	progress.Finished(step, time.Since(start), err)
	if err != nil {
		return err
	}
	return removeStateDir(stateDir)
}
