// Package binaries finds the control-plane programs that `make deps` builds
// from Go modules (lab/binaries/modules) into a version-keyed cache outside the
// clone. No prebuilt binary is ever downloaded.
//
// It imports nothing from the rest of the lab.
package binaries
