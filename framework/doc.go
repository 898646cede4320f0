// Package framework is what the ginkgo suites stand on: a lab handle the
// suite brings up once (SynchronizedBeforeSuite) and shares, per-spec
// namespaces, waiters whose intervals come from an e2e config file in the
// Cluster API test framework's format (ci/e2e/local.yaml), recorders that
// watch objects and events and turn what they saw into results
// Observations, and artifact collection when a spec fails.
//
// It reuses sigs.k8s.io/cluster-api/test/framework where that fits: the
// E2EConfig type and its interval lookup, and ClusterProxy for the hub and
// the workload clusters. What the CAPI framework assumes and the lab does
// not have (kind, docker, kubeadm providers) is left out.
package framework
