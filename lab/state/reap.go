package state

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/paritylab/paritylab/lab/process"
)

// Base resource kinds.
const (
	KindProcess = "process"
	KindDir     = "dir"
)

// Reaper removes one kind of resource. It must succeed when the resource is
// already gone, so teardown can run any number of times.
type Reaper func(ctx context.Context, r Resource) error

var (
	reapersMu sync.RWMutex
	reapers   = map[string]Reaper{
		KindProcess: reapProcess,
		KindDir:     reapDir,
	}
)

// RegisterReaper installs the reaper of a resource kind owned by another lab
// package (libvirt domains, storage pools, ...).
func RegisterReaper(kind string, r Reaper) {
	reapersMu.Lock()
	defer reapersMu.Unlock()
	reapers[kind] = r
}

var doneHooks []func() error

// RegisterReapDone installs a function Reap calls after walking the ledger,
// to release what reapers acquired on the way (e.g. a libvirt daemon started
// only to remove domains). Its error is reported with the others.
func RegisterReapDone(fn func() error) {
	reapersMu.Lock()
	defer reapersMu.Unlock()
	doneHooks = append(doneHooks, fn)
}

func runDoneHooks() error {
	reapersMu.RLock()
	hooks := append([]func() error(nil), doneHooks...)
	reapersMu.RUnlock()
	var errs []error
	for _, h := range hooks {
		errs = append(errs, h())
	}
	return errors.Join(errs...)
}

func reaperFor(kind string) (Reaper, bool) {
	reapersMu.RLock()
	defer reapersMu.RUnlock()
	r, ok := reapers[kind]
	return r, ok
}

// ProcessResource records a supervised process.
func ProcessResource(id process.Identity) Resource {
	raw, _ := json.Marshal(id)
	return Resource{Kind: KindProcess, ID: fmt.Sprint(id.PID), Data: raw}
}

// DirResource records a directory the run created.
func DirResource(path string) Resource {
	return Resource{Kind: KindDir, ID: path}
}

func reapProcess(ctx context.Context, r Resource) error {
	var id process.Identity
	if err := json.Unmarshal(r.Data, &id); err != nil {
		return fmt.Errorf("decode process %s: %w", r.ID, err)
	}
	return process.Terminate(ctx, id, 10*time.Second)
}

func reapDir(_ context.Context, r Resource) error {
	if err := os.RemoveAll(r.ID); err != nil {
		return fmt.Errorf("remove dir %s: %w", r.ID, err)
	}
	return nil
}

// Reap removes every resource in the ledger, newest first, forgetting each
// one it removed. It goes on past failures and returns them all; what failed
// stays in the ledger for the next attempt.
func (l *Ledger) Reap(ctx context.Context) error {
	resources := l.Record().Resources
	var errs []error
	for i := len(resources) - 1; i >= 0; i-- {
		r := resources[i]
		reap, ok := reaperFor(r.Kind)
		if !ok {
			errs = append(errs, fmt.Errorf("no reaper for %s (is this paritylab older than the run?)", r))
			continue
		}
		if err := reap(ctx, r); err != nil {
			errs = append(errs, fmt.Errorf("reap %s: %w", r, err))
			continue
		}
		if err := l.Forget(r); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, runDoneHooks())
	return errors.Join(errs...)
}
