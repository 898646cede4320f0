package libvirt

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	golibvirt "libvirt.org/go/libvirt"
	"libvirt.org/go/libvirtxml"

	"github.com/paritylab/paritylab/lab/machines"
	"github.com/paritylab/paritylab/lab/redfish"
)

// Options configure a Backend. Conn and RunID are required.
type Options struct {
	// Conn must come from lab/libvirtd (domain events enabled).
	Conn *golibvirt.Connect
	// RunID selects the domains served: those whose paritylab metadata
	// names this run.
	RunID string
	// Logger receives what the backend does on its own (cold restarts).
	Logger logr.Logger
}

// Backend serves the hosts of one lab run.
type Backend struct {
	opts      Options
	callback  int
	lifecycle int
	// mu serialises changes per backend: a change reads a definition,
	// edits it and writes it back.
	mu sync.Mutex
	// powerOn starts a domain: machines.PowerOn; tests make it fail the
	// way QEMU does right after a restart.
	powerOn func(conn *golibvirt.Connect, uuid string) error
	// restartWaits are the pauses between attempts to start a domain
	// again in a cold restart.
	restartWaits []time.Duration
	// qemuRestarts counts, per domain UUID, the starts after its QEMU
	// died (qemuDied); guarded by mu.
	qemuRestarts map[string]int
	// powerActions is when each domain was last given a power action
	// through Reset; guarded by mu.
	powerActions map[string]time.Time
}

var _ redfish.Backend = (*Backend)(nil)

// New returns a backend and starts watching guest reboots.
func New(opts Options) (*Backend, error) {
	switch {
	case opts.Conn == nil:
		return nil, errors.New("redfish libvirt backend: Conn is required")
	case opts.RunID == "":
		return nil, errors.New("redfish libvirt backend: RunID is required")
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = logr.Discard()
	}
	b := &Backend{opts: opts, callback: -1, lifecycle: -1, powerOn: machines.PowerOn,
		restartWaits: []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second},
		qemuRestarts: map[string]int{}, powerActions: map[string]time.Time{}}
	id, err := opts.Conn.DomainEventRebootRegister(nil, b.onReboot)
	if err != nil {
		return nil, fmt.Errorf("watch guest reboots: %w", err)
	}
	b.callback = id
	if b.lifecycle, err = opts.Conn.DomainEventLifecycleRegister(nil, b.onLifecycle); err != nil {
		return nil, errors.Join(fmt.Errorf("watch domain stops: %w", err), b.Close())
	}
	return b, nil
}

// Close stops watching reboots and stops.
func (b *Backend) Close() error {
	var errs []error
	for _, id := range []*int{&b.callback, &b.lifecycle} {
		if *id >= 0 {
			errs = append(errs, b.opts.Conn.DomainEventDeregister(*id))
			*id = -1
		}
	}
	return errors.Join(errs...)
}

// Systems lists the run's domains, by name.
func (b *Backend) Systems(context.Context) ([]string, error) {
	doms, err := b.opts.Conn.ListAllDomains(0)
	if err != nil {
		return nil, fmt.Errorf("list domains: %w", err)
	}
	type named struct{ name, uuid string }
	var ours []named
	for i := range doms {
		if def, ok := b.ownDefinition(&doms[i]); ok {
			ours = append(ours, named{def.Name, def.UUID})
		}
		doms[i].Free()
	}
	sort.Slice(ours, func(i, j int) bool { return ours[i].name < ours[j].name })
	ids := make([]string, len(ours))
	for i, n := range ours {
		ids[i] = n.uuid
	}
	return ids, nil
}

func (b *Backend) ownDefinition(dom *golibvirt.Domain) (*libvirtxml.Domain, bool) {
	raw, err := dom.GetXMLDesc(golibvirt.DOMAIN_XML_INACTIVE)
	if err != nil {
		return nil, false
	}
	var def libvirtxml.Domain
	if def.Unmarshal(raw) != nil {
		return nil, false
	}
	meta, ok := machines.ParseMetadata(&def)
	return &def, ok && meta.RunID == b.opts.RunID
}

// Resolve maps a domain name to its UUID.
func (b *Backend) Resolve(_ context.Context, name string) (string, error) {
	dom, err := b.opts.Conn.LookupDomainByName(name)
	if err != nil {
		return "", fmt.Errorf("system %s: %w", name, redfish.ErrNotFound)
	}
	defer dom.Free()
	def, ok := b.ownDefinition(dom)
	if !ok {
		return "", fmt.Errorf("system %s: %w", name, redfish.ErrNotFound)
	}
	return def.UUID, nil
}

// host is a domain of the run with its definition and metadata.
type host struct {
	def  *libvirtxml.Domain
	meta machines.Metadata
	on   bool
}

func (b *Backend) load(id string) (*host, error) {
	dom, err := b.opts.Conn.LookupDomainByUUIDString(strings.ToLower(id))
	if err != nil {
		return nil, fmt.Errorf("system %s: %w", id, redfish.ErrNotFound)
	}
	defer dom.Free()
	def, ok := b.ownDefinition(dom)
	if !ok {
		return nil, fmt.Errorf("system %s: %w", id, redfish.ErrNotFound)
	}
	on, err := dom.IsActive()
	if err != nil {
		return nil, fmt.Errorf("state of %s: %w", def.Name, err)
	}
	meta, _ := machines.ParseMetadata(def)
	return &host{def: def, meta: meta, on: on}, nil
}

// save writes a changed definition (and its metadata) back.
func (b *Backend) save(h *host) error {
	if err := machines.SetMetadata(h.def, h.meta); err != nil {
		return err
	}
	return machines.Redefine(b.opts.Conn, h.def)
}
