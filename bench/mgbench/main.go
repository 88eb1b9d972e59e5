// Command mgbench measures MG++ construction and retrieval on recorded
// runs of real programs. For each benchmark program it records one trace
// (bin/record), then, on one core (GOMAXPROCS=1), builds the graph in the
// modes agnostic/app, agnostic/all and aware/app, and reports: build speed
// in trace events per second, the heap the finished graph keeps per node
// and edge, the time to retrieve the graph at the moment with the most
// live nodes, the node counts the modes find next to valgrind memcheck's
// allocation count for the same command, and the paper's Table II
// comparison: the graph's size against a snapshot per change.
//
// Targets: >= 5 M events/s; <= 100 bytes per node+edge; a snapshot of
// 100 000 nodes in <= 50 ms.
//
// Usage:
//
//	mgbench [-only NAME[,NAME...]] [-bin DIR] [-results FILE]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mgtrace/mgtrace/bench/internal/results"
	"github.com/mgtrace/mgtrace/mgbuild"
	"github.com/mgtrace/mgtrace/schema"
)

const (
	speedTarget    = 5e6 // events per second, at least
	bytesTarget    = 100 // bytes per node+edge, at most
	snapshotTarget = 50 * time.Millisecond
)

type program struct {
	name  string
	tool  string   // the executable, or "gcc" for a test program
	src   string   // test program source name
	args  []string // arguments
	about string
}

func programs() []program {
	py := "s = 0\nfor i in range(20000):\n    s += i * i\nprint(s)"
	return []program{
		{name: "list", tool: "gcc", src: "list", args: []string{"100000"}, about: "testdata/programs/list.c, 100 000 nodes"},
		{name: "tree", tool: "gcc", src: "tree", args: []string{"50000"}, about: "testdata/programs/tree.c, 50 000 keys"},
		{name: "ls", tool: "ls", args: []string{"-R", "/usr/include"}, about: "ls -R /usr/include"},
		{name: "python3", tool: "python3", args: []string{"-c", py}, about: "python3, a loop of 20 000 additions"},
		{name: "perl", tool: "perl", args: []string{"-e", `my %h; $h{$_} = [$_] for 1..20000; print scalar(keys %h), "\n"`}, about: "perl, a hash of 20 000 array refs"},
	}
}

type config struct {
	mode  mgbuild.Mode
	scope mgbuild.Scope
}

var configs = []config{{mgbuild.Agnostic, mgbuild.ScopeApp}, {mgbuild.Agnostic, mgbuild.ScopeAll}, {mgbuild.Aware, mgbuild.ScopeApp}}

type measure struct {
	cfg          config
	events       uint64
	build        time.Duration
	nodes, edges int
	merges       int
	used         int // aware: chunks the program's code accessed
	allocs       uint64
	retained     uint64 // heap bytes the graph keeps
	snapNodes    int
	snapTime     time.Duration
	snapshotCost uint64 // the paper's snapshot approach, bytes
}

type row struct {
	p        program
	trace    string
	memcheck int64 // memcheck's allocation count, -1 unknown
	ms       []measure
}

func main() {
	only := flag.String("only", "", "run only these programs (comma-separated)")
	bin := flag.String("bin", "bin", "folder with record and the probe")
	resultsFile := flag.String("results", "", "update the mgbench section of this Markdown file")
	flag.Parse()
	if err := run(*only, *bin, *resultsFile); err != nil {
		fmt.Fprintln(os.Stderr, "mgbench:", err)
		os.Exit(1)
	}
}

func run(only, bin, resultsFile string) error {
	dir, err := os.MkdirTemp("", "mgbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	var rows []row
	for _, p := range programs() {
		if only != "" && !contains(strings.Split(only, ","), p.name) {
			continue
		}
		cmd, err := command(p, root, dir)
		if err != nil {
			fmt.Fprintf(os.Stderr, "mgbench: %s skipped: %v\n", p.name, err)
			continue
		}
		trace := filepath.Join(dir, p.name+".trace")
		rec := exec.Command(filepath.Join(bin, "record"), append([]string{"-q", "-o", trace, "--"}, cmd...)...)
		rec.Stdout = io.Discard
		rec.Stderr = os.Stderr
		if err := rec.Run(); err != nil {
			return fmt.Errorf("record %s: %w", p.name, err)
		}
		r := row{p: p, trace: trace, memcheck: memcheckAllocs(cmd)}
		for _, c := range configs {
			m, err := measureOne(trace, c)
			if err != nil {
				return fmt.Errorf("%s: %w", p.name, err)
			}
			fmt.Fprintf(os.Stderr, "mgbench: %s %v/%v: %.2f M events/s, %d nodes, %d edges, %.1f B per node+edge, snapshot of %d nodes in %v\n",
				p.name, c.mode, c.scope, float64(m.events)/m.build.Seconds()/1e6, m.nodes, m.edges,
				float64(m.retained)/float64(m.nodes+m.edges+m.merges), m.snapNodes, m.snapTime)
			r.ms = append(r.ms, m)
		}
		rows = append(rows, r)
		os.Remove(trace)
	}
	text := report(rows)
	fmt.Print(text)
	if resultsFile != "" {
		sec := results.Section{Tool: "mgbench", Target: "make bench-mg"}
		return sec.Update(resultsFile, sec.Begin()+"\n"+text+sec.End()+"\n")
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// command returns the command line of a benchmark program, building test
// programs with gcc.
func command(p program, root, dir string) ([]string, error) {
	if p.tool == "gcc" {
		exe := filepath.Join(dir, p.src)
		src := filepath.Join(root, "testdata", "programs", p.src+".c")
		out, err := exec.Command("gcc", "-O2", "-g", "-fno-omit-frame-pointer", "-I", filepath.Join(root, "include"), "-o", exe, src).CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("gcc: %v: %s", err, out)
		}
		return append([]string{exe}, p.args...), nil
	}
	exe, err := exec.LookPath(p.tool)
	if err != nil {
		return nil, err
	}
	return append([]string{exe}, p.args...), nil
}

var heapUsage = regexp.MustCompile(`total heap usage: ([0-9,]+) allocs`)

// memcheckAllocs runs the command under valgrind memcheck and returns its
// "total heap usage" allocation count, or -1.
func memcheckAllocs(cmd []string) int64 {
	var stderr bytes.Buffer
	c := exec.Command("valgrind", append([]string{"--tool=memcheck", "--trace-children=yes"}, cmd...)...)
	c.Stdout, c.Stderr = io.Discard, &stderr
	_ = c.Run()
	m := heapUsage.FindAllStringSubmatch(stderr.String(), -1)
	if len(m) == 0 {
		return -1
	}
	n, err := strconv.ParseInt(strings.ReplaceAll(m[len(m)-1][1], ",", ""), 10, 64)
	if err != nil {
		return -1
	}
	return n
}

func measureOne(trace string, c config) (measure, error) {
	m := measure{cfg: c}
	old := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(old)
	r, err := schema.Open(trace)
	if err != nil {
		return m, err
	}
	defer r.Close()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	g, err := mgbuild.Build(r, mgbuild.Options{Mode: c.mode, Scope: c.scope})
	if err != nil {
		return m, err
	}
	m.build = time.Since(start)
	tables := g.Tables
	g.Tables = nil // the trace's tables are not the graph's: leave them out of its size
	runtime.GC()
	debug.FreeOSMemory()
	runtime.ReadMemStats(&after)
	m.retained = after.HeapAlloc - min(after.HeapAlloc, before.HeapAlloc)
	g.Tables = tables
	m.events = g.Stats.Events
	m.nodes, m.edges, m.merges = len(g.Nodes), len(g.Edges), len(g.Merges)
	m.allocs = g.Stats.Allocations
	for _, n := range g.Nodes {
		if n.Used {
			m.used++
		}
	}
	m.snapshotCost = g.SnapshotSpace(8)
	// The moment with the most live nodes.
	best, live, bestLive := mgbuild.TS(0), 0, 0
	deltas := make(map[mgbuild.TS]int)
	for _, n := range g.Nodes {
		deltas[n.Created]++
		if n.Ended != 0 {
			deltas[n.Ended]--
		}
	}
	keys := make([]mgbuild.TS, 0, len(deltas))
	for k := range deltas {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	for _, k := range keys {
		live += deltas[k]
		if live > bestLive {
			best, bestLive = k, live
		}
	}
	var times []time.Duration
	for i := 0; i < 5; i++ {
		start := time.Now()
		s := g.Snapshot(best)
		times = append(times, time.Since(start))
		m.snapNodes = len(s.Nodes)
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	m.snapTime = times[len(times)/2]
	runtime.KeepAlive(g)
	runtime.KeepAlive(tables)
	return m, nil
}

func mb(b uint64) string { return fmt.Sprintf("%.1f", float64(b)/(1<<20)) }

func report(rows []row) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("## MG++ construction (bench/mgbench)\n\n")
	p("Machine: %s. Build on one core (GOMAXPROCS=1), from a trace recorded in the same run; bytes per node+edge is the heap the finished graph keeps (its nodes, edges, merge edges, ownership records, change log and field index; not the trace's tables) over its nodes and edges, merge edges included; snapshot time is the median of 5 retrievals at the moment with the most live nodes; the snapshot-per-change size is the paper's Table II estimate, 8 bytes per live node after every change. Targets: >= 5 M events/s, <= 100 bytes per node+edge, a 100 000-node snapshot in <= 50 ms.\n\n", results.DescribeMachine())
	p("| program | mode/scope | events | M events/s | nodes | edges | merge edges | bytes per node+edge | snapshot nodes | snapshot ms | MG++ MB | snapshot-per-change MB |\n")
	p("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		for _, m := range r.ms {
			p("| %s | %v/%v | %s | %.2f | %s | %s | %s | %.1f | %s | %.2f | %s | %s |\n", r.p.name, m.cfg.mode, m.cfg.scope,
				results.Group(m.events), float64(m.events)/m.build.Seconds()/1e6, results.Group(uint64(m.nodes)),
				results.Group(uint64(m.edges)), results.Group(uint64(m.merges)), float64(m.retained)/float64(max(1, m.nodes+m.edges+m.merges)),
				results.Group(uint64(m.snapNodes)), float64(m.snapTime.Microseconds())/1000, mb(m.retained), mb(m.snapshotCost))
		}
	}
	p("\nNodes found against allocations (the programs' own view of their heap):\n\n")
	p("| program | agnostic/app nodes | aware/app allocations | of them used by the program's code | memcheck total heap usage allocs |\n|---|---:|---:|---:|---:|\n")
	for _, r := range rows {
		var agn, aw measure
		for _, m := range r.ms {
			if m.cfg == configs[0] {
				agn = m
			}
			if m.cfg == configs[2] {
				aw = m
			}
		}
		mc := "n/a"
		if r.memcheck >= 0 {
			mc = results.Group(uint64(r.memcheck))
		}
		p("| %s (%s) | %s | %s | %s | %s |\n", r.p.name, r.p.about, results.Group(uint64(agn.nodes)), results.Group(aw.allocs), results.Group(uint64(aw.used)), mc)
	}
	p("\n")
	return b.String()
}
