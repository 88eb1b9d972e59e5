// Command xslicebench measures execution slices (analyze slice
// --reduced-trace, package slice/execslice) on the slicing benchmark's
// runs: testdata/programs/slicework.c recorded at about 1 M and 10 M
// instruction instances, sliced from the slicing benchmark's criterion #1
// (bench/slicebench: the main thread's last memory read). For each run it
// writes the execution slice with the skeleton (every call, return and
// system call kept, the default) and without, and reports how many of the
// original's instructions and events each keeps, its size, the time to
// write it, the time to read it for slicing against the original's, and
// whether slicing it from its saved criterion gives the original's slice
// (the same members at the same pcs, the same dependences). Wang's
// dissertation ("Dynamic Analysis Techniques for Effective and Efficient
// Debugging", UC Riverside, 2014, section 5.6.4) reports slice pinballs
// that keep 41% of a region's instructions on average; the target here
// is at most half on criterion #1.
//
// Usage:
//
//	xslicebench [-sizes 1M,10M] [-bin DIR] [-results FILE] [TRACE...]
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/mgtrace/mgtrace/bench/internal/results"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/slice"
	"github.com/mgtrace/mgtrace/slice/execslice"
)

var section = results.Section{Tool: "xslicebench", Target: "make bench-xslice"}

// program is the benchmark program, in testdata/programs.
const program = "slicework"

// sizes are the slicing benchmark's runs (bench/slicebench).
var sizes = []struct {
	name string
	ops  int
}{{"1M", 5200}, {"10M", 131000}}

const usage = `usage: xslicebench [flags] [TRACE...]

Writes execution slices (analyze slice --reduced-trace) of recorded runs
of testdata/programs/slicework.c (about 1 M and 10 M instructions) from
the slicing benchmark's criterion #1 (the main thread's last memory read),
and reports what they keep, their size, the time to write and read them,
and whether they give the original's slice. Traces given as arguments are
measured instead of recorded runs. -results FILE updates the xslicebench
section of a Markdown file (make bench-xslice uses bench/RESULTS.md).

flags:
`

type config struct {
	sizes   []string
	bin     string
	results string
	traces  []string
	args    []string
}

func main() {
	cfg := config{args: os.Args[1:]}
	fs := flag.NewFlagSet("xslicebench", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	only := fs.String("sizes", "1M,10M", "record and measure these runs (comma-separated: 1M, 10M)")
	fs.StringVar(&cfg.bin, "bin", "bin", "`DIR` with record and the probe")
	fs.StringVar(&cfg.results, "results", "", "update the xslicebench section of this Markdown `FILE`")
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		os.Exit(2)
	}
	cfg.traces = fs.Args()
	cfg.sizes = strings.Split(*only, ",")
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "xslicebench:", err)
		os.Exit(1)
	}
}

// row is one execution slice measured.
type row struct {
	run, command      string
	skeleton          bool
	instances, events uint64
	members           uint64
	st                execslice.Stats
	origBytes, xBytes int64
	cut               time.Duration
	loadOrig, loadX   time.Duration
	same              string
}

func run(cfg config) error {
	start := time.Now()
	machine := results.DescribeMachine()
	root, err := results.FindRoot("xslicebench")
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "xslicebench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	type job struct{ name, trace, command string }
	var jobs []job
	if len(cfg.traces) > 0 {
		for _, t := range cfg.traces {
			jobs = append(jobs, job{name: filepath.Base(t), trace: t})
		}
	} else {
		exe := filepath.Join(tmp, program)
		args := []string{"-g", "-O1", "-fno-omit-frame-pointer", "-I", filepath.Join(root, "include"), "-pthread",
			"-o", exe, filepath.Join(root, "testdata", "programs", program+".c")}
		if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("gcc: %v: %s", err, bytes.TrimSpace(out))
		}
		rec, err := filepath.Abs(filepath.Join(cfg.bin, "record"))
		if err != nil {
			return err
		}
		for _, name := range cfg.sizes {
			ops := 0
			for _, s := range sizes {
				if strings.EqualFold(s.name, name) {
					ops = s.ops
				}
			}
			if ops == 0 {
				return fmt.Errorf("-sizes: no run %q (want 1M, 10M)", name)
			}
			trace := filepath.Join(tmp, name+".trace")
			fmt.Fprintf(os.Stderr, "xslicebench: recording %s %d\n", program, ops)
			cmd := exec.Command(rec, "-q", "-o", trace, "--", exe, fmt.Sprint(ops))
			var stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = io.Discard, &stderr
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("record: %v: %s", err, strings.TrimSpace(stderr.String()))
			}
			jobs = append(jobs, job{name: name, trace: trace, command: fmt.Sprintf("%s %d", program, ops)})
		}
	}
	var rows []row
	for _, j := range jobs {
		fmt.Fprintf(os.Stderr, "xslicebench: measuring %s\n", j.name)
		rs, err := measure(j.trace, tmp)
		if err != nil {
			return fmt.Errorf("%s: %w", j.name, err)
		}
		for i := range rs {
			rs[i].run, rs[i].command = j.name, j.command
		}
		rows = append(rows, rs...)
	}
	text := markdown(cfg, rows, machine, results.Commit(root), time.Since(start))
	fmt.Print(text)
	if cfg.results != "" {
		return section.Update(cfg.results, text)
	}
	return nil
}

// lastLoad returns the sequence number of the main thread's last LOAD
// event: the slicing benchmark's criterion #1.
func lastLoad(path string) (uint64, error) {
	tr, err := schema.Open(path)
	if err != nil {
		return 0, err
	}
	defer tr.Close()
	last, found := uint64(0), false
	for {
		ev, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, err
		}
		if ev.Kind == schema.KindLoad && ev.Thread == 1 {
			last, found = ev.Seq, true
		}
	}
	if !found {
		return 0, fmt.Errorf("%s: the main thread reads no memory", path)
	}
	return last, nil
}

func load(path string, events ...uint64) (*slice.Run, time.Duration, error) {
	t0 := time.Now()
	tr, err := schema.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer tr.Close()
	r, err := slice.Load(tr, slice.LoadOptions{Events: events})
	return r, time.Since(t0), err
}

// measure slices the trace from criterion #1 and writes and checks its
// execution slices.
func measure(path, tmp string) ([]row, error) {
	seq, err := lastLoad(path)
	if err != nil {
		return nil, err
	}
	run, loadOrig, err := load(path, seq)
	if err != nil {
		return nil, err
	}
	p, err := run.Resolve(slice.Criterion{Kind: slice.BySeq, Seq: seq})
	if err != nil {
		return nil, err
	}
	orig, err := slice.Slice(run, p, slice.Options{})
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	var rows []row
	for _, skeleton := range []bool{true, false} {
		r := row{skeleton: skeleton, instances: uint64(run.Instances()), members: uint64(len(orig.Members)),
			origBytes: fi.Size(), loadOrig: loadOrig}
		x := filepath.Join(tmp, "x.trace")
		tr, err := schema.Open(path)
		if err != nil {
			return nil, err
		}
		if f := tr.Footer(); f != nil {
			r.events = f.EventCount
		}
		out, err := os.Create(x)
		if err != nil {
			tr.Close()
			return nil, err
		}
		t0 := time.Now()
		r.st, err = execslice.Write(out, tr, orig, execslice.Options{Skeleton: skeleton, Of: filepath.Base(path)})
		cerr := out.Close()
		r.cut = time.Since(t0)
		tr.Close()
		if err != nil || cerr != nil {
			return nil, fmt.Errorf("write the execution slice: %v %v", err, cerr)
		}
		if fi, err := os.Stat(x); err == nil {
			r.xBytes = fi.Size()
		}
		xrun, loadX, err := load(x)
		if err != nil {
			return nil, err
		}
		r.loadX = loadX
		xp, err := xrun.SavedCriterion()
		if err != nil {
			return nil, err
		}
		red, err := slice.Slice(xrun, xp, slice.Options{From: xrun.ExecSlice.From})
		if err != nil {
			return nil, err
		}
		r.same = compare(orig, red, execslice.Kept(orig, skeleton, false))
		rows = append(rows, r)
		os.Remove(x)
	}
	return rows, nil
}

// compare says whether red, the execution slice's slice, is orig.
func compare(orig, red *slice.Result, kept []uint32) string {
	if len(red.Members) != len(orig.Members) {
		return fmt.Sprintf("no: %d members, the original's %d", len(red.Members), len(orig.Members))
	}
	for k, m := range red.Members {
		o := orig.Members[k]
		if kept[m] != o || red.Run.StaticOf(m).PC != orig.Run.StaticOf(o).PC {
			return fmt.Sprintf("no: member %d differs", k)
		}
	}
	if len(red.Edges) != len(orig.Edges) {
		return fmt.Sprintf("no: %d edges, the original's %d", len(red.Edges), len(orig.Edges))
	}
	for k, e := range red.Edges {
		if e.User >= 0 {
			e.User = int64(kept[e.User])
		}
		e.Def = int64(kept[e.Def])
		if e != orig.Edges[k] {
			return fmt.Sprintf("no: edge %d differs", k)
		}
	}
	return fmt.Sprintf("yes (%s members, %s edges)", results.Group(uint64(len(orig.Members))), results.Group(uint64(len(orig.Edges))))
}

func pct(a, b uint64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(b))
}

func secs(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

func markdown(cfg config, rows []row, m results.Machine, commit string, took time.Duration) string {
	var b strings.Builder
	fmt.Fprintln(&b, section.Begin())
	fmt.Fprintln(&b, "## Execution slices (bench/xslicebench)")
	fmt.Fprintln(&b)
	fmt.Fprintf(&b, "Run on %s with `xslicebench %s` at commit %s; it took %s.\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), strings.Join(cfg.args, " "), commit, took.Round(time.Second))
	fmt.Fprintf(&b, "Machine: %s.\n\n", m)
	fmt.Fprintln(&b, "| run | kept | instructions | slice | kept instructions | events | kept events | bytes | execution slice bytes | write s | slice.Load s: original / execution slice | same slice |")
	fmt.Fprintln(&b, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
	for _, r := range rows {
		kind := "slice + calls, returns, syscalls"
		if !r.skeleton {
			kind = "slice only"
		}
		fmt.Fprintf(&b, "| %s (`%s`) | %s | %s | %s | %s (%s) | %s | %s (%s) | %s | %s | %s | %s / %s | %s |\n",
			r.run, r.command, kind, results.Group(r.instances), results.Group(r.members),
			results.Group(r.st.Kept), pct(r.st.Kept, r.instances),
			results.Group(r.events), results.Group(r.st.Events), pct(r.st.Events, r.events),
			results.Group(uint64(r.origBytes)), results.Group(uint64(r.xBytes)),
			secs(r.cut), secs(r.loadOrig), secs(r.loadX), r.same)
	}
	fmt.Fprintln(&b)
	fmt.Fprintln(&b, "How to read it. Each run is testdata/programs/slicework.c recorded whole with `record -q`, sliced (improved algorithm, default options) from the slicing")
	fmt.Fprintln(&b, "benchmark's criterion #1, the main thread's last memory read (`seq:N` of its LOAD event). \"kept instructions\" are the instruction instances the")
	fmt.Fprintln(&b, "execution slice keeps, of the original's; \"kept events\" its events (BLOCK events of several kept instructions, their memory, call, return and system-call")
	fmt.Fprintln(&b, "events, a CONTROL event where the control-dependence parent changes, and an EXCLUDED record with its INJECT and CLOBBER events per excluded run).")
	fmt.Fprintln(&b, "\"write\" times execslice.Write (reading the original a second time and writing the execution slice); \"slice.Load\" opening and reading each trace for slicing.")
	fmt.Fprintln(&b, "\"same slice\": slicing the execution slice from its saved criterion gives the original's members (at the same pcs) and dependences, mapped instance for instance.")
	fmt.Fprintln(&b, "Wang's dissertation (section 5.6.4) reports slice pinballs keeping 41% of a region's instructions on average over PARSEC's programs.")
	fmt.Fprintln(&b, section.End())
	return b.String()
}
