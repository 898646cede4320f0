// Package v1beta1 is paritylab's own Go mirror of the assisted-service
// hive extension API served under extensions.hive.openshift.io/v1beta1: the
// AgentClusterInstall kind, which a hive ClusterDeployment references as its
// cluster install when assisted-service installs the cluster.
//
// The upstream module (github.com/openshift/assisted-service/api) cannot be
// imported because it needs an assisted-service models module the Go proxy
// does not serve. These types are written here instead and keep upstream's
// API group, version, kind, resource name, short name, JSON field names and
// enum values, so manifests written for a real assisted-service decode into
// them and objects built with them are understood by a real
// assisted-service. Where upstream uses hive's types (image set reference,
// cluster metadata, install conditions) so do these. The string constants
// controllers compare against (conditions, reasons, cluster states) are in
// constants.go.
//
// It must not import anything of paritylab: it sits below every other
// package and may be replaced by the upstream API one day.
package v1beta1
