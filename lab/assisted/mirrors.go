package assisted

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/paritylab/paritylab/providers/controlplane/release"
	agentv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/agentinstall/v1beta1"
	hiveextv1beta1 "github.com/paritylab/paritylab/providers/thirdparty/hiveextensions/v1beta1"
)

// Keys of a mirror registry ConfigMap, as assisted-service reads them.
const (
	RegistriesConfKey = "registries.conf"
	MirrorCAKey       = "ca-bundle.crt"
)

// MirrorRegistry is mirror registry configuration: a registries.conf and
// the CA bundle of the mirrors.
type MirrorRegistry struct {
	RegistriesConf string
	CABundle       string
}

// configured says whether it names any registry, as upstream's check of
// the hub's registries.conf does.
func (m *MirrorRegistry) configured() bool {
	if m == nil {
		return false
	}
	regs, err := release.ParseRegistries(m.RegistriesConf, nil)
	return err == nil && len(regs.Entries) > 0
}

// registries is the configuration the hub reads releases through: its
// digest mirrors, as the IDMS file assisted-service hands `oc adm
// release` (tag-only mirrors are not in it).
func (m *MirrorRegistry) registries() (*release.Registries, error) {
	if m == nil {
		return nil, nil
	}
	regs, err := release.ParseRegistries(m.RegistriesConf, []byte(m.CABundle))
	if err != nil {
		return nil, err
	}
	for i := range regs.Entries {
		// An IDMS names a source by location, blocks nothing and has
		// digest mirrors only.
		regs.Entries[i].Prefix, regs.Entries[i].Blocked = "", false
		var digest []release.Mirror
		for _, mirror := range regs.Entries[i].Mirrors {
			if mirror.PullFromMirror != "tag-only" {
				mirror.PullFromMirror = "digest-only"
				digest = append(digest, mirror)
			}
		}
		regs.Entries[i].Mirrors = digest
	}
	return regs, nil
}

// mirrorRegistryOf reads the mirror registry ConfigMap an InfraEnv or an
// AgentClusterInstall names (spec.mirrorRegistryRef), nil when it names
// none. The errors are upstream's: an input error of the object.
func (s *Service) mirrorRegistryOf(ctx context.Context, namespace, name string) (*MirrorRegistry, error) {
	if name == "" {
		return nil, nil
	}
	cm := &corev1.ConfigMap{}
	if err := s.client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, cm); err != nil {
		return nil, fmt.Errorf("failed to get ConfigMap %s/%s: %w", namespace, name, err)
	}
	conf, ok := cm.Data[RegistriesConfKey]
	if !ok {
		return nil, fmt.Errorf("ConfigMap %s/%s does not contain registries.conf key", namespace, name)
	}
	if err := validateMirrors(conf); err != nil {
		return nil, err
	}
	return &MirrorRegistry{RegistriesConf: conf, CABundle: cm.Data[MirrorCAKey]}, nil
}

// validateMirrors checks a registries.conf as assisted-service's parser
// does: TOML, a [[registry]] table, and one mirror at least.
func validateMirrors(conf string) error {
	regs, err := release.ParseRegistries(conf, nil)
	if err != nil {
		return errors.New("failed to load value of registries.conf into toml tree; incorrectly formatted toml")
	}
	if len(regs.Entries) == 0 {
		return errors.New("failed to find registry key in toml tree")
	}
	for _, e := range regs.Entries {
		if e.Location != "" && len(e.Mirrors) > 0 {
			return nil
		}
	}
	return errors.New("failed to find any image mirrors in registry.conf")
}

// hubMirrors is the hub's mirror registry: the ConfigMap
// AgentServiceConfig "agent" names (spec.mirrorRegistryRef) in the
// operator's namespace; nil when there is none or it configures no
// registry.
func (s *Service) hubMirrors(ctx context.Context) (*MirrorRegistry, error) {
	asc := &agentv1beta1.AgentServiceConfig{}
	err := s.client.Get(ctx, client.ObjectKey{Name: agentv1beta1.AgentServiceConfigName}, asc)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("get AgentServiceConfig: %w", err)
	case asc.Spec.MirrorRegistryRef == nil:
		return nil, nil
	}
	name := asc.Spec.MirrorRegistryRef.Name
	cm := &corev1.ConfigMap{}
	if err := s.client.Get(ctx, client.ObjectKey{Namespace: s.opts.Namespace, Name: name}, cm); err != nil {
		return nil, fmt.Errorf("the AgentServiceConfig's mirror registry ConfigMap: %w", err)
	}
	conf, ok := cm.Data[RegistriesConfKey]
	if !ok {
		return nil, fmt.Errorf("Mirror registry configmap %s missing key %s", name, RegistriesConfKey)
	}
	m := &MirrorRegistry{RegistriesConf: conf, CABundle: cm.Data[MirrorCAKey]}
	if !m.configured() {
		return nil, nil
	}
	return m, nil
}

// discoveryMirrors is what an InfraEnv's discovery image gets: its own
// mirror registry, else the hub's; never the cluster's.
func (s *Service) discoveryMirrors(ctx context.Context, own *MirrorRegistry) (*MirrorRegistry, error) {
	if own != nil {
		return own, nil
	}
	return s.hubMirrors(ctx)
}

// installMirrors are the mirrors an install-config gets: the
// AgentClusterInstall's own, else the hub's.
func (s *Service) installMirrors(ctx context.Context, aci *hiveextv1beta1.AgentClusterInstall) (*MirrorRegistry, error) {
	if r := aci.Spec.MirrorRegistryRef; r != nil {
		ns := r.Namespace
		if ns == "" {
			ns = aci.Namespace
		}
		return s.mirrorRegistryOf(ctx, ns, r.Name)
	}
	return s.hubMirrors(ctx)
}
