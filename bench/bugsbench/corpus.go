package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mgtrace/mgtrace/bugs"
	"github.com/mgtrace/mgtrace/bugs/corpus"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
	"github.com/mgtrace/mgtrace/slice"
	"github.com/mgtrace/mgtrace/walk"
)

// Limits on one corpus program's runs (each takes about a second).
const (
	corpusRecordTimeout   = 2 * time.Minute
	corpusMemcheckTimeout = 2 * time.Minute
)

// buildFlags are the flags testprog builds the corpus with (plus -I
// ROOT/include).
var buildFlags = []string{"-g", "-O1", "-fno-omit-frame-pointer", "-pthread"}

// corpusMemcheckArgs are memcheck's options on the corpus: the full leak
// check, the definite and possible leaks shown (what memcheck counts as
// errors), only errors printed, and exit status 99 when there was one.
var corpusMemcheckArgs = []string{"--tool=memcheck", "--leak-check=full", "--show-leak-kinds=definite,possible", "-q", "--error-exitcode=99"}

// progResult is what was measured on one corpus program.
type progResult struct {
	prog corpus.Program
	// err says what could not be done (build, record, analysis or
	// memcheck); the program then counts as found by neither tool.
	err error
	// recordExit is record's exit status: the program's, or 128+N for a
	// signal.
	recordExit int
	report     *bugs.Report
	mc         mcOutput
	mcExit     int // memcheck's exit status (99: errors; 128+N: a signal)
	classes    []classResult
	extra      []bugs.Finding // findings of classes the program does not expect
	mcExtra    []mcError      // memcheck's errors of other classes, or none
	t34        []t34Row
	elapsed    time.Duration
}

// t34Row is one finding of table 3.4: its chains against the dynamic
// slice of the same point and the run up to it.
type t34Row struct {
	prog  string
	class string
	where bugs.Site
	seq   uint64 // the finding's event
	instr uint64 // and instruction instance
	// The chains: instructions (the sum of Chain.Instructions) and
	// distinct source statements; whether they name a root line.
	vpcInstr, vpcStmts int
	vpcRoot            bool
	// The backward dynamic slice from the same point: its criterion,
	// instances and distinct source lines, whether a root line is one of
	// them; sliceErr when it could not be computed.
	criterion             string
	sliceInst, sliceLines int
	sliceOnLines          int // the slice's instances on source lines
	sliceRoot             bool
	sliceErr              string
	// The slice from criterion seq:N with N the finding's Seq as it
	// stands (the BLOCK event of the detection instruction, which the
	// slicer resolves to the block's last instruction): its instances.
	seqInst int
	seqOK   bool
	// The run up to the detection: instructions executed (Instr + 1) and
	// the distinct source lines among them.
	runInstr uint64
	runLines int
}

// measureCorpus measures the programs, jobs at a time, in their order.
func measureCorpus(e *env, progs []corpus.Program, jobs int) ([]*progResult, error) {
	res := make([]*progResult, len(progs))
	next := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for w := 0; w < jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				r := measureProgram(e, &progs[i])
				res[i] = r
				mu.Lock()
				done++
				status := describeResult(r)
				fmt.Fprintf(e.log, "bugsbench: [%d/%d] %s: %s (%.1f s)\n", done, len(progs), r.prog.Name, status, r.elapsed.Seconds())
				mu.Unlock()
			}
		}()
	}
	for i := range progs {
		if e.ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if e.ctx.Err() != nil {
		return nil, fmt.Errorf("interrupted")
	}
	return res, nil
}

// describeResult is one line of progress about a program.
func describeResult(r *progResult) string {
	if r.err != nil {
		return "ERROR: " + r.err.Error()
	}
	var parts []string
	for _, c := range r.classes {
		parts = append(parts, fmt.Sprintf("%s analyze=%s memcheck=%s", c.class, yesRoot(c.found, c.root), yesRoot(c.mcFound, c.mcRoot)))
	}
	if len(r.classes) == 0 {
		parts = append(parts, "correct program")
	}
	parts = append(parts, fmt.Sprintf("%d other findings, %d other memcheck errors", len(r.extra), len(r.mcExtra)))
	return strings.Join(parts, "; ")
}

func yesRoot(found, root bool) string {
	switch {
	case found && root:
		return "found+root"
	case found:
		return "found"
	}
	return "no"
}

// measureProgram builds, records, analyses and runs one program under
// memcheck.
func measureProgram(e *env, p *corpus.Program) *progResult {
	start := time.Now()
	r := &progResult{prog: *p}
	defer func() { r.elapsed = time.Since(start) }()
	exe, err := e.buildCorpus(p)
	if err != nil {
		r.err = err
		return r
	}
	trace := exe + ".trace"
	if r.recordExit, err = e.recordCorpus(p, exe, trace); err != nil {
		r.err = err
		return r
	}
	if !e.keep {
		defer os.Remove(trace)
	}
	if r.report, err = analyzeCorpus(p, trace); err != nil {
		r.err = fmt.Errorf("analyze bugs: %w", err)
		return r
	}
	if r.mc, r.mcExit, err = e.memcheckCorpus(p, exe); err != nil {
		r.err = err
		return r
	}
	r.classes, r.extra, r.mcExtra = judge(p, r.report.Findings, r.mc.Errors)
	if r.t34, err = table34(p, trace, r.report.Findings); err != nil {
		r.err = fmt.Errorf("table 3.4: %w", err)
	}
	return r
}

// buildCorpus compiles a corpus program as testprog.Build does.
func (e *env) buildCorpus(p *corpus.Program) (string, error) {
	cc := "gcc"
	if p.CPlusPlus {
		cc = "g++"
	}
	exe := filepath.Join(e.work, p.Name)
	args := append(slices.Clone(buildFlags), "-I", filepath.Join(e.root, "include"), p.Path, "-o", exe)
	cmd := exec.CommandContext(e.ctx, cc, args...)
	cmd.Dir = e.root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build: %s %s: %v: %s", cc, strings.Join(args, " "), err, lastLines(out, 10))
	}
	return exe, nil
}

// runDir makes an empty directory for one run of a program: its working
// directory (np_lookup.c's argument names a directory that must not
// exist; Valgrind writes its core files there).
func (e *env) runDir(name string) (string, error) {
	dir := filepath.Join(e.work, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return dir, nil
}

// recordCorpus records exe with the program's arguments and returns
// record's exit status, which is the program's (a corpus program may die
// of a signal or exit non-zero); the trace must be readable.
func (e *env) recordCorpus(p *corpus.Program, exe, trace string) (int, error) {
	dir, err := e.runDir(p.Name + ".record")
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(e.ctx, corpusRecordTimeout)
	defer cancel()
	args := append([]string{"-q", "--probe-dir", e.probeDir, "-o", trace, "--", exe}, p.Args...)
	cmd := exec.CommandContext(ctx, e.record, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = nil, &stderr
	err = cmd.Run()
	code := exitCode(cmd)
	if ctx.Err() != nil {
		return code, fmt.Errorf("record: %v", ctx.Err())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return code, fmt.Errorf("record: %w", err)
	}
	tr, oerr := schema.Open(trace)
	if oerr != nil {
		return code, fmt.Errorf("record %s (exit %d): %v: %s", p.Name, code, oerr, lastLines(stderr.Bytes(), 10))
	}
	tr.Close()
	return code, nil
}

// exitCode is a finished command's exit status, 128+N when a signal N
// ended it, -1 when it did not start.
func exitCode(cmd *exec.Cmd) int {
	if cmd.ProcessState == nil {
		return -1
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return cmd.ProcessState.ExitCode()
}

// analyzeCorpus runs the built-in rules over the trace with the program's
// analyze flags, as the corpus test does.
func analyzeCorpus(p *corpus.Program, trace string) (*bugs.Report, error) {
	opt, err := analyzeOptions(p.AnalyzeArgs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.Name, err)
	}
	tr, err := schema.Open(trace)
	if err != nil {
		return nil, err
	}
	defer tr.Close()
	return bugs.Analyze(tr, opt)
}

// analyzeOptions turns a program's analyze flags (--transaction FUNC,
// --transaction=FUNC, --all) into options.
func analyzeOptions(args []string) (bugs.Options, error) {
	var opt bugs.Options
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--transaction" && i+1 < len(args):
			opt.Transaction = args[i+1]
			i++
		case strings.HasPrefix(a, "--transaction="):
			opt.Transaction = strings.TrimPrefix(a, "--transaction=")
		case a == "--all":
			opt.All = true
		default:
			return opt, fmt.Errorf("analyze flag %q is not understood by bugsbench", a)
		}
	}
	return opt, nil
}

// memcheckCorpus runs the program under memcheck in an empty directory
// and reads its errors.
func (e *env) memcheckCorpus(p *corpus.Program, exe string) (mcOutput, int, error) {
	dir, err := e.runDir(p.Name + ".memcheck")
	if err != nil {
		return mcOutput{}, 0, err
	}
	ctx, cancel := context.WithTimeout(e.ctx, corpusMemcheckTimeout)
	defer cancel()
	args := append(append(slices.Clone(corpusMemcheckArgs), exe), p.Args...)
	cmd := exec.CommandContext(ctx, e.valgrind, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	code := exitCode(cmd)
	if ctx.Err() != nil {
		return mcOutput{}, code, fmt.Errorf("memcheck: %v", ctx.Err())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return mcOutput{}, code, fmt.Errorf("memcheck: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "memcheck.log"), stderr.Bytes(), 0o644); err != nil {
		return mcOutput{}, code, err
	}
	return parseMemcheck(stderr.String()), code, nil
}

// lastLines returns the last n lines of a command's output, on one line.
func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// table34 measures the findings at a symptom line of a chain class:
// their chains, the backward dynamic slice of the same point, and the run
// up to it.
func table34(p *corpus.Program, trace string, fs []bugs.Finding) ([]t34Row, error) {
	var rows []t34Row
	for _, c := range p.Expect {
		if !slices.Contains(chainClasses, c) {
			continue
		}
		for _, f := range p.AtSymptom(c, fs) {
			row := t34Row{prog: p.Name, class: c, where: f.Where, seq: f.Seq, instr: f.Instr, runInstr: f.Instr + 1}
			row.vpcInstr, row.vpcStmts = chainStats(f)
			for _, ch := range f.Chains {
				for _, s := range ch.Steps {
					row.vpcRoot = row.vpcRoot || p.HasLine(s.Site, p.Roots[c])
				}
			}
			rows = append(rows, row)
		}
	}
	if len(rows) == 0 {
		return nil, nil
	}
	w, err := walkTargets(trace, rows)
	if err != nil {
		return rows, err
	}
	for i := range rows {
		rows[i].runLines = w.counts[rows[i].instr]
	}
	if err := sliceRows(p, trace, rows, w); err != nil {
		return rows, err
	}
	return rows, nil
}

// sliceRows loads the trace for slicing and slices from each row's
// detection instruction (see criterionFor), and from the finding's Seq
// as it stands.
func sliceRows(p *corpus.Program, trace string, rows []t34Row, w *targetWalker) error {
	tr, err := schema.Open(trace)
	if err != nil {
		return err
	}
	defer tr.Close()
	var seqs []uint64
	for _, r := range rows {
		seqs = append(seqs, r.seq)
		if t := w.targets[r.instr]; t.own != 0 {
			seqs = append(seqs, t.own)
		}
	}
	run, err := slice.Load(tr, slice.LoadOptions{Events: seqs})
	if err != nil {
		return fmt.Errorf("slice.Load: %w", err)
	}
	base := filepath.Base(p.Path)
	for i := range rows {
		r := &rows[i]
		// The finding's Seq as analyze slice --criterion seq:N reads it.
		if crit, err := slice.ParseCriterion(fmt.Sprintf("seq:%d", r.seq)); err == nil {
			if point, err := run.Resolve(crit); err == nil {
				if sum, err := sliceSummary(run, point); err == nil {
					r.seqInst, r.seqOK = sum.Instances, true
				}
			}
		}
		point, label, err := criterionFor(run, w, r.instr)
		r.criterion = label
		if err != nil {
			r.sliceErr = err.Error()
			continue
		}
		sum, err := sliceSummary(run, point)
		if err != nil {
			r.sliceErr = err.Error()
			continue
		}
		r.sliceInst, r.sliceLines = sum.Instances, len(sum.Lines)
		for _, lc := range sum.Lines {
			r.sliceOnLines += lc.Instances
			if filepath.Base(lc.File) == base && slices.Contains(p.Roots[r.class], int(lc.Line)) {
				r.sliceRoot = true
			}
		}
	}
	return nil
}

// sliceSummary slices the run from point (improved algorithm, default
// options, no edges) and summarizes the slice by source line.
func sliceSummary(run *slice.Run, point slice.Point) (*slice.Summary, error) {
	res, err := slice.Slice(run, point, slice.Options{Algorithm: slice.Improved, NoEdges: true})
	if err != nil {
		return nil, err
	}
	return res.Summarize(nil)
}

// criterionFor resolves the slicing criterion of the detection
// instruction, instance n of the walk: "crash" when it faulted; for a
// call (the release functions' findings), the argument register at the
// call's own CALL event, "seq:M reg rdi"; for an instruction with an event
// of its own (a load, a store, a system call), that event, "seq:M"; for
// one without (a branch), the instance itself, when the slicer's run
// numbers its instances as the walk does (the same count).
func criterionFor(run *slice.Run, w *targetWalker, n uint64) (slice.Point, string, error) {
	t := w.targets[n]
	var c slice.Criterion
	var label string
	var err error
	switch {
	case t.fault:
		label = "crash"
		c, err = slice.ParseCriterion(label)
	case t.own != 0:
		label = fmt.Sprintf("seq:%d", t.own)
		c, err = slice.ParseCriterion(label)
		if t.call {
			c.Reg = tracepb.Register_RDI
			label += " reg rdi"
		}
	default:
		label = fmt.Sprintf("instance %d", n)
		if uint64(run.Instances()) != w.total {
			return slice.Point{}, label, fmt.Errorf("the slicer's run has %d instances, the walk %d", run.Instances(), w.total)
		}
		return slice.Point{Label: label, Insts: []uint32{uint32(n)}, Last: int64(n)}, label, nil
	}
	if err != nil {
		return slice.Point{}, label, err
	}
	point, err := run.Resolve(c)
	if err != nil {
		return point, label, err
	}
	if point.Last != int64(n) {
		return point, label, fmt.Errorf("%s is instance %d in the slicer's run, %d in the walk", label, point.Last, n)
	}
	return point, label, nil
}

// target is what the walk learns about one detection instruction.
type target struct {
	own   uint64 // the instruction's own event: its first load or store, its call or system call, 0 for none
	call  bool   // own is a CALL
	fault bool   // the instruction faulted (the run's SIGNAL)
}

// targetWalker walks a whole trace, counting the distinct source lines of
// the instances so far, and notes at the target instances that count and
// what the instruction is.
type targetWalker struct {
	tables  *schema.Tables
	lineOf  []int32 // by static ID: index of its line + 1, -1 without a line, 0 not yet known
	lines   map[lineKey]int32
	seen    []bool // by line index
	n       int    // distinct lines so far
	targets map[uint64]target
	counts  map[uint64]int // distinct lines up to and with each target instance
	total   uint64         // instances walked
}

type lineKey struct {
	file string
	line uint32
}

// Instance counts the instance's line and notes a target.
func (w *targetWalker) Instance(in *walk.Instance) error {
	w.total++
	id := int(in.Static.ID)
	for id >= len(w.lineOf) {
		w.lineOf = append(w.lineOf, 0)
	}
	l := w.lineOf[id]
	if l == 0 {
		loc := w.tables.Locate(in.Static.PC)
		if loc.File == "" || loc.Line == 0 {
			l = -1
		} else {
			k := lineKey{loc.File, loc.Line}
			idx, ok := w.lines[k]
			if !ok {
				idx = int32(len(w.lines))
				w.lines[k] = idx
				w.seen = append(w.seen, false)
			}
			l = idx + 1
		}
		w.lineOf[id] = l
	}
	if l > 0 && !w.seen[l-1] {
		w.seen[l-1] = true
		w.n++
	}
	if _, ok := w.targets[in.N]; ok {
		var t target
		switch {
		case in.Fault != nil:
			t.fault = true
		case in.Event != nil:
			t.own, t.call = in.Event.Seq, in.Event.Kind == schema.KindCall
		case len(in.Acc) > 0:
			t.own = in.Acc[0].Seq
		}
		w.targets[in.N] = t
		w.counts[in.N] = w.n
	}
	return nil
}

// Event ignores the events that are no instance.
func (w *targetWalker) Event(*schema.Event) error { return nil }

// walkTargets walks the trace for the rows' detection instructions.
func walkTargets(trace string, rows []t34Row) (*targetWalker, error) {
	tr, err := schema.Open(trace)
	if err != nil {
		return nil, err
	}
	defer tr.Close()
	w := &targetWalker{tables: tr.Tables(), lines: map[lineKey]int32{}, targets: map[uint64]target{}, counts: map[uint64]int{}}
	for _, r := range rows {
		w.targets[r.instr] = target{}
	}
	if _, err := walk.Walk(tr, w, walk.Options{}); err != nil {
		return nil, fmt.Errorf("walk: %w", err)
	}
	return w, nil
}
