package upgrade

import (
	"fmt"
	"sort"
	"strings"

	configv1 "github.com/openshift/api/config/v1"

	"github.com/paritylab/paritylab/scenarios"
)

// describeRelease names a release image by what it is in the lab's
// registry, so that both flows' lines compare (digests and the registry's
// port change from run to run): "release 4.21.1 by digest", "release
// 4.21.1 by tag", or an image the registry does not have.
func describeRelease(in scenarios.Input, image string) string {
	if image == "" {
		return "none"
	}
	for _, p := range in.Lab.Info.Releases {
		switch image {
		case p.Image:
			return "release " + p.Version + " by digest"
		case p.Tag:
			return "release " + p.Version + " by tag"
		}
	}
	if strings.Contains(image, "@sha256:") {
		return "a digest the registry does not have"
	}
	return "a tag the registry does not have"
}

// describeUpdate is spec.desiredUpdate as written: version, image and
// force. The version field shows as byVersion: the report's scrubber takes
// the word "version", the ClusterVersion's name, for a name.
func describeUpdate(in scenarios.Input, u *configv1.Update) string {
	if u == nil {
		return "none"
	}
	var parts []string
	if u.Version != "" {
		parts = append(parts, "byVersion="+u.Version)
	}
	if u.Image != "" {
		parts = append(parts, "image="+describeRelease(in, u.Image))
	}
	parts = append(parts, fmt.Sprintf("force=%t", u.Force))
	return strings.Join(parts, " ")
}

// describeEntry is a history entry without its times.
func describeEntry(in scenarios.Input, h configv1.UpdateHistory) string {
	done := "no completion time"
	if h.CompletionTime != nil {
		done = "completion time set"
	}
	return fmt.Sprintf("%s %s verified=%t acceptedRisks=%q image=%s, %s", h.Version, h.State, h.Verified, h.AcceptedRisks,
		describeRelease(in, h.Image), done)
}

// describeHistory is the whole history, newest first.
func describeHistory(in scenarios.Input, hs []configv1.UpdateHistory) string {
	var out []string
	for _, h := range hs {
		out = append(out, h.Version+" "+string(h.State))
	}
	return strings.Join(out, ", ")
}

// describeConditions lists the ClusterVersion's conditions by type with
// their status and reason.
func describeConditions(conds []configv1.ClusterOperatorStatusCondition) string {
	var out []string
	for _, c := range conds {
		s := string(c.Type) + "=" + string(c.Status)
		if c.Reason != "" {
			s += "/" + c.Reason
		}
		out = append(out, s)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// describeKubelets says which kubelet the Ready Nodes run: one for all of
// them, once an update reached every node, or each one they report.
func describeKubelets(kubelets []string) string {
	switch len(kubelets) {
	case 0:
		return "no Ready node"
	case 1:
		return "kubelet " + kubelets[0] + " on every Ready node"
	}
	return "kubelets " + strings.Join(kubelets, ", ") + " on the Ready nodes"
}
