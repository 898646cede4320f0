// Package controlplane runs a local Kubernetes control plane from real
// upstream programs: etcd, kube-apiserver and, when asked, the
// kube-controller-manager. The hub's local backend is one; each workload
// ("spoke") cluster of the local profile is another.
//
// Everything binds to 127.0.0.1 on free ports; certificates, the etcd data
// directory and an admin kubeconfig live under one directory that Stop
// removes. Each process is recorded with a state.Tracker as soon as it runs.
//
// It imports lab/process, lab/pki, lab/state and lab/binaries only.
package controlplane
