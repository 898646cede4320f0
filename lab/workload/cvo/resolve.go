package cvo

import (
	"fmt"
	"strings"

	configv1 "github.com/openshift/api/config/v1"
)

// Refusal is why an update is not accepted: the reason and message of
// ReleaseAccepted=False.
type Refusal struct {
	Reason  string
	Message string
}

func (r *Refusal) Error() string { return r.Reason + ": " + r.Message }

// target is a release the operator accepted to apply.
type target struct {
	release  configv1.Release
	verified bool
}

// resolve decides which release spec.desiredUpdate asks for and whether the
// operator accepts it. Without a desired update, or with one naming the
// current release, the target is status.desired. known are releases the lab
// knows besides the cluster's update graph; read are the payloads the
// operator retrieved from their registry, which decide over known.
func resolve(cv *configv1.ClusterVersion, known []configv1.Release, read fetched) (target, *Refusal) {
	u, current := cv.Spec.DesiredUpdate, cv.Status.Desired
	if u == nil || (u.Image == "" && u.Version == current.Version) || (u.Image != "" && u.Image == current.Image) {
		return target{release: current, verified: true}, nil
	}
	var t target
	var ref *Refusal
	if u.Image == "" {
		t, ref = byVersion(u.Version, cv.Status.AvailableUpdates, read)
	} else {
		t, ref = byImage(*u, catalogue(cv, known), read)
	}
	if ref != nil {
		return target{}, ref
	}
	if !u.Force {
		if ref := checkRollback(cv, t.release); ref != nil {
			return target{}, ref
		}
		if ref := checkUpgradeable(cv, t.release); ref != nil {
			return target{}, ref
		}
	}
	return t, nil
}

// byVersion finds a version in the update graph, as the real operator does
// for an update that names no image, and needs its payload retrievable;
// force does not help here.
func byVersion(version string, available []configv1.Release, read fetched) (target, *Refusal) {
	for _, r := range available {
		if r.Version != version {
			continue
		}
		if p, ok := read(r.Image); ok && p.err != nil {
			return target{}, retrieveFailed(configv1.Update{Version: version, Image: r.Image}, p.err.Error())
		}
		return target{release: r, verified: pinned(r.Image)}, nil
	}
	var listed []string
	for _, r := range available {
		listed = append(listed, r.Version)
	}
	if len(listed) == 0 {
		listed = []string{"none"}
	}
	return target{}, &Refusal{
		Reason: ReasonVersionNotFound,
		Message: fmt.Sprintf("version %s is not one of the available updates (%s); to update outside the update graph set desiredUpdate.image",
			version, strings.Join(listed, ", ")),
	}
}

// byImage accepts an image pulled by digest (or any image with force) whose
// release version the operator read from its payload, or else the lab
// knows, from the catalogue or from the update.
func byImage(u configv1.Update, known []configv1.Release, read fetched) (target, *Refusal) {
	if !pinned(u.Image) && !u.Force {
		return target{}, retrieveFailed(u, "The update cannot be verified: the image is not pulled by digest (@sha256:...); set force to apply it unverified")
	}
	r, ok := findImage(known, u.Image)
	if p, fetched := read(u.Image); fetched {
		if p.err != nil {
			return target{}, retrieveFailed(u, p.err.Error())
		}
		r, ok = configv1.Release{Version: p.version, Image: u.Image}, true
	}
	switch {
	case ok && u.Version != "" && r.Version != u.Version:
		return target{}, &Refusal{
			Reason: ReasonVerifyPayloadVersion,
			Message: fmt.Sprintf("Verifying payload failed version=%q image=%q failure=release image version %s does not match the expected upstream version %s",
				u.Version, u.Image, r.Version, u.Version),
		}
	case !ok && u.Version == "":
		return target{}, retrieveFailed(u, "the lab knows no release with this image: list it in the workload cluster's releases or give desiredUpdate.version")
	case !ok:
		r = configv1.Release{Version: u.Version, Image: u.Image}
	}
	return target{release: r, verified: pinned(u.Image)}, nil
}

func retrieveFailed(u configv1.Update, failure string) *Refusal {
	return &Refusal{
		Reason:  ReasonRetrievePayload,
		Message: fmt.Sprintf("Retrieving payload failed version=%q image=%q failure=%s", u.Version, u.Image, failure),
	}
}

// pinned says whether an image reference names a digest, which is what
// release signature verification needs.
func pinned(image string) bool { return strings.Contains(image, "@sha256:") }

// catalogue lists the releases whose version the operator can tell from
// their image: the update graph, the lab's known releases and the history.
func catalogue(cv *configv1.ClusterVersion, known []configv1.Release) []configv1.Release {
	all := append([]configv1.Release{cv.Status.Desired}, cv.Status.AvailableUpdates...)
	for _, c := range cv.Status.ConditionalUpdates {
		all = append(all, c.Release)
	}
	all = append(all, known...)
	for _, h := range cv.Status.History {
		all = append(all, configv1.Release{Version: h.Version, Image: h.Image})
	}
	return all
}

func findImage(rs []configv1.Release, image string) (configv1.Release, bool) {
	for _, r := range rs {
		if r.Image == image && r.Version != "" {
			return r, true
		}
	}
	return configv1.Release{}, false
}
