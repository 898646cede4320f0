// Package releasetest serves fake OpenShift release images from an
// in-memory registry (go-containerregistry's pkg/registry) on loopback, for
// tests of code that resolves releases: each image carries a
// release-manifests/image-references naming its OpenShift and Kubernetes
// versions, and nothing else.
//
// It must not import anything of the lab.
package releasetest
