// Package release reads OpenShift release images: it resolves a release
// tag to a digest (through the mirrors a registries.conf names, trusting
// its CA bundle) and reads the release's Kubernetes version from the
// image's release-manifests/image-references, with go-containerregistry.
//
// It must not import controller code or anything of the lab; the lab may
// use it (and releasetest) to serve and read release images of its own.
package release
