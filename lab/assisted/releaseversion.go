package assisted

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
)

var versionRE = regexp.MustCompile(`(\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?)`)

// clusterRelease is what the service knows of a cluster's release.
type clusterRelease struct {
	// Version is the OpenShift version; Image the release image as the
	// ClusterImageSet names it, for a release the service read (empty
	// otherwise).
	Version, Image string
	// Pulls are the images a host pulls to install the release (the
	// release image, as the ClusterImageSet names it, and the release's
	// installer image); none for a release the service could not read.
	Pulls []string
}

// installerComponent is the release component the assisted installer runs
// on a host, and so pulls there.
const installerComponent = "installer"

// releaseVersion is what the service knows of a ClusterImageSet's release:
// its OpenShift version and, for a release it read, the image and what the
// hosts pull to install it. A release in a registry on loopback (the lab's), or any release when the
// hub has mirrors, is read as assisted-service reads every release image
// with `oc adm release info`: through the hub's digest mirrors (an IDMS
// file), a tag from its own registry. One that cannot be read is the
// error upstream's ClusterDeployments controller reports, and no install
// starts. The lab reaches no registry off loopback (dialRegistry), so a
// release named elsewhere without mirrors is known by its tag
// (ocp-release:4.17.3-x86_64), else by the ClusterImageSet's name.
//
// hub is the hub's mirror registry (hubMirrors), nil for none.
func (s *Service) releaseVersion(ctx context.Context, is *hivev1.ClusterImageSet, hub *MirrorRegistry) (clusterRelease, error) {
	image := is.Spec.ReleaseImage
	mirrored := hub != nil
	if onLoopback(image) || mirrored {
		regs, err := hub.registries()
		if err != nil {
			return clusterRelease{}, fmt.Errorf("the hub's mirror registry configuration: %w", err)
		}
		info, err := s.releases.Resolve(ctx, image, regs, nil)
		if err == nil && info.Version == "" {
			err = errors.New("its release metadata names no OpenShift version")
		}
		if err != nil {
			return clusterRelease{}, &releaseReadError{image: image, imageSet: is.Name, hint: tagHint(image, mirrored), err: err}
		}
		rel := clusterRelease{Version: info.Version, Image: image, Pulls: []string{image}}
		if c := info.Components[installerComponent]; c != "" {
			rel.Pulls = append(rel.Pulls, c)
		}
		return rel, nil
	}
	if m := versionRE.FindString(trimArch(tagOf(image))); m != "" {
		return clusterRelease{Version: m}, nil
	}
	if m := versionRE.FindString(trimArch(is.Name)); m != "" {
		return clusterRelease{Version: m}, nil
	}
	return clusterRelease{}, fmt.Errorf("cannot tell the OpenShift version of release image %q: the lab reads release images from its own registry only, so the tag or the ClusterImageSet name must carry the version", image)
}

// releaseReadError is upstream's failure to get a release image: a
// backend error of the AgentClusterInstall, retried.
type releaseReadError struct {
	image, imageSet, hint string
	err                   error
}

func (e *releaseReadError) Error() string {
	return fmt.Sprintf("failed to get release image '%s'. Please ensure the releaseImage field in ClusterImageSet '%s' is valid, %s (error: %v).",
		e.image, e.imageSet, e.hint, e.err)
}

func (e *releaseReadError) Unwrap() error { return e.err }

// tagHint is what assisted-service adds when a release it could not read
// is named by tag on a hub with mirrors (MGMT-17194): mirrors serve pulls
// by digest.
func tagHint(image string, mirrored bool) string {
	tag := tagOf(image)
	if !mirrored || tag == "" {
		return ""
	}
	return fmt.Sprintf("Release image %q uses a tag (%q), this is usually unsupported in combination with mirror registries, try providing a digest-based image instead", image, tag)
}

// dialRegistry connects to registries on loopback only, and not to those
// the hub has no route to.
func (s *Service) dialRegistry(ctx context.Context, network, address string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	ip := net.ParseIP(host)
	if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("dial %s %s: the lab reaches no registry off loopback", network, address)
	}
	if slices.Contains(s.opts.NoRouteTo, host) {
		return nil, fmt.Errorf("dial %s %s: connect: no route to host (the hub is disconnected)", network, address)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, address)
}

// onLoopback says whether image is in a registry on a loopback address.
func onLoopback(image string) bool {
	ref, err := name.ParseReference(image)
	if err != nil {
		return false
	}
	host := ref.Context().RegistryStr()
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func tagOf(image string) string {
	if strings.Contains(image, "@") {
		return ""
	}
	if i := strings.LastIndexByte(image, ':'); i >= 0 && strings.LastIndexByte(image, '/') < i {
		return image[i+1:]
	}
	return ""
}

func trimArch(v string) string {
	for _, arch := range []string{"-x86_64", "-aarch64", "-multi"} {
		if strings.HasSuffix(v, arch) && len(v) > len(arch) {
			return strings.TrimSuffix(v, arch)
		}
	}
	return v
}
