// Package recorder runs a program under the mgtrace Valgrind probe and
// writes its trace: it starts valgrind with the probe, reads the probe's
// raw stream from a FIFO, decodes it (record/internal/probe), adds the
// static tables of the code that ran (record/internal/debuginfo), and
// writes the trace with the schema writer as the program runs.
package recorder

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mgtrace/mgtrace/internal/version"
	"github.com/mgtrace/mgtrace/record/internal/debuginfo"
	"github.com/mgtrace/mgtrace/record/internal/probe"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
)

// ToolName is the probe's Valgrind tool name (valgrind --tool=mgtrace).
const ToolName = "mgtrace"

// toolFile is the probe executable's name, as Valgrind looks it up.
const toolFile = ToolName + "-amd64-linux"

// Version is the recorder's version, written into every trace header.
const Version = "0.1.0"

// DefaultBatchEvents is the number of events per EVENTS block of a
// recorded trace: four times the schema writer's default, because larger
// blocks compress better and faster (python3 start, driver alone: 18% fewer
// bytes and 3-5% less CPU than with 65,536; list and perl 8-10% fewer
// bytes). A recorder killed mid-run loses at most one block.
const DefaultBatchEvents = 1 << 18

// Options says what to record and how.
type Options struct {
	// Program and Args are the command to run (Args excludes the program).
	Program string
	Args    []string
	// Output is the trace file to write.
	Output string
	// ProbeDir is the folder holding mgtrace-amd64-linux. When empty, the
	// recorder looks in $MGTRACE_PROBE_DIR, else next to its own
	// executable, in ../libexec/mgtrace and in ../lib/mgtrace.
	ProbeDir string
	// Valgrind is the valgrind command ("valgrind" on PATH when empty).
	Valgrind string
	// ValgrindArgs are extra options passed to valgrind before the program.
	ValgrindArgs []string
	// Stdin, Stdout and Stderr are the program's (os.Stdin etc. when nil).
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Progress, when set, is called about once a second with the events
	// and bytes written so far.
	Progress func(events uint64, bytes int64)
	// BatchEvents is passed to the trace writer (0: DefaultBatchEvents).
	BatchEvents int
	// Regions, when set, are the only parts of the run recorded in full;
	// outside them the trace keeps what keeps it whole (see Region).
	Regions []Region
	// Alterations change the run (record --switch, --suppress); an
	// alteration that cannot be resolved against the program is an error
	// before it runs.
	Alterations []Alteration
	// Preempt, from 1 to MaxPreempt, makes the probe switch threads
	// after a number of superblocks drawn uniformly from [1, Preempt]
	// each time a thread starts running (0: Valgrind's own switches
	// only). See docs/record.md, "Interleaving control".
	Preempt int
	// SchedSeed seeds the draws of Preempt: the same seed gives the same
	// switch points.
	SchedSeed uint64
	// InputCap is the most bytes of read-like system calls the probe
	// keeps (INPUT events with their bytes); past it INPUT events say
	// only where the bytes landed. 0: DefaultInputCap; NoInput: none.
	InputCap int64
	// Level is the level of detail (record --level): what the probe
	// leaves out while instrumenting (schema.LevelFull: nothing).
	Level schema.Level
}

// DefaultInputCap is Options.InputCap when it is 0.
const DefaultInputCap = 16 << 20

// NoInput as Options.InputCap keeps no input bytes.
const NoInput = -1

// MaxInputCap is the largest Options.InputCap.
const MaxInputCap = 1 << 40

// inputCap returns the probe's --mgt-input-cap for opts.
func inputCap(opts Options) (int64, error) {
	switch {
	case opts.InputCap == 0:
		return DefaultInputCap, nil
	case opts.InputCap == NoInput:
		return 0, nil
	case opts.InputCap < 0 || opts.InputCap > MaxInputCap:
		return 0, fmt.Errorf("input cap must be from 0 to %d bytes, not %d", int64(MaxInputCap), opts.InputCap)
	}
	return opts.InputCap, nil
}

// MaxPreempt is the largest Options.Preempt.
const MaxPreempt = 1_000_000_000

// schedArgs are the valgrind options for Preempt and SchedSeed: the
// probe's, and --fair-sched=yes unless the caller gave a --fair-sched of
// its own (without the ticket lock, a thread that gives up the big lock
// often takes it back at once).
func schedArgs(opts Options) ([]string, error) {
	if opts.Preempt == 0 {
		return nil, nil
	}
	if opts.Preempt < 0 || opts.Preempt > MaxPreempt {
		return nil, fmt.Errorf("preempt must be from 1 to %d, not %d", MaxPreempt, opts.Preempt)
	}
	args := []string{fmt.Sprintf("--mgt-preempt=%d", opts.Preempt), fmt.Sprintf("--mgt-sched-seed=%d", opts.SchedSeed)}
	for _, a := range opts.ValgrindArgs {
		if a == "--fair-sched" || strings.HasPrefix(a, "--fair-sched=") {
			return args, nil
		}
	}
	return append(args, "--fair-sched=yes"), nil
}

// Result says how the recording went.
type Result struct {
	// Exited is true when the program ended by itself; Code is its exit
	// code. Signal is the terminating signal when it was killed.
	Exited bool
	Code   int
	Signal int
	// Events and Bytes count what was written; MemoryEvents counts loads
	// and stores.
	Events       uint64
	MemoryEvents uint64
	Bytes        int64
	Output       string
	// Warnings are things the user may want to know (unreadable debug info,
	// valgrind's own messages).
	Warnings []string
}

// Status returns the exit status a shell would report for the program:
// its exit code, or 128+N when killed by signal N.
func (r *Result) Status() int {
	if r.Signal != 0 {
		return 128 + r.Signal
	}
	return r.Code
}

// ErrNoValgrind is returned when valgrind cannot be found.
var ErrNoValgrind = errors.New("valgrind is not installed (on Debian: apt-get install valgrind)")

// noValgrindError is ErrNoValgrind for a valgrind command the user named
// (Options.Valgrind): it names the command and why it cannot be run.
type noValgrindError struct {
	cmd string
	err error
}

func (e *noValgrindError) Error() string {
	return fmt.Sprintf("valgrind command %s: %v (name an installed valgrind, or install one: on Debian, apt-get install valgrind)", e.cmd, e.err)
}

// Is makes errors.Is(err, ErrNoValgrind) hold.
func (e *noValgrindError) Is(target error) bool { return target == ErrNoValgrind }

// Record runs the program under the probe and writes its trace.
func Record(opts Options) (*Result, error) {
	vg := opts.Valgrind
	if vg == "" {
		vg = "valgrind"
	}
	vgPath, err := exec.LookPath(vg)
	if err != nil {
		if vg != "valgrind" {
			// A command the user named: say which, and why it cannot run.
			return nil, &noValgrindError{cmd: vg, err: unwrapExec(err)}
		}
		return nil, ErrNoValgrind
	}
	sched, err := schedArgs(opts)
	if err != nil {
		return nil, err
	}
	icap, err := inputCap(opts)
	if err != nil {
		return nil, err
	}
	prog, err := exec.LookPath(opts.Program)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", opts.Program, unwrapExec(err))
	}
	alters, err := planAlterations(prog, opts.Alterations)
	if err != nil {
		return nil, err
	}
	probeDir, err := findProbe(opts.ProbeDir)
	if err != nil {
		return nil, err
	}
	sysLib, err := valgrindLibDir(vgPath)
	if err != nil {
		return nil, err
	}
	work, err := makeWorkDir()
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	libDir, err := makeLibDir(work, sysLib, probeDir)
	if err != nil {
		return nil, err
	}
	fifo := filepath.Join(work, "probe.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		return nil, fmt.Errorf("make FIFO %s: %w", fifo, err)
	}
	chunks, err := newChunks(work)
	if err != nil {
		return nil, err
	}
	defer chunks.close()
	out, err := os.OpenFile(opts.Output, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create trace: %w", err)
	}
	defer out.Close()
	// Only a regular file is removed when nothing was recorded: -o
	// /dev/null or a named pipe stays what it was.
	st, err := out.Stat()
	regular := err == nil && st.Mode().IsRegular()

	logPath := filepath.Join(work, "valgrind.log")
	args := []string{"--tool=" + ToolName, "--mgt-out=" + fifo, "-q", "--log-file=" + logPath,
		"--vex-guest-chase=no", "--trace-children=yes", "--child-silent-after-fork=yes"}
	args = append(args, chunks.probeArgs()...)
	args = append(args, fmt.Sprintf("--mgt-input-cap=%d", icap))
	if opts.Level != schema.LevelFull {
		args = append(args, fmt.Sprintf("--mgt-level=%d", int(opts.Level)))
	}
	if len(opts.Regions) > 0 {
		path, err := writeRegions(work, opts.Regions)
		if err != nil {
			return nil, err
		}
		args = append(args, "--mgt-region-file="+path)
	}
	if alters != nil {
		alterFile := filepath.Join(work, "alter")
		if err := alters.writeFile(alterFile, prog); err != nil {
			return nil, err
		}
		args = append(args, "--mgt-alter-file="+alterFile)
	}
	args = append(args, sched...)
	args = append(args, opts.ValgrindArgs...)
	args = append(args, "--", prog)
	args = append(args, opts.Args...)
	cmd := exec.Command(vgPath, args...)
	cmd.Env = append(os.Environ(), "VALGRIND_LIB="+libDir)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = orDefault[io.Reader](opts.Stdin, os.Stdin), orDefault[io.Writer](opts.Stdout, os.Stdout), orDefault[io.Writer](opts.Stderr, os.Stderr)

	hdr := header(prog, opts.Program, opts.Args, vgPath)
	hdr.Settings = append(hdr.Settings, &tracepb.KeyValue{Key: "input-cap", Value: fmt.Sprint(icap)},
		&tracepb.KeyValue{Key: schema.LevelSetting, Value: opts.Level.String()})
	if opts.Preempt > 0 {
		hdr.Settings = append(hdr.Settings, &tracepb.KeyValue{Key: "preempt", Value: fmt.Sprint(opts.Preempt)},
			&tracepb.KeyValue{Key: "sched-seed", Value: fmt.Sprint(opts.SchedSeed)})
	}
	// The driver's own loop must not be interrupted by the terminal's ^C
	// (the program gets it too, and the trace must end properly); SIGTERM
	// is passed on to the program.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)

	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start valgrind: %w", err)
	}
	hdr.StartTimeUnixNanos = start.UnixNano()
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				if s != os.Interrupt && cmd.Process != nil {
					cmd.Process.Signal(s)
				}
			case <-done:
				return
			}
		}
	}()
	defer close(done)

	// Open the FIFO's read end; if valgrind dies before it opens the write
	// end, a watcher unblocks us by opening it itself.
	var waitErr error
	exited := make(chan struct{})
	go func() { waitErr = cmd.Wait(); close(exited) }()
	pipe, err := openFIFO(fifo, exited)
	if err != nil {
		return nil, err
	}
	res := &Result{Output: opts.Output}
	log := func() []string {
		b, _ := os.ReadFile(logPath)
		return valgrindMessages(b)
	}
	if pipe == nil {
		// Valgrind ended before the probe started: nothing was recorded.
		out.Close()
		if regular {
			os.Remove(opts.Output)
		}
		msgs := log()
		if len(msgs) == 0 {
			msgs = []string{fmt.Sprintf("valgrind ended (%v) before the probe started", waitErr)}
		}
		return nil, errors.New(strings.Join(msgs, "; "))
	}
	// Hold a write end open until valgrind exits: when the program runs
	// exec, the old image's probe closes its end before the new one opens
	// the FIFO again, and the stream must not end in between.
	if keep, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		go func() { <-exited; keep.Close() }()
	}
	finish, runErr := stream(newChunkReader(chunks, pipe), out, hdr, opts, res, alters)
	pipe.Close()
	<-exited
	if err := exitStatus(waitErr, res); err != nil {
		return nil, err
	}
	if finish != nil {
		if err := finish(res); err != nil {
			return res, err
		}
	}
	if runErr != nil {
		return res, runErr
	}
	return res, nil
}

func unwrapExec(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err
	}
	return err
}

// orDefault returns v, or d when v is nil.
func orDefault[T comparable](v, d T) T {
	var zero T
	if v == zero {
		return d
	}
	return v
}

// openFIFO opens the FIFO for reading. It returns a nil file when valgrind
// exited without ever opening it.
func openFIFO(path string, exited chan struct{}) (*os.File, error) {
	type opened struct {
		f   *os.File
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		f, err := os.OpenFile(path, os.O_RDONLY, 0)
		ch <- opened{f, err}
	}()
	select {
	case o := <-ch:
		if o.err != nil {
			return nil, fmt.Errorf("open FIFO: %w", o.err)
		}
		return o.f, nil
	case <-exited:
		// Unblock the opener by opening the write end ourselves.
		if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		if o := <-ch; o.f != nil {
			o.f.Close()
		}
		return nil, nil
	}
}

// exitStatus fills the program's exit status from valgrind's.
func exitStatus(err error, res *Result) error {
	if err == nil {
		res.Exited = true
		return nil
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return fmt.Errorf("wait for valgrind: %w", err)
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	if !ok {
		return fmt.Errorf("wait for valgrind: %w", err)
	}
	switch {
	case ws.Signaled():
		res.Signal = int(ws.Signal())
	case ws.Exited():
		res.Exited = true
		res.Code = ws.ExitStatus()
	}
	return nil
}

// stream decodes the probe's stream into the trace until the stream ends.
// It returns the function that ends the trace once the program's exit
// status is known (nil when the trace was already ended because of an
// error).
func stream(pipe io.Reader, out *os.File, hdr *tracepb.Header, opts Options, res *Result, alters *alterPlan) (func(*Result) error, error) {
	tables := debuginfo.NewTables()
	defer tables.Close()
	s := &sink{tables: tables, warnings: map[string]bool{}, calls: newOutsideCalls(len(opts.Regions) > 0)}
	w, err := schema.NewWriter(out, hdr, schema.WriterOptions{
		BatchEvents:   orDefault(opts.BatchEvents, DefaultBatchEvents),
		PendingTables: tables.Flush,
		Async:         true,
	})
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", opts.Output, err)
	}
	s.w = w
	s.mainPath = hdr.ProgramPath
	var stop atomic.Bool
	if opts.Progress != nil {
		go func() {
			for !stop.Load() {
				time.Sleep(time.Second)
				if !stop.Load() {
					opts.Progress(w.FlushedEvents(), w.Bytes())
				}
			}
		}()
	}
	dec := probe.NewDecoder(pipe, s)
	if icap, err := inputCap(opts); err == nil {
		dec.SetInputCap(icap)
	}
	runErr := dec.Run()
	stop.Store(true)
	res.Events = w.Events()
	if runErr != nil && !errors.Is(runErr, io.ErrUnexpectedEOF) {
		// The stream is unusable past this point: keep what was written.
		w.Close(nil)
		res.Events, res.Bytes, res.MemoryEvents = w.Events(), w.Bytes(), memoryEvents(w)
		return nil, fmt.Errorf("read the probe's stream: %w", runErr)
	}
	res.Warnings = append(res.Warnings, s.warningList()...)
	res.Warnings = append(res.Warnings, alters.warnings(dec.AlterCounts())...)
	return func(r *Result) error {
		if err := dec.Finish(r.Signal, r.Code); err != nil {
			return fmt.Errorf("write %s: %w", opts.Output, err)
		}
		exit := &tracepb.ExitStatus{Ended: true, Code: int32(r.Code), Signal: uint32(r.Signal)}
		if err := w.Close(exit); err != nil {
			return fmt.Errorf("write %s: %w", opts.Output, err)
		}
		r.Events, r.Bytes, r.MemoryEvents = w.Events(), w.Bytes(), memoryEvents(w)
		return nil
	}, nil
}

// memoryEvents returns the loads and stores of a closed writer's trace.
func memoryEvents(w *schema.Writer) uint64 {
	return w.KindCount(schema.KindLoad) + w.KindCount(schema.KindStore)
}

// sink receives the decoder's output.
type sink struct {
	w        *schema.Writer
	tables   *debuginfo.Tables
	mainPath string
	mainSeen bool
	warnings map[string]bool
	calls    *outsideCalls
}

func (s *sink) Event(ev *schema.Event) error {
	if !s.calls.keep(ev, s.tables.FunctionName) {
		return nil
	}
	return s.w.Write(ev)
}

// Block, Access and Sequence take the most frequent events straight to the
// writer.
func (s *sink) Block(pc uint64, count uint32) error { return s.w.WriteBlock(pc, count) }

func (s *sink) Sequence(seq *schema.Sequence, words []byte, skip uint64) error {
	return s.w.WriteSequence(seq, words, skip)
}

func (s *sink) Access(k schema.Kind, pc, addr uint64, size uint32, value uint64, data []byte, baseReg schema.Reg, base uint64) error {
	return s.w.WriteAccess(k, pc, addr, size, value, data, baseReg, base)
}

func (s *sink) Instruction(pc uint64, code []byte) { s.tables.AddInstruction(pc, code) }

func (s *sink) Map(m probe.Mapping) {
	if !m.Exec || m.Path == "" {
		return
	}
	main := !s.mainSeen && (s.mainPath == "" || sameFile(m.Path, s.mainPath))
	if main {
		s.mainSeen = true
	}
	if err := s.tables.AddModule(m.Path, m.Start, m.Start+m.Length, m.Offset, s.w.Events(), main); err != nil {
		s.warn(fmt.Sprintf("%s: %v", m.Path, err))
	}
}

func (s *sink) Unmap(start, length uint64) { s.tables.Unmap(start, start+length) }

// Exec: the program replaced itself (a wrapper script ran the real
// program): the new image's first executable mapping is its main module.
func (s *sink) Exec() {
	s.mainSeen = false
	s.mainPath = ""
}

func (s *sink) warn(msg string) { s.warnings[msg] = true }

func (s *sink) warningList() []string {
	var out []string
	for m := range s.warnings {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

func sameFile(a, b string) bool {
	if a == b {
		return true
	}
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// header describes the run for the trace.
func header(progPath, program string, args []string, vgPath string) *tracepb.Header {
	abs, err := filepath.Abs(progPath)
	if err != nil {
		abs = progPath
	}
	cwd, _ := os.Getwd()
	host, _ := os.Hostname()
	h := &tracepb.Header{
		Recorder:    fmt.Sprintf("mgtrace-record %s (%s)", Version, valgrindVersion(vgPath)),
		Program:     program,
		ProgramPath: abs,
		Args:        append([]string{program}, args...),
		Cwd:         cwd,
		Arch:        "x86_64",
		Os:          "linux",
		Hostname:    host,
		Kernel:      kernelRelease(),
		EnvCount:    uint32(len(os.Environ())),
	}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if envWorthKeeping(k) {
			h.Env = append(h.Env, &tracepb.KeyValue{Key: k, Value: v})
		}
	}
	sort.Slice(h.Env, func(i, j int) bool { return h.Env[i].Key < h.Env[j].Key })
	if bi, ok := debug.ReadBuildInfo(); ok {
		h.Settings = append(h.Settings, &tracepb.KeyValue{Key: "go", Value: bi.GoVersion})
	}
	// The build of record that wrote the trace, as 'record --version' says.
	v := version.Get("record", "")
	h.Settings = append(h.Settings, &tracepb.KeyValue{Key: "mgtrace_version", Value: v.Version},
		&tracepb.KeyValue{Key: "mgtrace_commit", Value: v.Commit})
	return h
}

// envWorthKeeping says whether an environment variable changes how a
// program behaves under analysis; only those are kept (traces are shared
// artifacts and must not carry secrets).
func envWorthKeeping(k string) bool {
	switch k {
	case "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_BIND_NOW", "GLIBC_TUNABLES", "LANG", "LC_ALL", "TZ", "PYTHONHASHSEED":
		return true
	}
	return strings.HasPrefix(k, "MALLOC_")
}

func valgrindVersion(vg string) string {
	out, err := exec.Command(vg, "--version").Output()
	if err != nil {
		return "valgrind"
	}
	return strings.TrimSpace(string(out))
}

func kernelRelease() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// valgrindMessages returns the lines of valgrind's log without their
// "==PID==" prefixes. They are shown only when recording fails: when the
// program crashes, valgrind's report of it repeats what the trace holds.
func valgrindMessages(log []byte) []string {
	var out []string
	for _, line := range strings.Split(string(log), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "==") {
			if i := strings.Index(line[2:], "=="); i >= 0 {
				line = strings.TrimSpace(line[i+4:])
			}
		}
		if line != "" {
			out = append(out, "valgrind: "+line)
		}
	}
	return out
}
