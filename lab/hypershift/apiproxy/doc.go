// Package apiproxy translates between Cluster API's standard groups and
// HyperShift's private ones, as the API proxy of the "private CAPI types"
// enhancement (openshift/enhancements PR 1927, provisional) does for
// unmodified CAPI clients: they speak cluster.x-k8s.io, the hub stores
// cluster.hypershift.openshift.io.
//
// A request goes from standard to private, a response from private to
// standard: paths of mapped groups, the apiVersion of objects, of List
// items, of owner references, of managed fields and of embedded type
// metadata, discovery documents (the hub's own standard groups hidden),
// and CRD names and groups. Beyond the enhancement's text, it also maps
// the gaps the design leaves: apiGroup fields of v1beta2 references that
// name a mapped group. Label keys and selectors pass through as they
// are: they are not group references, and CAPI's constants must keep
// matching. kind is never changed.
//
// So far it holds the translation rules (docs/plans/hypershift.md, X2);
// the proxy server, watch streams and the conversion shim come next.
package apiproxy
