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
// NewHandler is the proxy (docs/plans/hypershift.md, X2): a reverse proxy
// to the hub with the lab's credentials, where the enhancement's sidecar
// uses its pod's identity. It asks the hub for its client's JSON media
// ranges only (a metadata-only read stays one) and for legacy discovery,
// inflates compressed answers before translating them, refuses request
// bodies it cannot rewrite (protobuf, CBOR) with 415, and translates
// watch streams event by event. Serve runs it on loopback; its
// RESTConfig asks for JSON, since controller-runtime sends Kubernetes'
// own types as protobuf otherwise. ConversionShim serves the private
// CRDs' conversion with Cluster API's webhook. A JSON patch's values are
// translated too, a bare group or group/version where the operation's
// path ends in apiGroup or apiVersion. Not translated: webhook
// configurations' apiGroups lists (nothing registers webhooks for the
// private groups).
package apiproxy
