package libvirt

import (
	"slices"
	"time"

	golibvirt "libvirt.org/go/libvirt"
	"libvirt.org/go/libvirtxml"

	"github.com/paritylab/paritylab/lab/machines"
	"github.com/paritylab/paritylab/lab/redfish"
)

// onReboot runs on libvirt's event loop when a guest reboots. It must not
// block: the work goes to a goroutine.
func (b *Backend) onReboot(_ *golibvirt.Connect, dom *golibvirt.Domain) {
	uuid, err := dom.GetUUIDString()
	if err != nil {
		return
	}
	go b.rebooted(uuid)
}

// onLifecycle logs a domain of the run that stopped other than by a power
// off (a destroy): a guest that powered itself off, or a QEMU that crashed
// or failed. A server that turns itself off makes the bare-metal operator
// power it on a minute later, a delay that shows in the parity durations;
// the log says which it was. It runs on libvirt's event loop and must not
// block.
func (b *Backend) onLifecycle(_ *golibvirt.Connect, dom *golibvirt.Domain, e *golibvirt.DomainEventLifecycle) {
	if e.Event != golibvirt.DOMAIN_EVENT_STOPPED || golibvirt.DomainEventStoppedDetailType(e.Detail) == golibvirt.DOMAIN_EVENT_STOPPED_DESTROYED {
		return
	}
	if def, ok := b.ownDefinition(dom); ok {
		b.opts.Logger.Info("Domain stopped by itself", "domain", def.Name, "event", e.String())
	}
}

// rebooted restarts a domain cold when its next boot must differ from the
// hardware it runs with: a pending "once" override, or a boot order or
// firmware changed since it started.
func (b *Backend) rebooted(uuid string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	h, err := b.load(uuid)
	if err != nil || !h.on {
		return
	}
	live, err := liveDefinition(b.opts.Conn, uuid)
	if err != nil {
		return
	}
	pending := h.meta.BootEnabled == redfish.BootOnce
	if !pending && sameBoot(live, h.def) {
		return
	}
	b.opts.Logger.Info("Guest rebooted with changed boot settings; restarting it cold", "domain", h.def.Name)
	if err := machines.PowerOff(b.opts.Conn, uuid); err != nil {
		b.opts.Logger.Error(err, "Cold restart failed", "domain", h.def.Name)
		return
	}
	b.bootAgain(h)
}

// bootAgain starts a domain that was just stopped. QEMU sometimes fails to
// start it right away (the stopped process still holds the disk), which
// left the server off: a real server's reboot does not fail so, and a
// bare-metal operator would then power it on itself, at random. It tries
// again after a pause, a few times.
func (b *Backend) bootAgain(h *host) {
	err := b.boot(h)
	for _, wait := range b.restartWaits {
		if err == nil {
			return
		}
		b.opts.Logger.Info("Starting the domain again after a cold restart failed; retrying", "domain", h.def.Name, "error", err.Error(), "in", wait)
		time.Sleep(wait)
		err = b.boot(h)
	}
	if err != nil {
		b.opts.Logger.Error(err, "Cold restart failed", "domain", h.def.Name)
	}
}

func liveDefinition(conn *golibvirt.Connect, uuid string) (*libvirtxml.Domain, error) {
	dom, err := conn.LookupDomainByUUIDString(uuid)
	if err != nil {
		return nil, err
	}
	defer dom.Free()
	raw, err := dom.GetXMLDesc(0)
	if err != nil {
		return nil, err
	}
	var def libvirtxml.Domain
	return &def, def.Unmarshal(raw)
}

func sameBoot(a, b *libvirtxml.Domain) bool {
	return machines.FirmwareOf(a) == machines.FirmwareOf(b) && slices.Equal(machines.BootOrder(a), machines.BootOrder(b))
}
