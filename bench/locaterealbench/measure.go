package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mgtrace/mgtrace/bench/internal/results"
	"github.com/mgtrace/mgtrace/locate"
	"github.com/mgtrace/mgtrace/locate/spec"
	"github.com/mgtrace/mgtrace/schema"
)

// env is what the measurements need: the repository, the tools and the
// builds.
type env struct {
	root, record, real, tmp string
}

func newEnv(cfg config) (*env, error) {
	root, err := results.FindRoot("locaterealbench")
	if err != nil {
		return nil, err
	}
	bin, err := filepath.Abs(cfg.bin)
	if err != nil {
		return nil, err
	}
	real, err := filepath.Abs(cfg.real)
	if err != nil {
		return nil, err
	}
	e := &env{root: root, record: filepath.Join(bin, "record"), real: real}
	if _, err := os.Stat(e.record); err != nil {
		return nil, fmt.Errorf("no record in %s (make build): %w", bin, err)
	}
	if _, err := exec.LookPath("valgrind"); err != nil {
		return nil, fmt.Errorf("valgrind: %w", err)
	}
	e.tmp, err = os.MkdirTemp("", "locaterealbench")
	if err != nil {
		return nil, err
	}
	return e, nil
}

// row is what was measured on one program.
type row struct {
	p        program
	correct  *checked      // the correct build's check
	nativeOK time.Duration // the correct build's native time
	faults   []*faultRun
}

// faultRun is what was measured on one fault of a program.
type faultRun struct {
	fault      fault
	native     time.Duration // the faulty build, natively
	null       time.Duration // under valgrind --tool=none
	recordTime time.Duration
	exit       string // how the recorded faulty run ended
	traceBytes int64
	crash      *located // from the crash, the only C-point
	declared   *located // with the program's faultPoint, where the crash shows nothing
}

// used is the location the acceptance judges: from the crash, or from the
// declared C-point where the crash shows nothing.
func (f *faultRun) used() *located {
	if !f.crash.found() && f.declared != nil {
		return f.declared
	}
	return f.crash
}

// checked is the check of the correct build.
type checked struct {
	points, violated, violations int
	exit                         string
}

// located is one fault location.
type located struct {
	spec       string // the C-points it used, in words
	point      string // the first C-point with violations, "" for none
	viol       int    // violations at it
	load       time.Duration
	match      time.Duration // constraint matching: the forward check up to that C-point
	locate     time.Duration // fault location proper
	steps      int           // changes rolled back
	stmts      []string      // statements reported (one per pc), by rank: file:line
	lines      int           // distinct source lines among them
	rank       int           // rank of the FAULT line (1 = first), 0 when not among them
	storeRank  int           // its rank among the window's stores, when only there
	foundStore bool
}

// found says whether the FAULT line was reported among the ranked
// statements.
func (l *located) found() bool { return l != nil && l.rank > 0 }

// ok says whether the row meets the acceptance: no violation in the
// correct build, and every FAULT line located among fewer than 5 source
// lines (from the crash, or from the declared C-point where the crash
// shows nothing).
func (r *row) ok() bool {
	if r.correct == nil || r.correct.violations != 0 || len(r.faults) == 0 {
		return false
	}
	for _, f := range r.faults {
		if l := f.used(); !l.found() || l.lines >= 5 {
			return false
		}
	}
	return true
}

// fault is the injected fault: the patch and the line it marks.
type fault struct {
	patch string // testdata/real/patches/NAME-K.patch
	k     int
	file  string // the patched file, as the patch names it: src/ls.c
	line  int    // the line of the patched file that carries FAULT
}

var patchName = regexp.MustCompile(`^(.+)-(\d+)\.patch$`)

// faultsOf reads a program's fault patches, by number.
func faultsOf(e *env, name string) ([]fault, error) {
	dir := filepath.Join(e.root, "testdata", "real", "patches")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("fault patches: %w", err)
	}
	var out []fault
	for _, ent := range ents {
		m := patchName.FindStringSubmatch(ent.Name())
		if m == nil || m[1] != name {
			continue
		}
		f := fault{patch: filepath.Join(dir, ent.Name())}
		f.k, _ = strconv.Atoi(m[2])
		src, err := os.ReadFile(f.patch)
		if err != nil {
			return nil, fmt.Errorf("fault patch: %w", err)
		}
		f.file, f.line, err = faultLine(src)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ent.Name(), err)
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no fault patch %s-K.patch in %s", name, dir)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].k < out[j].k })
	return out, nil
}

var hunkRE = regexp.MustCompile(`^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@`)

// faultLine finds, in a unified diff, the file and the new line number
// of the added line that carries the comment FAULT.
func faultLine(patch []byte) (string, int, error) {
	var file string
	line := 0
	sc := bufio.NewScanner(bytes.NewReader(patch))
	for sc.Scan() {
		t := sc.Text()
		switch {
		case strings.HasPrefix(t, "+++ "):
			file = strings.TrimPrefix(strings.Fields(t)[1], "b/")
			line = 0
		case hunkRE.MatchString(t):
			n, _ := strconv.Atoi(hunkRE.FindStringSubmatch(t)[1])
			line = n
		case line == 0:
		case strings.HasPrefix(t, "+"):
			if strings.Contains(t, "FAULT") {
				return file, line, nil
			}
			line++
		case strings.HasPrefix(t, "-"):
		default:
			line++
		}
	}
	return "", 0, errors.New("no added line carries FAULT")
}

// command returns the command line of a program's build with its
// placeholders replaced.
func (e *env) command(p program, exe string) *exec.Cmd {
	repl := strings.NewReplacer("@SRC@", filepath.Join(e.root, "testdata", "real"), "@TMP@", e.tmp, "@REAL@", e.real)
	var args []string
	for _, a := range p.args {
		args = append(args, repl.Replace(a))
	}
	cmd := exec.Command(exe, args...)
	cmd.Dir = e.tmp
	if p.dir != "" {
		cmd.Dir = filepath.Join(e.real, p.dir)
	}
	cmd.Env = os.Environ()
	for _, v := range p.env {
		cmd.Env = append(cmd.Env, repl.Replace(v))
	}
	cmd.Stdout = io.Discard
	return cmd
}

// exitOf describes how a command ended. record exits with 128+N when
// the program died of signal N, as a shell reports it.
func exitOf(err error) string {
	var exit *exec.ExitError
	switch {
	case err == nil:
		return "exit 0"
	case errors.As(err, &exit):
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return ws.Signal().String()
		}
		if c := exit.ExitCode(); c > 128 && c < 128+65 {
			return fmt.Sprintf("%s (exit %d)", syscall.Signal(c-128), c)
		}
		return fmt.Sprintf("exit %d", exit.ExitCode())
	}
	return err.Error()
}

// timeRun runs a command and returns its wall time and how it ended.
func timeRun(cmd *exec.Cmd) (time.Duration, string, error) {
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return 0, "", fmt.Errorf("%s: %w", cmd.Path, err)
	}
	return d, exitOf(err), nil
}

// wrap returns cmd run under another command (valgrind, record).
func wrap(cmd *exec.Cmd, prefix ...string) *exec.Cmd {
	w := exec.Command(prefix[0], append(append(prefix[1:], cmd.Path), cmd.Args[1:]...)...)
	w.Dir, w.Env, w.Stdout = cmd.Dir, cmd.Env, cmd.Stdout
	return w
}

// recordRun records a build into trace and returns record's wall time
// and how the program ended (record exits as the program did).
func (e *env) recordRun(p program, exe, trace string) (time.Duration, string, error) {
	d, exit, err := timeRun(wrap(e.command(p, exe), e.record, "-q", "-o", trace, "--"))
	if err != nil {
		return 0, "", fmt.Errorf("record: %w", err)
	}
	if _, err := os.Stat(trace); err != nil {
		return 0, "", fmt.Errorf("record %s: no trace (%s)", filepath.Base(exe), exit)
	}
	return d, exit, nil
}

// measure runs the whole benchmark on one program.
func measure(e *env, cfg config, p program) (*row, error) {
	r := &row{p: p}
	faults, err := faultsOf(e, p.name)
	if err != nil {
		return nil, err
	}
	correct := filepath.Join(e.real, "bin", p.name+"-correct")
	if _, err := os.Stat(correct); err != nil {
		return nil, fmt.Errorf("no build %s (run testdata/real/get.sh %s): %w", correct, p.name, err)
	}
	specPath := filepath.Join(e.root, "testdata", "real", p.name+".spec")
	src, err := os.ReadFile(specPath)
	if err != nil {
		return nil, fmt.Errorf("read spec: %w", err)
	}

	// The correct build.
	trace := filepath.Join(e.tmp, p.name+"-correct.trace")
	log("%s: recording the correct build", p.name)
	_, exit, err := e.recordRun(p, correct, trace)
	if err != nil {
		return nil, err
	}
	r.correct, err = checkCorrect(trace, specPath, withPoint(src, p.correctPoint))
	if err != nil {
		return nil, fmt.Errorf("correct build: %w", err)
	}
	r.correct.exit = exit
	os.Remove(trace)
	log("%s: correct build (%s): %d C-points, %d violations", p.name, exit, r.correct.points, r.correct.violations)
	var natOK []time.Duration
	for i := 0; i < cfg.runs; i++ {
		d, _, err := timeRun(e.command(p, correct))
		if err != nil {
			return nil, err
		}
		natOK = append(natOK, d)
	}
	r.nativeOK = results.Median(natOK)

	for _, f := range faults {
		fr, err := measureFault(e, cfg, p, f, specPath, src)
		if err != nil {
			return nil, fmt.Errorf("fault %d: %w", f.k, err)
		}
		r.faults = append(r.faults, fr)
	}
	return r, nil
}

// measureFault times a faulty build natively, under valgrind --tool=none
// and under record, and locates its fault.
func measureFault(e *env, cfg config, p program, f fault, specPath string, src []byte) (*faultRun, error) {
	fr := &faultRun{fault: f}
	faulty := filepath.Join(e.real, "bin", fmt.Sprintf("%s-fault%d", p.name, f.k))
	if _, err := os.Stat(faulty); err != nil {
		return nil, fmt.Errorf("no build %s (run testdata/real/get.sh %s): %w", faulty, p.name, err)
	}
	var nat, null []time.Duration
	for i := 0; i < cfg.runs; i++ {
		d, _, err := timeRun(e.command(p, faulty))
		if err != nil {
			return nil, err
		}
		nat = append(nat, d)
		d, _, err = timeRun(wrap(e.command(p, faulty), "valgrind", "-q", "--tool=none"))
		if err != nil {
			return nil, err
		}
		null = append(null, d)
	}
	fr.native, fr.null = results.Median(nat), results.Median(null)
	trace := filepath.Join(e.tmp, fmt.Sprintf("%s-fault%d.trace", p.name, f.k))
	defer os.Remove(trace)
	name := fmt.Sprintf("%s %d", p.name, f.k)
	log("%s: recording the faulty build", name)
	var err error
	if fr.recordTime, fr.exit, err = e.recordRun(p, faulty, trace); err != nil {
		return nil, err
	}
	if st, err := os.Stat(trace); err == nil {
		fr.traceBytes = st.Size()
	}
	if fr.crash, err = locateFault(trace, specPath, src, f, "the crash"); err != nil {
		return nil, err
	}
	logLocated(name, fr.crash)
	if p.faultPoint != "" && !fr.crash.found() {
		if fr.declared, err = locateFault(trace, specPath, withPoint(src, p.faultPoint), f, "`"+p.faultPoint+"` and the crash"); err != nil {
			return nil, err
		}
		logLocated(name, fr.declared)
	}
	return fr, nil
}

func log(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "locaterealbench: "+format+"\n", args...)
}

func logLocated(name string, l *located) {
	if l.point == "" {
		log("%s: from %s: no violation", name, l.spec)
		return
	}
	log("%s: from %s: %d violations at %s; %d statements %v (%d lines), FAULT line rank %d; matching %v, location %v",
		name, l.spec, l.viol, l.point, len(l.stmts), l.stmts, l.lines, l.rank, l.match, l.locate)
}

// withPoint returns the spec's text with one more C-point statement.
func withPoint(src []byte, point string) []byte {
	if point == "" {
		return src
	}
	return append(append(append([]byte{}, src...), '\n'), point+"\n"...)
}

// openSession loads a trace for a spec's text and prepares a session; it
// returns the time that took.
func openSession(trace, specPath string, src []byte) (*locate.Run, *locate.Session, time.Duration, error) {
	sp, err := spec.Parse(specPath, src)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("parse spec: %w", err)
	}
	start := time.Now()
	run, ses, err := locate.Open(trace, sp)
	if err != nil {
		return nil, nil, 0, err
	}
	return run, ses, time.Since(start), nil
}

// checkCorrect checks every C-point of the correct build's run.
func checkCorrect(trace, specPath string, src []byte) (*checked, error) {
	run, ses, _, err := openSession(trace, specPath, src)
	if err != nil {
		return nil, err
	}
	c := &checked{points: len(run.Points)}
	for _, pt := range run.Points {
		ses.Seek(pt.TS)
		if v := ses.FullCheck(); v > 0 {
			c.violated++
			c.violations += v
		}
	}
	return c, nil
}

// locateFault locates the fault of a recorded faulty run, on one core as
// the timings are taken.
func locateFault(trace, specPath string, src []byte, f fault, points string) (*located, error) {
	_, ses, load, err := openSession(trace, specPath, src)
	if err != nil {
		return nil, err
	}
	l := &located{spec: points, load: load}
	var res *locate.Result
	var wall time.Duration
	old := runtime.GOMAXPROCS(1)
	runtime.GC()
	start := time.Now()
	res, err = ses.Locate()
	wall = time.Since(start)
	runtime.GOMAXPROCS(old)
	switch {
	case errors.Is(err, locate.ErrNoViolation):
		l.match = wall
		return l, nil
	case err != nil:
		return nil, fmt.Errorf("locate: %w", err)
	}
	l.point, l.viol = res.Point.Label, len(res.Violations)
	l.locate, l.match = res.Elapsed, wall-res.Elapsed
	l.steps = res.Steps
	lines := make(map[string]bool)
	for _, ft := range res.Faults {
		st := fmt.Sprintf("%s:%d", filepath.Base(ft.File), ft.Line)
		if schema.MatchFile(ft.File, f.file) && int(ft.Line) == f.line && l.rank == 0 {
			l.rank = ft.Rank
		}
		l.stmts = append(l.stmts, st)
		lines[ft.File+":"+strconv.Itoa(int(ft.Line))] = true
	}
	l.lines = len(lines)
	for _, ft := range res.Stores {
		if l.rank == 0 && !l.foundStore && schema.MatchFile(ft.File, f.file) && int(ft.Line) == f.line {
			l.foundStore, l.storeRank = true, ft.Rank
		}
	}
	return l, nil
}
