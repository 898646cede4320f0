package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The verdict on the real run does not depend on the random parts of its
// names: re-drawn consistently within each observation, the run gives the
// same aspects, the same verdicts and the same registry statuses.
// (scrub_property_test.go checks the same on synthetic structures.)
func TestRealVerdictIgnoresRandomParts(t *testing.T) {
	reg, base := builtIn(t), realPairs(t)
	want := mustBuild(t, base, reg, DefaultOptions())
	for seed := int64(1); seed <= 5; seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rd := newRedraw(seed)
			pairs := make([]Pair, len(base))
			for i, p := range base {
				pairs[i] = Pair{Scenario: p.Scenario, A: rd.observation(t, p.A), B: rd.observation(t, p.B)}
				for _, side := range [][2]*Observation{{p.A, pairs[i].A}, {p.B, pairs[i].B}} {
					if got, want := Aspects(side[1]), Aspects(side[0]); !reflect.DeepEqual(got, want) {
						t.Errorf("%s %s: aspects changed with the random parts:\n%s", p.Scenario, side[0].Flow, aspectDiff(want, got))
					}
				}
			}
			rd.checkRun(t)
			got := mustBuild(t, pairs, reg, DefaultOptions())
			if g, w := verdictText(got), verdictText(want); g != w {
				t.Errorf("verdict changed with the random parts:\n got  %s\n want %s", g, w)
			}
		})
	}
}

// verdictText is everything a report decides: per aspect its lines,
// verdict and entries, and every entry's status.
func verdictText(r *Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "failed=%t %+v\n", r.Failed(), r.Counts())
	for _, s := range r.Scenarios {
		for _, a := range s.Aspects {
			fmt.Fprintf(&b, "%s %s %s %q %q", s.Scenario, a.Aspect, a.Verdict, a.MAPI, a.CAPI)
			for _, e := range append(slices.Clone(a.Known), a.Miscounted...) {
				b.WriteString(" " + e.ID)
			}
			b.WriteString("\n")
		}
	}
	for _, e := range r.Entries {
		fmt.Fprintf(&b, "%s %s %v\n", e.Entry.ID, e.Status, e.ReproducedIn)
	}
	return b.String()
}

// The random parts of the lab's names and identities, as they show in an
// observation's JSON.
var (
	uuidText = regexp.MustCompile(`\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
	// digestText is a SHA-256 in hex: image checksums, user data digests.
	digestText = regexp.MustCompile(`\b[0-9a-f]{64}\b`)
	macText    = regexp.MustCompile(`\b52:54:00(:[0-9a-f]{2}){3}\b`)
	labIPText  = regexp.MustCompile(`\b10\.\d{1,3}\.\d{1,3}\.\d{1,3}\b`)
	// templateHashText is the hash of a machine-template-hash label value.
	templateHashText = regexp.MustCompile(`("machine-template-hash": ")(\d+)-`)
	// labRunText is the hex of the lab's run ID (pl-<hex>), which its
	// libvirt domains, and so CAPI's Node names, carry.
	labRunText = regexp.MustCompile(`\bpl-([0-9a-f]{5,6})\b`)
	// suffixText is a generateName suffix: 5 characters of its alphabet
	// after a dash that follows a word character.
	suffixText = regexp.MustCompile(`-([bcdfghjklmnpqrstvwxz2456789]{5})\b`)
)

// redraw replaces the random parts of observations with fresh ones, the
// same old value by the same new one within an observation.
type redraw struct {
	r     *rand.Rand
	memo  map[string]string
	used  map[string]bool
	kinds map[string]int
	// run counts what was re-drawn over every observation.
	run map[string]int
}

func newRedraw(seed int64) *redraw {
	return &redraw{r: rand.New(rand.NewSource(seed)), run: map[string]int{}}
}

// redrawnKinds are the random parts the real run has.
var redrawnKinds = []string{"uuid", "digest", "mac", "ip", "lab-run", "infra-id", "suffix"}

// checkRun fails the test if the run had a kind of random part nowhere
// (the real run has them all; a ZTP day-1 observation has no digests,
// its hosts being provisioned without image or user data).
func (rd *redraw) checkRun(t *testing.T) {
	t.Helper()
	for _, kind := range redrawnKinds {
		if rd.run[kind] == 0 {
			t.Errorf("no %s re-drawn in any observation", kind)
		}
	}
}

// observation returns o with its random parts re-drawn. It fails the test
// if one is left.
func (rd *redraw) observation(t *testing.T, o *Observation) *Observation {
	t.Helper()
	rd.memo, rd.used, rd.kinds = map[string]string{}, map[string]bool{}, map[string]int{}
	data, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	text = uuidText.ReplaceAllStringFunc(text, func(v string) string { return rd.fresh("uuid", v, rd.uuid) })
	text = digestText.ReplaceAllStringFunc(text, func(v string) string {
		return rd.fresh("digest", v, func() string { return rd.chars("0123456789abcdef", 64) })
	})
	text = macText.ReplaceAllStringFunc(text, func(v string) string {
		return rd.fresh("mac", v, func() string {
			return fmt.Sprintf("52:54:00:%02x:%02x:%02x", rd.r.Intn(256), rd.r.Intn(256), rd.r.Intn(256))
		})
	})
	text = labIPText.ReplaceAllStringFunc(text, func(v string) string {
		return rd.fresh("ip", v, func() string { return fmt.Sprintf("10.%d.%d.%d", rd.r.Intn(256), rd.r.Intn(256), 1+rd.r.Intn(254)) })
	})
	text = replaceGroup(text, templateHashText, 2, func(v string) string {
		return rd.fresh("template-hash", v, func() string { return fmt.Sprint(1_000_000_000 + rd.r.Int63n(3_000_000_000)) })
	})
	text = replaceGroup(text, labRunText, 1, func(v string) string {
		return rd.fresh("lab-run", v, func() string { return rd.chars("0123456789abcdef", 6) })
	})
	text = rd.infraIDs(t, o, text)
	text = replaceSuffixes(text, func(v string) string {
		return rd.fresh("suffix", v, func() string { return rd.chars(generateNameAlphabet, 5) })
	})

	for kind, n := range rd.kinds {
		rd.run[kind] += n
	}
	for old := range rd.memo {
		if strings.Contains(text, old) {
			t.Fatalf("%s %s: %q is still there after re-drawing", o.Scenario, o.Flow, old)
		}
	}
	out, err := Decode(bytes.NewReader([]byte(text)))
	if err != nil {
		t.Fatalf("%s %s re-drawn: %v", o.Scenario, o.Flow, err)
	}
	return out
}

// infraIDs re-draws the random hex that ends each infrastructure ID.
func (rd *redraw) infraIDs(t *testing.T, o *Observation, text string) string {
	t.Helper()
	for _, id := range o.Identifiers {
		i := strings.LastIndexByte(id.Value, '-')
		if id.Kind != "infra-id" || i < 0 {
			t.Fatalf("%s %s: identifier %+v is not an infrastructure ID <cluster>-<hex>", o.Scenario, o.Flow, id)
		}
		hex := id.Value[i+1:]
		re := regexp.MustCompile(`-` + regexp.QuoteMeta(hex) + `\b`)
		text = re.ReplaceAllStringFunc(text, func(string) string {
			return "-" + rd.fresh("infra-id", hex, func() string { return rd.chars("0123456789abcdef", len(hex)) })
		})
	}
	return text
}

// fresh returns old's new value, drawing it with mk the first time; new
// values differ from their old one and from each other. kind counts what
// was re-drawn.
func (rd *redraw) fresh(kind, old string, mk func() string) string {
	if v, ok := rd.memo[old]; ok {
		return v
	}
	v := mk()
	for rd.used[v] || v == old {
		v = mk()
	}
	rd.memo[old], rd.used[v] = v, true
	rd.kinds[kind]++
	return v
}

func (rd *redraw) chars(alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rd.r.Intn(len(alphabet))]
	}
	return string(b)
}

func (rd *redraw) uuid() string {
	return fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x", rd.r.Uint32(), rd.r.Intn(1<<16), rd.r.Intn(1<<12), 0x8000|rd.r.Intn(1<<14), rd.r.Int63n(1<<48))
}

// replaceGroup replaces submatch group of every match of re.
func replaceGroup(text string, re *regexp.Regexp, group int, f func(string) string) string {
	var b strings.Builder
	last := 0
	for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
		start, end := m[2*group], m[2*group+1]
		b.WriteString(text[last:start])
		b.WriteString(f(text[start:end]))
		last = end
	}
	return b.String() + text[last:]
}

// replaceSuffixes replaces every generateName suffix: a suffixText match
// right after a word character.
func replaceSuffixes(text string, f func(string) string) string {
	var b strings.Builder
	last := 0
	for _, m := range suffixText.FindAllStringSubmatchIndex(text, -1) {
		if m[0] == 0 || !isWordByte(text[m[0]-1]) {
			continue
		}
		b.WriteString(text[last:m[2]])
		b.WriteString(f(text[m[2]:m[3]]))
		last = m[3]
	}
	return b.String() + text[last:]
}
