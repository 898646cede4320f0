package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// domProbe runs in the rendered page after the report's own script and
// writes what the browser made of it into <pre id="probe">: computed
// colours, which details exist and are open, the run metadata and the
// object timelines. It is added to a copy of the page only; the report
// itself loads nothing (TestHTMLIsSelfContained).
const domProbe = `<script>
(function () {
  function all(sel) { return Array.prototype.slice.call(document.querySelectorAll(sel)); }
  function bg(sel) { var el = document.querySelector(sel); return el ? getComputedStyle(el).backgroundColor : ''; }
  var out = {legend: {}, cells: {}, aspects: {}, cellLinks: [], meta: [], objects: [], objectRows: 0, milestoneTables: 0};
  ['p', 'k', 'r', 'n'].forEach(function (c) { out.legend[c] = bg('.legend .sw.' + c); out.cells[c] = bg('#parity-matrix td.' + c); });
  all('details.aspect').forEach(function (d) { out.aspects[d.id] = d.open; });
  all('#parity-matrix td a').forEach(function (a) {
    var target = document.getElementById(a.getAttribute('href').slice(1));
    out.cellLinks.push(a.getAttribute('href') + ' ' + (target ? target.tagName : 'missing'));
  });
  all('#run-metadata th').forEach(function (th) { out.meta.push(th.textContent); });
  all('details.obj > summary').forEach(function (s) { out.objects.push(s.textContent); });
  out.objectRows = all('details.obj table.tl tr').length;
  out.objectsOpen = all('details.obj').some(function (d) { return d.open; });
  out.milestoneTables = all('table.milestones').length;
  var pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>`

type probeResult struct {
	Legend, Cells   map[string]string
	Aspects         map[string]bool
	CellLinks       []string
	Meta            []string
	Objects         []string
	ObjectRows      int
	ObjectsOpen     bool
	MilestoneTables int
}

// The sections a reader relies on exist in the rendered page: run
// metadata, an expandable detail for every aspect (collapsed unless it is
// a regression or the page was opened on it), matrix cells that lead to
// them, milestone tables, and a timeline for every recorded object,
// role-less ones included; and the legend shows the matrix's colours.
func TestHTMLSectionsInChromium(t *testing.T) {
	chromium := requireTool(t, "chromium", "chromium")
	r := goldenReport(t)
	target := secondParityAspect(t, r)
	got := probePage(t, chromium, r, target)

	for class, hex := range map[string]string{"p": colorParity, "k": colorKnown, "r": colorRegression, "n": colorAbsent} {
		want := cssRGB(hex)
		if got.Legend[class] != want {
			t.Errorf("legend swatch %s is %q, want %q (the matrix colour)", class, got.Legend[class], want)
		}
		if got.Cells[class] != "" && got.Cells[class] != got.Legend[class] {
			t.Errorf("matrix cell %s is %q, legend %q", class, got.Cells[class], got.Legend[class])
		}
	}
	if len(got.Meta) == 0 || got.Meta[0] != "date and time (UTC)" {
		t.Errorf("run metadata rows %v, want the date and time first", got.Meta)
	}
	for _, f := range runFacts(r.Scenarios) {
		if !slices.Contains(got.Meta, f.Name) {
			t.Errorf("run metadata lacks %q: %v", f.Name, got.Meta)
		}
	}
	checkAspectDetails(t, r, got, target)
	for _, link := range got.CellLinks {
		if !strings.HasSuffix(link, " DETAILS") {
			t.Errorf("matrix cell link %s does not lead to an aspect's details", link)
		}
	}
	if got.MilestoneTables != len(r.Scenarios) {
		t.Errorf("%d milestone tables for %d scenarios", got.MilestoneTables, len(r.Scenarios))
	}
	checkObjectTimelines(t, r, got)
}

func secondParityAspect(t *testing.T, r *Report) string {
	t.Helper()
	var ids []string
	for _, s := range r.Scenarios {
		for _, a := range s.Aspects {
			if a.Verdict == Parity {
				ids = append(ids, anchor("d", s.Scenario, a.Aspect))
			}
		}
	}
	if len(ids) < 2 {
		t.Fatal("the golden report needs two parity aspects")
	}
	return ids[1]
}

// probePage renders r with the probe, opens it in chromium on #target and
// returns what the probe saw.
func probePage(t *testing.T, chromium string, r *Report, target string) probeResult {
	t.Helper()
	var buf bytes.Buffer
	if err := r.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	withProbe := strings.Replace(buf.String(), "</body>", domProbe+"</body>", 1)
	if err := os.WriteFile(page, []byte(withProbe), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := runChromium(t, chromium, dir, "--dump-dom", "file://"+page+"#"+target)
	m := regexp.MustCompile(`(?s)<pre id="probe">(.*?)</pre>`).FindSubmatch(dom)
	if m == nil {
		t.Fatalf("the probe did not run; dumped DOM ends:\n%s", tail(dom, 2000))
	}
	var got probeResult
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &got); err != nil {
		t.Fatalf("probe output: %v", err)
	}
	return got
}

func checkAspectDetails(t *testing.T, r *Report, got probeResult, target string) {
	t.Helper()
	n := 0
	for _, s := range r.Scenarios {
		for _, a := range s.Aspects {
			id := anchor("d", s.Scenario, a.Aspect)
			open, ok := got.Aspects[id]
			n++
			switch {
			case !ok:
				t.Errorf("%s: no expandable detail", id)
			case open != (a.Verdict == Regression || id == target):
				t.Errorf("%s (%s): open=%t; want regressions and the page's target open, the rest collapsed", id, a.Verdict, open)
			}
		}
	}
	if len(got.Aspects) != n {
		t.Errorf("%d aspect details for %d aspects", len(got.Aspects), n)
	}
}

// checkObjectTimelines wants one collapsed timeline per recorded object
// and host, and at least one role-less object among them (the golden
// data has some), so the view is not only the diffed objects.
func checkObjectTimelines(t *testing.T, r *Report, got probeResult) {
	t.Helper()
	want, roleless := 0, 0
	for _, s := range r.Scenarios {
		for _, fo := range flowObjectsOf(s) {
			for _, ot := range fo.Objects {
				want++
				if ot.Role == "" && ot.Compared == objectCompared("") {
					roleless++
				}
				if !containsPrefix(got.Objects, ot.Kind+" "+ot.Name+" ") {
					t.Errorf("%s flow of %s: no timeline for %s %s", fo.Flow, s.Scenario, ot.Kind, ot.Name)
				}
			}
		}
	}
	if len(got.Objects) != want || roleless == 0 {
		t.Errorf("%d object timelines, want %d with at least one role-less object (found %d)", len(got.Objects), want, roleless)
	}
	if got.ObjectRows == 0 {
		t.Error("object timelines list nothing that happened")
	}
	if got.ObjectsOpen {
		t.Error("object timelines must be collapsed by default")
	}
}

// cssRGB is how a browser reports a #rrggbb colour.
func cssRGB(hex string) string {
	c := hexColor(hex)
	return fmt.Sprintf("rgb(%d, %d, %d)", c.R, c.G, c.B)
}

func containsPrefix(list []string, prefix string) bool {
	for _, v := range list {
		if strings.HasPrefix(v, prefix) {
			return true
		}
	}
	return false
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
