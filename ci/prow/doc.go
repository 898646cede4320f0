// Package prow holds paritylab's periodic CI jobs and the tests that hold
// them to what their CI systems accept:
//
//   - openshift/: the ci-operator configuration and step-registry
//     components, laid out as in openshift/release, from which prowgen
//     generates OpenShift CI's periodics. The jobs lease a bare-metal host
//     with KVM from ofcir and run `make e2e-parity` on it.
//   - vanilla/: the same jobs as plain Prow periodics (a decorated,
//     privileged pod with /dev/kvm), with a minimal Prow config to load
//     them. `make test` runs Prow's own checkconfig on them.
//
// The tests check the ci-operator configuration's structure by the rules
// ci-tools applies (ci-tools cannot be built here), that both configs
// describe the same jobs over labels the parity suite has, and that the
// JUnit the suite writes is what the dashboards read: junit*.xml files
// whose testcase names are unique and the same run after run.
package prow
