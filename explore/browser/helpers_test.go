package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mgtrace/mgtrace/explore"
	"github.com/mgtrace/mgtrace/explore/web"
	"github.com/mgtrace/mgtrace/internal/testprog"
)

// chromium returns the browser's path; without one it skips the test,
// or fails it under CI=true (CI installs Debian's chromium: .ci/deps).
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("MGTRACE_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"/usr/bin/chromium", "chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed: the browser tests must run in CI (apt-get install chromium; .ci/deps does)")
	}
	t.Skip("chromium is not installed: skipping the browser tests (apt-get install chromium, or set MGTRACE_CHROMIUM)")
	return ""
}

// browse starts a headless Chromium with a fresh profile and returns a
// context for its first tab, cancelled when the test ends. A browser that
// dies while starting (seen on a heavily loaded machine) is started once
// more; its output is logged when the test fails.
func browse(t *testing.T) context.Context {
	t.Helper()
	var err error
	for try := 0; try < 2; try++ {
		var ctx context.Context
		if ctx, err = startBrowser(t); err == nil {
			return ctx
		}
		t.Logf("chromium did not start (try %d): %v", try+1, err)
	}
	t.Fatalf("start chromium: %v", err)
	return nil
}

// startBrowser starts one browser and checks that its tab answers.
func startBrowser(t *testing.T) (context.Context, error) {
	// A fresh profile, removed after the browser has gone (not t.TempDir:
	// Chromium's helpers may still write there while it exits).
	profile, err := os.MkdirTemp("", "mgtrace-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	var out syncBuffer
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium(t)),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1400, 900),
		chromedp.CombinedOutput(&out),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	ctx, cancelC := context.WithTimeout(ctx, 5*time.Minute)
	stop := func() {
		cancelC()
		cancelB()
		cancelA()
		for i := 0; i < 20 && os.RemoveAll(profile) != nil; i++ {
			time.Sleep(100 * time.Millisecond)
		}
	}
	if err := chromedp.Run(ctx, chromedp.Navigate("about:blank")); err != nil {
		stop()
		return nil, fmt.Errorf("%w; chromium said: %s", err, out.String())
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("chromium's output:\n%s", out.String())
		}
		stop()
	})
	return ctx, nil
}

// syncBuffer is a bytes.Buffer safe for the browser's output goroutine.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// program is a recorded demo program.
type program struct {
	trace string
	spec  string
}

var (
	recMu    sync.Mutex
	recorded = map[string]program{}
)

// record builds and records a demo program once per test process.
func record(t *testing.T, name string, flags []string, spec string, args ...string) program {
	t.Helper()
	recMu.Lock()
	defer recMu.Unlock()
	if p, ok := recorded[name]; ok {
		return p
	}
	bin := testprog.Build(t, name, testprog.Flags(flags...))
	// The trace outlives this test: later tests share it.
	dir, err := os.MkdirTemp("", "mgtrace-browser-")
	if err != nil {
		t.Fatal(err)
	}
	tr := testprog.Record(t, bin, args...)
	dst := filepath.Join(dir, filepath.Base(tr))
	if err := os.Rename(tr, dst); err != nil {
		t.Fatal(err)
	}
	p := program{trace: dst}
	if spec != "" {
		p.spec = filepath.Join(testprog.Root(t), "testdata", "programs", spec)
	}
	recorded[name] = p
	return p
}

// The demos: the quad tree with its fault and spec, the crash, the list.
func qdtree(t *testing.T) program {
	return record(t, "ds/qdtree", []string{"-DFAULT=1"}, "ds/qdtree.spec")
}
func crash(t *testing.T) program {
	return record(t, "slice/crash", []string{"-O0"}, "")
}
func list(t *testing.T) program {
	return record(t, "list", nil, "", "5")
}

// serve opens p in an explore.Session running only the stages a test
// needs ("none", "locate", "slice", "bugs": the stages run at the lowest
// priority and crawl when the other packages' tests load the machine),
// waits for them, and serves the explorer with httptest.
func serve(t *testing.T, p program, stages string) (*explore.Session, string) {
	t.Helper()
	s, err := explore.Open(p.trace, explore.Options{Spec: p.spec, Stages: stages})
	if err != nil {
		t.Fatalf("explore.Open: %v", err)
	}
	s.Wait()
	srv := httptest.NewServer(explore.NewHandler(s, web.Assets()))
	t.Cleanup(srv.Close)
	return s, srv.URL + "/"
}

var (
	analyzeOnce sync.Once
	analyzeBin  string
	analyzeErr  error
	analyzeOut  []byte
)

// analyzeTool builds the analyze command once per test process.
func analyzeTool(t *testing.T) string {
	t.Helper()
	analyzeOnce.Do(func() {
		gotool, err := exec.LookPath("go")
		if err != nil {
			gotool = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		dir, err := os.MkdirTemp("", "mgtrace-analyze-")
		if err != nil {
			analyzeErr = err
			return
		}
		analyzeBin = filepath.Join(dir, "analyze")
		cmd := exec.Command(gotool, "build", "-o", analyzeBin, "./analyze")
		cmd.Dir = testprog.Root(t)
		analyzeOut, analyzeErr = cmd.CombinedOutput()
	})
	if analyzeErr != nil {
		t.Fatalf("go build ./analyze: %v\n%s", analyzeErr, analyzeOut)
	}
	return analyzeBin
}

// counts are a graph's nodes and pointer edges (edges with a node as
// "to").
type counts struct{ Nodes, Edges int }

// mgCounts runs `analyze mg --format json --at TS` and counts.
func mgCounts(t *testing.T, trace string, ts uint32) counts {
	t.Helper()
	out, err := exec.Command(analyzeTool(t), "mg", "--format", "json", "--at", strconv.FormatUint(uint64(ts), 10), trace).Output()
	if err != nil {
		t.Fatalf("analyze mg --at %d: %v", ts, err)
	}
	var g struct {
		Nodes []json.RawMessage `json:"nodes"`
		Edges []struct {
			To *uint32 `json:"to"`
		} `json:"edges"`
	}
	if err := json.Unmarshal(out, &g); err != nil {
		t.Fatalf("analyze mg --at %d: %v", ts, err)
	}
	c := counts{Nodes: len(g.Nodes)}
	for _, e := range g.Edges {
		if e.To != nil {
			c.Edges++
		}
	}
	return c
}

// shown is what the page shows of the graph (data attributes app.js sets
// on the SVG).
type shown struct {
	TS         uint32 `json:"ts"`
	Nodes      int    `json:"nodes"`
	Edges      int    `json:"edges"`
	TotalNodes int    `json:"totalNodes"`
	TotalEdges int    `json:"totalEdges"`
	Collapsed  bool   `json:"collapsed"`
	Line       int    `json:"line"`
	File       string `json:"file"`
	Error      string `json:"error"`
}

const shownJS = `(() => { const d = document.getElementById("graph").dataset, b = document.body.dataset;
  return { ts: +d.ts, nodes: +d.nodes, edges: +d.edges, totalNodes: +d.totalNodes, totalEdges: +d.totalEdges,
    collapsed: +d.nodes !== +d.totalNodes, line: +(b.line || 0), file: b.file || "", error: b.error || "" }; })()`

// settle waits until the page is idle and shows the graph at ts (any
// timestamp when ts < 0), and returns what it shows.
func settle(t *testing.T, ctx context.Context, ts int64) shown {
	t.Helper()
	cond := `document.body.dataset.ready === "1" && document.body.dataset.busy === "0" && document.getElementById("graph").dataset.ts !== undefined`
	if ts >= 0 {
		cond += fmt.Sprintf(` && document.getElementById("graph").dataset.ts === "%d"`, ts)
	}
	cond = `(` + cond + `) || !!document.body.dataset.error`
	var ok bool
	err := chromedp.Run(ctx, chromedp.Poll(cond, &ok, chromedp.WithPollingTimeout(60*time.Second)))
	// A poll begun as a navigation ends can lose its execution context
	// ("Cannot find context with specified id"): poll again.
	for try := 0; try < 3 && err != nil && strings.Contains(err.Error(), "context with specified id"); try++ {
		time.Sleep(200 * time.Millisecond)
		err = chromedp.Run(ctx, chromedp.Poll(cond, &ok, chromedp.WithPollingTimeout(60*time.Second)))
	}
	if err != nil {
		var s shown
		chromedp.Run(ctx, chromedp.Evaluate(shownJS, &s))
		t.Fatalf("the page did not show the graph at ts %d: %v (it shows %+v)", ts, err, s)
	}
	var s shown
	if err := chromedp.Run(ctx, chromedp.Evaluate(shownJS, &s)); err != nil {
		t.Fatal(err)
	}
	if s.Error != "" {
		t.Fatalf("the page shows an error: %s", s.Error)
	}
	return s
}

// eval runs a script in the page.
func eval(t *testing.T, ctx context.Context, js string, res any) {
	t.Helper()
	if err := chromedp.Run(ctx, chromedp.Evaluate(js, res)); err != nil {
		t.Fatalf("%s: %v", js, err)
	}
}

// checkCounts compares what the page shows with analyze mg at the same
// timestamp: the totals always, the drawn nodes and edges when the graph
// is not collapsed.
func checkCounts(t *testing.T, trace string, s shown) {
	t.Helper()
	want := mgCounts(t, trace, s.TS)
	if s.TotalNodes != want.Nodes || s.TotalEdges != want.Edges {
		t.Errorf("ts %d: the page counts %d nodes and %d edges, analyze mg --format json --at %d %d and %d",
			s.TS, s.TotalNodes, s.TotalEdges, s.TS, want.Nodes, want.Edges)
	}
	if !s.Collapsed && (s.Nodes != want.Nodes || s.Edges != want.Edges) {
		t.Errorf("ts %d: the page draws %d nodes and %d edges, analyze mg --format json --at %d has %d and %d",
			s.TS, s.Nodes, s.Edges, s.TS, want.Nodes, want.Edges)
	}
}

// screenshot saves the tab's picture as NAME.png under the test's temp
// folder (and $MGTRACE_SCREENSHOTS when set) and checks it is not blank.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	var buf []byte
	if err := chromedp.Run(ctx, chromedp.CaptureScreenshot(&buf)); err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	dirs := []string{t.TempDir()}
	if d := os.Getenv("MGTRACE_SCREENSHOTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	for _, d := range dirs {
		if err := os.WriteFile(filepath.Join(d, name+".png"), buf, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	img, err := png.Decode(bytes.NewReader(buf))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	colours, ink := inspect(img)
	total := img.Bounds().Dx() * img.Bounds().Dy()
	if colours < 16 || ink < total/50 {
		t.Errorf("screenshot %s looks blank: %d colours, %d of %d pixels not background", name, colours, ink, total)
	}
}

// inspect counts an image's distinct colours and the pixels that are not
// its most common colour.
func inspect(img image.Image) (colours, ink int) {
	hist := map[uint32]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			hist[r>>8<<16|g>>8<<8|bl>>8]++
		}
	}
	most := 0
	for _, n := range hist {
		most = max(most, n)
	}
	return len(hist), b.Dx()*b.Dy() - most
}

// TestInspect checks the blank-screenshot check itself.
func TestInspect(t *testing.T) {
	blank := image.NewRGBA(image.Rect(0, 0, 10, 10))
	if c, ink := inspect(blank); c != 1 || ink != 0 {
		t.Errorf("blank image: %d colours, %d ink; want 1, 0", c, ink)
	}
}

// sliceLines counts the slice's lines in file.
func sliceLines(s *explore.SliceMark, file string) int {
	if s == nil {
		return 0
	}
	seen := map[uint32]bool{}
	for _, l := range s.Lines {
		if l.File == file {
			seen[l.Line] = true
		}
	}
	return len(seen)
}

// navigate opens url in the tab; a navigation that fails while the tab is
// still there (chromedp reports an interrupted load as cancelled) is tried
// once more.
func navigate(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	err := chromedp.Run(ctx, chromedp.Navigate(url))
	if err != nil && ctx.Err() == nil {
		t.Logf("navigate %s: %v; trying again", url, err)
		err = chromedp.Run(ctx, chromedp.Navigate(url))
	}
	if err != nil {
		t.Fatalf("navigate %s: %v (tab: %v)", url, err, ctx.Err())
	}
}
