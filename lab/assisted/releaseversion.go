package assisted

import (
	"context"
	"fmt"
	"net"
	"regexp"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	hivev1 "github.com/openshift/hive/apis/hive/v1"
)

var versionRE = regexp.MustCompile(`(\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?)`)

// releaseVersion is the OpenShift version of a ClusterImageSet's release.
// A release in a registry on loopback (the lab's) is read from it, tag or
// digest alike, as assisted-service reads every release image with `oc adm
// release info`: one the registry does not have is an error the
// AgentClusterInstall reports, and no install starts. The lab reaches no
// other registry (its traffic stays on loopback), so a release named
// elsewhere is known by its tag (ocp-release:4.17.3-x86_64), else by the
// ClusterImageSet's name.
func (s *Service) releaseVersion(ctx context.Context, is *hivev1.ClusterImageSet) (string, error) {
	image := is.Spec.ReleaseImage
	if onLoopback(image) {
		info, err := s.releases.Resolve(ctx, image, nil, nil)
		switch {
		case err != nil:
			return "", fmt.Errorf("ClusterImageSet %s: release image %s cannot be read: %v", is.Name, image, err)
		case info.Version == "":
			return "", fmt.Errorf("ClusterImageSet %s: release image %s names no OpenShift version in its release metadata", is.Name, image)
		}
		return info.Version, nil
	}
	if m := versionRE.FindString(trimArch(tagOf(image))); m != "" {
		return m, nil
	}
	if m := versionRE.FindString(trimArch(is.Name)); m != "" {
		return m, nil
	}
	return "", fmt.Errorf("cannot tell the OpenShift version of release image %q: the lab reads release images from its own registry only, so the tag or the ClusterImageSet name must carry the version", image)
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
