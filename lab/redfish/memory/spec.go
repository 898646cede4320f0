package memory

import (
	"crypto/sha1" //nolint:gosec // a name-based UUID (version 5) is SHA-1 by definition
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"

	"github.com/paritylab/paritylab/lab/redfish"
)

// Defaults of a SystemSpec: a small x86_64 server with one disk the size
// of a lab host's.
const (
	DefaultCPUs      = 2
	DefaultMemoryGiB = 4
	DefaultArch      = "x86_64"
	DefaultDiskGiB   = 120
)

// SystemSpec describes one system. Only Name is required; the JSON form is
// what `paritylab redfish serve --memory-systems` reads.
type SystemSpec struct {
	// Name is the system's name (what the libvirt backend calls the
	// domain name); requests may use it instead of the ID.
	Name string `json:"name"`
	// UUID is the system ID and SMBIOS UUID. Default: derived from Name,
	// so the same spec gives the same UUID in every run.
	UUID string `json:"uuid,omitempty"`
	// CPUs is the processor count. Default 2.
	CPUs int `json:"cpus,omitempty"`
	// MemoryGiB is the memory size. Default 4.
	MemoryGiB float64 `json:"memoryGiB,omitempty"`
	// Arch is the CPU architecture as libvirt and uname name it
	// (x86_64, aarch64, ...). Default x86_64.
	Arch string `json:"arch,omitempty"`
	// CPUModel is the processor model. Default: none reported.
	CPUModel string `json:"cpuModel,omitempty"`
	// Disks are the disk drives, on the virtio bus as vda, vdb, ... like
	// a lab host's. Default: one of 120 GiB.
	Disks []DiskSpec `json:"disks,omitempty"`
	// MACs are the NIC addresses. Default: one, 52:54:00:xx:xx:xx, the
	// first such address no other system of the backend uses.
	MACs []string `json:"macs,omitempty"`
	// BootMode is UEFI or Legacy. Default UEFI.
	BootMode string `json:"bootMode,omitempty"`
	// PowerState is On or Off at start. Default Off, like a freshly
	// defined VM.
	PowerState string `json:"powerState,omitempty"`
}

// DiskSpec describes one disk of a system.
type DiskSpec struct {
	// SizeGiB is the capacity, in GiB (2^30 bytes); required.
	SizeGiB int64 `json:"sizeGiB"`
	// SSD marks a non-rotating disk. Default: rotating (HDD).
	SSD bool `json:"ssd,omitempty"`
}

// Generate describes n systems named <prefix>-0 ... <prefix>-(n-1), with
// UUIDs derived from the names and MACs 52:54:00:xx:xx:xx from the index:
// the same call gives the same systems in every run.
func Generate(prefix string, n int) []SystemSpec {
	out := make([]SystemSpec, n)
	for i := range out {
		name := fmt.Sprintf("%s-%d", prefix, i)
		out[i] = SystemSpec{Name: name, UUID: NameUUID(name), MACs: []string{indexMAC(i)}}
	}
	return out
}

// LoadSpecs reads a JSON array of SystemSpec.
func LoadSpecs(path string) ([]SystemSpec, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read system specs: %w", err)
	}
	defer f.Close()
	var specs []SystemSpec
	dec := json.NewDecoder(f)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&specs); err != nil {
		return nil, fmt.Errorf("parse system specs %s (want a JSON array of {name, uuid, cpus, memoryGiB, arch, cpuModel, disks: [{sizeGiB, ssd}], macs, bootMode, powerState}): %w", path, err)
	}
	return specs, nil
}

// uuidNamespace is the namespace of the name-based UUIDs of this package.
var uuidNamespace = [16]byte{0x6f, 0x1c, 0x58, 0x0e, 0x2b, 0x7d, 0x4e, 0x3a, 0x9c, 0x41, 0x0d, 0x52, 0x8a, 0x66, 0x13, 0x20}

// NameUUID is the version 5 UUID of a system name.
func NameUUID(name string) string {
	h := sha1.New() //nolint:gosec // see import
	h.Write(uuidNamespace[:])
	h.Write([]byte(name))
	var b [16]byte
	copy(b[:], h.Sum(nil))
	b[6] = b[6]&0x0f | 0x50
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func indexMAC(i int) string {
	return fmt.Sprintf("52:54:00:%02x:%02x:%02x", byte(i>>16), byte(i>>8), byte(i))
}

// normalize fills the defaults of the spec, but for MACs, and checks it.
func (s SystemSpec) normalize() (SystemSpec, error) {
	if s.Name == "" {
		return s, errors.New("name is required")
	}
	if s.UUID == "" {
		s.UUID = NameUUID(s.Name)
	}
	if !validUUID(s.UUID) {
		return s, fmt.Errorf("uuid %q is not a UUID (8-4-4-4-12 hex digits)", s.UUID)
	}
	s.UUID = strings.ToLower(s.UUID)
	if s.CPUs == 0 {
		s.CPUs = DefaultCPUs
	}
	if s.MemoryGiB == 0 {
		s.MemoryGiB = DefaultMemoryGiB
	}
	if s.CPUs < 0 || s.MemoryGiB < 0 {
		return s, errors.New("cpus and memoryGiB must be positive")
	}
	s, err := s.normalizeHardware()
	if err != nil {
		return s, err
	}
	return s.normalizeStates()
}

// normalizeHardware fills in and checks the architecture and the disks.
// Both are checked so that a typo (x86-64 for x86_64) fails at start
// rather than leaving every system without an architecture.
func (s SystemSpec) normalizeHardware() (SystemSpec, error) {
	if s.Arch == "" {
		s.Arch = DefaultArch
	}
	if _, ok := redfish.CPUArchitecture(s.Arch); !ok {
		return s, fmt.Errorf("arch %q has no Redfish names; name it as libvirt and uname do, e.g. x86_64 or aarch64", s.Arch)
	}
	// A copy: the caller's slice stays the caller's.
	s.Disks = slices.Clone(s.Disks)
	if len(s.Disks) == 0 {
		s.Disks = []DiskSpec{{SizeGiB: DefaultDiskGiB}}
	}
	for i, d := range s.Disks {
		if d.SizeGiB <= 0 {
			return s, fmt.Errorf("disk %d: sizeGiB must be positive, got %d", i, d.SizeGiB)
		}
	}
	return s, nil
}

func (s SystemSpec) normalizeStates() (SystemSpec, error) {
	macs := make([]string, len(s.MACs))
	for j, m := range s.MACs {
		hw, err := net.ParseMAC(m)
		if err != nil || len(hw) != 6 {
			return s, fmt.Errorf("mac %q is not an Ethernet MAC address", m)
		}
		macs[j] = hw.String()
	}
	s.MACs = macs
	switch s.BootMode {
	case "":
		s.BootMode = redfish.BootModeUEFI
	case redfish.BootModeUEFI, redfish.BootModeLegacy:
	default:
		return s, fmt.Errorf("bootMode %q is not UEFI or Legacy", s.BootMode)
	}
	switch s.PowerState {
	case "":
		s.PowerState = redfish.PowerOff
	case redfish.PowerOn, redfish.PowerOff:
	default:
		return s, fmt.Errorf("powerState %q is not On or Off", s.PowerState)
	}
	return s, nil
}

func validUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, r := range s {
		switch i {
		case 8, 13, 18, 23:
			if r != '-' {
				return false
			}
		default:
			if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
				return false
			}
		}
	}
	return true
}
