package workload

import (
	"crypto/sha256"
	"encoding/hex"

	configv1 "github.com/openshift/api/config/v1"
)

// LabRegistry is where the lab's stand-in release images "live". The
// .invalid domain makes plain that nothing is ever pulled from it.
const LabRegistry = "registry.paritylab.invalid/openshift/release"

// LabRelease is the lab's stand-in for an OpenShift release: the version and
// an image pulled by a digest derived from the version, so the same version
// always has the same image, and the simulated cluster-version operator
// treats it as a verifiable release.
func LabRelease(version string) configv1.Release {
	sum := sha256.Sum256([]byte("paritylab release " + version))
	return configv1.Release{Version: version, Image: LabRegistry + "@sha256:" + hex.EncodeToString(sum[:])}
}
