package redfish

import (
	"fmt"
	"slices"
	"strings"
)

// BootModes a system may boot in.
var BootModes = []string{BootModeUEFI, BootModeLegacy}

// BootEnablements of a boot override.
var BootEnablements = []string{BootDisabled, BootOnce, BootContinuous}

// BootTargetsFor lists the override targets of a boot mode: UEFI adds HTTP
// boot.
func BootTargetsFor(mode string) []string {
	t := []string{BootTargetNone, BootTargetPxe, BootTargetCd, BootTargetHdd}
	if mode == BootModeUEFI {
		t = append(t, BootTargetUefiHTTP)
	}
	return t
}

// ApplyBootPatch returns boot with the patch's non-empty fields applied, or
// an ErrInvalid error naming what is wrong with the result (a target is
// checked against the resulting mode, so switching to Legacy with UefiHttp
// set is refused). Backends share it so they agree on the semantics.
func ApplyBootPatch(boot Boot, p BootPatch) (Boot, error) {
	if p.Mode != "" {
		boot.Mode = p.Mode
	}
	if p.Enabled != "" {
		boot.Enabled = p.Enabled
	}
	if p.Target != "" {
		boot.Target = p.Target
	}
	if !slices.Contains(BootModes, boot.Mode) {
		return boot, fmt.Errorf("%w: boot mode %q is not one of %s", ErrInvalid, boot.Mode, strings.Join(BootModes, ", "))
	}
	if !slices.Contains(BootEnablements, boot.Enabled) {
		return boot, fmt.Errorf("%w: boot override enablement %q is not one of %s", ErrInvalid, boot.Enabled, strings.Join(BootEnablements, ", "))
	}
	if targets := BootTargetsFor(boot.Mode); !slices.Contains(targets, boot.Target) {
		return boot, fmt.Errorf("%w: boot target %q is not available in %s mode (available: %s)", ErrInvalid, boot.Target, boot.Mode, strings.Join(targets, ", "))
	}
	return boot, nil
}
