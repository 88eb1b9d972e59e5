// Command record runs a program under the mgtrace probe and writes a
// self-contained trace of its run:
//
//	record [flags] [-o run.trace] [--] ./prog args...
//
// It exits with the program's exit status (128+N when the program was
// killed by signal N), or 2 when it could not record (bad flag, missing
// valgrind or probe, program not found). See docs/record.md.
package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/mgtrace/mgtrace/internal/term"
	"github.com/mgtrace/mgtrace/internal/version"
	"github.com/mgtrace/mgtrace/points"
	"github.com/mgtrace/mgtrace/record/internal/probe"
	"github.com/mgtrace/mgtrace/record/internal/recorder"
	"github.com/mgtrace/mgtrace/schema"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

const usage = `record runs a program under the mgtrace probe (Valgrind) and writes a
self-contained trace of its run, for analyze.

Usage:
  record [flags] [--] PROGRAM [ARGS...]

The program's standard input, output and error are its own. record exits
with the program's exit status, or 128+N when the program was killed by
signal N, or 2 when it could not record. A one-line summary goes to
standard error.

--from and --to record only regions of the run, as DrDebug does (Yan
Wang's dissertation, "Dynamic Analysis Techniques for Effective and
Efficient Debugging", UC Riverside, 2014, chapter 5): outside them the trace keeps the
allocator's calls, system calls, thread events and signals; each region
starts with the registers of every thread and the program's writable
memory, so that the analyses work as if the run began there. With
--from P#all the last region starts again each time P comes after it.

--switch and --suppress re-execute the program with a change, as in
Wang's dissertation (chapter 2, the Qzdb debugger): a source line's conditional branch
goes the other way, or its call or stores are skipped, on the line's N-th
execution. The trace has an ALTER event where that happened; an instance
that never came is a warning.

Flags:
`

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "record: internal error: %v\n", r)
			code = 2
		}
	}()
	fs := pflag.NewFlagSet("record", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SetInterspersed(false) // flags after PROGRAM belong to the program
	output := fs.StringP("output", "o", "", "trace file to write (default: PROGRAM's base name + \".trace\")")
	quiet := fs.BoolP("quiet", "q", false, "print nothing but errors (no summary, no progress)")
	probeDir := fs.String("probe-dir", "", "`DIR` holding the probe mgtrace-amd64-linux (default: $MGTRACE_PROBE_DIR, else next to record, else ../libexec/mgtrace or ../lib/mgtrace from it)")
	valgrind := fs.String("valgrind", "valgrind", "the valgrind command")
	vgArgs := fs.StringArray("valgrind-arg", nil, "extra option for valgrind, e.g. --valgrind-arg=--fair-sched=yes (repeatable)")
	progress := fs.String("progress", "auto", "show progress on standard error: auto (when it is a terminal), always or never")
	from := fs.StringArray("from", nil, "record only from `POINT` on (repeatable, one region each): FUNC (its entry), FUNC:exit (its return), FILE:LINE, mark:NAME (MGTRACE_MARK), or an instruction count; #K for the K-th time (see docs/record.md)")
	to := fs.StringArray("to", nil, "end the region of the matching --from at `POINT` (default: the end of the run)")
	switches := fs.StringArray("switch", nil, "invert the conditional branch of the source line `FILE:LINE[#N|#all]` of the main program on its N-th instance (default #1) or on all; N counts the executions of the line's conditional branches, all threads together (repeatable; see docs/record.md, \"Changing the run\")")
	suppresses := fs.StringArray("suppress", nil, "skip the N-th instance of the source line `FILE:LINE[#N|#all]`: when the line has calls, the call is not made (execution goes on after it with rax = 0) and N counts its calls; otherwise its stores to memory are not done and N counts the executions of its first store instruction (repeatable)")
	preempt := fs.String("preempt", "", fmt.Sprintf("switch threads after at most `N` superblocks of a thread (1 to %d; each time a count drawn from 1..N; adds --fair-sched=yes unless a --valgrind-arg gives one); default %d with --sched-seed", recorder.MaxPreempt, defaultPreempt))
	schedSeed := fs.String("sched-seed", "", "seed `S` of the switch points --preempt draws (0 to 2^64-1, default 1): the same seed gives the same interleaving to a program without blocking system calls or timing dependence")
	inputCap := fs.String("input-cap", "16MiB", "record at most `SIZE` bytes of what read-like system calls (read, pread64, readv, preadv, recvfrom, recvmsg) bring into the program (bytes, or with a KiB, MiB or GiB suffix; 0: none); past it the trace still says where each call's bytes landed, for analyze inputs, without them")
	level := fs.String("level", "full", "level of detail: full (every load, store and derivation), heap (no load or store whose address is based on rsp or rbp: the stack, left out when the probe instruments the code, so it costs nothing at run time; enough for analyze mg, check, locate and bugs, whose leak rules then warn) or flow (no loads, stores or derivations: control flow, calls, returns, system calls, allocator calls, C-points, threads and signals; enough for tarantula, lin, info and dump); see docs/record.md, \"Levels of detail\"")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the recorder itself to this file (for developers)")
	help := fs.BoolP("help", "h", false, "show this help")
	showVersion := fs.Bool("version", false, "print the version, the commit, the trace format version record writes and the probe protocol, and exit")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(stderr, "record: %v\nrun 'record --help' for usage\n", err)
		return 2
	}
	if *help {
		fmt.Fprint(stdout, usage+fs.FlagUsages())
		return 0
	}
	if *showVersion {
		fmt.Fprint(stdout, versionInfo().String())
		return 0
	}
	rest := fs.Args()
	if len(rest) == 0 {
		fmt.Fprintf(stderr, "record: no program to record\nrun 'record --help' for usage\n")
		return 2
	}
	switch *progress {
	case "auto", "always", "never":
	default:
		fmt.Fprintf(stderr, "record: --progress must be auto, always or never, not %q\n", *progress)
		return 2
	}
	var alts []recorder.Alteration
	for _, f := range []struct {
		kind  points.Kind
		specs []string
	}{{points.Switch, *switches}, {points.Suppress, *suppresses}} {
		for _, text := range f.specs {
			sp, err := points.ParseSpec(text)
			if err != nil {
				fmt.Fprintf(stderr, "record: --%s: %v\n", f.kind, err)
				return 2
			}
			alts = append(alts, recorder.Alteration{Kind: f.kind, Spec: sp, Text: text})
		}
	}
	n, seed, err := schedFlags(fs, *preempt, *schedSeed)
	if err != nil {
		fmt.Fprintf(stderr, "record: %v\n", err)
		return 2
	}
	capBytes, err := parseSize(*inputCap)
	if err != nil {
		fmt.Fprintf(stderr, "record: --input-cap: %v\n", err)
		return 2
	}
	lvl, err := schema.ParseLevel(*level)
	if err != nil {
		fmt.Fprintf(stderr, "record: --level: %v\n", err)
		return 2
	}
	out := *output
	if out == "" {
		out = filepath.Base(rest[0]) + ".trace"
	}
	if len(alts) > 0 && len(*from) > 0 {
		fmt.Fprintf(stderr, "record: --switch and --suppress cannot be combined with --from yet: record the whole run\n")
		return 2
	}
	regions, err := parseRegions(rest[0], *from, *to)
	if err != nil {
		fmt.Fprintf(stderr, "record: %v\n", err)
		return 2
	}
	opts := recorder.Options{
		Program: rest[0], Args: rest[1:], Output: out, ProbeDir: *probeDir,
		Valgrind: *valgrind, ValgrindArgs: *vgArgs, Stdin: stdin, Stdout: stdout, Stderr: stderr,
		Regions:     regions,
		Alterations: alts,
		Preempt:     n, SchedSeed: seed,
		InputCap: capBytes,
		Level:    lvl,
	}
	if capBytes == 0 {
		opts.InputCap = recorder.NoInput
	}
	showProgress := !*quiet && (*progress == "always" || *progress == "auto" && term.IsTerminal(stderr))
	if showProgress {
		opts.Progress = func(events uint64, bytes int64) {
			fmt.Fprintf(stderr, "\rrecord: %d events, %.1f MiB ", events, float64(bytes)/(1<<20))
		}
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "record: %v\n", err)
			return 2
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "record: %v\n", err)
			return 2
		}
		defer pprof.StopCPUProfile()
	}
	res, err := recorder.Record(opts)
	if showProgress {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if err != nil {
		if errors.Is(err, recorder.ErrNoValgrind) {
			fmt.Fprintf(stderr, "record: %v\n", err)
			return 2
		}
		if res == nil {
			fmt.Fprintf(stderr, "record: %v\n", err)
			return 2
		}
		fmt.Fprintf(stderr, "record: %v (the trace %s holds what was recorded before)\n", err, out)
	}
	if !*quiet {
		for _, w := range res.Warnings {
			fmt.Fprintf(stderr, "record: %s\n", w)
		}
		fmt.Fprintln(stderr, summary(res))
	}
	return res.Status()
}

// defaultPreempt is --preempt's value when only --sched-seed is given.
const defaultPreempt = 1000

// defaultSchedSeed is --sched-seed's value when only --preempt is given.
const defaultSchedSeed = 1

// schedFlags reads --preempt and --sched-seed: the preemption bound (0
// when neither flag was given) and the seed.
func schedFlags(fs *pflag.FlagSet, preempt, seed string) (int, uint64, error) {
	if !fs.Changed("preempt") && !fs.Changed("sched-seed") {
		return 0, 0, nil
	}
	n, s := defaultPreempt, uint64(defaultSchedSeed)
	if fs.Changed("preempt") {
		v, err := strconv.ParseInt(preempt, 10, 64)
		if err != nil || v < 1 || v > recorder.MaxPreempt {
			return 0, 0, fmt.Errorf("--preempt must be a whole number from 1 to %d, not %q", recorder.MaxPreempt, preempt)
		}
		n = int(v)
	}
	if fs.Changed("sched-seed") {
		v, err := strconv.ParseUint(seed, 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("--sched-seed must be a whole number from 0 to %d, not %q", uint64(math.MaxUint64), seed)
		}
		s = v
	}
	return n, s, nil
}

// summary is the one line record prints when it is done.
func summary(r *recorder.Result) string {
	var how string
	switch {
	case r.Signal != 0:
		how = fmt.Sprintf("killed by signal %d", r.Signal)
	default:
		how = fmt.Sprintf("exit %d", r.Code)
	}
	per := 0.0
	if r.MemoryEvents > 0 {
		per = float64(r.Bytes) / float64(r.MemoryEvents)
	}
	return strings.Join([]string{
		fmt.Sprintf("record: %s: %d events (%d loads and stores)", r.Output, r.Events, r.MemoryEvents),
		fmt.Sprintf("%d bytes (%.2f bytes per memory event)", r.Bytes, per),
		how,
	}, ", ")
}

// parseSize reads a byte count: digits, optionally followed by KiB, MiB or
// GiB (or K, M, G).
func parseSize(s string) (int64, error) {
	num := strings.TrimRight(s, "KMGiBkmgb")
	mult := int64(1)
	switch strings.ToLower(strings.TrimSpace(s[len(num):])) {
	case "", "b":
	case "k", "kib", "kb":
		mult = 1 << 10
	case "m", "mib", "mb":
		mult = 1 << 20
	case "g", "gib", "gb":
		mult = 1 << 30
	default:
		return 0, fmt.Errorf("%q is not a size (bytes, or with a KiB, MiB or GiB suffix)", s)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
	if err != nil || n < 0 || n > recorder.MaxInputCap/mult {
		return 0, fmt.Errorf("%q is not a size from 0 to %d bytes", s, recorder.MaxInputCap)
	}
	return n * mult, nil
}

// versionInfo is what 'record --version' prints: the release, the commit,
// the trace format version record writes and the protocol it expects of
// the probe (a probe built from another commit may speak another).
func versionInfo() version.Info {
	return version.Get("record", fmt.Sprintf("writes version %d", schema.FormatVersion),
		fmt.Sprintf("probe protocol: %d (the probe %s must speak the same; rebuild both with make build)", probe.ProtocolVersion, recorder.ToolName+"-amd64-linux"))
}
