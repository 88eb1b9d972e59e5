package linhtml_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mgtrace/mgtrace/lin"
	"github.com/mgtrace/mgtrace/lin/linhtml"
)

// logLine is a 40-character log line, the value client c appends as its
// i-th.
func logLine(c, i int) string {
	s := fmt.Sprintf("2024-06-01T12:00:%02dZ client=%d seq=%02d ok", 10*c+i, c, i)
	return (s + strings.Repeat(".", 40))[:40]
}

// longValues: three clients append 40-character log lines to one key of
// a kv store, and a get returns them in an order that no linearization
// gives (client 3's append returned before client 2's second one was
// called, yet comes after it).
func longValues() *lin.History {
	kop := func(client int, name string, in, out lin.Value, call, ret int64, src string) lin.Op {
		o := op(client, name, in, out, call, ret, src)
		o.Key = sv("log")
		return o
	}
	a, b, c, d := logLine(1, 0), logLine(2, 0), logLine(3, 0), logLine(2, 1)
	h := &lin.History{Source: "appends.json", Ops: []lin.Op{
		kop(1, "append", sv(a), none, 0, 30, "appends.json:1"),
		kop(2, "append", sv(b), none, 10, 20, "appends.json:2"),
		kop(2, "get", none, sv(b), 22, 28, "appends.json:3"),
		kop(3, "append", sv(c), none, 35, 40, "appends.json:4"),
		kop(2, "append", sv(d), none, 42, 44, "appends.json:5"),
		kop(1, "get", none, sv(b+a+d+c), 50, 60, "appends.json:6"),
	}}
	h.Sort()
	return h
}

// manyOps: five clients run n operations on a register that behaves
// atomically (each takes effect at a moment between its call and its
// return, and a read returns the value then), and then client 1 reads a
// value that was never written.
func manyOps(n int) *lin.History {
	seed := uint32(7)
	rnd := func(k int64) int64 {
		seed = seed*1664525 + 1013904223
		return int64(seed>>8) % k
	}
	type run struct {
		call, at, ret int64 // times; at is when it takes effect
		op            lin.Op
	}
	var runs []*run
	next := make([]int64, 5)
	for i := 0; i < n; i++ {
		c := int(rnd(5))
		r := &run{call: next[c] + 1 + rnd(8)}
		r.at = r.call + 1 + rnd(6)
		r.ret = r.at + 1 + rnd(6)
		next[c] = r.ret
		r.op = lin.Op{Client: c + 1, Name: "read", Status: lin.OK, Source: fmt.Sprintf("many:%d", i+1)}
		if rnd(2) == 0 {
			r.op.Name, r.op.Input = "write", iv(int64(i+1))
		}
		runs = append(runs, r)
	}
	// Times may coincide: the positions are the times made distinct, in
	// order (ties broken by client).
	byAt := append([]*run(nil), runs...)
	sort.SliceStable(byAt, func(i, j int) bool {
		if byAt[i].at != byAt[j].at {
			return byAt[i].at < byAt[j].at
		}
		return byAt[i].op.Client < byAt[j].op.Client
	})
	v := iv(0)
	for _, r := range byAt {
		if r.op.Name == "write" {
			v = r.op.Input
		} else {
			r.op.Output = v
		}
	}
	pos := func(t int64, client int) int64 { return t*10 + int64(client) }
	h := &lin.History{Source: "many"}
	last := int64(0)
	for _, r := range runs {
		r.op.Call, r.op.Return = pos(r.call, r.op.Client), pos(r.ret, r.op.Client)
		last = max(last, r.op.Return)
		h.Ops = append(h.Ops, r.op)
	}
	h.Ops = append(h.Ops, op(1, "read", none, iv(-1), last+1, last+2, "many:bad"))
	h.Sort()
	return h
}

// stressPages are pages that stretch the layout: long values, and many
// operations over five clients.
func stressPages(t *testing.T) map[string][]byte {
	t.Helper()
	pages := make(map[string][]byte)
	// Not minimised: alone, the get could not be placed either.
	h := longValues()
	m, res := check(t, "kv", none, h, lin.Options{NoMinimize: true})
	if res.Verdict != lin.NotLinearizable || res.Counterexample == nil {
		t.Fatalf("long values: verdict %s", res.Verdict)
	}
	pages["longvalues"] = render(t, m, h, res, linhtml.Options{WholeHistory: true})
	h = manyOps(34)
	m, res = check(t, "register", iv(0), h, lin.Options{NoMinimize: true})
	if res.Verdict != lin.NotLinearizable || res.Counterexample == nil {
		t.Fatalf("many operations: verdict %s", res.Verdict)
	}
	if n := len(res.Counterexample.Operations); n < 30 {
		t.Fatalf("many operations: the counterexample has %d operations, want 30 or more", n)
	}
	pages["manyops"] = render(t, m, h, res, linhtml.Options{WholeHistory: true})
	return pages
}

// box is a rectangle in a timeline's pixels.
type box struct{ x0, y0, x1, y1 float64 }

func (a box) overlaps(b box) bool { return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1 }

func num(t *testing.T, n *node, attr string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(n.attr[attr], 64)
	if err != nil {
		t.Fatalf("<%s %s=%q>: %v", n.name, attr, n.attr[attr], err)
	}
	return f
}

// checkLayout checks a page's timelines: every label is the start of its
// bar's description (all of it, or shortened with an ellipsis), lies on
// its bar or after it, clear of every other bar, and inside the drawing;
// the failing operation's tag is inside the drawing; no marker of a
// linearization point covers a bar or a label, and the paths joining
// them are drawn behind the bars; and the
// timeline is no wider than the page it is fitted to (these pages have
// few enough positions to fit).
func checkLayout(t *testing.T, name string, page []byte) {
	t.Helper()
	html := parse(t, page)
	tls := html.find(func(n *node) bool { return n.name == "svg" && n.class("tl") })
	if len(tls) == 0 {
		t.Fatalf("%s: no timeline", name)
	}
	for k, tl := range tls {
		width := num(t, tl, "width")
		var bars, labels []box
		for _, g := range tl.find(func(n *node) bool { return n.name == "g" && n.class("op") }) {
			r := g.child("rect")
			b := box{num(t, r, "x"), num(t, r, "y"), num(t, r, "x") + num(t, r, "width"), num(t, r, "y") + num(t, r, "height")}
			bars = append(bars, b)
			desc := firstLine(g)
			for _, lbl := range g.find(func(n *node) bool { return n.name == "text" && n.class("lbl") }) {
				s := lbl.text.String()
				if s != desc && !(strings.HasSuffix(s, "…") && strings.HasPrefix(desc, strings.TrimSuffix(s, "…"))) {
					t.Errorf("%s timeline %d: label %q of %q", name, k, s, desc)
				}
				x, y := num(t, lbl, "x"), num(t, lbl, "y")
				l := box{x, y - 11, x + float64(utf8.RuneCountInString(s))*linhtml.CharW, y + 3}
				labels = append(labels, l)
				if l.x1 > width {
					t.Errorf("%s timeline %d: label %q runs past the drawing (%v > %v)", name, k, s, l.x1, width)
				}
				if lbl.class("out") {
					if l.x0 < b.x1 {
						t.Errorf("%s timeline %d: label %q, written after its bar, starts on it", name, k, s)
					}
				} else if l.x0 < b.x0 || l.x1 > b.x1-3 {
					t.Errorf("%s timeline %d: label %q (%v to %v) does not fit its bar (%v to %v)", name, k, s, l.x0, l.x1, b.x0, b.x1)
				}
			}
		}
		for i, l := range labels {
			for j, b := range bars {
				if l.overlaps(b) && !(l.x0 >= b.x0 && l.x1 <= b.x1) {
					t.Errorf("%s timeline %d: label %d overlaps bar %d", name, k, i, j)
				}
			}
		}
		for _, tag := range tl.find(func(n *node) bool { return n.name == "text" && n.class("tag") }) {
			if x := num(t, tag, "x"); x < 0 || x+118 > width {
				t.Errorf("%s timeline %d: the tag at %v runs out of the drawing", name, k, x)
			}
		}
		// The paths between the markers are drawn first, behind the bars
		// and their labels.
		seenBar := false
		for _, n := range tl.children {
			switch {
			case n.name == "g" && n.class("op"):
				seenBar = true
			case n.name == "polyline" && seenBar:
				t.Errorf("%s timeline %d: a path is drawn over the bars", name, k)
			}
		}
		for _, c := range tl.find(func(n *node) bool { return n.name == "circle" }) {
			cx, cy, r := num(t, c, "cx"), num(t, c, "cy"), num(t, c, "r")
			m := box{cx - r, cy - r, cx + r, cy + r}
			for _, b := range append(append([]box(nil), bars...), labels...) {
				if m.overlaps(b) {
					t.Errorf("%s timeline %d: the marker at (%v, %v) covers a bar or a label at %v", name, k, cx, cy, b)
				}
			}
		}
		if width > linhtml.FitWidth {
			t.Errorf("%s timeline %d: %v pixels wide, more than the %d it should fit in", name, k, width, linhtml.FitWidth)
		}
	}
}

// TestLayout: labels stay readable and markers hide nothing, on figure 3
// and on pages with long values and with many operations.
func TestLayout(t *testing.T) {
	_, _, _, page := figure3Page(t)
	checkLayout(t, "figure 3", page)
	// Figure 3's timelines fit the page with room to spare: nothing is
	// shortened.
	if bytes.Contains(page, []byte("…")) {
		t.Error("figure 3: a label is shortened")
	}
	pages := stressPages(t)
	for _, name := range []string{"longvalues", "manyops"} {
		checkLayout(t, name, pages[name])
	}
	// The long values do not fit their bars: the get's is shortened, the
	// appends' written after them or shortened.
	if !bytes.Contains(pages["longvalues"], []byte("…</text>")) {
		t.Error("long values: no label is shortened")
	}
}

// TestChromium renders figure 3's page, and the pages of TestLayout,
// headless to PNG when a Chromium is installed (it is skipped
// otherwise), and checks that each screenshot is an image with something
// drawn on it. With -shots DIR the pages and screenshots are kept there.
func TestChromium(t *testing.T) {
	var browser string
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		t.Skip("no chromium or chromium-browser on the PATH")
	}
	_, _, _, fig := figure3Page(t)
	pages := stressPages(t)
	pages["figure3"] = fig
	names := make([]string, 0, len(pages))
	for name := range pages {
		names = append(names, name)
	}
	sort.Strings(names)
	dir := t.TempDir()
	for _, name := range names {
		file := filepath.Join(dir, name+".html")
		if err := os.WriteFile(file, pages[name], 0o644); err != nil {
			t.Fatal(err)
		}
		shot := filepath.Join(dir, name+".png")
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu",
			"--disable-quic", "--no-first-run", "--disable-background-networking",
			"--disable-component-update", "--disable-sync",
			"--user-data-dir="+filepath.Join(dir, "profile"), "--window-size=1300,1100",
			"--screenshot="+shot, "file://"+file)
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("%s: %s: %v\n%s", name, browser, err, out)
		}
		img := decodePNG(t, shot)
		if sd := lumaSD(img); sd < 5 {
			t.Errorf("%s: the screenshot is blank (luma standard deviation %.2f)", name, sd)
		}
		if b := img.Bounds(); b.Dx() != 1300 || b.Dy() != 1100 {
			t.Errorf("%s: the screenshot is %dx%d, want the window's 1300x1100", name, b.Dx(), b.Dy())
		}
		if *shots != "" {
			for _, f := range []string{file, shot} {
				data, err := os.ReadFile(f)
				if err == nil {
					err = os.WriteFile(filepath.Join(*shots, filepath.Base(f)), data, 0o644)
				}
				if err != nil {
					t.Error(err)
				}
			}
		}
	}
}

// decodePNG reads a PNG file.
func decodePNG(t *testing.T, file string) image.Image {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("the screenshot %s is not a PNG: %v", file, err)
	}
	return img
}

// lumaSD is the standard deviation of the image's pixels' luma (0 to
// 255): 0 for a blank image.
func lumaSD(img image.Image) float64 {
	b := img.Bounds()
	var sum, sq, n float64
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			l := (0.299*float64(r) + 0.587*float64(g) + 0.114*float64(bl)) / 257
			sum += l
			sq += l * l
			n++
		}
	}
	mean := sum / n
	return math.Sqrt(max(sq/n-mean*mean, 0))
}
