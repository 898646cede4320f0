package apiproxy

import "strings"

// Groups of Cluster API and their private twins: cluster.x-k8s.io and its
// subdomains (infrastructure., bootstrap., controlplane., addons., ...)
// become cluster.hypershift.openshift.io and the same subdomains of it.
const (
	StandardGroup = "cluster.x-k8s.io"
	PrivateGroup  = "cluster.hypershift.openshift.io"
)

// Direction is the way a translation goes.
type Direction int

const (
	// ToPrivate translates what a client sends to what the hub stores.
	ToPrivate Direction = iota
	// ToStandard translates what the hub answers to what a client reads.
	ToStandard
)

// group translates an API group in a direction; ok says whether it is a
// mapped group (a group of the direction's source side).
func group(g string, d Direction) (string, bool) {
	from, to := StandardGroup, PrivateGroup
	if d == ToStandard {
		from, to = PrivateGroup, StandardGroup
	}
	if g == from {
		return to, true
	}
	if sub, ok := strings.CutSuffix(g, "."+from); ok && sub != "" {
		return sub + "." + to, true
	}
	return g, false
}

// isStandard says whether a group is Cluster API's standard group or one
// of its subdomains.
func isStandard(g string) bool {
	_, ok := group(g, ToPrivate)
	return ok
}

// apiVersion translates a group/version; a core version ("v1") and an
// unmapped group pass through.
func apiVersion(av string, d Direction) (string, bool) {
	g, v, ok := strings.Cut(av, "/")
	if !ok {
		return av, false
	}
	t, mapped := group(g, d)
	if !mapped {
		return av, false
	}
	return t + "/" + v, true
}

// PrivateGroupOf is the private twin of a Cluster API group; ok is false
// for another group.
func PrivateGroupOf(g string) (string, bool) { return group(g, ToPrivate) }

// StandardGroupOf is the Cluster API group a private group twins; ok is
// false for another group.
func StandardGroupOf(g string) (string, bool) { return group(g, ToStandard) }
