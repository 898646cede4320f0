package results

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// Nothing in the report may load anything: no external stylesheets,
// scripts, images, frames or fonts. Links to upstream code are plain
// anchors, followed only when a reader clicks them.
func TestHTMLIsSelfContained(t *testing.T) {
	var buf bytes.Buffer
	if err := goldenReport(t).WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	for _, re := range []*regexp.Regexp{
		regexp.MustCompile(`(?i)<(link|img|iframe|object|embed|source|video|audio|base)\b`),
		regexp.MustCompile(`(?i)\bsrc\s*=`),
		regexp.MustCompile(`(?i)@import|url\(`),
	} {
		if m := re.FindString(html); m != "" {
			t.Errorf("report loads something: %q", m)
		}
	}
	for _, m := range regexp.MustCompile(`<(\w+)[^>]*\bhref="([^"]*)"`).FindAllStringSubmatch(html, -1) {
		if m[1] != "a" {
			t.Errorf("<%s href=%q> would load", m[1], m[2])
		}
		if !strings.HasPrefix(m[2], "#") && !strings.HasPrefix(m[2], "https://") {
			t.Errorf("unexpected link %q", m[2])
		}
	}
}

// The report renders in a real browser, and the screenshot shows the
// parity matrix: one row of cells per scenario, coloured by verdict, in
// the order of the report's aspects.
func TestHTMLRendersMatrixInChromium(t *testing.T) {
	chromium := requireTool(t, "chromium", "chromium")
	r := goldenReport(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var buf bytes.Buffer
	if err := r.WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	shot := screenshot(t, chromium, dir, page)

	rows := matrixRowsIn(shot)
	want := expectedMatrix(r)
	if len(rows) != len(want) {
		t.Fatalf("screenshot shows %d matrix rows of %d cells, want %d", len(rows), len(r.AspectNames()), len(want))
	}
	for i := range want {
		if strings.Join(rows[i], " ") != strings.Join(want[i], " ") {
			t.Errorf("matrix row %d (%s):\n got  %v\n want %v", i, r.Scenarios[i].Scenario, rows[i], want[i])
		}
	}
	if t.Failed() {
		keep := filepath.Join(os.TempDir(), "paritylab-report-screenshot.png")
		_ = os.WriteFile(keep, mustRead(t, filepath.Join(dir, "shot.png")), 0o644)
		t.Logf("screenshot kept at %s", keep)
	}
}

// screenshot renders page with headless chromium, offline, and decodes it.
// The window is tall enough for the run metadata above the matrix.
func screenshot(t *testing.T, chromium, dir, page string) image.Image {
	t.Helper()
	out := filepath.Join(dir, "shot.png")
	runChromium(t, chromium, dir, "--window-size=2600,2400", "--screenshot="+out, "file://"+page)
	img, err := png.Decode(bytes.NewReader(mustRead(t, out)))
	if err != nil {
		t.Fatalf("decode screenshot: %v", err)
	}
	return img
}

// runChromium runs headless chromium offline (every host name resolves to
// nothing) and returns what it printed on stdout.
func runChromium(t *testing.T, chromium, dir string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, append([]string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--host-resolver-rules=MAP * ~NOTFOUND", "--force-color-profile=srgb", "--hide-scrollbars",
		"--user-data-dir=" + filepath.Join(dir, "profile"),
	}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	return stdout.Bytes()
}

func mustRead(t *testing.T, file string) []byte {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// cellColors are the matrix colours the test looks for.
var cellColors = map[string]color.RGBA{
	"p": hexColor(colorParity), "k": hexColor(colorKnown), "r": hexColor(colorRegression), "n": hexColor(colorAbsent),
}

func hexColor(s string) color.RGBA {
	var c color.RGBA
	for i, p := range []*uint8{&c.R, &c.G, &c.B} {
		v := 0
		for _, ch := range s[1+2*i : 3+2*i] {
			v = v*16 + strings.IndexRune("0123456789abcdef", ch)
		}
		*p = uint8(v)
	}
	c.A = 255
	return c
}

func expectedMatrix(r *Report) [][]string {
	var out [][]string
	for _, s := range r.Scenarios {
		var row []string
		for _, name := range r.AspectNames() {
			a, ok := s.Aspect(name)
			if !ok {
				row = append(row, "n")
				continue
			}
			row = append(row, cellClass(a.Verdict))
		}
		out = append(out, row)
	}
	return out
}

type blob struct {
	class      string
	minX, minY int
	maxX, maxY int
}

// matrixRowsIn finds the cell-sized blocks of matrix colours in img and
// returns them as rows (top to bottom) of classes (left to right); only rows
// with as many cells as the widest row count, which leaves out stray blocks.
func matrixRowsIn(img image.Image) [][]string {
	blobs := colorBlobs(img)
	sort.Slice(blobs, func(i, j int) bool { return blobs[i].minY < blobs[j].minY })
	var rows [][]blob
	for _, b := range blobs {
		if n := len(rows); n > 0 && abs(rows[n-1][0].minY-b.minY) <= 3 {
			rows[n-1] = append(rows[n-1], b)
			continue
		}
		rows = append(rows, []blob{b})
	}
	widest := 0
	for _, r := range rows {
		widest = max(widest, len(r))
	}
	var out [][]string
	for _, r := range rows {
		if len(r) != widest {
			continue
		}
		sort.Slice(r, func(i, j int) bool { return r[i].minX < r[j].minX })
		classes := make([]string, len(r))
		for i, b := range r {
			classes[i] = b.class
		}
		out = append(out, classes)
	}
	return out
}

// colorBlobs flood-fills 4-connected regions of each matrix colour and keeps
// those shaped like a matrix cell.
func colorBlobs(img image.Image) []blob {
	bounds := img.Bounds()
	seen := make([]bool, bounds.Dx()*bounds.Dy())
	idx := func(x, y int) int { return (y-bounds.Min.Y)*bounds.Dx() + x - bounds.Min.X }
	var blobs []blob
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			if seen[idx(x, y)] {
				continue
			}
			class := classAt(img, x, y)
			if class == "" {
				continue
			}
			b := fill(img, x, y, class, seen, idx)
			w, h := b.maxX-b.minX+1, b.maxY-b.minY+1
			if w >= 14 && w <= 40 && h >= 14 && h <= 40 {
				blobs = append(blobs, b)
			}
		}
	}
	return blobs
}

func fill(img image.Image, x0, y0 int, class string, seen []bool, idx func(int, int) int) blob {
	b := blob{class: class, minX: x0, minY: y0, maxX: x0, maxY: y0}
	bounds := img.Bounds()
	stack := [][2]int{{x0, y0}}
	seen[idx(x0, y0)] = true
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		b.minX, b.maxX = min(b.minX, p[0]), max(b.maxX, p[0])
		b.minY, b.maxY = min(b.minY, p[1]), max(b.maxY, p[1])
		for _, d := range [][2]int{{1, 0}, {-1, 0}, {0, 1}, {0, -1}} {
			x, y := p[0]+d[0], p[1]+d[1]
			if !(image.Point{x, y}.In(bounds)) || seen[idx(x, y)] || classAt(img, x, y) != class {
				continue
			}
			seen[idx(x, y)] = true
			stack = append(stack, [2]int{x, y})
		}
	}
	return b
}

func classAt(img image.Image, x, y int) string {
	r, g, b, _ := img.At(x, y).RGBA()
	for class, c := range cellColors {
		if near(r>>8, c.R) && near(g>>8, c.G) && near(b>>8, c.B) {
			return class
		}
	}
	return ""
}

func near(v uint32, want uint8) bool { return abs(int(v)-int(want)) <= 3 }

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
