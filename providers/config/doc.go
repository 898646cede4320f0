// Package config serves the manifests the providers own or need, embedded
// in the binary: the CRDs and admission webhook configurations of the
// bootstrap, control-plane and agent infrastructure providers (generated
// by `make generate` from their markers into providers/<name>/config), and
// the CRDs of the assisted-service API they drive (generated into
// assisted/ from providers/thirdparty).
//
// Manager binaries, the lab and the providers' tests install from here, so
// every consumer sees the same manifests.
//
// It must not import anything of paritylab outside providers/.
package config
