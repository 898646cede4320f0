package hypershift

import (
	"fmt"
	"hash/fnv"
	"strings"

	hypershiftv1beta1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
)

// ControlPlaneNamespace is where a HostedCluster's control plane and its
// CAPI objects live: <namespace>-<name>, dots in the name made dashes
// (HyperShift manifests.HostedControlPlaneNamespace).
func ControlPlaneNamespace(hc *hypershiftv1beta1.HostedCluster) string {
	return hc.Namespace + "-" + strings.ReplaceAll(hc.Name, ".", "-")
}

// hashSimple is HyperShift's short hash of a value: FNV-1a 32 of the
// value printed with %v, in 8 hex digits (support/util HashSimple). A
// []byte prints as its decimal byte list, which is what HyperShift hashes
// for JSON it marshalled.
func hashSimple(v any) string {
	h := fnv.New32a()
	_, _ = fmt.Fprintf(h, "%v", v)
	return fmt.Sprintf("%08x", h.Sum32())
}

// boundedName joins base and suffix with a dash within maxLength, as
// HyperShift's NodePool controller names objects (nodepool getName): a
// name that would be longer keeps as much of base as fits before
// -<hash of base>-<suffix>; a suffix too long for that gives up on the
// suffix and ends in the hash of the whole joined name instead.
func boundedName(base, suffix string, maxLength int) string {
	joined := base + "-" + suffix
	if len(joined) <= maxLength {
		return joined
	}
	keep := maxLength - len(suffix) - 10 // the "-<8 hex>-" in between
	if keep >= 1 {
		return base[:keep] + "-" + hashSimple(base) + "-" + suffix
	}
	short := base[:min(len(base), max(0, maxLength-9))] + "-" + hashSimple(joined)
	return short[:min(maxLength, len(short))]
}

// newInfraID is HyperShift's default infraID for a HostedCluster named
// name (support/infraid, after the installer's): every character other
// than a letter, digit or dash made a dash, runs of dashes made one, cut
// to 21 characters without a trailing dash, then a dash and 5 random
// characters.
func newInfraID(name string) string {
	var b strings.Builder
	for _, r := range name {
		ok := (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') || r == '-'
		if !ok {
			r = '-'
		}
		if r == '-' && strings.HasSuffix(b.String(), "-") {
			continue
		}
		b.WriteRune(r)
	}
	base := b.String()
	base = strings.TrimRight(base[:min(len(base), 21)], "-")
	return base + "-" + utilrand.String(5)
}
