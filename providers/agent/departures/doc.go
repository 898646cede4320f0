// Package departures registers where paritylab's agent infrastructure
// provider (providers/agent) behaves differently from upstream's,
// openshift/cluster-api-provider-agent, as providers/capoa does for the
// bootstrap and control-plane providers against CAPOA: a difference that
// comes from one of these departures is not upstream's, so a report names
// them next to the provider in its backends line rather than a parity
// registry entry explaining it.
//
// The controllers' packages say the same in their comments; this is the
// short list a report shows.
//
// It must not import anything of paritylab: the lab and the results may
// read it.
package departures
