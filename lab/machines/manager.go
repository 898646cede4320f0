package machines

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/validation"
	"libvirt.org/go/libvirt"

	"github.com/paritylab/paritylab/lab/process"
	"github.com/paritylab/paritylab/lab/state"
)

// DataRoot holds each run's files that QEMU must reach (it runs as
// libvirt-qemu and cannot enter /root): /var/lib/paritylab/<run>.
const DataRoot = "/var/lib/paritylab"

// Options configure a Manager. Conn, RunID and SerialLogDir are required.
type Options struct {
	// Conn is the libvirt connection (lab/libvirtd).
	Conn *libvirt.Connect
	// RunID prefixes every domain and pool name.
	RunID string
	// DataDir holds the storage pool and other files QEMU reads. Default
	// DataRoot/<RunID>; created, and removed by Close.
	DataDir string
	// SerialLogDir receives <host>.log with each host's serial console.
	SerialLogDir string
	// Accel is how guests run. Default TCG; ProbeAccel decides.
	Accel Accel
	// Owner identifies the run in domain metadata, for orphan reaping.
	Owner Metadata
	// Tracker records pools and domains. Default state.Discard.
	Tracker state.Tracker
	// Logger receives progress. Default discard.
	Logger logr.Logger
}

// HostSpec describes one host. Zero values get small lab defaults.
type HostSpec struct {
	// Name is the host's name within the run (a DNS label).
	Name string
	// VCPUs, default 1.
	VCPUs uint
	// MemoryMiB, default 1024.
	MemoryMiB uint
	// DiskGiB is the (sparse) disk size, default 20.
	DiskGiB uint64
	// Firmware, default BIOS.
	Firmware Firmware
	// MAC, default MACFor(Name).
	MAC string
	// Subnet of the host's user-mode network (a /24); default one per
	// host of the run, 10.100.<n>.0 for the run's n-th host.
	Subnet string
}

// Host is a defined lab host.
type Host struct {
	Spec HostSpec
	// Domain is the libvirt domain name, <run>-<name>.
	Domain string
	// UUID is the domain (and SMBIOS system) UUID.
	UUID string
	// SerialLog is the serial console log file.
	SerialLog string
	// Disk is the path of the disk volume.
	Disk string
}

// Manager owns the hosts of one run.
type Manager struct {
	opts     Options
	poolName string
	pool     *libvirt.StoragePool

	mu      sync.Mutex
	hosts   map[string]*Host
	defined int // hosts ever defined, for subnets
}

// New creates the run's data dir and storage pool.
func New(opts Options) (_ *Manager, retErr error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	m := &Manager{opts: opts, poolName: opts.RunID + "-pool", hosts: map[string]*Host{}}
	if err := os.MkdirAll(opts.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("create machine data dir: %w", err)
	}
	// 0755 regardless of umask: QEMU must traverse it.
	if err := os.Chmod(opts.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("chmod machine data dir: %w", err)
	}
	if err := opts.Tracker.Track(state.DirResource(opts.DataDir)); err != nil {
		return nil, err
	}
	if err := writeRunRecord(opts.DataDir, opts.Owner); err != nil {
		return nil, err
	}
	poolPath := filepath.Join(opts.DataDir, "pool")
	if err := opts.Tracker.Track(poolResource(m.poolName, poolPath)); err != nil {
		return nil, err
	}
	pool, err := createPool(opts.Conn, m.poolName, poolPath)
	m.pool = pool
	if err != nil {
		return nil, errors.Join(err, m.Close(context.Background()))
	}
	return m, nil
}

func (o *Options) defaults() error {
	switch {
	case o.Conn == nil:
		return errors.New("machines: Conn is required")
	case o.RunID == "":
		return errors.New("machines: RunID is required")
	case o.SerialLogDir == "":
		return errors.New("machines: SerialLogDir is required")
	}
	if o.DataDir == "" {
		o.DataDir = filepath.Join(DataRoot, o.RunID)
	}
	if o.Accel == "" {
		o.Accel = AccelTCG
	}
	if o.Tracker == nil {
		o.Tracker = state.Discard
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	o.Owner.RunID = o.RunID
	if o.Owner.OwnerPID == 0 {
		// Without an owner a reaper could not tell a live run's domains
		// from a dead one's; this process owns them then.
		id, err := process.IdentityOf("machines", os.Getpid())
		if err != nil {
			return err
		}
		o.Owner.OwnerPID, o.Owner.OwnerStartTicks = id.PID, id.StartTicks
	}
	return nil
}

// DataDir is the run's directory QEMU can read (media goes here too).
func (m *Manager) DataDir() string { return m.opts.DataDir }

// Accel is how this manager's guests run.
func (m *Manager) Accel() Accel { return m.opts.Accel }

func (s *HostSpec) defaults() error {
	if errs := validation.IsDNS1123Label(s.Name); len(errs) > 0 {
		return fmt.Errorf("host name %q: %v", s.Name, errs)
	}
	if s.VCPUs == 0 {
		s.VCPUs = 1
	}
	if s.MemoryMiB == 0 {
		s.MemoryMiB = 1024
	}
	if s.DiskGiB == 0 {
		s.DiskGiB = 20
	}
	if s.Firmware == "" {
		s.Firmware = FirmwareBIOS
	}
	if s.Firmware != FirmwareBIOS && s.Firmware != FirmwareUEFI {
		return fmt.Errorf("host %s: firmware %q is neither %q nor %q", s.Name, s.Firmware, FirmwareBIOS, FirmwareUEFI)
	}
	if s.MAC == "" {
		s.MAC = MACFor(s.Name)
	}
	return nil
}

// Define creates a host's disk and its domain, powered off.
func (m *Manager) Define(spec HostSpec) (*Host, error) {
	if err := spec.defaults(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, dup := m.hosts[spec.Name]; dup {
		return nil, fmt.Errorf("host %s already defined", spec.Name)
	}
	if spec.Subnet == "" {
		spec.Subnet = fmt.Sprintf("10.100.%d.0", m.defined%250)
	}
	m.defined++
	h := &Host{Spec: spec, Domain: m.opts.RunID + "-" + spec.Name,
		SerialLog: filepath.Join(m.opts.SerialLogDir, spec.Name+".log")}
	disk, err := createVolume(m.pool, h.Domain+".qcow2", spec.DiskGiB)
	if err != nil {
		return nil, err
	}
	h.Disk = disk
	if err := m.defineDomain(h); err != nil {
		return nil, err
	}
	m.hosts[spec.Name] = h
	m.opts.Logger.V(1).Info("Host defined", "host", spec.Name, "domain", h.Domain, "uuid", h.UUID)
	return h, nil
}

func (m *Manager) defineDomain(h *Host) error {
	if err := os.MkdirAll(m.opts.SerialLogDir, 0o750); err != nil {
		return fmt.Errorf("create serial log dir: %w", err)
	}
	meta := m.opts.Owner
	meta.Host = h.Spec.Name
	def, err := NewDomain(DomainSpec{
		Name: h.Domain, Accel: m.opts.Accel, VCPUs: h.Spec.VCPUs, MemoryMiB: h.Spec.MemoryMiB,
		Firmware: h.Spec.Firmware, DiskPath: h.Disk, SerialLog: h.SerialLog, MAC: h.Spec.MAC, Subnet: h.Spec.Subnet,
		Serial: h.Domain, Metadata: meta,
	})
	if err != nil {
		return err
	}
	raw, err := def.Marshal()
	if err != nil {
		return fmt.Errorf("encode domain %s: %w", h.Domain, err)
	}
	dom, err := m.opts.Conn.DomainDefineXML(raw)
	if err != nil {
		return fmt.Errorf("define domain %s: %w", h.Domain, err)
	}
	defer dom.Free()
	if h.UUID, err = dom.GetUUIDString(); err != nil {
		return fmt.Errorf("domain %s UUID: %w", h.Domain, err)
	}
	return m.opts.Tracker.Track(domainResource(h.UUID, h.Domain))
}

// Hosts returns the defined hosts by name.
func (m *Manager) Hosts() []*Host {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*Host, 0, len(m.hosts))
	for _, h := range m.hosts {
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Spec.Name < out[j].Spec.Name })
	return out
}

// Host returns a defined host.
func (m *Manager) Host(name string) (*Host, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	h, ok := m.hosts[name]
	if !ok {
		return nil, fmt.Errorf("no host %s", name)
	}
	return h, nil
}

// Remove powers a host off and removes its domain and disk.
func (m *Manager) Remove(name string) error {
	m.mu.Lock()
	h, ok := m.hosts[name]
	delete(m.hosts, name)
	m.mu.Unlock()
	if !ok {
		return fmt.Errorf("no host %s", name)
	}
	// libvirt's log of the domain says why QEMU stopped (a guest that
	// crashed, a QEMU that died): keep it with the serial log before the
	// domain and its log go.
	keepQEMULog(h.Domain, filepath.Join(m.opts.SerialLogDir, name+".qemu.log"))
	if err := removeDomain(m.opts.Conn, h.UUID); err != nil {
		return err
	}
	if vol, err := m.pool.LookupStorageVolByName(h.Domain + ".qcow2"); err == nil {
		defer vol.Free()
		if err := vol.Delete(0); err != nil {
			return fmt.Errorf("delete disk of %s: %w", name, err)
		}
	}
	return m.opts.Tracker.Forget(domainResource(h.UUID, h.Domain))
}

// Close removes every host, the pool and the data dir. Safe to call twice.
func (m *Manager) Close(context.Context) error {
	var errs []error
	for _, h := range m.Hosts() {
		errs = append(errs, m.Remove(h.Spec.Name))
	}
	if m.pool != nil {
		m.pool.Free()
		m.pool = nil
	}
	poolPath := filepath.Join(m.opts.DataDir, "pool")
	if err := removePool(m.opts.Conn, m.poolName, poolPath); err != nil {
		errs = append(errs, err)
	} else {
		errs = append(errs, m.opts.Tracker.Forget(poolResource(m.poolName, poolPath)))
	}
	if err := os.RemoveAll(m.opts.DataDir); err != nil {
		errs = append(errs, fmt.Errorf("remove machine data dir: %w", err))
	} else {
		errs = append(errs, m.opts.Tracker.Forget(state.DirResource(m.opts.DataDir)))
	}
	return errors.Join(errs...)
}

// removeDomain destroys (if running) and undefines a domain with its UEFI
// variables and any saved state; a missing domain is not an error.
func removeDomain(conn *libvirt.Connect, uuid string) error {
	dom, err := conn.LookupDomainByUUIDString(uuid)
	if isNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("look up domain %s: %w", uuid, err)
	}
	defer dom.Free()
	name, _ := dom.GetName()
	if active, _ := dom.IsActive(); active {
		// It may stop by itself between the check and the destroy.
		if err := dom.Destroy(); err != nil && !isNotFound(err) && !isNotRunning(err) {
			return fmt.Errorf("destroy domain %s: %w", uuid, err)
		}
	}
	flags := libvirt.DOMAIN_UNDEFINE_NVRAM | libvirt.DOMAIN_UNDEFINE_MANAGED_SAVE |
		libvirt.DOMAIN_UNDEFINE_SNAPSHOTS_METADATA | libvirt.DOMAIN_UNDEFINE_CHECKPOINTS_METADATA
	if err := dom.UndefineFlags(flags); err != nil && !isNotFound(err) {
		return fmt.Errorf("undefine domain %s: %w", uuid, err)
	}
	return removeQEMULog(name)
}

// qemuLogDir is where the system libvirtd's QEMU driver writes one log per
// domain (its command line, QEMU's stderr); it outlives the domain.
const qemuLogDir = "/var/log/libvirt/qemu"

// keepQEMULog copies the events of libvirt's log of a domain (starts,
// stops with their reasons, QEMU's own messages) to dst, best effort: a
// missing log loses a diagnosis, not the teardown. The command lines are
// left out: they are long and say nothing the domain XML does not.
func keepQEMULog(domain, dst string) {
	raw, err := os.ReadFile(filepath.Join(qemuLogDir, domain+".log"))
	if err != nil {
		return
	}
	_ = os.WriteFile(dst, qemuLogEvents(raw), 0o644)
}

func qemuLogEvents(raw []byte) []byte {
	var kept []byte
	for _, line := range bytes.SplitAfter(raw, []byte("\n")) {
		if qemuLogEvent.Match(line) {
			kept = append(kept, line...)
		}
	}
	return kept
}

// qemuLogEvent is a line of libvirt's domain log that is not part of a
// command line: libvirt's timestamped lines and QEMU's messages.
var qemuLogEvent = regexp.MustCompile(`^(\d{4}-\d\d-\d\d[ T]|qemu-system-)`)

// removeQEMULog removes the log libvirt kept for a domain of ours, with
// its rotations, so that removed domains leave no files behind.
func removeQEMULog(domain string) error {
	if domain == "" {
		return nil
	}
	logs, _ := filepath.Glob(filepath.Join(qemuLogDir, domain+".log*"))
	var errs []error
	for _, l := range logs {
		if err := os.Remove(l); err != nil && !os.IsNotExist(err) {
			errs = append(errs, fmt.Errorf("remove QEMU log of domain %s: %w", domain, err))
		}
	}
	return errors.Join(errs...)
}
