// Command servebench measures the explorer's server (analyze serve) on a
// ~110 M-event trace: the list program (testdata/programs/list.c) with
// 100 000 nodes, recorded once (bin/record), as bench/mgbench records it.
// It starts bin/analyze serve on the trace and measures, through the HTTP
// API only:
//
//   - the first view: the time from starting the server to the answers of
//     /api/run, /api/graph at the run's initial moment and /api/timeline
//     (target <= 2 s);
//   - the time until the server says the build is done;
//   - after the build, /api/graph at 50 random timestamps (median, max;
//     target <= 200 ms for any moment), then at the same timestamps with
//     the largest group expanded;
//   - the server's peak resident memory (target < 2 GB).
//
// Usage:
//
//	servebench [-bin DIR] [-trace FILE] [-nodes N] [-results FILE]
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/mgtrace/mgtrace/bench/internal/results"
	"github.com/mgtrace/mgtrace/explore"
)

const (
	firstViewTarget = 2 * time.Second
	momentTarget    = 200 * time.Millisecond
	rssTarget       = 2 << 30
	moments         = 50
)

func main() {
	bin := flag.String("bin", "bin", "folder with record, analyze and the probe")
	trace := flag.String("trace", "", "use this recorded trace of the list program instead of recording one")
	nodes := flag.Int("nodes", 100000, "list nodes of the recorded run")
	resultsFile := flag.String("results", "", "update the servebench section of this Markdown file")
	err := flag.CommandLine.Parse(os.Args[1:])
	if status, exit := results.CheckArgs(os.Stdout, os.Stderr, "servebench", "usage: servebench [-bin DIR] [-trace FILE] [-nodes N] [-results FILE]\n", flag.CommandLine, err); exit {
		os.Exit(status)
	}
	if err := run(*bin, *trace, *nodes, *resultsFile); err != nil {
		fmt.Fprintln(os.Stderr, "servebench:", err)
		os.Exit(1)
	}
}

// measurement is what one run of the server gave.
type measurement struct {
	events, changes   uint64
	traceBytes        int64
	tables            time.Duration // start to the first answer of /api/run
	firstView         time.Duration // start to run + graph + timeline answered
	firstNodes        int           // live nodes in the first graph view
	built             time.Duration // start to building false
	graph, expanded   []time.Duration
	maxNodes          int // the most live nodes among the moments asked
	peakRSS           int64
	buildingGraphTime time.Duration // one /api/graph while the graph was being built
}

func run(bin, trace string, nodes int, resultsFile string) error {
	root, err := results.FindRoot("servebench")
	if err != nil {
		return err
	}
	if trace == "" {
		dir, err := os.MkdirTemp("", "servebench")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		exe := filepath.Join(dir, "list")
		src := filepath.Join(root, "testdata", "programs", "list.c")
		if out, err := exec.Command("gcc", "-O2", "-g", "-fno-omit-frame-pointer", "-I", filepath.Join(root, "include"), "-o", exe, src).CombinedOutput(); err != nil {
			return fmt.Errorf("gcc: %v: %s", err, out)
		}
		trace = filepath.Join(dir, "list.trace")
		fmt.Fprintf(os.Stderr, "servebench: recording list %d\n", nodes)
		rec := exec.Command(filepath.Join(bin, "record"), "-q", "-o", trace, "--", exe, strconv.Itoa(nodes))
		rec.Stderr = os.Stderr
		if err := rec.Run(); err != nil {
			return fmt.Errorf("record: %w", err)
		}
	}
	m, err := measure(filepath.Join(bin, "analyze"), trace)
	if err != nil {
		return err
	}
	text := report(m)
	fmt.Print(text)
	if resultsFile != "" {
		sec := results.Section{Tool: "servebench", Target: "make bench-serve"}
		return sec.Update(resultsFile, sec.Begin()+"\n"+text+sec.End()+"\n")
	}
	return nil
}

var urlLine = regexp.MustCompile(`at (http://[^ ]+/) `)

// measure starts the server on the trace and asks it the questions.
func measure(analyze, trace string) (measurement, error) {
	var m measurement
	if st, err := os.Stat(trace); err == nil {
		m.traceBytes = st.Size()
	}
	start := time.Now()
	cmd := exec.Command(analyze, "serve", "--listen", "127.0.0.1:0", trace)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return m, err
	}
	if err := cmd.Start(); err != nil {
		return m, fmt.Errorf("start analyze serve: %w", err)
	}
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
	}()
	sc := bufio.NewScanner(stderr)
	base := ""
	for sc.Scan() {
		if mm := urlLine.FindStringSubmatch(sc.Text()); mm != nil {
			base = strings.TrimSuffix(mm[1], "/")
			break
		}
	}
	if base == "" {
		return m, fmt.Errorf("analyze serve printed no URL")
	}
	go io.Copy(io.Discard, stderr)
	client := &http.Client{Timeout: time.Minute}
	var run explore.Run
	if err := get(client, base+"/api/run", &run); err != nil {
		return m, err
	}
	m.tables = time.Since(start)
	var g explore.GraphView
	if err := get(client, fmt.Sprintf("%s/api/graph?ts=%d", base, run.Initial.TS), &g); err != nil {
		return m, err
	}
	var tl explore.Timeline
	if err := get(client, base+"/api/timeline?buckets=1000", &tl); err != nil {
		return m, err
	}
	m.firstView = time.Since(start)
	m.firstNodes = g.TotalNodes
	// A graph view while the graph is being built, at its newest moment.
	if run.Building {
		t0 := time.Now()
		if err := get(client, base+"/api/graph?ts=4294967295", &g); err != nil {
			return m, err
		}
		m.buildingGraphTime = time.Since(t0)
	}
	for run.Building {
		time.Sleep(50 * time.Millisecond)
		if err := get(client, base+"/api/run", &run); err != nil {
			return m, err
		}
	}
	m.built = time.Since(start)
	m.events, m.changes = run.Events, uint64(run.Changes)
	rng := rand.New(rand.NewPCG(1, 2))
	ts := make([]uint32, moments)
	for i := range ts {
		ts[i] = uint32(rng.Uint64N(uint64(run.Changes) + 1))
	}
	groups := make([]string, moments)
	for i, t := range ts {
		t0 := time.Now()
		if err := get(client, fmt.Sprintf("%s/api/graph?ts=%d", base, t), &g); err != nil {
			return m, err
		}
		m.graph = append(m.graph, time.Since(t0))
		m.maxNodes = max(m.maxNodes, g.TotalNodes)
		best := 0
		for _, n := range g.Nodes {
			if n.Kind == "group" && n.Count > best {
				best, groups[i] = n.Count, n.Group
			}
		}
	}
	for i, t := range ts {
		u := fmt.Sprintf("%s/api/graph?ts=%d", base, t)
		if groups[i] != "" {
			u += "&expand=" + groups[i]
		}
		t0 := time.Now()
		if err := get(client, u, &g); err != nil {
			return m, err
		}
		m.expanded = append(m.expanded, time.Since(t0))
	}
	m.peakRSS = peakRSS(cmd.Process.Pid)
	return m, nil
}

// get asks for one JSON answer.
func get(c *http.Client, url string, v any) error {
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, strings.TrimSpace(string(b)))
	}
	return json.Unmarshal(b, v)
}

// peakRSS reads a process's peak resident set size (VmHWM).
func peakRSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d.Microseconds())/1000) }

func maxOf(ds []time.Duration) time.Duration {
	var m time.Duration
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "missed"
}

// report formats the section.
func report(m measurement) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("## The explorer's server (bench/servebench)\n\n")
	p("Machine: %s. bin/analyze serve on a trace of testdata/programs/list.c with 100 000 nodes (gcc -O2 -g), measured through its HTTP API from another process: the first view is the time from starting the server to the answers of /api/run, /api/graph at the run's initial moment and /api/timeline (1000 buckets); the moments are %d random timestamps asked after the build, then the same with the largest group expanded; peak RSS is the server's VmHWM. Targets: first view <= 2 s, any moment <= 200 ms, memory < 2 GB.\n\n", results.DescribeMachine(), moments)
	p("| measure | value | target |\n|---|---:|---|\n")
	p("| trace | %s events, %s changes, %.1f MB | |\n", results.Group(m.events), results.Group(m.changes), float64(m.traceBytes)/(1<<20))
	p("| tables read, first /api/run answered | %s ms | |\n", ms(m.tables))
	p("| first view (run + graph + timeline) | %s ms (%s live nodes) | <= 2000 ms: %s |\n", ms(m.firstView), results.Group(uint64(m.firstNodes)), verdict(m.firstView <= firstViewTarget))
	if m.buildingGraphTime > 0 {
		p("| /api/graph while building (newest moment) | %s ms | |\n", ms(m.buildingGraphTime))
	}
	p("| build done (graph, timeline, counts, stages) | %.2f s | |\n", m.built.Seconds())
	p("| /api/graph at %d random moments: median, max | %s ms, %s ms (up to %s live nodes) | <= 200 ms: %s |\n", moments, ms(results.Median(m.graph)), ms(maxOf(m.graph)), results.Group(uint64(m.maxNodes)), verdict(maxOf(m.graph) <= momentTarget))
	p("| the same, largest group expanded: median, max | %s ms, %s ms | <= 200 ms: %s |\n", ms(results.Median(m.expanded)), ms(maxOf(m.expanded)), verdict(maxOf(m.expanded) <= momentTarget))
	p("| server peak RSS | %.0f MB | < 2048 MB: %s |\n", float64(m.peakRSS)/(1<<20), verdict(m.peakRSS > 0 && m.peakRSS < rssTarget))
	p("\n")
	return b.String()
}
