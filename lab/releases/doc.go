// Package releases builds the lab's OpenShift release payloads and pushes
// them into a registry: small OCI images that carry what the flows read
// from a real payload, and nothing they do not read.
//
// A release image has, as `oc adm release new` writes it:
//   - release-manifests/release-metadata: the Cincinnati metadata
//     (kind cincinnati-metadata-v0, the version, the versions it updates
//     from);
//   - release-manifests/image-references: an ImageStream named for the
//     version whose tags point at the component images by digest, with
//     their io.openshift.build.versions (hyperkube's carries the
//     Kubernetes version);
//   - the io.openshift.release label with the version in its config.
//
// Each component image is a one-layer image of its own, different per
// version, pushed by digest into the release's repository before the
// release that references it, as a mirrored release is laid out. The
// release is pushed by digest and then tagged <version>-<arch>.
//
// For disconnected flows, Push lays a source registry out as quay.io
// (ComponentRepository), and Mirror copies its releases into a mirror
// registry as oc-mirror does (openshift/release-images and
// openshift/release, by digest and tagged); OCMirrorSets and
// RegistriesConf describe those mirrors for containers/image and the
// cluster's mirror sets.
//
// It must not import anything above lab; it uses the providers' release
// package for the file paths and image names both sides agree on.
package releases
