// Package discovery fetches a discovery ignition from assisted-service: the
// config that boots a host into the discovery agent, which the bootstrap
// provider hands to the Machine as its bootstrap data.
//
// It must not import controller code or anything of the lab.
package discovery
