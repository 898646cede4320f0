// Package framework is what the ginkgo suites stand on: a lab handle the
// suite brings up once (SynchronizedBeforeSuite) and shares, per-spec
// namespaces, the e2e config file in the Cluster API test framework's
// format (ci/e2e/local.yaml) with its intervals and variables, a host
// pool, recorders that watch objects and events and turn what they saw
// into results Observations (with the hardware hosts report, the versions
// workload clusters report, the components the lab recorded it runs and
// the run's environment), and artifact collection when a spec fails.
//
// It reuses sigs.k8s.io/cluster-api/test/framework where that fits: the
// E2EConfig type and its interval lookup, and a ClusterProxy for the hub.
// Workload clusters are reached with plain controller-runtime clients, and
// scenarios write their own waits with gomega's Eventually and the
// config's intervals. What the CAPI framework assumes and the lab does not
// have (kind, docker, kubeadm providers) is left out.
package framework
