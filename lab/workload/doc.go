// Package workload runs the workload ("spoke") clusters of the local lab
// profile: a local control plane (etcd, kube-apiserver and a
// kube-controller-manager running node lifecycle) that looks to the lab like
// a freshly installed OpenShift cluster.
//
// The API server authorizes with Node,RBAC and admits with NodeRestriction,
// so a lab node agent holding IssueNodeKubeconfig's certificate
// (CN=system:node:<name>, O=system:nodes) can do exactly what a kubelet with
// that identity can: register its own Node, update its status and renew its
// Lease, and nothing to other nodes. The real kube-controller-manager marks
// a Node whose heartbeats stop NotReady and taints it unreachable.
//
// Guests reach the API server through QEMU user-mode networking at
// 10.0.2.2:<port>, which its certificate names; KubeconfigFor and
// IssueNodeKubeconfig point at either address.
//
// The cluster carries OpenShift's config.openshift.io ClusterVersion and
// Infrastructure, the machine API and metal3 BareMetalHost APIs with their
// singletons, and a simulated cluster-version operator (package cvo) that
// applies spec.desiredUpdate through status.history.
//
// It imports lab/controlplane, lab/crds, lab/state and its own cvo package;
// nothing above lab.
package workload
