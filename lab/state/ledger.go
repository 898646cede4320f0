package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Resource is one thing a run created that teardown must remove.
type Resource struct {
	// Kind selects the reaper, e.g. "process" or "dir".
	Kind string `json:"kind"`
	// ID is unique within the kind (a PID, a path, a domain name).
	ID string `json:"id"`
	// Data is what the reaper needs beyond the ID.
	Data json.RawMessage `json:"data,omitempty"`
}

func (r Resource) String() string { return r.Kind + " " + r.ID }

// Tracker records resources as they are created and forgets them once they
// are removed cleanly.
type Tracker interface {
	// Track records r; call it right after r exists, before relying on it.
	Track(r Resource) error
	// Forget drops r after it was removed.
	Forget(r Resource) error
}

// Discard is a Tracker that records nothing, for callers that clean up in
// process only (unit tests of one component).
var Discard Tracker = discard{}

type discard struct{}

func (discard) Track(Resource) error  { return nil }
func (discard) Forget(Resource) error { return nil }

// Record is the content of a ledger file.
type Record struct {
	// RunID names the run; every lab object carries it.
	RunID string `json:"runID"`
	// Created is when the run started.
	Created time.Time `json:"created"`
	// Resources in creation order; teardown walks them backwards.
	Resources []Resource `json:"resources"`
	// Values are facts about the run for `lab status` (endpoints, paths).
	Values map[string]string `json:"values,omitempty"`
}

// Ledger is a Record persisted to a file after every change.
type Ledger struct {
	path string
	mu   sync.Mutex
	rec  Record
}

var _ Tracker = (*Ledger)(nil)

// Create starts a new ledger at path; it fails if one exists, because that
// belongs to a run that has not been torn down.
func Create(path, runID string) (*Ledger, error) {
	if _, err := os.Stat(path); err == nil {
		return nil, fmt.Errorf("ledger %s exists: a previous run was not torn down (run `paritylab lab down`)", path)
	}
	l := &Ledger{path: path, rec: Record{RunID: runID, Created: time.Now().UTC(), Values: map[string]string{}}}
	return l, l.save()
}

// Open loads an existing ledger.
func Open(path string) (*Ledger, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read ledger: %w", err)
	}
	l := &Ledger{path: path}
	if err := json.Unmarshal(raw, &l.rec); err != nil {
		return nil, fmt.Errorf("parse ledger %s: %w", path, err)
	}
	if l.rec.Values == nil {
		l.rec.Values = map[string]string{}
	}
	return l, nil
}

// Path is the ledger file.
func (l *Ledger) Path() string { return l.path }

// Record returns a copy of the current content.
func (l *Ledger) Record() Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	rec := l.rec
	rec.Resources = append([]Resource(nil), l.rec.Resources...)
	rec.Values = make(map[string]string, len(l.rec.Values))
	for k, v := range l.rec.Values {
		rec.Values[k] = v
	}
	return rec
}

// Track implements Tracker. Tracking the same resource twice records it once.
func (l *Ledger) Track(r Resource) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, have := range l.rec.Resources {
		if have.Kind == r.Kind && have.ID == r.ID {
			return nil
		}
	}
	l.rec.Resources = append(l.rec.Resources, r)
	return l.save()
}

// Forget implements Tracker.
func (l *Ledger) Forget(r Resource) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	kept := l.rec.Resources[:0]
	for _, have := range l.rec.Resources {
		if have.Kind != r.Kind || have.ID != r.ID {
			kept = append(kept, have)
		}
	}
	l.rec.Resources = kept
	return l.save()
}

// SetValue records a fact about the run.
func (l *Ledger) SetValue(key, value string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rec.Values[key] = value
	return l.save()
}

// Remove deletes the ledger file once nothing is left to reap.
func (l *Ledger) Remove() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.rec.Resources) > 0 {
		return fmt.Errorf("ledger %s still lists %d resources", l.path, len(l.rec.Resources))
	}
	if err := os.Remove(l.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove ledger: %w", err)
	}
	return nil
}

// save writes the record atomically (temp file + rename), 0600: it lists
// paths of keys and kubeconfigs.
func (l *Ledger) save() error {
	raw, err := json.MarshalIndent(l.rec, "", "  ")
	if err != nil {
		return fmt.Errorf("encode ledger: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
		return fmt.Errorf("create ledger dir: %w", err)
	}
	tmp := l.path + ".tmp"
	if err := os.WriteFile(tmp, raw, 0o600); err != nil {
		return fmt.Errorf("write ledger: %w", err)
	}
	if err := os.Rename(tmp, l.path); err != nil {
		return fmt.Errorf("replace ledger: %w", err)
	}
	return nil
}
