package redfish

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// maxLatency bounds an injected delay: longer than any client timeout in
// the lab, short enough that a typo cannot wedge a scenario for hours.
const maxLatency = 10 * time.Minute

// Fault is what the server does wrong, on purpose, to requests addressed to
// one system (its System, Manager and Chassis resources and everything
// below them), so reliability scenarios can see how clients cope.
type Fault struct {
	// Status, when set (400-599), is answered instead of the real
	// response, with a Redfish error body.
	Status int
	// Latency is added before the request is handled (at most 10m).
	Latency time.Duration
	// IgnorePower makes ComputerSystem.Reset answer 204 without doing
	// anything: a BMC that acknowledges and forgets.
	IgnorePower bool
	// Count limits the fault to the next Count requests it affects, then
	// it disappears; 0 keeps it until cleared. A fault with only
	// IgnorePower affects Reset requests alone.
	Count int
	// Hang freezes the system's guest in place: the BMC still reports it
	// On, but nothing runs, as a server whose OS or firmware hung. It
	// answers no request differently (see HangMode).
	Hang HangMode
}

// HangMode says how long a hang lasts.
type HangMode string

const (
	// HangUntilPowerOff: the guest freezes now (when the system is on)
	// and the fault ends with the next power-off, as a kernel hang a
	// power cycle cures.
	HangUntilPowerOff HangMode = "untilPowerOff"
	// HangAlways: the guest freezes now and at every power-on until the
	// fault is cleared, as a server whose hardware died.
	HangAlways HangMode = "always"
)

// HangModes lists the hang modes a fault may name.
var HangModes = []HangMode{HangUntilPowerOff, HangAlways}

func (f Fault) validate() error {
	switch {
	case f.Status != 0 && (f.Status < 400 || f.Status > 599):
		return fmt.Errorf("status %d is not an HTTP error status (400-599)", f.Status)
	case f.Latency < 0 || f.Latency > maxLatency:
		return fmt.Errorf("latency %s is outside 0-%s", f.Latency, maxLatency)
	case f.Count < 0:
		return fmt.Errorf("count %d is negative", f.Count)
	case f.Hang != "" && !slices.Contains(HangModes, f.Hang):
		return fmt.Errorf("hang %q is not one of %v", f.Hang, HangModes)
	case f.Hang != "" && (f.Status != 0 || f.Latency != 0 || f.IgnorePower || f.Count != 0):
		return errors.New("a hang is a fault of the server, not of its BMC: set it alone, without status, latency, ignorePower or count")
	case f.Status == 0 && f.Latency == 0 && !f.IgnorePower && f.Hang == "":
		return errors.New("the fault does nothing: set status, latency, ignorePower or hang")
	}
	return nil
}

// affects says whether the fault applies to a request.
func (f Fault) affects(reset bool) bool {
	return f.Status != 0 || f.Latency > 0 || (f.IgnorePower && reset)
}

// faultStore holds the faults of all systems, by system ID.
type faultStore struct {
	mu     sync.Mutex
	faults map[string]Fault
}

func newFaultStore() *faultStore {
	return &faultStore{faults: map[string]Fault{}}
}

func (fs *faultStore) set(id string, f Fault) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.faults[id] = f
}

func (fs *faultStore) clear(id string) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	delete(fs.faults, id)
}

// clearHang ends a system's hang fault, if it has one.
func (fs *faultStore) clearHang(id string) bool {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if f, ok := fs.faults[id]; ok && f.Hang != "" {
		delete(fs.faults, id)
		return true
	}
	return false
}

func (fs *faultStore) get(id string) (Fault, bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	f, ok := fs.faults[id]
	return f, ok
}

// take returns the fault that applies to one request and counts it.
func (fs *faultStore) take(id string, reset bool) (Fault, bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	f, ok := fs.faults[id]
	if !ok || !f.affects(reset) {
		return Fault{}, false
	}
	if f.Count > 0 {
		if f.Count == 1 {
			delete(fs.faults, id)
		} else {
			fs.faults[id] = Fault{Status: f.Status, Latency: f.Latency, IgnorePower: f.IgnorePower, Count: f.Count - 1}
		}
	}
	return f, true
}
