// Package results turns what the two flows of a paired scenario did into a
// verdict people trust.
//
// A scenario driver fills an Observation (observation.go): which backend
// implemented each component, the fixture it ran on, object timelines,
// nodes, hosts, phase durations, events and errors. Observations are JSON
// documents with a versioned schema (SchemaVersion, observation.schema.json).
//
// Aspects (aspects*.go) normalise one Observation into comparable facts:
// names, UIDs, addresses and timestamps are removed, providerIDs are reduced
// to their scheme, labels are normalised, durations are kept for ratio
// comparison. Compare (diff.go) classifies every aspect of a MAPI/CAPI pair as
// Parity, KnownDivergence or Regression against the known-divergence
// Registry (registry.go, known-divergences.yaml); a registry entry that
// explains no difference of a run it was exercised by is reported as stale.
//
// Drivers record what both flows share under the same words: object roles
// (machine, machine-set, host, cluster-install, clusterversion, ...) name
// the part an object plays whatever its kind, phase names are the same in
// both flows, and a role's Properties use the same keys (the registry
// relies on e.g. deletion.selectedBy=delete-annotation|policy for the
// Machine a scale-down removed). Anything recorded is shown; only what has
// a role, and the nodes, hosts, phases, warnings and errors, is diffed.
//
// A Report renders as JUnit XML for Prow and Jenkins (junit.go), a Markdown
// summary (markdown.go) and a self-contained HTML page (html.go).
//
// results is a leaf library: it must not import any other package of this
// repository, so that suites, scenarios and the CLI can all use it.
package results
