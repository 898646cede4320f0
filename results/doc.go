// Package results turns what the two flows of a paired scenario did into a
// verdict people trust.
//
// A scenario driver fills an Observation (observation.go): which backend
// implemented each component, the fixture it ran on, object timelines,
// nodes, hosts, milestones, events and errors. Observations are JSON
// documents with a versioned schema (SchemaVersion, observation.schema.json).
//
// Aspects (aspects*.go) normalise one Observation into comparable facts:
// names, UIDs, addresses and timestamps are removed, providerIDs are reduced
// to their scheme, labels are normalised, durations are kept for ratio
// comparison. Besides the final state of nodes and hosts they cover each
// object's final condition statuses and reasons (live or deleted), the
// machine↔Node link through the providerID, a set's settled replica series,
// whether hosts were given shared or their own images and user data, Node
// identities (joined, kept, recreated, removed), BMC operations, Normal and
// Warning event reasons, the hardware the hosts reported and the durations
// between milestones. Objects a flow picked from a pool at random
// (Interchangeable) are compared by the transitions they made together.
//
// Every scenario compares two flows, its sides (sides.go, SidesOf): the
// MAPI flow (side A) and the CAPI flow (side B), except in the HyperShift
// scenarios, which compare CAPI on the standard types with CAPI on the
// private types, and a hosted cluster's CAPI before and after its
// migration to them. Side A is shown first; reports name each side by its
// title; the registry's mapi and capi keys mean side A and side B.
//
// Compare (diff.go) classifies every aspect of a pair as Parity,
// KnownDivergence or Regression. A flow that did not succeed makes the
// outcome aspect a Regression, also when both flows failed alike, and the
// scenario fails. Durations are judged by a tolerance (Options, which must
// be valid: Build and Compare return an error otherwise), and judged again
// with a flow's wait by upstream design taken off where a delay entry
// names it for one phase (registry_delay.go); different
// milestone plans, and a milestone only one flow reached, are
// regressions. Every other difference is a Regression unless the
// known-divergence Registry (registry*.go, known-divergences.yaml) explains
// each differing line and, when the aspect exists on one side only, says
// so (presentIn). An entry that explains lines of both flows pairs them
// one to one unless it says why the counts differ (countsDiffer); an entry
// for the behaviour of one object says how many lines it explains
// (lines). The
// loader rejects entries broader than the behaviour they name
// (registry_rules.go): entries without patterns, catch-all patterns,
// condition entries that accept an unhealthy live state
// (registry_polarity.go), host states with an open operational, power or
// online value, entries for scenarios the registry does not declare,
// entries for outcome or milestones, and duration entries other than a
// bounded delay of one flow in one phase. A registry entry that
// explains no difference of a run it was exercised by is reported as
// stale. Entries for scenarios that do not exist yet wait in
// catalogue/pending-divergences.yaml, which the loader does not read.
//
// Drivers record what both flows share under the same words: object roles
// (machine, machine-set, host, cluster-install, clusterversion, ...) name
// the part an object plays whatever its kind, milestones are declared once
// for both flows, and a role's Properties use the same keys (the registry
// relies on e.g. deletion.selectedBy=delete-annotation|policy for the
// Machine a scale-down removed). What is diffed: the outcome; the fixture
// (name, the hardware the hosts reported, versions, shape); the milestone
// plan and the durations between milestones; objects that have a role,
// role by role (count, phases, final condition statuses and reasons, the
// labels, annotations and properties the driver kept, machine links,
// replica series, provisioning); the Nodes at the end and the Node
// identities; the hosts (count, state, consumer, errors, annotations, BMC
// operations); Normal and Warning event reasons; errors. Objects of role
// node are Node identity records: they make nodes/identity and resolve
// machine links, and have no objects/node aspects. Not diffed, only shown:
// objects without a role, object names and times, condition and event
// messages (all in the HTML report's object timelines, which list every
// object recorded), and the run environment, run ID and backends (run
// metadata and each scenario's facts, in HTML and Markdown).
//
// A Report renders as JUnit XML for Prow and Jenkins (junit.go), a
// self-contained HTML page (html*.go, report.html.tmpl) and Markdown with
// the same content but the object timelines (markdown.go). The page shows
// the run's metadata as the observations recorded it (both values where
// flows disagree), a red header and a headline for every failed flow, the
// parity matrix, and per scenario what each flow ran on, its milestones
// with both durations, delta and ratio even within tolerance, every
// aspect's verdict with the lines and registry entries it was decided on,
// and a timeline of every object and host each flow recorded.
//
// results is a leaf library: it must not import any other package of this
// repository, so that suites, scenarios and the CLI can all use it.
package results
