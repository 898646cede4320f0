// Package binaries finds the programs that `make deps` builds from Go
// modules into a version-keyed cache outside the clone: the control plane
// (kube-apiserver, kube-controller-manager, etcd, from lab/binaries/modules)
// and the upstream CAPM3 controller manager (its own main package, at the
// version go.mod pins). No prebuilt binary is ever downloaded.
//
// It imports nothing from the rest of the lab.
package binaries
