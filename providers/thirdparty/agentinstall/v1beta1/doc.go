// Package v1beta1 is paritylab's own Go mirror of the assisted-service
// Kubernetes API served under agent-install.openshift.io/v1beta1: the
// InfraEnv, Agent and NMStateConfig kinds.
//
// The upstream module (github.com/openshift/assisted-service/api) cannot be
// imported because it needs an assisted-service models module the Go proxy
// does not serve. These types are written here instead and keep upstream's
// API group, version, kinds, resource names, JSON field names and enum
// values, so manifests written for a real assisted-service decode into them
// and objects built with them are understood by a real assisted-service.
// They cover the fields the ZTP and CAPI agent flows use; the string
// constants controllers compare against (conditions, reasons, labels, roles,
// states) are in constants.go.
//
// It must not import anything of paritylab: it sits below every other
// package and may be vendored or replaced by the upstream API one day.
package v1beta1
