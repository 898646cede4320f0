package openshiftassistedcontrolplane

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/paritylab/paritylab/providers/controlplane/internal/imageregistry"
)

// reconcileRegistryManifests writes the install manifests of the mirrors
// spec.config.imageRegistryRef names into the ConfigMap
// additional-registry-config, which the AgentClusterInstall lists. As
// CAPOA's, that ConfigMap has one fixed name per namespace and no owner:
// control planes of one namespace share it.
func (r *Reconciler) reconcileRegistryManifests(ctx context.Context, s *scope) error {
	ref := s.cp.Spec.Config.ImageRegistryRef
	if ref == nil {
		return nil
	}
	registries := &corev1.ConfigMap{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: s.cp.Namespace, Name: ref.Name}, registries); err != nil {
		return fmt.Errorf("get image registry ConfigMap %s (spec.config.imageRegistryRef): %w", ref.Name, err)
	}
	data, err := imageregistry.ManifestsData(registries)
	if err != nil {
		return fmt.Errorf("spec.config.imageRegistryRef: %w", err)
	}
	cm := &corev1.ConfigMap{}
	cm.Name, cm.Namespace = imageregistry.ManifestsConfigMapName, s.cp.Namespace
	if _, err := controllerutil.CreateOrPatch(ctx, r.Client, cm, func() error {
		cm.Data = data
		return nil
	}); err != nil {
		return fmt.Errorf("write ConfigMap %s: %w", cm.Name, err)
	}
	return nil
}
