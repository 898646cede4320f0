package assisted

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"

	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/providers/controlplane/release"
	hiveextv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

// Names of what the installer makes of an install-config's mirrors and
// trust bundle.
const (
	// InstallerMirrorSetName is the ImageDigestMirrorSet the installer
	// writes from imageDigestSources.
	InstallerMirrorSetName = "image-digest-mirror"
	// UserCABundleName is openshift-config's ConfigMap of the
	// install-config's additionalTrustBundle.
	UserCABundleName = "user-ca-bundle"
)

// applyInstallManifests puts into a new cluster what its install puts
// there besides the release: the ImageDigestMirrorSet and user CA bundle
// the installer writes from the install-config's mirrors
// (imageDigestSources: every digest mirror of each source, by location;
// tag-only mirrors are not in it, as assisted-service builds it) and the
// extra manifests of the AgentClusterInstall's manifestsConfigMapRefs.
func (s *Service) applyInstallManifests(ctx context.Context, in *install) error {
	objs, err := installConfigObjects(in.mirrors)
	if err != nil {
		return err
	}
	extra, err := s.extraManifests(ctx, in.aci)
	if err != nil {
		return err
	}
	objs = append(objs, extra...)
	if len(objs) == 0 {
		return nil
	}
	c, err := s.spokeClient(ctx, in.key())
	if err != nil {
		return err
	}
	for _, o := range objs {
		if err := applyObject(ctx, c, o); err != nil {
			return fmt.Errorf("apply %s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	return nil
}

// installConfigObjects are the installer's objects of the install-config's
// mirrors and trust bundle.
func installConfigObjects(m *MirrorRegistry) ([]*unstructured.Unstructured, error) {
	if m == nil {
		return nil, nil
	}
	regs, err := release.ParseRegistries(m.RegistriesConf, nil)
	if err != nil {
		return nil, err
	}
	idms := &configv1.ImageDigestMirrorSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: configv1.GroupVersion.String(), Kind: "ImageDigestMirrorSet"},
		ObjectMeta: metav1.ObjectMeta{Name: InstallerMirrorSetName},
	}
	for _, e := range regs.Entries {
		source := configv1.ImageDigestMirrors{Source: e.Location}
		for _, mirror := range e.Mirrors {
			if mirror.PullFromMirror == "" || mirror.PullFromMirror == "digest-only" {
				source.Mirrors = append(source.Mirrors, configv1.ImageMirror(mirror.Location))
			}
		}
		if e.Location != "" && len(source.Mirrors) > 0 {
			idms.Spec.ImageDigestMirrors = append(idms.Spec.ImageDigestMirrors, source)
		}
	}
	var out []runtime.Object
	if len(idms.Spec.ImageDigestMirrors) > 0 {
		out = append(out, idms)
	}
	if m.CABundle != "" {
		out = append(out, &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: UserCABundleName, Namespace: "openshift-config"},
			Data:       map[string]string{"ca-bundle.crt": m.CABundle},
		})
	}
	return toUnstructured(out)
}

// extraManifests decodes every manifest (YAML or JSON, one or more
// documents per key) of the ConfigMaps the AgentClusterInstall names, in
// ConfigMap order and then key order.
func (s *Service) extraManifests(ctx context.Context, aci *hiveextv1beta1.AgentClusterInstall) ([]*unstructured.Unstructured, error) {
	var names []string
	for _, ref := range aci.Spec.ManifestsConfigMapRefs {
		names = append(names, ref.Name)
	}
	if ref := aci.Spec.ManifestsConfigMapRef; len(names) == 0 && ref != nil {
		names = append(names, ref.Name)
	}
	var out []*unstructured.Unstructured
	for _, name := range names {
		cm := &corev1.ConfigMap{}
		if err := s.client.Get(ctx, client.ObjectKey{Namespace: aci.GetNamespace(), Name: name}, cm); err != nil {
			return nil, fmt.Errorf("manifests ConfigMap %s: %w", name, err)
		}
		keys := make([]string, 0, len(cm.Data))
		for k := range cm.Data {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			objs, err := decodeManifests(cm.Data[k])
			if err != nil {
				return nil, fmt.Errorf("manifests ConfigMap %s, key %s: %w", name, k, err)
			}
			out = append(out, objs...)
		}
	}
	return out, nil
}

func decodeManifests(data string) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader([]byte(data)), 4096)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		err := dec.Decode(&u.Object)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if len(u.Object) == 0 {
			continue
		}
		if u.GetKind() == "" || u.GetAPIVersion() == "" {
			return nil, fmt.Errorf("a manifest without apiVersion and kind")
		}
		out = append(out, u)
	}
}

func toUnstructured(objs []runtime.Object) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{Object: m}
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		out = append(out, u)
	}
	return out, nil
}

// applyObject creates o, and its namespace if the cluster lacks it, or
// replaces the spec and data of the one there.
func applyObject(ctx context.Context, c client.Client, o *unstructured.Unstructured) error {
	if ns := o.GetNamespace(); ns != "" {
		err := c.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create namespace %s: %w", ns, err)
		}
	}
	err := c.Create(ctx, o.DeepCopy())
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	current := &unstructured.Unstructured{}
	current.SetGroupVersionKind(o.GroupVersionKind())
	if err := c.Get(ctx, client.ObjectKeyFromObject(o), current); err != nil {
		return err
	}
	for _, field := range []string{"spec", "data"} {
		if v, ok := o.Object[field]; ok {
			current.Object[field] = v
		}
	}
	return c.Update(ctx, current)
}
