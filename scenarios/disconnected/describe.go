package disconnected

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	. "github.com/onsi/gomega"
	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/registry"
	"github.com/paritylab/paritylab/scenarios"
)

// describeImage names a release image by where it points, so that both
// flows' lines compare (ports and digests change from run to run):
// "release 4.21.0 by digest in the source", "... by tag in the mirror".
func describeImage(in scenarios.Input, image string) string {
	if image == "" {
		return "none"
	}
	s := site(in)
	for _, p := range s.Published {
		switch image {
		case p.Image:
			return "release " + p.Version + " by digest in the source"
		case p.Tag:
			return "release " + p.Version + " by tag in the source"
		}
	}
	for _, m := range s.Mirrored {
		switch image {
		case m.Image:
			return "release " + m.Source.Version + " by digest in the mirror"
		case m.Tag:
			return "release " + m.Source.Version + " by tag in the mirror"
		}
	}
	return "an image of neither registry"
}

// hostNames replaces the site's registry hosts by what they are.
func hostNames(in scenarios.Input, s string) string {
	site := site(in)
	return strings.NewReplacer(site.SourceHost, "<source>", site.MirrorHost, "<mirror>").Replace(s)
}

// describeSpokeMirrors lists the mirror configuration the installed
// cluster holds: every ImageDigestMirrorSet and ImageTagMirrorSet (name:
// source -> mirrors), images.config.openshift.io/cluster's trusted CA and
// insecure registries, and the CA ConfigMaps the install wrote.
func describeSpokeMirrors(ctx context.Context, in scenarios.Input, spoke client.Client) map[string]string {
	out := map[string]string{}
	idms := &configv1.ImageDigestMirrorSetList{}
	Expect(spoke.List(ctx, idms)).To(Succeed())
	var sets []string
	for _, s := range idms.Items {
		for _, m := range s.Spec.ImageDigestMirrors {
			sets = append(sets, fmt.Sprintf("%s: %s -> %s", s.Name, m.Source, joinMirrors(m.Mirrors)))
		}
	}
	out["spoke.imageDigestMirrorSets"] = hostNames(in, listOrNone(sets))
	itms := &configv1.ImageTagMirrorSetList{}
	Expect(spoke.List(ctx, itms)).To(Succeed())
	sets = nil
	for _, s := range itms.Items {
		for _, m := range s.Spec.ImageTagMirrors {
			sets = append(sets, fmt.Sprintf("%s: %s -> %s", s.Name, m.Source, joinMirrors(m.Mirrors)))
		}
	}
	out["spoke.imageTagMirrorSets"] = hostNames(in, listOrNone(sets))
	img := &configv1.Image{}
	err := spoke.Get(ctx, client.ObjectKey{Name: "cluster"}, img)
	switch {
	case err == nil:
		out["spoke.imageConfig"] = hostNames(in, fmt.Sprintf("additionalTrustedCA=%q insecureRegistries=%s", img.Spec.AdditionalTrustedCA.Name,
			listOrNone(img.Spec.RegistrySources.InsecureRegistries)))
	case client.IgnoreNotFound(err) == nil || meta.IsNoMatchError(err):
		out["spoke.imageConfig"] = "none"
	default:
		Expect(err).NotTo(HaveOccurred())
	}
	var cas []string
	for _, name := range []string{"user-ca-bundle", "additional-registry-certificate"} {
		cm := &corev1.ConfigMap{}
		if err := spoke.Get(ctx, client.ObjectKey{Namespace: "openshift-config", Name: name}, cm); err == nil {
			keys := slices.Sorted(func(yield func(string) bool) {
				for k := range cm.Data {
					if !yield(k) {
						return
					}
				}
			})
			cas = append(cas, fmt.Sprintf("openshift-config/%s (%s)", name, strings.Join(keys, ", ")))
		} else {
			Expect(client.IgnoreNotFound(err)).To(Succeed())
		}
	}
	out["spoke.caConfigMaps"] = listOrNone(cas)
	return out
}

func joinMirrors(ms []configv1.ImageMirror) string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = string(m)
	}
	return strings.Join(out, ", ")
}

func listOrNone(items []string) string {
	if len(items) == 0 {
		return "none"
	}
	sort.Strings(items)
	return strings.Join(items, "; ")
}

// agentPulls summarises what the flow's hosts pulled, from the mirror's
// log: each repository's manifests served to them, by digest or tag, with
// the status (a stale mirror answers 404 before the next serves). Hosts
// are known by their agents' user agent, paritylab-agent/<host ID>.
func agentPulls(in scenarios.Input, hostIDs []string) string {
	reqs, err := registry.Requests(site(in).MirrorLog)
	Expect(err).NotTo(HaveOccurred())
	seen := map[string]bool{}
	for _, r := range reqs {
		if r.Kind != "manifest" || r.Method != "GET" || !fromHosts(r.UserAgent, hostIDs) {
			continue
		}
		how := "tag"
		if r.ByDigest() {
			how = "digest"
		}
		seen[fmt.Sprintf("%s by %s %d", r.Repository, how, r.Status)] = true
	}
	return listOrNone(keys(seen))
}

func fromHosts(userAgent string, hostIDs []string) bool {
	for _, id := range hostIDs {
		if strings.HasPrefix(userAgent, "paritylab-agent/"+id+" ") {
			return true
		}
	}
	return false
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// sourceRequests are the requests the site's source registry answered so
// far, from its own log.
func sourceRequests(in scenarios.Input) []registry.Request {
	reqs, err := registry.Requests(site(in).SourceLog)
	Expect(err).NotTo(HaveOccurred())
	return reqs
}

func metav1Named(name string) metav1.ObjectMeta {
	if ns, n, ok := strings.Cut(name, "/"); ok {
		return metav1.ObjectMeta{Namespace: ns, Name: n}
	}
	return metav1.ObjectMeta{Name: name}
}
