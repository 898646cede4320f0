package results

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
)

// Host state lines read "<provisioning state> operational=<status>
// power=<on|off> online=<bool>". An entry that explains host states must
// pin all three values to literals: operational=error or power=off must
// never pass for operational=OK or power=on because a pattern left the
// value open. checkHostStatePattern enforces it on the parsed pattern
// (regexp/syntax): it expands alternations and optional parts into every
// sequence the pattern can match, and wherever a sequence names one of the
// keys, it must name all three, each followed by literal characters up to
// the next space. A pattern that names none of them must not match host
// state lines with canary values.

var hostStateKeys = []string{"operational=", "power=", "online="}

// hostProvisioningStates are BareMetalHost status.provisioning.state
// values (metal3 v1alpha1), and "(none)" for an empty one.
var hostProvisioningStates = []string{
	"(none)", "unmanaged", "registering", "match profile", "preparing", "ready", "available", "provisioning",
	"provisioned", "externally provisioned", "deprovisioning", "inspecting", "powering off before delete", "deleting",
}

// maxSequences bounds the expansion; a pattern with more alternatives than
// this is too complex to check and is rejected.
const maxSequences = 512

// atom is one literal rune (node nil) or a part of a pattern that can match
// more than one string (node set): a repetition, any character, a wide
// class.
type atom struct {
	r    rune
	node *syntax.Regexp
}

func checkHostStatePattern(p string) error {
	re, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return fmt.Errorf("host state pattern %q: %w", p, err)
	}
	seqs, ok := expand(re.Simplify(), new(int))
	if !ok {
		return fmt.Errorf("host state pattern %q has too many alternatives to check; split it", p)
	}
	for _, seq := range seqs {
		if err := checkHostStateSequence(seq); err != nil {
			return fmt.Errorf("host state pattern %q: %w; write operational=, power= and online= with literal values, e.g. power=on", p, err)
		}
	}
	full := regexp.MustCompile(`^(?:` + p + `)$`)
	for _, state := range hostProvisioningStates {
		canary := state + " operational=paritylab-canary power=paritylab-canary online=paritylab-canary"
		if full.MatchString(canary) {
			return fmt.Errorf("host state pattern %q matches %q: it accepts any operational status, power and online; pin them to literal values", p, canary)
		}
	}
	return nil
}

// checkHostStateSequence checks one expanded sequence.
func checkHostStateSequence(seq []atom) error {
	named := 0
	for _, key := range hostStateKeys {
		positions := literalIndexes(seq, key)
		if len(positions) > 0 {
			named++
		}
		for _, at := range positions {
			if err := literalValueAfter(seq, at+len(key), key); err != nil {
				return err
			}
		}
		for _, a := range seq {
			if a.node != nil && strings.Contains(a.node.String(), strings.TrimSuffix(key, "=")) {
				return fmt.Errorf("%s sits inside a repetition (%s), where its value cannot be checked", key, a.node)
			}
		}
	}
	if named > 0 && named < len(hostStateKeys) {
		return fmt.Errorf("it names some of %s but not all; a key left out is a key left open", strings.Join(hostStateKeys, ", "))
	}
	return nil
}

// literalIndexes returns where key starts as literal runes in seq.
func literalIndexes(seq []atom, key string) []int {
	var out []int
	k := []rune(key)
	for i := 0; i+len(k) <= len(seq); i++ {
		match := true
		for j, r := range k {
			if seq[i+j].node != nil || seq[i+j].r != r {
				match = false
				break
			}
		}
		if match {
			out = append(out, i)
		}
	}
	return out
}

// literalValueAfter holds the atoms from start up to the next literal space
// (or the end) to be literal.
func literalValueAfter(seq []atom, start int, key string) error {
	for i := start; i < len(seq); i++ {
		if seq[i].node == nil && seq[i].r == ' ' {
			return nil
		}
		if seq[i].node != nil {
			return fmt.Errorf("a wildcard (%s) follows %s", seq[i].node, key)
		}
	}
	return nil
}

// expand returns every sequence of atoms re can match, with alternations,
// optional parts and small character classes spelt out; false when there
// are more than maxSequences.
func expand(re *syntax.Regexp, count *int) ([][]atom, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		seq := make([]atom, 0, len(re.Rune))
		for _, r := range re.Rune {
			seq = append(seq, atom{r: r})
		}
		return [][]atom{seq}, true
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return [][]atom{nil}, true
	case syntax.OpCapture:
		return expand(re.Sub[0], count)
	case syntax.OpConcat:
		return expandConcat(re.Sub, count)
	case syntax.OpAlternate:
		return expandAlternate(re.Sub, count)
	case syntax.OpQuest:
		sub, ok := expand(re.Sub[0], count)
		return append([][]atom{nil}, sub...), ok && bump(count, len(sub)+1)
	case syntax.OpCharClass:
		if runes, small := smallClass(re); small {
			out := make([][]atom, 0, len(runes))
			for _, r := range runes {
				out = append(out, []atom{{r: r}})
			}
			return out, bump(count, len(out))
		}
	}
	return [][]atom{{{node: re}}}, true
}

func expandConcat(subs []*syntax.Regexp, count *int) ([][]atom, bool) {
	out := [][]atom{nil}
	for _, sub := range subs {
		parts, ok := expand(sub, count)
		if !ok || !bump(count, len(out)*len(parts)) {
			return nil, false
		}
		next := make([][]atom, 0, len(out)*len(parts))
		for _, head := range out {
			for _, tail := range parts {
				next = append(next, append(append([]atom(nil), head...), tail...))
			}
		}
		out = next
	}
	return out, true
}

func expandAlternate(subs []*syntax.Regexp, count *int) ([][]atom, bool) {
	var out [][]atom
	for _, sub := range subs {
		parts, ok := expand(sub, count)
		if !ok {
			return nil, false
		}
		out = append(out, parts...)
	}
	return out, bump(count, len(out))
}

func bump(count *int, n int) bool {
	*count += n
	return *count <= maxSequences*8 && n <= maxSequences
}

// smallClass spells out a character class of at most 8 runes (the parser
// turns "a|b" into [ab]); wider classes, and negated ones, stay wildcards.
func smallClass(re *syntax.Regexp) ([]rune, bool) {
	var runes []rune
	for i := 0; i+1 < len(re.Rune); i += 2 {
		lo, hi := re.Rune[i], re.Rune[i+1]
		if hi-lo >= 8 || len(runes)+int(hi-lo)+1 > 8 {
			return nil, false
		}
		for r := lo; r <= hi; r++ {
			runes = append(runes, r)
		}
	}
	return runes, len(runes) > 0
}
