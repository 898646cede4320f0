package results

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"
)

// RegistryAPIVersion names the format of the known-divergence registry.
const RegistryAPIVersion = "paritylab.io/known-divergences/v1"

//go:embed known-divergences.yaml
var defaultRegistry []byte

// Registry is the reviewed list of known, explained divergences between
// the MAPI and the CAPI flow.
type Registry struct {
	// APIVersion is RegistryAPIVersion.
	APIVersion string `json:"apiVersion"`
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
	// applies to; empty means every scenario.
	Scenarios []string `json:"scenarios,omitempty"`
	// Aspect is a glob pattern (path.Match; "*" stops at "/") of the aspects
	// the entry applies to, e.g. nodes/providerID or objects/*/phases.
	Aspect string `json:"aspect"`
	// MAPI and CAPI are regular expressions, each matching a whole line, of
	// the lines only that flow has which the entry explains. An entry with
	// neither explains every differing line of its aspects; an entry with
	// only one explains no line of the other flow.
	MAPI []string `json:"mapi,omitempty"`
	CAPI []string `json:"capi,omitempty"`
	// Except are regular expressions of lines the entry never explains,
	// whichever flow has them.
	Except []string `json:"except,omitempty"`
	// Explanation says why the flows differ and why that is acceptable.
	Explanation string `json:"explanation"`
	// Upstream are the places in upstream code or docs that show the
	// behaviour of each side.
	Upstream []Reference `json:"upstream"`
	// Catalogue names the row of the parity catalogue the entry comes from.
	Catalogue string `json:"catalogue,omitempty"`

	mapiRE, capiRE, exceptRE []*regexp.Regexp
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
	if err := yaml.UnmarshalStrict(data, &reg); err != nil {
		return nil, fmt.Errorf("decode known-divergence registry: %w", err)
	}
	if err := reg.compile(); err != nil {
		return nil, fmt.Errorf("invalid known-divergence registry: %w", err)
	}
	return &reg, nil
}

var entryID = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

func (r *Registry) compile() error {
	var errs []error
	if r.APIVersion != RegistryAPIVersion {
		errs = append(errs, fmt.Errorf("apiVersion %q is not %q", r.APIVersion, RegistryAPIVersion))
	}
	seen := map[string]bool{}
	for i, e := range r.Entries {
		if seen[e.ID] {
			errs = append(errs, fmt.Errorf("divergences[%d]: id %q is used twice", i, e.ID))
		}
		seen[e.ID] = true
		if err := e.compile(); err != nil {
			errs = append(errs, fmt.Errorf("divergences[%d] %q: %w", i, e.ID, err))
		}
	}
	return errors.Join(errs...)
}

func (e *Entry) compile() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if !entryID.MatchString(e.ID) {
		add("id must be lower-case words joined by dashes")
	}
	if strings.TrimSpace(e.Summary) == "" || strings.TrimSpace(e.Explanation) == "" {
		add("summary and explanation are required")
	}
	for _, g := range append([]string{e.Aspect}, e.Scenarios...) {
		if _, err := path.Match(g, ""); err != nil || g == "" {
			add("bad glob %q", g)
		}
	}
	if len(e.Upstream) == 0 {
		add("at least one upstream reference is required")
	}
	for _, ref := range e.Upstream {
		if (ref.Repository == "" || ref.Path == "") && ref.URL == "" {
			add("an upstream reference needs repository and path, or url")
		}
	}
	var err error
	if e.mapiRE, err = compileLines(e.MAPI); err != nil {
		add("mapi: %w", err)
	}
	if e.capiRE, err = compileLines(e.CAPI); err != nil {
		add("capi: %w", err)
	}
	if e.exceptRE, err = compileLines(e.Except); err != nil {
		add("except: %w", err)
	}
	return errors.Join(errs...)
}

func compileLines(patterns []string) ([]*regexp.Regexp, error) {
	res := make([]*regexp.Regexp, 0, len(patterns))
	for _, p := range patterns {
		re, err := regexp.Compile(`^(?:` + p + `)$`)
		if err != nil {
			return nil, fmt.Errorf("compile %q: %w", p, err)
		}
		res = append(res, re)
	}
	return res, nil
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
