// Package registry runs a container registry on loopback for the lab:
// Debian's docker-registry (the CNCF distribution registry, the one
// OpenShift's mirror registries and `oc adm release mirror` are tested
// against), as a child process of the lab with its own configuration,
// storage directory and log, recorded in the lab's ledger so that
// `paritylab lab down` ends it and removes its data after a crash.
//
// The registry serves plain HTTP on 127.0.0.1 only: go-containerregistry,
// which the lab and the providers read and write images with, talks plain
// HTTP to loopback registries, and nothing off the host ever reaches it.
//
// It must not import anything above lab.
package registry
