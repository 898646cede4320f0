// Package capi runs the Cluster API core controllers and webhooks from
// sigs.k8s.io/cluster-api in this process against the hub, wired as CAPI's
// own manager wires them (same reconcilers, same webhooks, same indexes), so
// what the lab observes is upstream Cluster API behaviour.
//
// It must not import anything above lab.
package capi
