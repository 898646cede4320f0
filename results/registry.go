package results

import (
	_ "embed"
	"fmt"
	"os"
	"regexp"
	"time"

	"sigs.k8s.io/yaml"
)

// RegistryAPIVersion names the format of the known-divergence registry.
const RegistryAPIVersion = "paritylab.io/known-divergences/v1"

//go:embed known-divergences.yaml
var defaultRegistry []byte

// Registry is the reviewed list of known, explained divergences between
// the two sides of scenarios: the MAPI and the CAPI flow in most (see
// SidesOf). Entries name the sides mapi (side A) and capi (side B)
// whatever flows their scenarios compare: in hypershift-private-types an
// entry's mapi: patterns match lines of CAPI on the standard types. The
// loader (ParseRegistry) holds every entry
// to the rules in registry_rules.go, so that no entry waves through more
// than the behaviour it names.
type Registry struct {
	// APIVersion is RegistryAPIVersion.
	APIVersion string `json:"apiVersion"`
	// Declared are the scenarios that exist; every entry's scenario globs
	// must match one of them.
	Declared []string `json:"scenarios"`
	// Entries are the known divergences, tried in order.
	Entries []*Entry `json:"divergences"`
}

// Entry is one known divergence: where it shows (scenario and aspect), which
// differing lines it explains, why, and where upstream the behaviour lives.
type Entry struct {
	// ID identifies the entry; lower-case words and dashes.
	ID string `json:"id"`
	// Summary is a one-line title.
	Summary string `json:"summary"`
	// Scenarios are glob patterns (path.Match) of the scenarios the entry
	// applies to, each matching a declared scenario; empty means every
	// scenario.
	Scenarios []string `json:"scenarios,omitempty"`
	// Aspect is a glob pattern (path.Match; "*" stops at "/") of the aspects
	// the entry applies to, e.g. nodes/providerID or objects/*/phases.
	Aspect string `json:"aspect"`
	// MAPI and CAPI (mapi: and capi:) are regular expressions, each
	// matching a whole line, of the lines only side A or side B has which
	// the entry explains. An entry with only one explains no line of the
	// other side.
	MAPI []string `json:"mapi,omitempty"`
	CAPI []string `json:"capi,omitempty"`
	// Except are regular expressions of lines the entry never explains,
	// whichever flow has them.
	Except []string `json:"except,omitempty"`
	// Conditions explain condition lines (objects/<role>/conditions), which
	// take no regular expressions: the exact status of each condition type
	// per flow and lifecycle.
	Conditions *ConditionsSpec `json:"conditions,omitempty"`
	// PresentIn says the aspect exists under this side only (mapi: side A,
	// capi: side B); without it an aspect only one flow has is a
	// regression.
	PresentIn Flow `json:"presentIn,omitempty"`
	// CountsDiffer says why the entry may explain a different number of
	// MAPI and CAPI lines in an aspect; without it an entry that explains
	// lines of both flows must explain as many of each.
	CountsDiffer string `json:"countsDiffer,omitempty"`
	// RequireAll says the entry explains one behaviour each flow shows in
	// full: it explains its lines only when every one of its patterns
	// names a differing line of its flow, so a flow that lost part of the
	// behaviour (a drain event, one BMC operation) is a regression. Its
	// patterns fix the lines of each side, so it takes no countsDiffer.
	RequireAll bool `json:"requireAll,omitempty"`
	// Lines, when set, is how many differing lines the entry explains in
	// an aspect: an entry for the behaviour of one object (the Machine
	// the BMAC writes for a day-2 host, say) would otherwise explain the
	// same line on every other object of the aspect.
	Lines int `json:"lines,omitempty"`
	// UnhealthyByDesign says why the entry's scenario ends, on purpose,
	// with the objects whose conditions it explains unhealthy: a failure
	// the scenario injects and watches not being remediated (a health
	// check that may not remediate). It lets the live states of its
	// conditions be unhealthy; it takes conditions only, and scenarios
	// named exactly, one by one, never by a glob.
	UnhealthyByDesign string `json:"unhealthyByDesign,omitempty"`
	// Intermittent says which race of components both flows share decides
	// whether the entry's lines show, so that a run shows them under
	// either flow, both or neither: the entry names the same lines for
	// both flows and how many (lines), explains them under whichever flow
	// has them, and is never stale. It takes scenarios named one by one.
	Intermittent string `json:"intermittent,omitempty"`
	// Delay explains a duration instead of lines: one flow waits, by
	// upstream design, in the phase the aspect names (durations/<phase>),
	// which durations/total contains (registry_delay.go).
	Delay *DelaySpec `json:"delay,omitempty"`
	// Explanation says why the flows differ and why that is acceptable.
	Explanation string `json:"explanation"`
	// Upstream are the places in upstream code or docs that show the
	// behaviour of each side.
	Upstream []Reference `json:"upstream"`
	// Catalogue names the row of the parity catalogue the entry comes from.
	Catalogue string `json:"catalogue,omitempty"`

	mapiRE, capiRE, exceptRE []*regexp.Regexp
	conds                    compiledConditions
	delay                    time.Duration
}

// Reference points to upstream code or documentation.
type Reference struct {
	// Repository is a GitHub repository, owner/name.
	Repository string `json:"repository,omitempty"`
	// Path is a file or directory in Repository.
	Path string `json:"path,omitempty"`
	// Ref is the tag or branch Path is read at; default HEAD.
	Ref string `json:"ref,omitempty"`
	// URL is a document's address, for references outside a repository.
	URL string `json:"url,omitempty"`
	// Note says what to look for there.
	Note string `json:"note,omitempty"`
}

// Link returns a browsable address for the reference.
func (r Reference) Link() string {
	if r.URL != "" {
		return r.URL
	}
	ref := r.Ref
	if ref == "" {
		ref = "HEAD"
	}
	return fmt.Sprintf("https://github.com/%s/blob/%s/%s", r.Repository, ref, r.Path)
}

// String renders the reference for text reports.
func (r Reference) String() string {
	s := r.URL
	if r.Repository != "" {
		s = r.Repository + ": " + r.Path
		if r.Ref != "" {
			s += " @ " + r.Ref
		}
	}
	if r.Note != "" {
		s += " (" + r.Note + ")"
	}
	return s
}

// DefaultRegistry returns the registry built into this binary, from
// results/known-divergences.yaml.
func DefaultRegistry() (*Registry, error) {
	reg, err := ParseRegistry(defaultRegistry)
	if err != nil {
		return nil, fmt.Errorf("built-in known-divergence registry: %w", err)
	}
	return reg, nil
}

// LoadRegistry reads a registry file.
func LoadRegistry(file string) (*Registry, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read known-divergence registry: %w", err)
	}
	reg, err := ParseRegistry(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return reg, nil
}

// ParseRegistry decodes and validates a registry document. Unknown fields
// are errors.
func ParseRegistry(data []byte) (*Registry, error) {
	var reg Registry
	if err := decodeRegistry(data, &reg); err != nil {
		return nil, err
	}
	if err := reg.compile(); err != nil {
		return nil, fmt.Errorf("invalid known-divergence registry: %w", err)
	}
	return &reg, nil
}

// Entry returns the entry with the given id.
func (r *Registry) Entry(id string) *Entry {
	if r == nil {
		return nil
	}
	for _, e := range r.Entries {
		if e.ID == id {
			return e
		}
	}
	return nil
}

// Scenarios returns the scenarios the registry declares, in its order; a
// suite checks they are the scenarios it runs.
func (r *Registry) Scenarios() []string {
	if r == nil {
		return nil
	}
	return append([]string(nil), r.Declared...)
}

// decodeRegistry decodes a registry document without checking its rules;
// unknown fields are errors.
func decodeRegistry(data []byte, reg *Registry) error {
	if err := yaml.UnmarshalStrict(data, reg); err != nil {
		return fmt.Errorf("decode known-divergence registry: %w", err)
	}
	return nil
}
