// Package kind is the hub backend that runs the management cluster as a kind
// cluster (sigs.k8s.io/kind) on a local container engine (docker, podman or
// nerdctl). It is the profile for lab hosts with a container engine, where
// providers run inside the cluster; the local backend (lab/hub/local) is the
// default and needs no engine.
//
// Everything listens on loopback: the cluster's API server is bound to
// 127.0.0.1 and no other host ports are published. Create never touches the
// user's kubeconfig: kind merges into a private scratch file, and the admin
// kubeconfig is written (0600) only to Options.KubeconfigPath when set.
//
// It must not import anything above lab (framework, scenarios, suites).
package kind
