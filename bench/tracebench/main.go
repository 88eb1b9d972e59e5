// Command tracebench measures the trace container on one core: how fast
// schema.Writer writes events to a file, how fast schema.Reader reads them
// back, how many bytes an event takes and how much memory each side needs.
// With -results it records the numbers, the machine and the targets in a
// section of a Markdown file (bench/RESULTS.md for `make bench`).
//
// The events come from tracetest.Workload. They are generated in chunks
// before the clock starts, so the write time is the writer's alone; the
// generator's time is measured and reported apart.
//
// Usage:
//
//	tracebench [-n events] [-seed N] [-batch N] [-dir DIR] [-keep] [-results FILE]
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
	"unsafe"

	"github.com/mgtrace/mgtrace/bench/internal/results"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracetest"
)

const usage = `usage: tracebench [-n events] [-seed N] [-batch N] [-dir DIR] [-keep] [-results FILE]

Writes n workload events to a trace file with schema.Writer and reads them
back with schema.Reader, on one core, and reports events per second, bytes
per event and peak memory. -results FILE updates the tracebench section of a
Markdown file (make bench uses bench/RESULTS.md).

flags:
`

// Benchmark size and targets (the design's, for one core).
const (
	fullEvents  = 50_000_000 // the benchmark's size; smaller runs are smoke runs
	chunkEvents = 1 << 16    // events generated ahead of each timed stretch
	writeTarget = 15e6       // events/s
	readTarget  = 30e6       // events/s
)

func main() {
	runtime.GOMAXPROCS(1)
	fs := flag.NewFlagSet("tracebench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var cfg config
	fs.Uint64Var(&cfg.events, "n", fullEvents, "number of `events` to write and read")
	fs.Uint64Var(&cfg.seed, "seed", 1, "workload random `seed`")
	fs.IntVar(&cfg.batch, "batch", 0, "`events` per block (0: the writer's default)")
	fs.StringVar(&cfg.dir, "dir", "", "write the trace in `DIR` (default: a temporary directory)")
	fs.BoolVar(&cfg.keep, "keep", false, "keep the trace file")
	fs.StringVar(&cfg.results, "results", "", "update the tracebench section of Markdown `FILE`")
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Print(usage)
			fs.SetOutput(os.Stdout)
			fs.PrintDefaults()
			os.Exit(0)
		}
		fail(2, "%v (see tracebench -h)", err)
	}
	switch {
	case fs.NArg() > 0:
		fail(2, "unexpected argument %q (see tracebench -h)", fs.Arg(0))
	case cfg.events == 0:
		fail(2, "-n must be at least 1")
	case cfg.batch < 0 || cfg.batch > schema.MaxEventsPerBlock:
		fail(2, "-batch must be 0..%d", schema.MaxEventsPerBlock)
	}
	res, err := run(cfg)
	if err != nil {
		fail(1, "%v", err)
	}
	res.print(os.Stdout)
	if cfg.results != "" {
		if err := section.Update(cfg.results, res.markdown()); err != nil {
			fail(1, "%v", err)
		}
		fmt.Printf("updated %s\n", cfg.results)
	}
}

// fail prints a one-line error and exits with status code.
func fail(code int, format string, args ...any) {
	fmt.Fprintf(os.Stderr, "tracebench: "+format+"\n", args...)
	os.Exit(code)
}

type config struct {
	events, seed uint64
	batch        int
	dir          string
	keep         bool
	results      string
}

// result is what one run measured.
type result struct {
	cfg       config
	machine   results.Machine
	start     time.Time
	path      string
	size      int64
	genTime   time.Duration // generating the events (not counted)
	writeTime time.Duration
	readTime  time.Duration
	writePeak int64 // bytes; 0 when unknown
	readPeak  int64
	peakSplit bool // whether the peaks were measured per phase
}

// run writes and reads the trace and measures both.
func run(cfg config) (*result, error) {
	res := &result{cfg: cfg, machine: results.DescribeMachine(), start: time.Now()}
	dir := cfg.dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "tracebench-")
		if err != nil {
			return nil, fmt.Errorf("create temporary directory: %w", err)
		}
		if !cfg.keep {
			defer os.RemoveAll(tmp)
		}
		dir = tmp
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create directory: %w", err)
	}
	res.path = filepath.Join(dir, "tracebench.trace")
	if !cfg.keep && cfg.dir != "" {
		defer os.Remove(res.path)
	}

	res.peakSplit = results.ResetPeakRSS()
	if err := res.write(); err != nil {
		return nil, err
	}
	res.writePeak = results.PeakRSS()

	// Give the write phase's memory back so that the read phase's peak is
	// its own.
	debug.FreeOSMemory()
	res.peakSplit = res.peakSplit && results.ResetPeakRSS()
	if err := res.read(); err != nil {
		return nil, err
	}
	res.readPeak = results.PeakRSS()
	return res, nil
}

// write generates the events chunk by chunk and times the writer alone.
func (res *result) write() error {
	f, err := os.Create(res.path)
	if err != nil {
		return fmt.Errorf("create trace: %w", err)
	}
	defer f.Close()
	chunk := make([]schema.Event, chunkEvents)
	wl := tracetest.NewWorkload(res.cfg.seed)

	t0 := time.Now()
	w, err := schema.NewWriter(f, tracetest.Header("tracebench"), schema.WriterOptions{BatchEvents: res.cfg.batch})
	if err != nil {
		return fmt.Errorf("write %s: %w", res.path, err)
	}
	res.writeTime += time.Since(t0)
	for left := res.cfg.events; left > 0; {
		evs := chunk[:min(left, chunkEvents)]
		left -= uint64(len(evs))
		t0 = time.Now()
		for i := range evs {
			wl.Next(&evs[i])
		}
		t1 := time.Now()
		for i := range evs {
			if err := w.Write(&evs[i]); err != nil {
				return fmt.Errorf("write %s: %w", res.path, err)
			}
		}
		res.writeTime += time.Since(t1)
		res.genTime += t1.Sub(t0)
	}
	t0 = time.Now()
	if err := w.Close(nil); err != nil {
		return fmt.Errorf("write %s: %w", res.path, err)
	}
	res.writeTime += time.Since(t0)
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", res.path, err)
	}
	res.size = w.Bytes()
	return nil
}

// read reads every event back, counts them and checks the count.
func (res *result) read() error {
	t0 := time.Now()
	r, err := schema.Open(res.path)
	if err != nil {
		return err
	}
	defer r.Close()
	var n uint64
	for {
		_, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		n++
	}
	res.readTime = time.Since(t0)
	switch {
	case n != res.cfg.events:
		return fmt.Errorf("read %s: %d events, wrote %d", res.path, n, res.cfg.events)
	case !r.End().Whole:
		return fmt.Errorf("read %s: the trace reads as cut short (%s)", res.path, r.End().Reason)
	}
	return nil
}

func rate(n uint64, d time.Duration) float64 { return float64(n) / d.Seconds() }

func verdict(got, target float64) string {
	if got >= target {
		return "met"
	}
	return "missed"
}

func mib(b int64) string {
	if b <= 0 {
		return "unknown"
	}
	return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
}

// print writes a short report for a person at a terminal.
func (res *result) print(w io.Writer) {
	n := res.cfg.events
	wr, rr := rate(n, res.writeTime), rate(n, res.readTime)
	fmt.Fprintf(w, "tracebench: %s events (seed %d), GOMAXPROCS=1, trace %s\n", results.Group(n), res.cfg.seed, res.path)
	fmt.Fprintf(w, "write  %7.3f s  %6.2f M events/s  (target >= %.0f M: %s)\n", res.writeTime.Seconds(), wr/1e6, writeTarget/1e6, verdict(wr, writeTarget))
	fmt.Fprintf(w, "read   %7.3f s  %6.2f M events/s  (target >= %.0f M: %s)\n", res.readTime.Seconds(), rr/1e6, readTarget/1e6, verdict(rr, readTarget))
	fmt.Fprintf(w, "file   %s bytes, %.3f bytes/event\n", results.Group(uint64(res.size)), float64(res.size)/float64(n))
	if res.peakSplit {
		fmt.Fprintf(w, "peak RSS  write %s, read %s\n", mib(res.writePeak), mib(res.readPeak))
	} else {
		fmt.Fprintf(w, "peak RSS  %s (whole run)\n", mib(res.readPeak))
	}
	fmt.Fprintf(w, "generator %.3f s (not counted)\n", res.genTime.Seconds())
	if n < fullEvents {
		fmt.Fprintf(w, "note: smoke run; the benchmark is %s events\n", results.Group(fullEvents))
	}
}

// section is the part of the results file that tracebench owns.
var section = results.Section{Tool: "tracebench", Target: "make bench"}

// markdown returns the results section, markers included.
func (res *result) markdown() string {
	n := res.cfg.events
	wr, rr := rate(n, res.writeTime), rate(n, res.readTime)
	m := res.machine
	var b strings.Builder
	fmt.Fprintln(&b, section.Begin())
	fmt.Fprintln(&b, "## Trace write and read (bench/tracebench)")
	fmt.Fprintln(&b)
	args := fmt.Sprintf("-n %d -seed %d", n, res.cfg.seed)
	if res.cfg.batch != 0 {
		args += fmt.Sprintf(" -batch %d", res.cfg.batch)
	}
	fmt.Fprintf(&b, "Run on %s with `tracebench %s`.\n\n", res.start.UTC().Format("2006-01-02 15:04 UTC"), args)
	if n < fullEvents {
		fmt.Fprintf(&b, "> **Smoke run, not a result.** It wrote %s events; the benchmark is %s.\n"+
			"> These numbers only show that the tool works. Run `make bench` on a quiet machine for real ones.\n\n",
			results.Group(n), results.Group(fullEvents))
	}
	fmt.Fprintf(&b, "Machine: %s.\n", m)
	fmt.Fprintf(&b, "Load average when the run started: %s (other work on the machine lowers the rates).\n\n", m.Load)
	fmt.Fprintln(&b, "| measure | result | target (one core) | |")
	fmt.Fprintln(&b, "|---|---|---|---|")
	fmt.Fprintf(&b, "| write | %.2f M events/s (%.3f s) | >= %.0f M events/s | %s |\n",
		wr/1e6, res.writeTime.Seconds(), writeTarget/1e6, verdict(wr, writeTarget))
	fmt.Fprintf(&b, "| read | %.2f M events/s (%.3f s) | >= %.0f M events/s | %s |\n",
		rr/1e6, res.readTime.Seconds(), readTarget/1e6, verdict(rr, readTarget))
	fmt.Fprintf(&b, "| file size | %s bytes | | |\n", results.Group(uint64(res.size)))
	fmt.Fprintf(&b, "| bytes per event | %.3f | | |\n", float64(res.size)/float64(n))
	if res.peakSplit {
		fmt.Fprintf(&b, "| peak RSS, write | %s | | |\n", mib(res.writePeak))
		fmt.Fprintf(&b, "| peak RSS, read | %s | | |\n", mib(res.readPeak))
	} else {
		fmt.Fprintf(&b, "| peak RSS, whole run | %s | | |\n", mib(res.readPeak))
	}
	fmt.Fprintln(&b)
	fmt.Fprintf(&b, "How it was measured: one process with GOMAXPROCS=1. Events come from "+
		"`tracetest.Workload` and are generated %s at a time before the clock starts; the write time "+
		"covers `schema.NewWriter`, every `Write` and `Close`, with the writer's blocks going straight "+
		"to the file (page cache, no fsync). Generating the events took %.3f s more, not counted. "+
		"The read time covers `schema.Open`, `Next` until `io.EOF` (counting events) and `Close`, "+
		"reading the file just written, so from the page cache. Peak RSS is the process's VmHWM "+
		"(/proc/self/status), reset between the phases; the write peak includes the %s-event chunk "+
		"(about %s).\n", results.Group(chunkEvents), res.genTime.Seconds(), results.Group(chunkEvents),
		mib(chunkEvents*int64(unsafe.Sizeof(schema.Event{}))))
	fmt.Fprintln(&b, section.End())
	return b.String()
}
