// Package testenv runs the providers' tests against a real API server:
// controller-runtime's envtest with the kube-apiserver and etcd `make deps`
// builds, the Cluster API core CRDs (from the module), hive's
// ClusterDeployment and ClusterImageSet, the assisted-service CRDs and the
// providers' own CRDs (the agent infrastructure provider's included) and
// validating webhooks, which the API server calls on a manager started
// here.
//
// Run is the body of a test package's TestMain; Options.CRDs installs a
// package's own stand-ins for APIs the environment lacks.
//
// It is for tests only. It must not import the lab: where it needs files
// the lab generates (hive's CRDs) or pins (the Kubernetes version of the
// envtest binaries) it reads them by path.
package testenv
