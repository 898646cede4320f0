// Package local is the hub backend that runs kube-apiserver and etcd as
// processes on this machine (lab/controlplane), the way openshift-install's
// local control plane does. No container engine is needed.
package local
