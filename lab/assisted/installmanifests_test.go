package assisted

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/lab/controllers"
	"github.com/paritylab/paritylab/lab/crds"
	"github.com/paritylab/paritylab/lab/releases"
	"github.com/paritylab/paritylab/lab/workload"
)

func TestInstallConfigObjects(t *testing.T) {
	conf := releases.RegistriesConf(releases.OCMirrorSets("127.0.0.2:5000", "127.0.0.1:5001"))
	objs, err := installConfigObjects(&MirrorRegistry{RegistriesConf: conf, CABundle: "CA"})
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 || objs[0].GetKind() != "ImageDigestMirrorSet" || objs[0].GetName() != InstallerMirrorSetName ||
		objs[1].GetKind() != "ConfigMap" || objs[1].GetNamespace() != "openshift-config" || objs[1].GetName() != UserCABundleName {
		t.Fatalf("objects %v, want the installer's IDMS and user CA bundle", objs)
	}
	sources, _, _ := unstructured.NestedSlice(objs[0].Object, "spec", "imageDigestMirrors")
	var got []string
	for _, s := range sources {
		m := s.(map[string]any)
		var mirrors []string
		for _, x := range m["mirrors"].([]any) {
			mirrors = append(mirrors, x.(string))
		}
		got = append(got, m["source"].(string)+" -> "+strings.Join(mirrors, ", "))
	}
	want := []string{
		"127.0.0.2:5000/openshift-release-dev/ocp-release -> 127.0.0.1:5001/openshift/release-images",
		"127.0.0.2:5000/openshift-release-dev/ocp-v4.0-art-dev -> 127.0.0.1:5001/edge-cache/release, 127.0.0.1:5001/openshift/release",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("imageDigestMirrors:\n%s\nwant every digest mirror of each source and no tag-only one:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if none, err := installConfigObjects(nil); err != nil || none != nil {
		t.Errorf("no mirrors: %v, %v", none, err)
	}
}

func TestDecodeManifests(t *testing.T) {
	objs, err := decodeManifests("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\n---\n{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"b\"}}\n")
	if err != nil || len(objs) != 2 || objs[0].GetName() != "a" || objs[1].GetName() != "b" {
		t.Fatalf("decoded %v, %v", objs, err)
	}
	if _, err := decodeManifests("metadata:\n  name: a\n"); err == nil || !strings.Contains(err.Error(), "without apiVersion and kind") {
		t.Errorf("a manifest without a kind: %v", err)
	}
}

// TestApplyInstallManifestObjects applies the installer's objects to a
// real API server serving the workload clusters' config API: created,
// namespace and all, then updated in place.
func TestApplyInstallManifestObjects(t *testing.T) {
	t.Parallel()
	h := startHubWith(t, noSpokes{}, &controllers.CRDsOnly{ComponentName: "config-api", Sets: []crds.Set{workload.ConfigAPI()}})
	ctx := context.Background()
	for _, ca := range []string{"first", "second"} {
		objs, err := installConfigObjects(&MirrorRegistry{RegistriesConf: releases.RegistriesConf(releases.OCMirrorSets("127.0.0.2:5000", "127.0.0.1:5001")), CABundle: ca})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			if err := applyObject(ctx, h.c, o); err != nil {
				t.Fatalf("apply %s %s: %v", o.GetKind(), o.GetName(), err)
			}
		}
	}
	cm := &unstructured.Unstructured{}
	cm.SetAPIVersion("v1")
	cm.SetKind("ConfigMap")
	if err := h.c.Get(ctx, client.ObjectKey{Namespace: "openshift-config", Name: UserCABundleName}, cm); err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedString(cm.Object, "data", "ca-bundle.crt"); v != "second" {
		t.Errorf("user CA bundle %q, want the second apply's", v)
	}
	idms := &unstructured.Unstructured{}
	idms.SetAPIVersion("config.openshift.io/v1")
	idms.SetKind("ImageDigestMirrorSet")
	if err := h.c.Get(ctx, client.ObjectKey{Name: InstallerMirrorSetName}, idms); err != nil {
		t.Fatalf("the IDMS is not served: %v", err)
	}
}
