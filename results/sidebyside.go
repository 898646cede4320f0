package results

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// rowKind says how the two sides of a side-by-side row relate; the HTML
// report uses it as a CSS class.
type rowKind string

const (
	rowSame    rowKind = "same"    // both flows have the line
	rowMAPI    rowKind = "mapi"    // only side A (MAPI) has the line
	rowCAPI    rowKind = "capi"    // only side B (CAPI) has the line
	rowChanged rowKind = "changed" // the one line of each flow differs
)

// row is one row of a side-by-side view, standing for Count equal rows;
// MAPI is side A's line, CAPI side B's.
type row struct {
	MAPI, CAPI string
	Kind       rowKind
	Count      int
}

// rows lines up the two flows' lines of an aspect: common lines side by
// side, differing lines alone on their side, repeats folded into a count.
// Duration aspects and aspects that differ in a single line each share one
// row.
func rows(a AspectResult) []row {
	if len(a.OnlyMAPI) == 1 && len(a.OnlyCAPI) == 1 && len(a.MAPI) == 1 && len(a.CAPI) == 1 {
		return []row{{MAPI: a.MAPI[0], CAPI: a.CAPI[0], Kind: rowChanged, Count: 1}}
	}
	return foldRepeats(alignRows(a.MAPI, a.CAPI))
}

func foldRepeats(rs []row) []row {
	var out []row
	for _, r := range rs {
		if n := len(out); n > 0 && out[n-1].MAPI == r.MAPI && out[n-1].CAPI == r.CAPI && out[n-1].Kind == r.Kind {
			out[n-1].Count++
			continue
		}
		r.Count = 1
		out = append(out, r)
	}
	return out
}

// alignRows merges two sorted line lists into rows.
func alignRows(m, c []string) []row {
	var out []row
	i, j := 0, 0
	for i < len(m) || j < len(c) {
		switch {
		case i < len(m) && j < len(c) && m[i] == c[j]:
			out = append(out, row{MAPI: m[i], CAPI: c[j], Kind: rowSame})
			i++
			j++
		case j >= len(c) || (i < len(m) && m[i] < c[j]):
			out = append(out, row{MAPI: m[i], Kind: rowMAPI})
			i++
		default:
			out = append(out, row{CAPI: c[j], Kind: rowCAPI})
			j++
		}
	}
	return out
}

// sideBySide renders an aspect's lines in two text columns headed by the
// sides' titles. A line only side A has is marked "-", a line only side B
// has "+", a changed value "~".
func sideBySide(sides Sides, a AspectResult) string {
	type textRow struct{ mark, left, right string }
	out := []textRow{{" ", sides.TitleA, sides.TitleB}, {" ", "", ""}}
	if len(a.MAPI) == 0 || len(a.CAPI) == 0 {
		out = append(out, textRow{" ", emptyNote(a.MAPIAbsent, len(a.MAPI)), emptyNote(a.CAPIAbsent, len(a.CAPI))})
	}
	for _, r := range rows(a) {
		out = append(out, textRow{rowMarks[r.Kind], times(r.MAPI, r.Count), times(r.CAPI, r.Count)})
	}
	width := 0
	for _, r := range out {
		width = max(width, utf8.RuneCountInString(r.left))
	}
	width = min(width, 72)
	out[1].left, out[1].right = strings.Repeat("-", width), strings.Repeat("-", width)
	var b strings.Builder
	for _, r := range out {
		pad := max(0, width-utf8.RuneCountInString(r.left))
		line := fmt.Sprintf("%s %s%s | %s", r.mark, r.left, strings.Repeat(" ", pad), r.right)
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// times appends a repeat count to a non-empty line: "Running (×3)".
func times(line string, n int) string {
	if line == "" || n <= 1 {
		return line
	}
	return fmt.Sprintf("%s (×%d)", line, n)
}

var rowMarks = map[rowKind]string{rowSame: " ", rowMAPI: "-", rowCAPI: "+", rowChanged: "~"}

func emptyNote(absent bool, n int) string {
	switch {
	case absent:
		return "(not observed)"
	case n == 0:
		return "(none)"
	}
	return ""
}

// backendLine renders a flow's backends as "component=implementation, ...".
func backendLine(o *Observation) string {
	if o == nil {
		return "(no observation)"
	}
	parts := make([]string, 0, len(o.Backends))
	for _, k := range sortedKeys(o.Backends) {
		parts = append(parts, k+"="+o.Backends[k])
	}
	return strings.Join(parts, ", ")
}

// backendDifferences describes the components the flows implement
// differently, e.g. "machine-api (MAPI mao, CAPI capi-core)".
func backendDifferences(s ScenarioResult) string {
	var parts []string
	sides := s.Sides()
	for _, k := range differingBackends(s.A, s.B) {
		parts = append(parts, fmt.Sprintf("%s (%s %s, %s %s)", k, sides.TitleA, orNone(s.A.Backends[k]), sides.TitleB, orNone(s.B.Backends[k])))
	}
	return strings.Join(parts, ", ")
}

// differingBackends lists the components whose implementation differs
// between the flows.
func differingBackends(m, c *Observation) []string {
	if m == nil || c == nil {
		return nil
	}
	set := map[string]bool{}
	for k, v := range m.Backends {
		if c.Backends[k] != v {
			set[k] = true
		}
	}
	for k, v := range c.Backends {
		if m.Backends[k] != v {
			set[k] = true
		}
	}
	out := sortedKeys(set)
	sort.Strings(out)
	return out
}
