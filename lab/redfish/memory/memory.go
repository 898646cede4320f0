package memory

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/paritylab/paritylab/lab/redfish"
)

// Options configure a Backend.
type Options struct {
	// Systems to serve, in this order. Default: none.
	Systems []SystemSpec
}

// Backend serves systems that exist only in memory. Safe for concurrent
// use.
type Backend struct {
	mu     sync.RWMutex
	order  []string           // IDs, in the order of Options.Systems
	byID   map[string]*system // by ID (the UUID)
	byName map[string]string  // name -> ID
}

var _ redfish.Backend = (*Backend)(nil)

// New makes a Backend of the given systems. Names, UUIDs and MACs must be
// unique.
func New(opts Options) (*Backend, error) {
	specs := make([]SystemSpec, len(opts.Systems))
	macs := map[string]string{} // MAC -> system name
	for i, spec := range opts.Systems {
		spec, err := spec.normalize()
		if err != nil {
			return nil, fmt.Errorf("system %d (%q): %w", i, spec.Name, err)
		}
		for _, m := range spec.MACs {
			if other, dup := macs[m]; dup {
				return nil, fmt.Errorf("system %d (%q): mac %s is also used by %q", i, spec.Name, m, other)
			}
			macs[m] = spec.Name
		}
		specs[i] = spec
	}
	b := &Backend{byID: map[string]*system{}, byName: map[string]string{}}
	next := 0
	for i, spec := range specs {
		if len(spec.MACs) == 0 {
			var mac string
			mac, next = freeMAC(macs, next)
			spec.MACs = []string{mac}
			macs[mac] = spec.Name
		}
		if err := b.add(spec); err != nil {
			return nil, fmt.Errorf("system %d (%q): %w", i, spec.Name, err)
		}
	}
	return b, nil
}

// freeMAC returns the first 52:54:00 address from index i on that is not
// taken, and the index to search from next time.
func freeMAC(taken map[string]string, i int) (string, int) {
	for ; ; i++ {
		if m := indexMAC(i); taken[m] == "" {
			return m, i + 1
		}
	}
}

func (b *Backend) add(spec SystemSpec) error {
	if _, dup := b.byName[spec.Name]; dup {
		return fmt.Errorf("name %q is used twice", spec.Name)
	}
	if _, dup := b.byID[spec.UUID]; dup {
		return fmt.Errorf("uuid %s is used twice", spec.UUID)
	}
	b.order = append(b.order, spec.UUID)
	b.byID[spec.UUID] = newSystem(spec)
	b.byName[spec.Name] = spec.UUID
	return nil
}

// Systems lists the IDs in the order of Options.Systems.
func (b *Backend) Systems(context.Context) ([]string, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return slices.Clone(b.order), nil
}

// System returns a copy of the state of one system.
func (b *Backend) System(_ context.Context, id string) (*redfish.System, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	s, err := b.get(id)
	if err != nil {
		return nil, err
	}
	return s.view(), nil
}

// Resolve maps a system name to its ID.
func (b *Backend) Resolve(_ context.Context, name string) (string, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	id, ok := b.byName[name]
	if !ok {
		return "", fmt.Errorf("system named %q: %w", name, redfish.ErrNotFound)
	}
	return id, nil
}

// Reset performs a power action; see system.reset for the semantics.
func (b *Backend) Reset(_ context.Context, id string, action redfish.ResetType) error {
	return b.update(id, func(s *system) error { return s.reset(action) })
}

// Freeze hangs a system that is on (a hang fault): it stays On, ignores
// GracefulShutdown, and runs again after a power-off and on.
func (b *Backend) Freeze(_ context.Context, id string) error {
	return b.update(id, func(s *system) error {
		s.frozen = s.power == redfish.PowerOn
		return nil
	})
}

// Frozen tells whether a system hangs (Freeze), for tests.
func (b *Backend) Frozen(id string) (bool, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	s, err := b.get(id)
	if err != nil {
		return false, err
	}
	return s.frozen, nil
}

// SetBoot changes the boot override.
func (b *Backend) SetBoot(_ context.Context, id string, p redfish.BootPatch) error {
	return b.update(id, func(s *system) error { return s.setBoot(p) })
}

// InsertMedia attaches an image to an empty device.
func (b *Backend) InsertMedia(_ context.Context, id, device string, image redfish.Image) error {
	return b.update(id, func(s *system) error { return s.insert(device, image) })
}

// EjectMedia empties a device.
func (b *Backend) EjectMedia(_ context.Context, id, device string) error {
	return b.update(id, func(s *system) error { return s.eject(device) })
}

// BootHistory lists the boot targets the system booted from, one per
// power-on or restart, oldest first: what a test checks to see that a
// one-time override was honoured once.
func (b *Backend) BootHistory(id string) ([]string, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	s, err := b.get(id)
	if err != nil {
		return nil, err
	}
	return slices.Clone(s.boots), nil
}

// Attached returns the image a device holds, with the local file the
// server handed over.
func (b *Backend) Attached(id, device string) (redfish.Image, bool, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	s, err := b.get(id)
	if err != nil {
		return redfish.Image{}, false, err
	}
	m, ok := s.media[device]
	if !ok {
		return redfish.Image{}, false, fmt.Errorf("device %q of system %s: %w", device, id, redfish.ErrNotFound)
	}
	return m.image, m.inserted, nil
}

// NMIs counts the NMIs the system received.
func (b *Backend) NMIs(id string) (int, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	s, err := b.get(id)
	if err != nil {
		return 0, err
	}
	return s.nmis, nil
}

func (b *Backend) get(id string) (*system, error) {
	s, ok := b.byID[id]
	if !ok {
		return nil, fmt.Errorf("system %q: %w", id, redfish.ErrNotFound)
	}
	return s, nil
}

func (b *Backend) update(id string, f func(*system) error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	s, err := b.get(id)
	if err != nil {
		return err
	}
	return f(s)
}

// keys returns the sorted keys of a map, for stable messages.
func keys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
