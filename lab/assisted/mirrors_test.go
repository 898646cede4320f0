package assisted

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	conditionsv1 "github.com/openshift/custom-resource-status/conditions/v1"
	"github.com/paritylab/paritylab/lab/assisted/agentapi"
	"github.com/paritylab/paritylab/lab/ports"
	"github.com/paritylab/paritylab/lab/releases"
	"github.com/paritylab/paritylab/lab/releases/releasestest"
	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
	hiveextv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

// TestHubMirrors: on a hub whose mirror registry configuration lists the
// site's mirrors and which has no route to the source, a release named by
// digest in the source is read from the mirror and installs; one named by
// tag fails as upstream's does, with its hint about tags; and the source
// registry answers nothing.
func TestHubMirrors(t *testing.T) {
	t.Parallel()
	site := releasestest.DisconnectedSite(t, releases.Lab[:1])
	h := startHubWithOptions(t, Options{Spokes: noSpokes{}, NoRouteTo: []string{ports.Unrouted}})
	h.setHubMirrors(t, map[string]string{RegistriesConfKey: site.RegistriesConf})
	before := len(releasestest.Requests(t, site.Source))

	byDigest := h.namespace(t)
	clusterAt(t, h, byDigest, 1, site.Published[0].Image)
	h.eventually(t, "the install at the release read through the mirror", func() bool {
		aci := h.aci(t, byDigest)
		c := aciCondition(aci, hiveextv1beta1.ConditionSpecSynced)
		return c != nil && c.Status == corev1.ConditionTrue && aci.Status.DebugInfo.State != ""
	})

	byTag := h.namespace(t)
	clusterAt(t, h, byTag, 1, site.Published[0].Tag)
	h.eventually(t, "SpecSynced=False, a backend error with the hint about tags", func() bool {
		aci := h.aci(t, byTag)
		c := aciCondition(aci, hiveextv1beta1.ConditionSpecSynced)
		return c != nil && c.Status == corev1.ConditionFalse && c.Reason == "BackendError" &&
			strings.HasPrefix(c.Message, "The Spec could not be synced due to backend error: failed to get release image '"+site.Published[0].Tag+"'.") &&
			strings.Contains(c.Message, `uses a tag ("4.21.0-x86_64"), this is usually unsupported in combination with mirror registries`) &&
			strings.Contains(c.Message, "no route to host") && aci.Status.DebugInfo.State == ""
	})
	if n := len(releasestest.Requests(t, site.Source)); n != before {
		t.Errorf("the source registry answered %d requests from the hub", n-before)
	}
}

// TestDiscoveryMirrors: an InfraEnv's discovery ignition writes its own
// mirror registry configuration, else the hub's, as assisted-service's
// does; a mirrorRegistryRef without registries.conf fails the image.
func TestDiscoveryMirrors(t *testing.T) {
	t.Parallel()
	const hubConf = "[[registry]]\nlocation = \"quay.io/openshift-release-dev/ocp-release\"\n[[registry.mirror]]\nlocation = \"127.0.0.1:5000/openshift/release-images\"\n"
	const ownConf = "[[registry]]\nlocation = \"quay.io/openshift-release-dev\"\n[[registry.mirror]]\nlocation = \"127.0.0.1:5001/site\"\n"
	h := startHub(t)
	h.setHubMirrors(t, map[string]string{RegistriesConfKey: hubConf, MirrorCAKey: "hub CA"})
	ctx := context.Background()

	hubs := h.infraEnv(t, h.namespace(t), nil)
	files := h.discoveryFiles(t, hubs)
	if files[agentapi.RegistriesConfPath] != hubConf || files[agentapi.RegistryCAPath] != "hub CA" {
		t.Errorf("an InfraEnv without mirrorRegistryRef got %q", files)
	}

	ns := h.namespace(t)
	for name, data := range map[string]map[string]string{
		"own": {RegistriesConfKey: ownConf, MirrorCAKey: "site CA"}, "broken": {MirrorCAKey: "x"},
	} {
		if err := h.c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: data}); err != nil {
			t.Fatal(err)
		}
	}
	own := h.infraEnvWithMirrors(t, ns, "own")
	files = h.discoveryFiles(t, own)
	if files[agentapi.RegistriesConfPath] != ownConf || files[agentapi.RegistryCAPath] != "site CA" {
		t.Errorf("an InfraEnv with its own mirrorRegistryRef got %q", files)
	}

	broken := &agentv1beta1.InfraEnv{ObjectMeta: metav1.ObjectMeta{Name: "broken", Namespace: ns},
		Spec: agentv1beta1.InfraEnvSpec{PullSecretRef: &corev1.LocalObjectReference{Name: "pull-secret"},
			MirrorRegistryRef: &agentv1beta1.MirrorRegistryConfigMapReference{Name: "broken", Namespace: ns}}}
	if err := h.c.Create(ctx, broken); err != nil {
		t.Fatal(err)
	}
	h.eventually(t, "ImageCreated=False naming the missing key", func() bool {
		_ = h.c.Get(ctx, client.ObjectKeyFromObject(broken), broken)
		c := conditionsv1.FindStatusCondition(broken.Status.Conditions, agentv1beta1.ConditionImageCreated)
		return c != nil && c.Status == corev1.ConditionFalse && c.Reason == agentv1beta1.ReasonImageCreationError &&
			strings.Contains(c.Message, "ConfigMap "+ns+"/broken does not contain registries.conf key")
	})
}

// setHubMirrors gives the hub a mirror registry as the infrastructure
// operator's user does: a ConfigMap in its namespace, named by the
// AgentServiceConfig.
func (h *hub) setHubMirrors(t *testing.T, data map[string]string) {
	t.Helper()
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "multicluster-engine"}}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "mirror-registry-config", Namespace: ns.Name}, Data: data}
	asc := &agentv1beta1.AgentServiceConfig{ObjectMeta: metav1.ObjectMeta{Name: agentv1beta1.AgentServiceConfigName},
		Spec: agentv1beta1.AgentServiceConfigSpec{MirrorRegistryRef: &corev1.LocalObjectReference{Name: cm.Name}}}
	for _, o := range []client.Object{ns, cm, asc} {
		if err := h.c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
}

func (h *hub) aci(t *testing.T, ns string) *hiveextv1beta1.AgentClusterInstall {
	t.Helper()
	aci := &hiveextv1beta1.AgentClusterInstall{}
	_ = h.c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "sno"}, aci)
	return aci
}

// infraEnvWithMirrors is an InfraEnv "site" of ns naming the mirror
// registry ConfigMap name.
func (h *hub) infraEnvWithMirrors(t *testing.T, ns, name string) *agentv1beta1.InfraEnv {
	t.Helper()
	return h.infraEnvWith(t, ns, func(ie *agentv1beta1.InfraEnv) {
		ie.Spec.MirrorRegistryRef = &agentv1beta1.MirrorRegistryConfigMapReference{Name: name, Namespace: ns}
	})
}

// discoveryFiles are the files the InfraEnv's discovery ignition, as
// served to its hosts, writes.
func (h *hub) discoveryFiles(t *testing.T, ie *agentv1beta1.InfraEnv) map[string]string {
	t.Helper()
	raw, err := discoveryIgnition(h.svc.discoveryConfig(string(ie.UID)))
	if err != nil {
		t.Fatal(err)
	}
	var ign struct {
		Storage struct {
			Files []struct {
				Path     string `json:"path"`
				Mode     int    `json:"mode"`
				Contents struct {
					Source string `json:"source"`
				} `json:"contents"`
			} `json:"files"`
		} `json:"storage"`
	}
	if err := json.Unmarshal(raw, &ign); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range ign.Storage.Files {
		data, err := url.PathUnescape(strings.TrimPrefix(f.Contents.Source, "data:,"))
		if err != nil {
			t.Fatal(err)
		}
		if f.Path != agentapi.UserDataFile && f.Mode != 0o644 {
			t.Errorf("%s has mode %o, want 0644 as upstream writes it", f.Path, f.Mode)
		}
		out[f.Path] = data
	}
	return out
}
