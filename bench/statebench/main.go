// Command statebench measures explore/state's queries (analyze state, the
// explorer's GET /api/state) on recorded runs of about 10 M events. For
// each benchmark program it records one trace (bin/record), builds its
// MG++ graph once, and then, on one core (GOMAXPROCS=1), times state.At
// at moments 10%, 50% and 90% of the way through the run and at its end:
// the 32 bytes at the head of a node live at that moment (no graph), the
// same with the registers, and the node itself with its fields (the graph
// given, built beforehand). Each time is the median of 3 runs; the table
// also gives the events each pass read (it stops early once every byte
// is settled) and the peak memory.
//
// Usage:
//
//	statebench [-only NAME[,NAME...]] [-bin DIR] [-results FILE]
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/mgtrace/mgtrace/bench/internal/results"
	"github.com/mgtrace/mgtrace/explore/state"
	"github.com/mgtrace/mgtrace/mgbuild"
	"github.com/mgtrace/mgtrace/schema"
)

type program struct {
	name, src string
	args      []string
	about     string
}

func programs() []program {
	return []program{
		{"slicework", "slicework.c", []string{"225000"}, "testdata/programs/slicework.c 225000: a hash table of 32-byte entries"},
		{"cells", "state/cells.c", []string{"400", "1", "5"}, "testdata/programs/state/cells.c: 40-byte structs, 80 C-points"},
	}
}

func main() {
	only := flag.String("only", "", "run only these programs (comma-separated)")
	bin := flag.String("bin", "bin", "folder with record and the probe")
	resultsFile := flag.String("results", "", "update the statebench section of this Markdown file")
	flag.Parse()
	if err := run(*only, *bin, *resultsFile); err != nil {
		fmt.Fprintln(os.Stderr, "statebench:", err)
		os.Exit(1)
	}
}

func run(only, bin, resultsFile string) error {
	runtime.GOMAXPROCS(1)
	dir, err := os.MkdirTemp("", "statebench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	root, err := results.FindRoot("statebench")
	if err != nil {
		return err
	}
	var out strings.Builder
	fmt.Fprintf(&out, "Machine: %s. One core (GOMAXPROCS=1); each time is the median of 3 calls of state.At on a freshly opened trace (page cache warm). Columns: the moment (an event 10%%, 50%%, 90%% of the way through, or the end); bytes: the 32 bytes at the head of a node live then, without the graph; +registers: the same with every thread's registers; node: that node with its fields by struct layout, the graph given (built once beforehand, its time apart); events: how many the bytes query read.\n\n", results.DescribeMachine())
	for _, p := range programs() {
		if only != "" && !strings.Contains(","+only+",", ","+p.name+",") {
			continue
		}
		exe := filepath.Join(dir, p.name)
		src := filepath.Join(root, "testdata", "programs", p.src)
		if o, err := exec.Command("gcc", "-g", "-O1", "-fno-omit-frame-pointer", "-I", filepath.Join(root, "include"), "-o", exe, src).CombinedOutput(); err != nil {
			return fmt.Errorf("gcc %s: %v: %s", p.src, err, o)
		}
		trace := filepath.Join(dir, p.name+".trace")
		rec := exec.Command(filepath.Join(bin, "record"), append([]string{"-q", "-o", trace, "--", exe}, p.args...)...)
		rec.Stdout, rec.Stderr = io.Discard, os.Stderr
		if err := rec.Run(); err != nil {
			return fmt.Errorf("record %s: %w", p.name, err)
		}
		table, err := measure(p, trace)
		if err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
		out.WriteString(table)
		os.Remove(trace)
	}
	fmt.Print(out.String())
	if resultsFile != "" {
		sec := results.Section{Tool: "statebench", Target: "go run ./bench/statebench -results bench/RESULTS.md"}
		return sec.Update(resultsFile, sec.Begin()+"\n"+out.String()+sec.End()+"\n")
	}
	return nil
}

// measure times the queries on one trace and returns its table.
func measure(p program, trace string) (string, error) {
	r, err := schema.Open(trace)
	if err != nil {
		return "", err
	}
	t0 := time.Now()
	g, err := mgbuild.Build(r, mgbuild.Options{Mode: mgbuild.Aware})
	r.Close()
	if err != nil {
		return "", err
	}
	build := time.Since(t0)
	last := g.Stats.LastSeq
	debug.FreeOSMemory()
	results.ResetPeakRSS()
	rows := [][]string{{"moment", "bytes", "+registers", "node", "events read"}}
	for _, frac := range []float64{0.1, 0.5, 0.9, 1} {
		m := state.Moment{Seq: uint64(float64(last) * frac), End: frac == 1}
		label := fmt.Sprintf("seq:%d (%.0f%%)", m.Seq, frac*100)
		if m.End {
			m.Seq, label = last, "end"
		}
		ts := g.AtSeq(m.Seq)
		snap := g.Snapshot(ts)
		if len(snap.Nodes) == 0 {
			continue
		}
		n := snap.Nodes[len(snap.Nodes)/2]
		rg := []state.Range{{Addr: n.Lo, Len: min(32, n.Hi-n.Lo)}}
		var events uint64
		bytesT, err := median(trace, nil, m, state.Query{Ranges: rg}, &events)
		if err != nil {
			return "", err
		}
		regsT, err := median(trace, nil, m, state.Query{Ranges: rg, Registers: true}, nil)
		if err != nil {
			return "", err
		}
		mg := m
		mg.TS, mg.HasTS = ts, true
		nodeT, err := median(trace, g, mg, state.Query{Nodes: []mgbuild.NodeID{n.ID}}, nil)
		if err != nil {
			return "", err
		}
		rows = append(rows, []string{label, ms(bytesT), ms(regsT), ms(nodeT), results.Group(events)})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "**%s** (%s): %s events, graph built in %s (not counted below), peak RSS of the queries %d MiB.\n\n",
		p.name, p.about, results.Group(last+1), ms(build), results.PeakRSS()>>20)
	for i, row := range rows {
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
		if i == 0 {
			b.WriteString("|---|---:|---:|---:|---:|\n")
		}
	}
	b.WriteString("\n")
	return b.String(), nil
}

// median returns the median time of 3 queries.
func median(trace string, g *mgbuild.Graph, m state.Moment, q state.Query, events *uint64) (time.Duration, error) {
	var ts []time.Duration
	for i := 0; i < 3; i++ {
		r, err := schema.Open(trace)
		if err != nil {
			return 0, err
		}
		t0 := time.Now()
		v, err := state.At(r, g, m, q, nil)
		ts = append(ts, time.Since(t0))
		r.Close()
		if err != nil {
			return 0, err
		}
		if events != nil {
			*events = v.Events
		}
	}
	return results.Median(ts), nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }
