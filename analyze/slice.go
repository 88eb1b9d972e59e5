package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/mgtrace/mgtrace/internal/term"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/slice"
	"github.com/mgtrace/mgtrace/slice/execslice"
)

const sliceHelp = `
Computes the backward dynamic slice of one value of the run: every executed
instruction instance that influenced it, through register and memory data
dependences (byte-exact, across threads in the recorded order) and control
dependences (each thread's branches, from the immediate post-dominators of
control-flow graphs recovered from the trace, with the targets of indirect
jumps taken from the run). docs/slice.md gives the rules.

The criterion (--criterion) is one of:
  FILE:LINE[#K]   the K-th execution of the line (default: the last); all it
                  read. FILE may be a base name or a trailing part of the path.
  seq:N           the instruction that made event N (analyze dump shows them)
  crash           the instruction that faulted, when a signal ended the run
Narrow it to one location with --addr or --reg: then the slice is of that
location's value just after the criterion's last instruction.

Output: an Arrow IPC file (default) or a Parquet file with one row per
instance in the slice, its dependences in a list column (schema in
docs/slice.md), or with --format text the slice as it reads in the
program: the source lines of the program's own code in source order with
how many of their instances the slice holds, plus ("+N in malloc ...") the
instances outside the program's code (the dynamic loader, the C library)
that the line's calls led into; those with no program caller (the loader
before main) are counted apart (the rule of Yan Wang's dissertation,
"Dynamic Analysis Techniques for Effective and Efficient Debugging", UC
Riverside, 2014, chapter 2). --full writes every source line with its own
instances and the code without line information by function instead; the
Arrow and Parquet tables always hold the full slice. Arrow and Parquet are
binary: give -o FILE when stdout is a terminal.

The slice is computed over every thread; --thread only chooses which
threads' instances are written. --region limits how far back the slice
goes: the instances before FROM are not searched, so dependences on them
are cut.

An execution slice (--reduced-trace OUT.trace; Wang's dissertation,
section 5.3) is a trace that keeps the slice's instances
(and, unless --reduced-skeleton=false, every call, return and system call)
and replaces each excluded run of a thread with one record of what it left
changed: the registers it wrote and the memory, with the values it left.
Every analysis reads it; analyze info says what it is and how much of the
original it keeps. Sliced without --criterion, an execution slice is sliced
from the criterion it was cut for, with the slicing options it was cut with
(--data-only, --no-address, --depth, --prune-save-restore; analyze info
lists them), which gives the original's slice. With --reduced-trace the
slice itself is written only with -o; otherwise a line says what the
execution slice keeps.

Exit status 0 when the slice was written, 2 for usage or input errors (no
such line, a run that did not crash for crash, a corrupt trace). A trace cut
short is sliced up to the cut, with a warning.`

// sliceFlags are the flags of analyze slice.
type sliceFlags struct {
	criterion, addr, reg, region string
	threads                      []uint
	algorithm                    string
	dataOnly, prune, noAddress   bool
	depth                        int
	maxInstances                 int
	stats, full                  bool
	format, output               string
	reduced                      string
	skeleton                     bool
}

// sliceSetup defines the flags of analyze slice.
func sliceSetup(fs *pflag.FlagSet) func(*env, []string) error {
	f := &sliceFlags{}
	fs.StringVar(&f.criterion, "criterion", "", "slice from `C`: FILE:LINE[#K], seq:N or crash (required, but for an execution slice: its own criterion)")
	fs.StringVar(&f.addr, "addr", "", "narrow the criterion to the memory at `ADDR[:SIZE]` (hex 0x... or decimal; SIZE in bytes, default 8)")
	fs.StringVar(&f.reg, "reg", "", "narrow the criterion to register `REG` (rax..r15, eax, al, xmm0..xmm15, rflags) of the criterion's thread")
	fs.StringVar(&f.algorithm, "algorithm", "improved", "`ALG`: improved (filtered, indexed; Algorithm 5 of Vineet Singh's dissertation, \"User Assisted Data Structure Debugging and Verification\", UC Riverside, 2016) or baseline (the list scan of its Algorithm 4, for comparison)")
	fs.UintSliceVar(&f.threads, "thread", nil, "write only the instances of thread `T` (repeat or comma-separate for several; the slice still follows every thread)")
	fs.StringVar(&f.region, "region", "", "search only events `FROM..TO`: sequence numbers or MGTRACE_MARK names (NAME or NAME#K); either side may be empty")
	fs.BoolVar(&f.dataOnly, "data-only", false, "follow data dependences only, not control dependences")
	fs.BoolVar(&f.prune, "prune-save-restore", false, "bypass callee-saved register save/restore pairs (push/pop at a function's entry and exit that keep a register's value)")
	fs.BoolVar(&f.noAddress, "no-address", false, "do not follow the registers that form a load's or store's address")
	fs.IntVar(&f.depth, "depth", 0, "keep only instances at most `N` dependences from the criterion (0: no limit)")
	fs.IntVar(&f.maxInstances, "max-instructions", 500_000_000, "refuse runs of more than `N` instruction instances (memory: about 40 bytes each); use --region for longer runs")
	fs.BoolVar(&f.stats, "stats", false, "print the traversal's statistics and times on stderr")
	fs.BoolVar(&f.full, "full", false, "with --format text, list every instance where it ran: the loader's and the C library's by function, not squashed into the program's call sites")
	fs.StringVar(&f.format, "format", "arrow", "`FORMAT` of the output: arrow (Arrow IPC file), parquet, or text (source lines with counts)")
	fs.StringVarP(&f.output, "output", "o", "", "write the output to `FILE` instead of stdout")
	fs.StringVar(&f.reduced, "reduced-trace", "", "write the execution slice to `OUT.trace`: a trace of the slice's instances, each excluded run of a thread replaced by the registers and memory it left changed")
	fs.BoolVar(&f.skeleton, "reduced-skeleton", true, "with --reduced-trace, keep every call, return and system call instance too (the call stacks analyze mg and the text view follow)")
	return func(e *env, args []string) error { return runSlice(e, f, args) }
}

// runSlice runs analyze slice.
func runSlice(e *env, f *sliceFlags, args []string) error {
	if err := formatFlag(f.format, "arrow", "parquet", "text"); err != nil {
		return err
	}
	if f.full && f.format != "text" {
		return usagef("--full applies to --format text: the %s table always holds the full slice", f.format)
	}
	var crit slice.Criterion
	if f.criterion != "" {
		c, err := parseCriterion(f.criterion, f.addr, f.reg)
		if err != nil {
			return err
		}
		crit = c
	} else if f.addr != "" || f.reg != "" {
		return usagef("--addr and --reg narrow a --criterion: give one")
	}
	var alg slice.Algorithm
	switch f.algorithm {
	case "improved":
		alg = slice.Improved
	case "baseline":
		alg = slice.Baseline
	default:
		return usagef("unknown --algorithm %q (want improved or baseline)", f.algorithm)
	}
	if f.depth < 0 {
		return usagef("--depth %d: want 0 (no limit) or more", f.depth)
	}
	if f.maxInstances < 0 {
		return usagef("--max-instructions %d: want 0 (no limit) or more", f.maxInstances)
	}
	from, to, err := parseRegion(f.region)
	if err != nil {
		return err
	}
	writeTable := f.reduced == "" || f.output != ""
	if writeTable && f.format != "text" && (f.output == "" || f.output == "-") && term.IsTerminal(e.stdout) {
		return usagef("--format %s is binary: give -o FILE, or --format text", f.format)
	}
	tracePath, r, err := openTrace(args)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := checkLevel(e, tracePath, r.Header(), schema.LevelHeap, "stack dependences are missing"); err != nil {
		return err
	}

	start := time.Now()
	run, err := loadRun(e, tracePath, r, crit, f.maxInstances, "the slice covers the events before the cut")
	if err != nil {
		return err
	}
	loaded := time.Now()
	var point slice.Point
	switch {
	case f.criterion != "":
		point, err = run.Resolve(crit)
	case run.ExecSlice != nil:
		point, err = run.SavedCriterion()
	default:
		err = usagef("missing --criterion (FILE:LINE[#K], seq:N or crash)")
	}
	if err != nil {
		return err
	}
	sopt := slice.Options{
		Algorithm: alg, DataOnly: f.dataOnly, PruneSaveRestore: f.prune,
		MaxDepth: f.depth, NoAddress: f.noAddress,
		NoEdges: f.format == "text", // the summary counts members only
	}
	if sopt.From, err = run.RegionStart(from); err != nil {
		return err
	}
	if x := run.ExecSlice; x != nil && f.criterion == "" {
		// Its own criterion, with the options it was cut with.
		if !from.Set {
			sopt.From = x.From
		}
		if err := savedOptions(&sopt, x.Options); err != nil {
			return err
		}
	}
	if err := run.CheckRegionEnd(point, to); err != nil {
		return err
	}
	res, err := slice.Slice(run, point, sopt)
	if err != nil {
		return err
	}
	sliced := time.Now()
	keep := make([]schema.ThreadID, len(f.threads))
	for i, t := range f.threads {
		keep[i] = schema.ThreadID(t)
	}
	if writeTable {
		if err := writeSlice(e, f, res, keep); err != nil {
			return err
		}
	}
	if f.reduced != "" {
		if err := writeReduced(e, f, tracePath, res, sopt.From); err != nil {
			return err
		}
	}
	if f.stats {
		st := res.Stats
		fmt.Fprintf(e.stderr, "analyze: slice: %d instances read in %v; %s traversal %v: visited %d, tested %d, largest dependency list %d, save/restore pairs %d (bypassed %d); slice %d instances\n",
			run.Instances(), loaded.Sub(start).Round(time.Millisecond), res.Algorithm, sliced.Sub(loaded).Round(time.Millisecond),
			st.Visited, st.Processed, st.MaxList, run.Pairs(), st.Bypassed, len(res.Members))
		if run.ExecSlice != nil {
			fmt.Fprintf(e.stderr, "analyze: slice: %d uses reached an excluded run of the execution slice\n", st.Excluded)
		}
	}
	if n := run.Undecoded(); n > 0 {
		fmt.Fprintf(e.stderr, "analyze: warning: %d instructions could not be decoded; their register dependences are missing\n", n)
	}
	if n := run.Unplaced(); n > 0 {
		fmt.Fprintf(e.stderr, "analyze: warning: %d memory events did not match an executed instruction and were left out\n", n)
	}
	return nil
}

// parseCriterion parses --criterion with its narrowing --addr or --reg
// (analyze slice and analyze inputs take them alike).
func parseCriterion(criterion, addr, reg string) (slice.Criterion, error) {
	if criterion == "" {
		return slice.Criterion{}, usagef("missing --criterion (FILE:LINE[#K], seq:N or crash)")
	}
	crit, err := slice.ParseCriterion(criterion)
	if err != nil {
		return crit, usagef("%v", err)
	}
	if addr != "" && reg != "" {
		return crit, usagef("--addr and --reg both given: narrow the criterion to one location")
	}
	if addr != "" {
		a, n, err := slice.ParseAddr(addr)
		if err != nil {
			return crit, usagef("%v", err)
		}
		crit.Addr, crit.Size, crit.HasAddr = a, uint64(n), true
	}
	if reg != "" {
		r, err := slice.ParseReg(reg)
		if err != nil {
			return crit, usagef("%v", err)
		}
		crit.Reg = r
	}
	return crit, nil
}

// parseRegion parses --region FROM..TO.
func parseRegion(s string) (from, to slice.Bound, err error) {
	if s == "" {
		return from, to, nil
	}
	a, b, ok := strings.Cut(s, "..")
	if !ok {
		return from, to, usagef("--region %q: want FROM..TO (sequence numbers or marker names; either may be empty)", s)
	}
	if from, err = parseBound(a); err != nil {
		return from, to, usagef("--region %q: %v", s, err)
	}
	if to, err = parseBound(b); err != nil {
		return from, to, usagef("--region %q: %v", s, err)
	}
	return from, to, nil
}

func parseBound(s string) (slice.Bound, error) {
	if s == "" {
		return slice.Bound{}, nil
	}
	if n, err := strconv.ParseUint(s, 10, 64); err == nil {
		return slice.Bound{Set: true, Seq: n}, nil
	}
	name, k := s, 1
	if h := strings.LastIndexByte(s, '#'); h > 0 {
		n, err := strconv.Atoi(s[h+1:])
		if err != nil || n < 1 {
			return slice.Bound{}, fmt.Errorf("%q: #K needs a positive number", s)
		}
		name, k = s[:h], n
	}
	return slice.Bound{Set: true, Marker: name, K: k}, nil
}

// writeSlice writes the slice in the chosen format. The Arrow and Parquet
// writers seek back in their file, so stdout gets them through memory.
func writeSlice(e *env, f *sliceFlags, res *slice.Result, keep []schema.ThreadID) error {
	if f.format == "text" {
		out, err := openOutput(f.output, e.stdout)
		if err != nil {
			return err
		}
		var sum *slice.Summary
		if sum, err = res.Summarize(keep); err == nil {
			sum.Full = f.full
			err = sum.WriteText(out)
		}
		return out.finish(err)
	}
	format := slice.Arrow
	if f.format == "parquet" {
		format = slice.Parquet
	}
	if f.output != "" && f.output != "-" {
		file, err := createOut(f.output, "output")
		if err != nil {
			return err
		}
		err = file.writeSeekable(func(w io.WriteSeeker) error { return res.WriteTable(w, format, keep) })
		if err == nil {
			err = file.Close()
		}
		if err != nil {
			file.discard()
			return fmt.Errorf("write %s: %w", f.output, err)
		}
		return nil
	}
	var buf memFile
	if err := res.WriteTable(&buf, format, keep); err != nil {
		return err
	}
	_, err := e.stdout.Write(buf.b)
	return err
}

// memFile is an in-memory io.WriteSeeker.
type memFile struct {
	b   []byte
	off int64
}

func (m *memFile) Write(p []byte) (int, error) {
	end := m.off + int64(len(p))
	if end > int64(len(m.b)) {
		m.b = append(m.b, make([]byte, end-int64(len(m.b)))...)
	}
	copy(m.b[m.off:], p)
	m.off = end
	return len(p), nil
}

func (m *memFile) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += m.off
	case io.SeekEnd:
		offset += int64(len(m.b))
	default:
		return 0, fmt.Errorf("seek: bad whence %d", whence)
	}
	if offset < 0 {
		return 0, fmt.Errorf("seek: negative position %d", offset)
	}
	m.off = offset
	return offset, nil
}

// writeReduced writes the execution slice of res to f.reduced, from a
// second read of the trace at tracePath.
func writeReduced(e *env, f *sliceFlags, tracePath string, res *slice.Result, from uint32) error {
	tr, err := schema.Open(tracePath)
	if err != nil {
		return err
	}
	defer tr.Close()
	file, err := createOut(f.reduced, "execution slice")
	if err != nil {
		return err
	}
	opt := execslice.Options{Skeleton: f.skeleton, Pairs: f.prune, Of: tracePath, From: from, SliceOptions: sliceOptionFlags(f)}
	st, err := execslice.Write(file, tr, res, opt)
	if cerr := file.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		file.discard()
		return fmt.Errorf("write %s: %w", f.reduced, err)
	}
	w := e.stderr
	if f.output == "" {
		w = e.stdout
	}
	fmt.Fprintf(w, "execution slice %s: %d of %d instructions (%.1f%%; %d in the slice), %d of %d events (%.1f%%), %d excluded runs\n",
		oneLine(f.reduced), st.Kept, st.Instances, percent(st.Kept, st.Instances), st.Members,
		st.Events, st.OrigEvents, percent(st.Events, st.OrigEvents), st.Runs)
	return nil
}

// savedOptions adds an execution slice's slicing options (its header's
// flags, as sliceOptionFlags wrote them) to opt.
func savedOptions(opt *slice.Options, flags string) error {
	fs := strings.Fields(flags)
	for k := 0; k < len(fs); k++ {
		switch fs[k] {
		case "--data-only":
			opt.DataOnly = true
		case "--no-address":
			opt.NoAddress = true
		case "--prune-save-restore":
			opt.PruneSaveRestore = true
		case "--depth", "--region":
			k++
			if k == len(fs) {
				return fmt.Errorf("execution slice: its options %q end early", flags)
			}
			if fs[k-1] == "--depth" && opt.MaxDepth == 0 {
				n, err := strconv.Atoi(fs[k])
				if err != nil || n < 0 {
					return fmt.Errorf("execution slice: its options %q have a bad depth", flags)
				}
				opt.MaxDepth = n
			}
		default:
			return fmt.Errorf("execution slice: its options %q hold an unknown flag %q", flags, fs[k])
		}
	}
	return nil
}

// sliceOptionFlags returns the slicing flags given that change the slice,
// for the execution slice's header.
func sliceOptionFlags(f *sliceFlags) string {
	var fl []string
	if f.dataOnly {
		fl = append(fl, "--data-only")
	}
	if f.noAddress {
		fl = append(fl, "--no-address")
	}
	if f.prune {
		fl = append(fl, "--prune-save-restore")
	}
	if f.depth > 0 {
		fl = append(fl, fmt.Sprintf("--depth %d", f.depth))
	}
	if f.region != "" {
		fl = append(fl, "--region "+f.region)
	}
	return strings.Join(fl, " ")
}

// loadRun reads a trace for slicing (slice.Load) with a progress bar on a
// terminal, keeping the event a seq:N criterion names; it warns, with
// what, when the trace was cut short.
func loadRun(e *env, tracePath string, r *schema.Reader, crit slice.Criterion, maxInstances int, what string) (*slice.Run, error) {
	prog := newProgress(e.stderr, tracePath, r.Size())
	opt := slice.LoadOptions{MaxInstances: maxInstances}
	if crit.Kind == slice.BySeq {
		opt.Events = []uint64{crit.Seq}
	}
	opt.Progress = prog.events(r)
	run, err := slice.Load(r, opt)
	prog.clear()
	if err != nil {
		return nil, err
	}
	if run.Truncated() {
		warnTruncated(e.stderr, tracePath, r.End(), what)
	}
	return run, nil
}
