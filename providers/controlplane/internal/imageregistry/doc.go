// Package imageregistry turns the registry configuration an
// OpenshiftAssistedControlPlane names (spec.config.imageRegistryRef: a
// ConfigMap with registries.conf and ca-bundle.crt) into the day-1 extra
// manifests CAPOA gives the install: an ImageDigestMirrorSet and an
// ImageTagMirrorSet named additional-registry, the CA as the ConfigMap
// openshift-config/additional-registry-certificate, and
// images.config.openshift.io/cluster trusting that CA and listing the
// insecure mirrors. They go into the ConfigMap additional-registry-config
// beside the control plane, which the AgentClusterInstall lists among its
// manifestsConfigMapRefs.
//
// This is all CAPOA does with the mirrors: the discovery image and the
// install-config get no mirror configuration from it (that comes only from
// the hub-wide AgentServiceConfig), and the release image is read where
// the control plane names it, never through a mirror. The reading of
// registries.conf is CAPOA's too: a [[registry]] table's location and its
// [[registry.mirror]] tables' location, insecure and pull-from-mirror;
// prefix, blocked and mirror-by-digest-only are not read.
package imageregistry
