package results

import (
	"regexp"
	"sort"
	"strings"
)

// Scrubbing replaces what differs between two runs of the same behaviour
// (names, UIDs, times, addresses, random suffixes) with placeholders. The
// rules look at the structure of the text, never at the letters a random
// part happens to have, so that the same structure always gives the same
// text. In order:
//
//  1. Patterns, anywhere in the text: RFC 3339 (and Go) times → <time>,
//     UUIDs → <uid>, MACs → <mac>, IPv4 and IPv6 addresses → <ip>.
//  2. Known names, in runs of name characters split into segments at "-"
//     and ".": at each segment, the longest known name that starts there
//     and ends at a segment boundary is replaced, so "worker-0.lab.local"
//     gives "<host>.lab.local" and "<infra-id>-worker-0-x7k2p" keeps its
//     tail. A string that is several things gets the placeholder of the
//     first category in newScrubber's order.
//  3. Generated suffixes: a segment of exactly the shape of a generateName
//     suffix that follows another segment after "-" → <rand>.
//
// Placeholders are atoms: they are never matched or replaced again, so
// scrub(scrub(x)) == scrub(x). Label values whose key says they are
// random are replaced by key instead (randomValueKeys).

// Placeholders that stand for what normalisation removes. An Identifier
// of kind k becomes <k>.
const (
	phNode      = "<node>"
	phHost      = "<host>"
	phName      = "<name>"
	phNamespace = "<namespace>"
	phCluster   = "<cluster>"
	phUID       = "<uid>"
	phTime      = "<time>"
	phIP        = "<ip>"
	phMAC       = "<mac>"
	phRand      = "<rand>"
	phHash      = "<hash>"
	phInfraID   = "<infra-id>"
)

// phIdentifier stands for an Identifier whose kind cannot be a placeholder
// word (Validate rejects such kinds; scrubbing must not leak them anyway).
const phIdentifier = "<identifier>"

// fixedPlaceholders are the placeholders every scrubber recognises as
// atoms, whatever the observation declares.
var fixedPlaceholders = []string{
	phNode, phHost, phName, phNamespace, phCluster, phUID, phTime, phIP, phMAC, phRand, phHash, phInfraID, phIdentifier,
}

// randomValueKeys are label and annotation keys whose values are hashes or
// random identifiers: the value is replaced by the key's placeholder text
// whatever it looks like, because its shape (digits, hex) would otherwise
// decide how much of it is scrubbed.
var randomValueKeys = map[string]string{
	// Cluster API: <32-bit hash of the template, decimal>-<5 random
	// generateName characters>, on MachineSets and their Machines.
	"machine-template-hash": phHash + "-" + phRand,
	// Deployments and DaemonSets: hashes of the pod template.
	"pod-template-hash":        phHash,
	"controller-revision-hash": phHash,
	// Not machine.openshift.io/cluster-api-cluster: its value is the
	// infrastructure ID on installer Machines but the ClusterDeployment's
	// name on the Machines assisted-service's BMAC creates, a difference
	// that must show. The infra-id Identifier scrubs the former.
}

// generateNameAlphabet is what Kubernetes' generateName draws its 5-character
// suffix from (k8s.io/apimachinery/pkg/util/rand): no vowels and no 0, 1, 3.
const (
	generateNameAlphabet  = "bcdfghjklmnpqrstvwxz2456789"
	generateNameSuffixLen = 5
)

var (
	// timeRE matches RFC 3339 times and Go's time.String form
	// ("2006-01-02 15:04:05 -0700 MST"). It has no leading \b: a time can
	// end in a word character ("Z"), and a time glued to it must match
	// whether or not the first has been replaced yet.
	timeRE = regexp.MustCompile(`\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2}| [+-]\d{4}( [A-Z][A-Za-z0-9+-]*)?)?`)
	uuidRE = regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
	macRE  = regexp.MustCompile(`(?i)\b[0-9a-f]{2}(:[0-9a-f]{2}){5}\b`)
	ipv4RE = regexp.MustCompile(`\b\d{1,3}(\.\d{1,3}){3}\b`)
	// ipv6RE matches 3 to 8 colon-separated hex groups that start and end
	// with a digit (so "::1" and "fe80::" are not matched); isIPv6 decides.
	ipv6RE = regexp.MustCompile(`(?i)\b[0-9a-f]{1,4}(:[0-9a-f]{0,4}){1,6}:[0-9a-f]{1,4}\b`)
	// identifierKindRE is what an Identifier's kind must be to name its
	// placeholder: lower-case words and dashes.
	identifierKindRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)
)

// scrubber replaces the names and UIDs one observation mentions, and any
// UUID, timestamp, MAC or IP address, with placeholders.
type scrubber struct {
	// names maps a known name (pattern-scrubbed, see add) to its placeholder.
	names map[string]string
	// maxSegments is the most segments a known name has; longer candidates
	// are not looked up.
	maxSegments int
	// atoms are the placeholders this scrubber treats as indivisible.
	atoms map[string]bool
}

// newScrubber learns the names of o. Where one string is several things
// (a BareMetalHost named like its Node), the first category in this order
// wins: identifiers (by kind, in name order), node, host, cluster, object
// name (objects, consumer refs, event objects), namespace, UID. The order
// is fixed and the placeholder depends only on the category, so neither
// the order of o's lists nor map iteration changes the result.
func newScrubber(o *Observation) *scrubber {
	s := emptyScrubber(o.Identifiers)
	s.addIdentifiers(o.Identifiers)
	for _, n := range o.Nodes {
		s.add(n.Name, phNode)
	}
	for _, h := range o.Hosts {
		s.add(h.Name, phHost)
	}
	for _, h := range o.Fixture.Hosts {
		s.add(h.Name, phHost)
	}
	s.add(o.Cluster, phCluster)
	s.addObjects(o)
	s.addUIDs(o)
	return s
}

// emptyScrubber knows no names yet but already every placeholder it may
// produce, so that names learned later are segmented the same way text is.
func emptyScrubber(ids []Identifier) *scrubber {
	s := &scrubber{names: map[string]string{}, atoms: map[string]bool{}}
	for _, ph := range fixedPlaceholders {
		s.atoms[ph] = true
	}
	for _, id := range ids {
		s.atoms[identifierPlaceholder(id.Kind)] = true
	}
	return s
}

// identifierPlaceholder is <kind>, or <identifier> for a kind that is not
// lower-case letters, digits and inner dashes.
func identifierPlaceholder(kind string) string {
	if !identifierKindRE.MatchString(kind) {
		return phIdentifier
	}
	return "<" + kind + ">"
}

func (s *scrubber) addIdentifiers(ids []Identifier) {
	sorted := append([]Identifier(nil), ids...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Kind < sorted[j].Kind })
	for _, id := range sorted {
		s.add(id.Value, identifierPlaceholder(id.Kind))
	}
}

func (s *scrubber) addObjects(o *Observation) {
	for _, obj := range o.Objects {
		s.add(obj.Name, phName)
	}
	for _, h := range o.Hosts {
		if h.ConsumerRef != nil {
			s.add(h.ConsumerRef.Name, phName)
		}
	}
	for _, e := range o.Events {
		s.add(e.Object.Name, phName)
	}
	for _, obj := range o.Objects {
		s.add(obj.Namespace, phNamespace)
	}
	for _, h := range o.Hosts {
		s.add(h.Namespace, phNamespace)
		if h.ConsumerRef != nil {
			s.add(h.ConsumerRef.Namespace, phNamespace)
		}
	}
	for _, e := range o.Events {
		s.add(e.Object.Namespace, phNamespace)
	}
}

func (s *scrubber) addUIDs(o *Observation) {
	for _, obj := range o.Objects {
		s.add(obj.UID, phUID)
	}
	for _, n := range o.Nodes {
		s.add(n.UID, phUID)
	}
	for _, h := range o.Hosts {
		s.add(h.UID, phUID)
	}
}

// add learns name unless a category before already did. The name is
// stored as the patterns step leaves it, since that is how text reaches
// the names step (an object named <uuid>-x is looked up as "<uid>-x"); a
// name the patterns replace whole needs no entry.
func (s *scrubber) add(name, placeholder string) {
	if name == "" || strings.ContainsAny(name, "<>") {
		return
	}
	key := scrubPatterns(name)
	if s.atomLen(key) == len(key) {
		return
	}
	if _, ok := s.names[key]; ok {
		return
	}
	s.names[key] = placeholder
	s.maxSegments = max(s.maxSegments, len(s.segments(key)))
}

// scrubValue scrubs the value of a label, annotation or property: by key
// when the key carries a hash or random ID, else like any text.
func (s *scrubber) scrubValue(key, value string) string {
	if ph, ok := randomValueKeys[key]; ok && value != "" {
		return ph
	}
	return s.scrub(value)
}

// scrub returns text with every UUID, time, MAC and IP address, every known
// name and every generated suffix replaced by its placeholder. Each step
// replaces whole words and leaves placeholders alone, so one pass is a
// fixed point: scrub(scrub(x)) == scrub(x).
func (s *scrubber) scrub(text string) string {
	if text == "" {
		return text
	}
	return s.scrubNames(scrubPatterns(text))
}

// scrubPatterns replaces the values that have a shape of their own. Times
// go first: their fractions and offsets would otherwise look like other
// things. The cheap Contains/Count checks skip the regexps for the many
// short lines that cannot match.
func scrubPatterns(text string) string {
	if strings.Contains(text, ":") {
		text = timeRE.ReplaceAllString(text, phTime)
	}
	if strings.Count(text, "-") >= 4 {
		text = uuidRE.ReplaceAllString(text, phUID)
	}
	if strings.Contains(text, ":") {
		text = macRE.ReplaceAllString(text, phMAC)
	}
	if strings.Count(text, ".") >= 3 {
		text = ipv4RE.ReplaceAllString(text, phIP)
	}
	if strings.Contains(text, ":") {
		text = replaceIPv6(text)
	}
	return text
}

// replaceIPv6 replaces the ipv6RE matches that are addresses: 8 groups, or
// fewer with "::". Whether a match counts never depends on its
// surroundings, and a part of a rejected match is rejected too, so a later
// pass finds nothing new.
func replaceIPv6(text string) string {
	return ipv6RE.ReplaceAllStringFunc(text, func(m string) string {
		if strings.Contains(m, "::") || strings.Count(m, ":") == 7 {
			return phIP
		}
		return m
	})
}

// isWordByte reports the bytes of a segment: the regexp word characters,
// so that segment and \b boundaries agree.
func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

func isSeparator(c byte) bool { return c == '-' || c == '.' }

// atomLen is the length of the placeholder text starts with, or 0.
func (s *scrubber) atomLen(text string) int {
	if len(text) < 3 || text[0] != '<' {
		return 0
	}
	end := strings.IndexByte(text, '>')
	if end < 0 || !s.atoms[text[:end+1]] {
		return 0
	}
	return end + 1
}

// scrubNames replaces known names and generated suffixes run by run; a run
// is a stretch of word bytes, separators and placeholders.
func (s *scrubber) scrubNames(text string) string {
	var b strings.Builder
	b.Grow(len(text))
	for i := 0; i < len(text); {
		j := s.runEnd(text, i)
		if j == i {
			b.WriteByte(text[i])
			i++
			continue
		}
		s.scrubRun(&b, text[i:j])
		i = j
	}
	return b.String()
}

func (s *scrubber) runEnd(text string, i int) int {
	for i < len(text) {
		switch c := text[i]; {
		case isWordByte(c) || isSeparator(c):
			i++
		case c == '<':
			n := s.atomLen(text[i:])
			if n == 0 {
				return i
			}
			i += n
		default:
			return i
		}
	}
	return i
}

// span is a segment of a run: run[start:end], without separators.
type span struct{ start, end int }

// segments splits a run at its separators; placeholders are kept whole
// (<infra-id> has a dash). Consecutive separators give empty segments.
func (s *scrubber) segments(run string) []span {
	var segs []span
	start := 0
	for i := 0; i < len(run); {
		if n := s.atomLen(run[i:]); n > 0 {
			i += n
			continue
		}
		if isSeparator(run[i]) {
			segs = append(segs, span{start, i})
			start = i + 1
		}
		i++
	}
	return append(segs, span{start, len(run)})
}

// scrubRun writes run with known names and generated suffixes replaced,
// scanning its segments left to right.
func (s *scrubber) scrubRun(b *strings.Builder, run string) {
	segs := s.segments(run)
	written := 0
	for k := 0; k < len(segs); k++ {
		if last, ph, ok := s.longestKnown(run, segs, k); ok {
			b.WriteString(run[written:segs[k].start])
			b.WriteString(ph)
			written = segs[last].end
			k = last
			continue
		}
		if s.isGeneratedSuffix(run, segs, k) {
			b.WriteString(run[written:segs[k].start])
			b.WriteString(phRand)
			written = segs[k].end
		}
	}
	b.WriteString(run[written:])
}

// longestKnown finds the longest known name made of segments k..last.
func (s *scrubber) longestKnown(run string, segs []span, k int) (last int, placeholder string, ok bool) {
	if segs[k].start == segs[k].end {
		return 0, "", false
	}
	for last = min(len(segs), k+s.maxSegments) - 1; last >= k; last-- {
		if ph, ok := s.names[run[segs[k].start:segs[last].end]]; ok {
			return last, ph, true
		}
	}
	return 0, "", false
}

// isGeneratedSuffix: segment k has exactly the shape of a generateName
// suffix and follows a non-empty segment after a dash. Real suffixes always
// have that shape; a fixed word either always has it or never, so the
// verdict never depends on which letters were drawn.
func (s *scrubber) isGeneratedSuffix(run string, segs []span, k int) bool {
	if k == 0 || run[segs[k].start-1] != '-' || segs[k-1].start == segs[k-1].end {
		return false
	}
	seg := run[segs[k].start:segs[k].end]
	if len(seg) != generateNameSuffixLen {
		return false
	}
	for i := 0; i < len(seg); i++ {
		if strings.IndexByte(generateNameAlphabet, seg[i]) < 0 {
			return false
		}
	}
	return true
}
