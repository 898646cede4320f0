// Package crds gathers the CustomResourceDefinitions the hub needs and
// installs them.
//
// Where a Go module ships a CRD manifest (Cluster API, the OpenShift machine
// API), it is read from that module's files in the module cache at the
// version this binary was built with: nothing upstream is copied into this
// repository. Where no module ships one (metal3, CAPM3, hive), `make
// generate` runs controller-gen on the Go types and the result is embedded
// from generated/; the assisted-service API comes from providers/config,
// which the providers generate and embed.
//
// It must not import anything above lab.
package crds
