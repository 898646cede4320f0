// Package ignition renders the install-time ignition overrides the
// bootstrap provider puts on an Agent: the kubelet's provider ID and the
// Cluster API bootstrap sentinel file.
//
// It imports nothing of paritylab.
package ignition
