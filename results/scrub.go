package results

import (
	"regexp"
	"strings"
)

// Placeholders that stand for what normalisation removes.
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
)

// placeholderWords are the words inside placeholders; a scrubber never
// replaces them again, which keeps scrubbing idempotent.
var placeholderWords = map[string]bool{
	"node": true, "host": true, "name": true, "namespace": true, "cluster": true,
	"uid": true, "time": true, "ip": true, "mac": true, "rand": true,
}

var (
	uuidRE = regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
	timeRE = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?`)
	macRE  = regexp.MustCompile(`(?i)\b[0-9a-f]{2}(:[0-9a-f]{2}){5}\b`)
	ipv4RE = regexp.MustCompile(`\b\d{1,3}(\.\d{1,3}){3}\b`)
	// randSuffixRE matches the 5-character suffix Kubernetes appends to
	// generateName (its alphabet has no vowels and no 0, 1, 3).
	randSuffixRE = regexp.MustCompile(`^([a-z0-9][a-z0-9.-]*)-[bcdfghjklmnpqrstvwxz2456789]{5}$`)
)

// scrubber replaces the names and UIDs one observation mentions, and any
// UUID, timestamp, MAC or IPv4 address, with placeholders.
type scrubber struct {
	names map[string]string
	// cluster is the workload cluster's name; see replaceRun.
	cluster string
}

// newScrubber learns the names of o. Where one string is several things
// (a BareMetalHost named like its Node), the first category wins: node,
// host, cluster, object, namespace, UID.
func newScrubber(o *Observation) *scrubber {
	s := &scrubber{names: map[string]string{}, cluster: o.Cluster}
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

func (s *scrubber) add(name, placeholder string) {
	if name == "" || placeholderWords[name] {
		return
	}
	if _, ok := s.names[name]; !ok {
		s.names[name] = placeholder
	}
}

// scrub returns text with every known name and every UUID, timestamp, MAC
// and IPv4 address replaced by its placeholder. A replacement can expose a
// new match (a UUID glued to a timestamp), so scrub repeats until nothing
// changes: scrub(scrub(x)) == scrub(x).
func (s *scrubber) scrub(text string) string {
	for range 8 {
		next := s.scrubOnce(text)
		if next == text {
			break
		}
		text = next
	}
	return text
}

func (s *scrubber) scrubOnce(text string) string {
	if text == "" {
		return text
	}
	text = s.replaceNames(text)
	if strings.Count(text, "-") >= 4 {
		text = uuidRE.ReplaceAllString(text, phUID)
	}
	if strings.Contains(text, ":") {
		text = timeRE.ReplaceAllString(text, phTime)
		text = macRE.ReplaceAllString(text, phMAC)
	}
	if strings.Count(text, ".") >= 3 {
		text = ipv4RE.ReplaceAllString(text, phIP)
	}
	return text
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_'
}

// replaceNames replaces runs of name characters that are known names.
func (s *scrubber) replaceNames(text string) string {
	var b strings.Builder
	changed := false
	for i := 0; i < len(text); {
		if !isNameByte(text[i]) {
			b.WriteByte(text[i])
			i++
			continue
		}
		j := i
		for j < len(text) && isNameByte(text[j]) {
			j++
		}
		run := text[i:j]
		inPlaceholder := i > 0 && text[i-1] == '<' && j < len(text) && text[j] == '>' && placeholderWords[run]
		repl := run
		if !inPlaceholder {
			repl = s.replaceRun(run)
		}
		changed = changed || repl != run
		b.WriteString(repl)
		i = j
	}
	if !changed {
		return text
	}
	return b.String()
}

// replaceRun maps one run: a known name, a known name followed by a domain
// (worker-0.lab.local), or a generated name (worker-x7k2p).
func (s *scrubber) replaceRun(run string) string {
	if ph, ok := s.names[run]; ok {
		return ph
	}
	for k := strings.LastIndexByte(run, '.'); k > 0; k = strings.LastIndexByte(run[:k], '.') {
		if ph, ok := s.names[run[:k]]; ok {
			return ph + run[k:]
		}
	}
	if m := randSuffixRE.FindStringSubmatch(run); m != nil {
		return m[1] + "-" + phRand
	}
	// An unknown name made of the cluster's name and a suffix is an ID
	// derived from it, like OpenShift's infrastructure ID (<cluster>-<id>)
	// in machine API labels.
	if s.cluster != "" && !placeholderWords[s.cluster] && strings.HasPrefix(run, s.cluster+"-") {
		return phCluster + "-" + phRand
	}
	return run
}
