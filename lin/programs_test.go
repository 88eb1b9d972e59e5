package lin_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/schema"
)

// The concurrent programs of testdata/programs/lin, the inputs of analyze
// lin: each is built correct and with -DFAULTY, and run with "bad" (the
// schedule that exposes the fault) and "seed N" (random yields).

// progOp is one operation a program printed: "tN NAME [ARG...] -> RESULT
// @CALL-RETURN".
type progOp struct {
	thread    int
	name      string
	args      []int
	result    string // "ok", "empty", "true", "false", a number, "[X Y]"
	call, ret int
	text      string // the line without " @CALL-RETURN"
}

// progRun is a program's output: its first line and its operations, in
// the order of their calls.
type progRun struct {
	header string
	ops    []progOp
}

var opLine = regexp.MustCompile(`^t(\d+) ([a-z]+)((?: -?\d+)*) -> (ok|empty|true|false|-?\d+|\[-?\d+ -?\d+\]) @(\d+)-(\d+)$`)

// parseRun parses a program's output and checks its clock values: each
// call before its return, every value used once, calls in order.
func parseRun(out string) (progRun, error) {
	var r progRun
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) < 2 {
		return r, fmt.Errorf("%d lines of output, want a header and operations", len(lines))
	}
	r.header = lines[0]
	seen := map[int]bool{}
	for _, l := range lines[1:] {
		m := opLine.FindStringSubmatch(l)
		if m == nil {
			return r, fmt.Errorf("bad operation line %q", l)
		}
		op := progOp{name: m[2], result: m[4], text: l[:strings.LastIndex(l, " @")]}
		op.thread, _ = strconv.Atoi(m[1])
		for _, a := range strings.Fields(m[3]) {
			v, _ := strconv.Atoi(a)
			op.args = append(op.args, v)
		}
		op.call, _ = strconv.Atoi(m[5])
		op.ret, _ = strconv.Atoi(m[6])
		if op.call >= op.ret || seen[op.call] || seen[op.ret] {
			return r, fmt.Errorf("%q: bad or repeated clock values", l)
		}
		seen[op.call], seen[op.ret] = true, true
		if n := len(r.ops); n > 0 && r.ops[n-1].call > op.call {
			return r, fmt.Errorf("%q: not in the order of calls", l)
		}
		r.ops = append(r.ops, op)
	}
	return r, nil
}

// texts returns the operations' lines without their clocks.
func (r progRun) texts() []string {
	var s []string
	for _, op := range r.ops {
		s = append(s, op.text)
	}
	return s
}

// linProgram describes one program of testdata/programs/lin.
type linProgram struct {
	name  string
	model string // the model its .lin file names
	// The operations the bad schedule prints, without clocks, in call
	// order: deterministic, natively and recorded.
	faultyBad, correctBad []string
	// check says whether a run's results could come from the operations
	// run one at a time in an order consistent with their clocks (a
	// partial check: what is easy to see).
	check func(progRun) error
}

var linPrograms = []linProgram{
	{
		name:  "lockqueue",
		model: "queue",
		faultyBad: []string{
			"t1 enqueue 1 -> ok", "t1 enqueue 2 -> ok",
			"t2 dequeue -> 1", "t3 dequeue -> 1", // the fault: 1 twice
			"t2 enqueue 21 -> ok", "t3 dequeue -> 2",
			"t4 enqueue 41 -> ok", "t4 dequeue -> 21",
			"t1 dequeue -> 41", "t1 dequeue -> empty",
		},
		correctBad: []string{
			"t1 enqueue 1 -> ok", "t1 enqueue 2 -> ok",
			"t2 dequeue -> 1", "t3 dequeue -> 2",
			"t2 enqueue 21 -> ok", "t3 dequeue -> 21",
			"t4 enqueue 41 -> ok", "t4 dequeue -> 41",
			"t1 dequeue -> empty",
		},
		check: func(r progRun) error { return checkContainer(r, "enqueue", "dequeue", true) },
	},
	{
		name:  "msqueue",
		model: "queue",
		faultyBad: []string{
			"t2 enqueue 21 -> ok", "t3 enqueue 31 -> ok", "t4 enqueue 41 -> ok",
			"t2 dequeue -> 31", "t3 dequeue -> empty", "t4 dequeue -> empty", // the fault: 21, 41 lost
			"t1 dequeue -> empty",
		},
		correctBad: []string{
			"t2 enqueue 21 -> ok", "t3 enqueue 31 -> ok", "t4 enqueue 41 -> ok",
			"t2 dequeue -> 21", "t3 dequeue -> 31", "t4 dequeue -> 41",
			"t1 dequeue -> empty",
		},
		check: func(r progRun) error { return checkContainer(r, "enqueue", "dequeue", true) },
	},
	{
		name:  "treiber",
		model: "stack",
		faultyBad: []string{
			"t1 push 1 -> ok", "t1 push 2 -> ok",
			"t2 pop -> 2", "t3 pop -> 2", // the fault: 2 twice (and 41 lost)
			"t4 push 41 -> ok", "t2 pop -> 1", "t4 pop -> empty", "t3 push 32 -> ok",
			"t1 pop -> 32", "t1 pop -> empty",
		},
		correctBad: []string{
			"t1 push 1 -> ok", "t1 push 2 -> ok",
			"t2 pop -> 41", "t3 pop -> 2",
			"t4 push 41 -> ok", "t2 pop -> 1", "t4 pop -> empty", "t3 push 32 -> ok",
			"t1 pop -> 32", "t1 pop -> empty",
		},
		check: func(r progRun) error { return checkContainer(r, "push", "pop", false) },
	},
	{
		name:  "lfset",
		model: "set",
		faultyBad: []string{
			"t1 add 10 -> true", "t1 add 30 -> true",
			"t2 remove 10 -> true", "t3 add 20 -> true", "t2 add 10 -> true",
			"t4 contains 20 -> false", "t4 remove 20 -> false", // the fault: 20 lost
			"t3 remove 30 -> true",
			"t1 contains 10 -> true", "t1 contains 20 -> false", "t1 contains 30 -> false", "t1 contains 40 -> false",
		},
		correctBad: []string{
			"t1 add 10 -> true", "t1 add 30 -> true",
			"t2 remove 10 -> true", "t3 add 20 -> true", "t2 add 10 -> true",
			"t4 contains 20 -> true", "t4 remove 20 -> true",
			"t3 remove 30 -> true",
			"t1 contains 10 -> true", "t1 contains 20 -> false", "t1 contains 30 -> false", "t1 contains 40 -> false",
		},
		check: checkSet,
	},
	{
		name:  "snapshot",
		model: "snapshot",
		faultyBad: []string{
			"t1 write 0 1 -> ok", "t1 write 1 1 -> ok",
			"t3 read -> [1 2]", // the fault: a state the cells never had
			"t2 write 0 2 -> ok", "t2 write 1 2 -> ok", "t2 write 1 1 -> ok", "t2 write 0 1 -> ok",
			"t1 read -> [1 1]",
		},
		correctBad: []string{
			"t1 write 0 1 -> ok", "t1 write 1 1 -> ok",
			"t3 read -> [1 1]",
			"t2 write 0 2 -> ok", "t2 write 1 2 -> ok", "t2 write 1 1 -> ok", "t2 write 0 1 -> ok",
			"t1 read -> [1 1]",
		},
		check: checkSnapshot,
	},
}

// checkContainer checks a queue's or a stack's run: every value taken was
// put, not before its put was called, and taken once; the main thread's
// last take found the container empty, so every value put was taken. For
// a queue (fifo), values put by one thread one after the other are not
// taken in the opposite order, one take returning before the other began.
func checkContainer(r progRun, put, take string, fifo bool) error {
	puts := map[string]progOp{}
	takes := map[string]progOp{}
	for _, op := range r.ops {
		if op.name == put {
			v := strconv.Itoa(op.args[0])
			if _, dup := puts[v]; dup {
				return fmt.Errorf("the test cannot check a run that puts %s twice", v)
			}
			puts[v] = op
		}
	}
	for _, op := range r.ops {
		switch op.name {
		case put:
		case take:
			if op.result == "empty" {
				continue
			}
			p, ok := puts[op.result]
			switch {
			case !ok:
				return fmt.Errorf("%q: %s was never put", op.text, op.result)
			case p.call > op.ret:
				return fmt.Errorf("%q: %q was called after it returned", op.text, p.text)
			}
			if prev, dup := takes[op.result]; dup {
				return fmt.Errorf("%q and %q: %s taken twice", prev.text, op.text, op.result)
			}
			takes[op.result] = op
		default:
			return fmt.Errorf("%q: not a %s or %s", op.text, put, take)
		}
	}
	last := r.ops[len(r.ops)-1]
	if last.thread != 1 || last.name != take || last.result != "empty" {
		return fmt.Errorf("the last operation is %q, want the main thread's %s finding it empty", last.text, take)
	}
	for v, p := range puts {
		if _, ok := takes[v]; !ok {
			return fmt.Errorf("%q: %s lost: never taken, yet the last %s found nothing", p.text, v, take)
		}
	}
	if fifo {
		for _, x := range puts {
			for _, y := range puts {
				tx, ty := takes[strconv.Itoa(x.args[0])], takes[strconv.Itoa(y.args[0])]
				if x.thread == y.thread && x.ret < y.call && ty.ret < tx.call {
					return fmt.Errorf("%q before %q, but %q before %q", x.text, y.text, ty.text, tx.text)
				}
			}
		}
	}
	return nil
}

// checkSet checks a set's run: for each key, the successful adds less the
// successful removes is 0 or 1, and is what the main thread's last
// contains of the key (after the workers) says.
func checkSet(r progRun) error {
	balance := map[int]int{}
	final := map[int]string{}
	for _, op := range r.ops {
		k := op.args[0]
		switch {
		case op.name == "add" && op.result == "true":
			balance[k]++
		case op.name == "remove" && op.result == "true":
			balance[k]--
		case op.name == "contains" && op.thread == 1:
			final[k] = op.result
		}
	}
	for k, b := range balance {
		if b != 0 && b != 1 {
			return fmt.Errorf("key %d: %d more successful adds than removes", k, b)
		}
		if f, ok := final[k]; ok && f != strconv.FormatBool(b == 1) {
			return fmt.Errorf("key %d: %d more successful adds than removes, but the last contains says %s", k, b, f)
		}
	}
	return nil
}

// checkSnapshot checks a snapshot's run, where the main thread writes the
// first state and one worker all the others: each read returns a state
// the cells had at some moment between its call and its return.
func checkSnapshot(r progRun) error {
	type state struct {
		cells [2]int
		from  progOp  // the write that made it
		next  *progOp // the write that ended it
	}
	var states []*state
	var cur [2]int
	var writer int
	written := [2]bool{}
	for _, op := range r.ops {
		if op.name != "write" {
			continue
		}
		if op.thread != 1 {
			if writer != 0 && writer != op.thread {
				return fmt.Errorf("the test cannot check a run with two writing workers")
			}
			writer = op.thread
		}
		cur[op.args[0]] = op.args[1]
		written[op.args[0]] = true
		if !written[0] || !written[1] {
			continue
		}
		if n := len(states); n > 0 {
			states[n-1].next = &op
		}
		states = append(states, &state{cells: cur, from: op})
	}
	for _, op := range r.ops {
		if op.name != "read" {
			continue
		}
		ok := false
		for _, s := range states {
			if fmt.Sprintf("[%d %d]", s.cells[0], s.cells[1]) == op.result &&
				s.from.call < op.ret && (s.next == nil || s.next.ret > op.call) {
				ok = true
			}
		}
		if !ok {
			return fmt.Errorf("%q: the cells never held %s while it ran", op.text, op.result)
		}
	}
	return nil
}

// runProgram runs a built program natively and parses its output; it
// fails the test unless the program exits 0 with nothing on stderr.
func runProgram(t *testing.T, bin string, args ...string) progRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || stderr.Len() != 0 {
		t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(bin), strings.Join(args, " "), err, stdout.Bytes(), stderr.Bytes())
	}
	r, err := parseRun(stdout.String())
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, stdout.Bytes())
	}
	return r
}

// buildBoth builds a program correct and FAULTY, and checks that the two
// builds of one source do not share a cached binary.
func buildBoth(t *testing.T, name string) (correct, faulty string) {
	t.Helper()
	correct = testprog.Build(t, "lin/"+name)
	faulty = testprog.Build(t, "lin/"+name, testprog.Flags("-DFAULTY"))
	if correct == faulty {
		t.Fatalf("the correct and the FAULTY build of lin/%s are one binary, %s", name, correct)
	}
	return correct, faulty
}

// checkBad checks a run of the bad schedule against the operations it
// must print.
func checkBad(t *testing.T, r progRun, header string, want []string) {
	t.Helper()
	if r.header != header {
		t.Errorf("first line %q, want %q", r.header, header)
	}
	if got := r.texts(); !slices.Equal(got, want) {
		t.Errorf("%s printed\n\t%s\nwant\n\t%s", header, strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
}

// TestPrograms runs each program natively: the FAULTY build's bad run
// prints its wrong answer, which the consistency check rejects; the
// correct build's bad run and its runs with seeds 1 to 10 pass it.
func TestPrograms(t *testing.T) {
	for _, p := range linPrograms {
		t.Run(p.name, func(t *testing.T) {
			correct, faulty := buildBoth(t, p.name)

			r := runProgram(t, faulty, "bad")
			checkBad(t, r, p.name+" faulty bad", p.faultyBad)
			if err := p.check(r); err == nil {
				t.Errorf("the FAULTY bad run passes the consistency check")
			} else {
				t.Logf("FAULTY bad run: %v", err)
			}

			r = runProgram(t, correct, "bad")
			checkBad(t, r, p.name+" correct bad", p.correctBad)
			if err := p.check(r); err != nil {
				t.Errorf("correct bad run: %v", err)
			}

			for seed := 1; seed <= 10; seed++ {
				r := runProgram(t, correct, "seed", strconv.Itoa(seed))
				if want := fmt.Sprintf("%s correct seed %d", p.name, seed); r.header != want {
					t.Errorf("first line %q, want %q", r.header, want)
				}
				if err := p.check(r); err != nil {
					t.Errorf("seed %d: %v\n%s", seed, err, strings.Join(r.texts(), "\n"))
				}
			}
		})
	}
}

// TestProgramUsage checks that a bad argument gives the usage and status 2.
func TestProgramUsage(t *testing.T) {
	bin := testprog.Build(t, "lin/msqueue")
	for _, args := range [][]string{nil, {"good"}, {"seed"}, {"seed", "0"}, {"seed", "x"}, {"bad", "1"}} {
		cmd := exec.Command(bin, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), "usage:") {
			t.Errorf("msqueue %q: %v, stderr %q; want exit status 2 and the usage", args, err, stderr.String())
		}
	}
}

// TestProgramsReadme checks that testdata/programs/lin/README.md cites
// every faulty line (marked "FAULT:" in the source) as NAME.c:LINE.
func TestProgramsReadme(t *testing.T) {
	dir := filepath.Join(testprog.Root(t), "testdata", "programs", "lin")
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range linPrograms {
		src, err := os.ReadFile(filepath.Join(dir, p.name+".c"))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for i, line := range strings.Split(string(src), "\n") {
			if !strings.Contains(line, "FAULT:") {
				continue
			}
			n++
			if ref := fmt.Sprintf("%s.c:%d", p.name, i+1); !bytes.Contains(readme, []byte(ref)) {
				t.Errorf("README.md does not cite the faulty line %s", ref)
			}
		}
		if n == 0 {
			t.Errorf("%s.c has no line marked FAULT:", p.name)
		}
	}
}

// linFile reads testdata/programs/lin/NAME.lin: the model it names and
// its operations, name -> C function.
func linFile(t *testing.T, name string) (model string, ops map[string]string) {
	t.Helper()
	path := filepath.Join(testprog.Root(t), "testdata", "programs", "lin", name+".lin")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ops = map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case f[0] == "model" && len(f) == 2:
			model = f[1]
		case f[0] == "op" && len(f) >= 4 && f[2] == "=":
			ops[f[1]] = f[3]
		case f[0] == "object" || f[0] == "init":
		default:
			t.Fatalf("%s: line %q is not understood by the test", path, sc.Text())
		}
	}
	return model, ops
}

// callStats counts, per function, the calls to it and the returns from
// it in a trace, and the threads that made them and the first arguments.
type callStats struct {
	calls, returns int
	threads        map[schema.ThreadID]int // calls per thread
	objects        map[uint64]bool         // first arguments
}

// readCalls reads a trace and counts the calls of and returns from funcs.
func readCalls(t *testing.T, trace string, funcs map[string]bool) map[string]*callStats {
	t.Helper()
	tr, err := schema.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	type call struct {
		kind   schema.Kind
		thread schema.ThreadID
		target uint64 // a call's target, a return's pc
		arg1   uint64
	}
	var evs []call
	for {
		ev, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Kind {
		case schema.KindCall:
			evs = append(evs, call{ev.Kind, ev.Thread, ev.Addr, ev.Args[0]})
		case schema.KindReturn:
			evs = append(evs, call{ev.Kind, ev.Thread, ev.PC, 0})
		}
	}
	stats := map[string]*callStats{}
	for f := range funcs {
		stats[f] = &callStats{threads: map[schema.ThreadID]int{}, objects: map[uint64]bool{}}
	}
	names := map[uint64]string{}
	for _, e := range evs {
		name, ok := names[e.target]
		if !ok {
			name = tr.Tables().Locate(e.target).Function
			names[e.target] = name
		}
		s := stats[name]
		if s == nil {
			continue
		}
		if e.kind == schema.KindCall {
			s.calls++
			s.threads[e.thread]++
			s.objects[e.arg1] = true
		} else {
			s.returns++
		}
	}
	return stats
}

// TestProgramsRecorded records each FAULTY program with bad and each
// correct one with seed 1: the recorded bad run prints the same wrong
// answer as the native one, and the trace holds one call and one return
// of the .lin file's functions per operation printed, each on the thread
// that printed it (trace threads are numbered as the programs number
// them), all with the same first argument (the object).
func TestProgramsRecorded(t *testing.T) {
	if testing.Short() {
		t.Skip("records 10 runs")
	}
	for _, p := range linPrograms {
		t.Run(p.name, func(t *testing.T) {
			model, ops := linFile(t, p.name)
			if model != p.model {
				t.Errorf("%s.lin names model %q, want %q", p.name, model, p.model)
			}
			funcs := map[string]bool{}
			for _, f := range ops {
				funcs[f] = true
			}
			correct, faulty := buildBoth(t, p.name)
			for _, c := range []struct {
				bin  string
				args []string
			}{{faulty, []string{"bad"}}, {correct, []string{"seed", "1"}}} {
				trace, stdout := testprog.RecordOutput(t, c.bin, c.args...)
				r, err := parseRun(stdout)
				if err != nil {
					t.Fatalf("recorded %s: %v\n%s", strings.Join(c.args, " "), err, stdout)
				}
				if c.bin == faulty {
					checkBad(t, r, p.name+" faulty bad", p.faultyBad)
				} else if err := p.check(r); err != nil {
					t.Errorf("recorded seed 1: %v", err)
				}
				stats := readCalls(t, trace, funcs)
				for name, fn := range ops {
					want := map[schema.ThreadID]int{}
					n := 0
					for _, op := range r.ops {
						if op.name == name {
							want[schema.ThreadID(op.thread)]++
							n++
						}
					}
					s := stats[fn]
					switch {
					case s.calls != n || s.returns != n:
						t.Errorf("%s %s: %d calls of %s and %d returns, want %d (operations %s printed)",
							p.name, strings.Join(c.args, " "), s.calls, fn, s.returns, n, name)
					case len(s.threads) < 2:
						t.Errorf("%s %s: %s called from %d thread(s), want more than one", p.name, strings.Join(c.args, " "), fn, len(s.threads))
					case !maps.Equal(s.threads, want):
						t.Errorf("%s %s: calls of %s per trace thread %v, want %v (from the output)", p.name, strings.Join(c.args, " "), fn, s.threads, want)
					}
				}
				objects := map[uint64]bool{}
				for _, s := range stats {
					for o := range s.objects {
						objects[o] = true
					}
				}
				if len(objects) != 1 {
					t.Errorf("%s %s: the operations' first arguments are %d objects, want 1", p.name, strings.Join(c.args, " "), len(objects))
				}
			}
		})
	}
}
