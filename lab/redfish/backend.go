package redfish

import (
	"context"
	"errors"
)

// Backend is where systems live. Every method takes the system ID (the
// libvirt domain UUID for the libvirt backend) and returns ErrNotFound for an
// unknown one. Implementations must be safe for concurrent use.
type Backend interface {
	// Systems lists the IDs of every system served, in a stable order.
	Systems(ctx context.Context) ([]string, error)
	// System returns the current state of one system.
	System(ctx context.Context, id string) (*System, error)
	// Resolve maps a system name (e.g. the libvirt domain name) to its ID,
	// for the name-to-UUID alias Ironic users rely on.
	Resolve(ctx context.Context, name string) (string, error)
	// Reset performs a power action.
	Reset(ctx context.Context, id string, action ResetType) error
	// SetBoot changes the boot override; fields left empty stay as they
	// are. It returns ErrInvalid (wrapped, with a message) for a target or
	// mode the system does not support.
	SetBoot(ctx context.Context, id string, boot BootPatch) error
	// InsertMedia attaches a local image file read-only to a virtual media
	// device ("Cd"); the server downloaded it from the client's URL.
	InsertMedia(ctx context.Context, id, device string, image Image) error
	// EjectMedia detaches whatever the device holds; ejecting an empty
	// device is not an error.
	EjectMedia(ctx context.Context, id, device string) error
}

// Freezer is a Backend that can freeze a running system's guest in place,
// leaving it powered on (hang faults). A power-off ends the freeze; the
// next power-on runs the guest again.
type Freezer interface {
	// Freeze stops a running system's CPUs; a system that is off is left
	// alone.
	Freeze(ctx context.Context, id string) error
}

// Errors a Backend returns (wrapped) so the server can answer with the right
// Redfish status and message.
var (
	// ErrNotFound: no such system or device (HTTP 404).
	ErrNotFound = errors.New("not found")
	// ErrInvalid: the request is well-formed but not acceptable for this
	// system (HTTP 400), e.g. a boot target it does not support.
	ErrInvalid = errors.New("invalid request")
	// ErrConflict: the system cannot do it in its current state (HTTP 409),
	// e.g. InsertMedia while media is inserted.
	ErrConflict = errors.New("conflict")
)

// ResetType is a ComputerSystem.Reset action.
type ResetType string

// The reset types every system supports.
const (
	ResetOn               ResetType = "On"
	ResetForceOn          ResetType = "ForceOn"
	ResetForceOff         ResetType = "ForceOff"
	ResetGracefulShutdown ResetType = "GracefulShutdown"
	ResetGracefulRestart  ResetType = "GracefulRestart"
	ResetForceRestart     ResetType = "ForceRestart"
	ResetNmi              ResetType = "Nmi"
)

// ResetTypes lists every ResetType in the order the service advertises them.
var ResetTypes = []ResetType{ResetOn, ResetForceOff, ResetGracefulShutdown, ResetGracefulRestart, ResetForceRestart, ResetNmi, ResetForceOn}

// PowerState values.
const (
	PowerOn  = "On"
	PowerOff = "Off"
)

// Boot override targets, enablement and modes.
const (
	BootTargetNone     = "None"
	BootTargetPxe      = "Pxe"
	BootTargetCd       = "Cd"
	BootTargetHdd      = "Hdd"
	BootTargetUefiHTTP = "UefiHttp"

	BootDisabled   = "Disabled"
	BootOnce       = "Once"
	BootContinuous = "Continuous"

	BootModeUEFI   = "UEFI"
	BootModeLegacy = "Legacy"
)

// Virtual media devices.
const (
	DeviceCd     = "Cd"
	DeviceFloppy = "Floppy"
)

// System is the state of one system, as a Backend reports it.
type System struct {
	// ID is the Redfish resource ID (the domain UUID for libvirt).
	ID string
	// UUID is the SMBIOS system UUID.
	UUID string
	// Name is the backend's name for it (the libvirt domain name).
	Name string
	// PowerState is PowerOn or PowerOff.
	PowerState string
	// Boot is the current boot override.
	Boot Boot
	// BootTargets are the override targets this system supports in its
	// current boot mode.
	BootTargets []string
	// BootModes are the supported boot modes.
	BootModes []string
	// Processors is the number of CPUs (logical: one per vCPU).
	Processors int
	// Arch is the CPU architecture as libvirt and uname name it (x86_64,
	// aarch64, ...); empty when unknown. See CPUArchitecture.
	Arch string
	// CPUModel is the processor model; empty when unknown.
	CPUModel string
	// MemoryGiB is the total memory.
	MemoryGiB float64
	// NICs are the network interfaces.
	NICs []NIC
	// Disks are the disk drives (not virtual media), in bus order.
	Disks []Disk
	// Media are the virtual media devices, by device ID.
	Media map[string]Media
}

// Boot is a boot override.
type Boot struct {
	Target  string // BootTarget*
	Enabled string // BootDisabled, BootOnce or BootContinuous
	Mode    string // BootModeUEFI or BootModeLegacy
}

// BootPatch changes a boot override; empty fields are left as they are.
type BootPatch struct {
	Target  string
	Enabled string
	Mode    string
}

// NIC is a network interface.
type NIC struct {
	ID  string
	MAC string
}

// Media is the state of one virtual media device.
type Media struct {
	// MediaTypes the device accepts, e.g. ["CD", "DVD"].
	MediaTypes []string
	// Inserted says whether an image is attached.
	Inserted bool
	// Image is the URL the client inserted (empty when ejected).
	Image string
	// WriteProtected is true for read-only media.
	WriteProtected bool
}

// Image is a downloaded image to attach.
type Image struct {
	// URL is what the client asked for.
	URL string
	// Path is the local file holding its content.
	Path string
	// WriteProtected asks for a read-only attachment (the default).
	WriteProtected bool
}
