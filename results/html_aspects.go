package results

import "fmt"

// Every aspect of every scenario gets a detail view, parity included, so a
// reader can check what a verdict was decided on (that nodes/ready parity
// means five Ready nodes, not none).

// aspectView is one aspect's detail: verdict, both flows' lines, the
// registry entries involved and the note.
type aspectView struct {
	Aspect, Anchor       string
	Verdict              Verdict
	Open                 bool
	Hint                 string
	Message              string
	Rows                 []lineRow
	Identical            bool
	MAPIEmpty, CAPIEmpty string
	Known, Miscounted    []*Entry
	Note                 string
}

// lineRow is one row of an aspect's lines. Lines both flows have are one
// cell (Both); a line one flow has alone sits in its column.
type lineRow struct {
	Kind       string
	Mark       string
	Both       string
	MAPI, CAPI string
}

func aspectViews(s ScenarioResult) []aspectView {
	out := make([]aspectView, 0, len(s.Aspects))
	sides := s.Sides()
	for _, a := range s.Aspects {
		v := aspectView{
			Aspect: a.Aspect, Anchor: anchor("d", s.Scenario, a.Aspect), Verdict: a.Verdict,
			Open: a.Verdict == Regression, Hint: aspectHint(sides, a), Rows: lineRows(a),
			MAPIEmpty: emptyNote(a.MAPIAbsent, len(a.MAPI)), CAPIEmpty: emptyNote(a.CAPIAbsent, len(a.CAPI)),
			Known: a.Known, Miscounted: a.Miscounted, Note: a.Note,
		}
		if a.Verdict == Regression {
			v.Message = regressionMessage(sides, a)
		}
		v.Identical = identical(v.Rows)
		out = append(out, v)
	}
	return out
}

// lineRows lines up an aspect's lines. A duration within tolerance is one
// row of two values side by side: they differ, but not as a difference.
func lineRows(a AspectResult) []lineRow {
	if isDurationAspect(a) && a.Verdict == Parity && len(a.MAPI) == 1 && len(a.CAPI) == 1 && a.MAPI[0] != a.CAPI[0] {
		return []lineRow{{Kind: "paired", MAPI: a.MAPI[0], CAPI: a.CAPI[0]}}
	}
	var out []lineRow
	for _, r := range rows(a) {
		lr := lineRow{Kind: string(r.Kind), Mark: rowMarks[r.Kind]}
		if r.Kind == rowSame {
			lr.Both = times(r.MAPI, r.Count)
		} else {
			lr.MAPI, lr.CAPI = times(r.MAPI, r.Count), times(r.CAPI, r.Count)
		}
		out = append(out, lr)
	}
	return out
}

// identical tells whether every row is a line both flows have.
func identical(rows []lineRow) bool {
	for _, r := range rows {
		if r.Both == "" {
			return false
		}
	}
	return len(rows) > 0
}

func isDurationAspect(a AspectResult) bool { return a.MAPIDuration != nil || a.CAPIDuration != nil }

// aspectHint is the one line shown while the detail is collapsed: the two
// durations, or how many lines each flow had, and the entries that
// explained a difference.
func aspectHint(sides Sides, a AspectResult) string {
	var hint string
	switch {
	case isDurationAspect(a):
		hint = fmt.Sprintf("%s %s · %s %s", sides.TitleA, durationOrAbsent(a.MAPIDuration), sides.TitleB, durationOrAbsent(a.CAPIDuration))
	case a.Verdict == Parity && len(a.MAPI) == 0:
		hint = "no lines in either flow"
	case a.Verdict == Parity:
		hint = plural(len(a.MAPI), "line") + ", the same in both flows"
	default:
		hint = fmt.Sprintf("%s %s, %s %s", sides.TitleA, linesOrAbsent(a.MAPIAbsent, len(a.MAPI)), sides.TitleB, linesOrAbsent(a.CAPIAbsent, len(a.CAPI)))
	}
	if len(a.Known) > 0 {
		hint += "; explained by " + entryIDs(a.Known)
	}
	return hint
}

func linesOrAbsent(absent bool, n int) string {
	if absent {
		return "not observed"
	}
	return plural(n, "line")
}
