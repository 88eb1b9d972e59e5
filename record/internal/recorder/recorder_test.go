package recorder

// End-to-end acceptance tests of the recorder: each test builds a test
// program (internal/testprog), records it under the real probe with Record,
// and checks what the trace holds against what the program printed.
//
// The probe is built once per test binary from record/vgtool into a cache
// folder under os.TempDir() keyed by a hash of its sources; tests skip when
// valgrind, gcc, make or the Valgrind headers are missing.

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
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/schema"
)

// ---------------------------------------------------------------------------
// The probe.

// needProbe returns the folder of a probe built from the current sources
// (see testprog.Probe).
func needProbe(t testing.TB) string { return testprog.Probe(t) }

// ---------------------------------------------------------------------------
// Recording and reading.

// recording is one run of a program under the recorder.
type recording struct {
	res            *Result
	trace          string
	stdout, stderr string
}

// record records prog with args into a trace in a fresh temporary folder;
// mod, when given, changes the options. It fails the test when Record does.
func record(t *testing.T, prog string, args []string, mod ...func(*Options)) recording {
	t.Helper()
	dir := needProbe(t)
	var stdout, stderr bytes.Buffer
	opts := Options{
		Program:  prog,
		Args:     args,
		Output:   filepath.Join(t.TempDir(), filepath.Base(prog)+".trace"),
		ProbeDir: dir,
		Stdin:    strings.NewReader(""),
		Stdout:   &stdout,
		Stderr:   &stderr,
	}
	for _, m := range mod {
		m(&opts)
	}
	res, err := Record(opts)
	if err != nil {
		t.Fatalf("Record(%s %s): %v\nprogram's stderr:\n%s", prog, strings.Join(args, " "), err, stderr.String())
	}
	if res == nil {
		t.Fatalf("Record(%s %s) returned no result and no error", prog, strings.Join(args, " "))
	}
	return recording{res: res, trace: opts.Output, stdout: stdout.String(), stderr: stderr.String()}
}

// trace is a whole trace read into memory.
type trace struct {
	events []schema.Event
	r      *schema.Reader // read to the end: Tables, End and Footer are final
}

// readTrace reads every event of the trace at path and fails the test on
// any read error. It keeps (copies) the events of the given kinds, and EXIT
// events; all events when no kinds are given.
func readTrace(t *testing.T, path string, kinds ...schema.Kind) *trace {
	t.Helper()
	r, err := schema.Open(path)
	if err != nil {
		t.Fatalf("open the trace: %v", err)
	}
	t.Cleanup(func() { r.Close() })
	tr := &trace{r: r}
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("read the trace %s after %d events: %v", path, len(tr.events), err)
		}
		if len(kinds) > 0 && ev.Kind != schema.KindExit && !slices.Contains(kinds, ev.Kind) {
			continue
		}
		e := *ev
		if len(ev.Data) > 0 {
			e.Data = append([]byte(nil), ev.Data...)
		} else {
			e.Data = nil
		}
		tr.events = append(tr.events, e)
	}
	return tr
}

// summarize validates the trace at path with schema.Summarize.
func summarize(t *testing.T, path string) *schema.Summary {
	t.Helper()
	r, err := schema.Open(path)
	if err != nil {
		t.Fatalf("open the trace: %v", err)
	}
	defer r.Close()
	s, err := schema.Summarize(r, nil)
	if err != nil {
		t.Fatalf("schema.Summarize(%s): %v", path, err)
	}
	return s
}

// checkExited fails the test unless the program exited with code 0 and the
// trace is whole and says so.
func checkExited(t *testing.T, rec recording, tr *trace) {
	t.Helper()
	if !rec.res.Exited || rec.res.Code != 0 || rec.res.Signal != 0 {
		t.Errorf("Result: exited %v code %d signal %d, want exit 0\nprogram's stderr:\n%s",
			rec.res.Exited, rec.res.Code, rec.res.Signal, rec.stderr)
	}
	if tr == nil {
		return
	}
	if end := tr.r.End(); !end.Whole {
		t.Errorf("trace is not whole: truncated at byte %d of %d (%s)", end.TruncatedAt, end.Size, end.Reason)
	}
	if f := tr.r.Footer(); f == nil || f.Exit == nil || !f.Exit.Ended || f.Exit.Code != 0 || f.Exit.Signal != 0 {
		t.Errorf("footer exit status %v, want ended with code 0", footerExit(tr.r))
	}
	if n := len(tr.events); n == 0 || tr.events[n-1].Kind != schema.KindExit {
		t.Errorf("the last event is not EXIT (%d events)", n)
	} else if last := tr.events[n-1]; last.Value != 0 || last.Num != 0 {
		t.Errorf("EXIT event value %d num %d, want 0 0", last.Value, last.Num)
	}
}

func footerExit(r *schema.Reader) string {
	f := r.Footer()
	if f == nil {
		return "(no footer)"
	}
	if f.Exit == nil {
		return "(no exit status)"
	}
	return fmt.Sprintf("{ended %v code %d signal %d}", f.Exit.Ended, f.Exit.Code, f.Exit.Signal)
}

// describe formats an event for failure messages, with its location.
func (tr *trace) describe(e *schema.Event) string {
	s := fmt.Sprintf("#%d %s t%d", e.Seq, e.Kind, e.Thread)
	if e.Kind.HasPC() {
		s += fmt.Sprintf(" pc=%#x", e.PC)
	}
	switch e.Kind {
	case schema.KindLoad, schema.KindStore:
		s += fmt.Sprintf(" addr=%#x size=%d value=%#x", e.Addr, e.Size, e.Value)
	case schema.KindCall:
		s += fmt.Sprintf(" target=%#x sp=%#x", e.Addr, e.SP)
	case schema.KindReturn:
		s += fmt.Sprintf(" to=%#x sp=%#x value=%#x", e.Addr, e.SP, e.Value)
	case schema.KindSyscall:
		s += fmt.Sprintf(" num=%d args=%#x value=%#x", e.Num, e.Args, e.Value)
	case schema.KindSignal:
		s += fmt.Sprintf(" num=%d addr=%#x", e.Num, e.Addr)
	case schema.KindClientRequest:
		s += fmt.Sprintf(" num=%d name=%q args=%#x", e.Num, e.Name, e.Args)
	case schema.KindExit:
		s += fmt.Sprintf(" value=%d num=%d", e.Value, e.Num)
	case schema.KindThreadCreate, schema.KindThreadSwitch:
		s += fmt.Sprintf(" tid=%d", e.TID)
	}
	if e.Kind.HasPC() {
		s += " at " + tr.r.Tables().Locate(e.PC).String()
	}
	return s
}

// lines returns the non-empty lines of s.
func lines(s string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// hexAddr parses a %p address ("(nil)" is 0).
func hexAddr(t *testing.T, s string) uint64 {
	t.Helper()
	if s == "(nil)" {
		return 0
	}
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64)
	if err != nil {
		t.Fatalf("bad address %q in the program's output: %v", s, err)
	}
	return v
}

// ---------------------------------------------------------------------------
// 1. list: node stores and malloc returns.

type listNode struct {
	addr, val, next uint64
}

var nodeLine = regexp.MustCompile(`^node (0x[0-9a-f]+) val (-?[0-9]+) next (0x[0-9a-f]+|\(nil\))$`)

// parseList parses list's node lines.
func parseList(t *testing.T, out string) []listNode {
	t.Helper()
	var nodes []listNode
	for _, l := range lines(out) {
		m := nodeLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		v, _ := strconv.ParseInt(m[2], 10, 64)
		nodes = append(nodes, listNode{addr: hexAddr(t, m[1]), val: uint64(v), next: hexAddr(t, m[3])})
	}
	return nodes
}

func TestListStoresAndMallocs(t *testing.T) {
	t.Parallel()
	const n = 20
	bin := testprog.Build(t, "list")
	rec := record(t, bin, []string{strconv.Itoa(n)})
	tr := readTrace(t, rec.trace)
	checkExited(t, rec, tr)

	nodes := parseList(t, rec.stdout)
	if len(nodes) != n {
		t.Fatalf("list printed %d node lines, want %d:\n%s", len(nodes), n, rec.stdout)
	}
	for i, nd := range nodes {
		if nd.val != uint64(i) {
			t.Fatalf("node line %d has val %d, want %d", i, nd.val, i)
		}
		if i+1 < n && nd.next != nodes[i+1].addr || i+1 == n && nd.next != 0 {
			t.Fatalf("node line %d: next %#x is not the following node's address", i, nd.next)
		}
	}

	// The stores, in trace order: node i's val; after it, the link to node
	// i from node i-1's next, and for the last node its NULL next.
	storeAfter := func(from int, addr, val uint64) int {
		for i := from; i < len(tr.events); i++ {
			e := &tr.events[i]
			if e.Kind == schema.KindStore && e.Addr == addr && e.Size == 8 && e.Value == val {
				return i
			}
		}
		return -1
	}
	missing := func(what string, from int, addr, val uint64) {
		t.Helper()
		var seen []string
		for i := range tr.events {
			e := &tr.events[i]
			if e.Kind == schema.KindStore && e.Addr <= addr && addr < e.Addr+uint64(e.Size) && len(seen) < 5 {
				seen = append(seen, tr.describe(e))
			}
		}
		t.Fatalf("no store of %s (8 bytes of %#x at %#x) after event index %d; stores to that address: %v",
			what, val, addr, from, seen)
	}
	cursor := 0
	for i, nd := range nodes {
		pos := storeAfter(cursor, nd.addr, nd.val)
		if pos < 0 {
			missing(fmt.Sprintf("node %d's val", i), cursor, nd.addr, nd.val)
		}
		cursor = pos
		if i > 0 {
			if storeAfter(pos, nodes[i-1].addr+8, nodes[i-1].next) < 0 {
				missing(fmt.Sprintf("node %d's next", i-1), pos, nodes[i-1].addr+8, nodes[i-1].next)
			}
		}
		if i == n-1 && storeAfter(pos, nd.addr+8, 0) < 0 {
			missing("the last node's NULL next", pos, nd.addr+8, 0)
		}
	}

	// malloc: a CALL from list.c (not one of libc's internal calls, such
	// as malloc's to _int_malloc) whose target is located in malloc, and
	// whose RETURN (same thread, stack pointer back to the call's + 8)
	// gives the node. The returning ret must be malloc's too.
	tables := tr.r.Tables()
	namedCall := map[uint64]bool{}    // returned by a call whose target is named *malloc*
	fromMalloc := map[uint64]string{} // returned by a ret in *malloc*, from a call in list.c -> that call
	var mallocCalls int
	for i := range tr.events {
		c := &tr.events[i]
		if c.Kind != schema.KindCall || filepath.Base(tables.Locate(c.PC).File) != "list.c" {
			continue
		}
		named := strings.Contains(tables.Locate(c.Addr).Function, "malloc")
		if named {
			mallocCalls++
		}
		for j := i + 1; j < len(tr.events); j++ {
			r := &tr.events[j]
			if r.Kind == schema.KindReturn && r.Thread == c.Thread && r.SP == c.SP+8 {
				if named {
					namedCall[r.Value] = true
				}
				if strings.Contains(tables.Locate(r.PC).Function, "malloc") {
					fromMalloc[r.Value] = fmt.Sprintf("%s (target located as %q), returned by %s",
						tr.describe(c), tables.Locate(c.Addr).String(), tr.describe(r))
				}
				break
			}
		}
	}
	for i, nd := range nodes {
		if _, ok := fromMalloc[nd.addr]; !ok {
			t.Errorf("no CALL from list.c has a RETURN, from a ret in malloc, of node %d's address %#x", i, nd.addr)
			break
		}
	}
	for i, nd := range nodes {
		if !namedCall[nd.addr] {
			t.Errorf("no CALL from list.c to malloc (a target located in a function whose name contains \"malloc\") returns node %d's address %#x; %d calls from list.c have such a target; the call that does return it: %s",
				i, nd.addr, mallocCalls, fromMalloc[nd.addr])
			break
		}
	}
}

// ---------------------------------------------------------------------------
// 2. threads: creation, switches, the shared counter.

func TestThreadsCounter(t *testing.T) {
	t.Parallel()
	const k = 300
	bin := testprog.Build(t, "threads")
	rec := record(t, bin, []string{strconv.Itoa(k)})
	tr := readTrace(t, rec.trace)
	checkExited(t, rec, tr)
	summarize(t, rec.trace) // thread switches make sense

	var counter, addr uint64
	var haveCounter, haveAddr bool
	for _, l := range lines(rec.stdout) {
		if f := strings.Fields(l); len(f) == 2 && f[0] == "counter" {
			v, err := strconv.ParseUint(f[1], 10, 64)
			counter, haveCounter = v, err == nil
		} else if len(f) == 2 && f[0] == "counter_addr" {
			addr, haveAddr = hexAddr(t, f[1]), true
		}
	}
	if !haveCounter || !haveAddr {
		t.Fatalf("threads printed no counter or counter_addr line:\n%s", rec.stdout)
	}
	if counter != 2*k {
		t.Fatalf("threads printed counter %d, want %d", counter, 2*k)
	}

	threads := map[schema.ThreadID]int{}
	var creates, switches int
	storers := map[schema.ThreadID]int{}
	var stores []uint64
	lastLoad := map[schema.ThreadID]*schema.Event{} // since the last store of the counter
	for i := range tr.events {
		e := &tr.events[i]
		threads[e.Thread]++
		switch e.Kind {
		case schema.KindThreadCreate:
			creates++
		case schema.KindThreadSwitch:
			switches++
		case schema.KindLoad:
			if e.Addr == addr {
				lastLoad[e.Thread] = e
			}
		case schema.KindStore:
			if e.Addr <= addr+7 && addr < e.Addr+uint64(e.Size) {
				if e.Addr != addr || e.Size != 8 {
					t.Errorf("store to the counter with address %#x size %d, want %#x size 8: %s", e.Addr, e.Size, addr, tr.describe(e))
				}
				want := uint64(len(stores)) + 1
				if e.Value == want {
					l := lastLoad[e.Thread]
					if l == nil || l.Value != want-1 {
						got := "none"
						if l != nil {
							got = tr.describe(l)
						}
						t.Errorf("store %d of the counter (%s) is not preceded, since the previous store, by a load of %d from the same thread (last load: %s)",
							want, tr.describe(e), want-1, got)
					}
				}
				clear(lastLoad)
				stores = append(stores, e.Value)
				storers[e.Thread]++
			}
		}
	}
	if len(threads) < 2 {
		t.Errorf("events from %d threads (%v), want at least 2", len(threads), threads)
	}
	if creates < 2 {
		t.Errorf("%d THREAD_CREATE events, want at least 2", creates)
	}
	if switches < 1 {
		t.Errorf("no THREAD_SWITCH events")
	}
	if len(stores) != 2*k {
		t.Errorf("%d stores to the counter at %#x, want %d", len(stores), addr, 2*k)
	}
	for i, v := range stores {
		if v != uint64(i+1) {
			t.Errorf("store %d of the counter writes %d, want %d (stores in trace order must count 1, 2, ..., %d)", i+1, v, i+1, 2*k)
			break
		}
	}
	if len(storers) != 2 || storers[1] != 0 {
		t.Errorf("the counter was stored by threads %v, want two threads other than the initial thread 1", storers)
	}
}

// ---------------------------------------------------------------------------
// 5. syscalls: brk, mmap, mremap, munmap.

const (
	sysMmap   = 9
	sysMunmap = 11
	sysBrk    = 12
	sysMremap = 25
)

func TestSyscallsHeapRanges(t *testing.T) {
	t.Parallel()
	bin := testprog.Build(t, "syscalls")
	rec := record(t, bin, nil)
	tr := readTrace(t, rec.trace, schema.KindSyscall) // 2.5 M events in all
	checkExited(t, rec, tr)

	out := rec.stdout
	scan := func(format string, args ...any) {
		t.Helper()
		for _, l := range lines(out) {
			if _, err := fmt.Sscanf(l, format, args...); err == nil {
				return
			}
		}
		t.Fatalf("no line of the output matches %q:\n%s", format, out)
	}
	var brk0, brk1, brkBack, m, m2, big, freed uint64
	var mlen, m2len, unlen, biglen, page uint64
	var sum1, sum2, sum3, sum4 int64
	scan("brk %v -> %v", &brk0, &brk1)
	scan("brk page %v sum %d", &page, &sum1)
	scan("brk back %v", &brkBack)
	scan("mmap %v len %d sum %d", &m, &mlen, &sum2)
	scan("mremap %v len %d sum %d", &m2, &m2len, &sum3)
	var unmapped uint64
	scan("munmap %v len %d", &unmapped, &unlen)
	scan("malloc %v len %d sum %d", &big, &biglen, &sum4)
	scan("free %v", &freed)
	if brk1 != brk0+4096 || brkBack != brk0 || page != brk0 || sum1 != 4096 || mlen != 65536 || sum2 != 65536 ||
		m2len != 131072 || sum3 != 65536 || unmapped != m2 || unlen != 131072 || biglen != 262144 || sum4 != 262144 || freed != big {
		t.Fatalf("syscalls' output does not add up:\n%s", out)
	}

	// syscalls returns the SYSCALL events matching pred, in order.
	syscalls := func(pred func(e *schema.Event) bool) []*schema.Event {
		var out []*schema.Event
		for i := range tr.events {
			if e := &tr.events[i]; e.Kind == schema.KindSyscall && pred(e) {
				out = append(out, e)
			}
		}
		return out
	}
	all := func(num uint64) string {
		var s []string
		for _, e := range syscalls(func(e *schema.Event) bool { return e.Num == num }) {
			s = append(s, tr.describe(e))
		}
		return strings.Join(s, "\n  ")
	}
	// first returns the first matching syscall after seq (nil when none).
	first := func(after uint64, what string, pred func(e *schema.Event) bool, num uint64) *schema.Event {
		t.Helper()
		for _, e := range syscalls(func(e *schema.Event) bool { return e.Num == num && pred(e) }) {
			if e.Seq > after {
				return e
			}
		}
		t.Errorf("no SYSCALL %s after event #%d; the trace's syscalls number %d:\n  %s", what, after, num, all(num))
		return nil
	}

	grow := first(0, fmt.Sprintf("brk(%#x) = %#x", brk1, brk1), func(e *schema.Event) bool {
		return e.Args[0] == brk1 && e.Value == brk1
	}, sysBrk)
	if grow != nil {
		first(grow.Seq, fmt.Sprintf("brk(%#x) = %#x", brk0, brk0), func(e *schema.Event) bool {
			return e.Args[0] == brk0 && e.Value == brk0
		}, sysBrk)
	}
	mm := first(0, fmt.Sprintf("mmap(0, 65536, ...) = %#x", m), func(e *schema.Event) bool {
		return e.Args[1] == 65536 && e.Value == m
	}, sysMmap)
	if mm == nil {
		return
	}
	mr := first(mm.Seq, fmt.Sprintf("mremap(%#x, 65536, 131072, ...) = %#x", m, m2), func(e *schema.Event) bool {
		return e.Args[0] == m && e.Args[1] == 65536 && e.Args[2] == 131072 && e.Value == m2
	}, sysMremap)
	if mr == nil {
		return
	}
	um := first(mr.Seq, fmt.Sprintf("munmap(%#x, 131072) = 0", m2), func(e *schema.Event) bool {
		return e.Args[0] == m2 && e.Args[1] == 131072 && e.Value == 0
	}, sysMunmap)
	if um == nil {
		return
	}
	// glibc maps the 256 KiB block (with its header) with mmap and unmaps
	// it at free.
	bm := first(um.Seq, fmt.Sprintf("mmap(0, >= %d, ...) holding %#x", biglen+16, big), func(e *schema.Event) bool {
		return e.Value <= big && big+biglen <= e.Value+e.Args[1] && e.Args[1] >= biglen+16
	}, sysMmap)
	if bm == nil {
		return
	}
	first(bm.Seq, fmt.Sprintf("munmap(%#x, %#x) = 0", bm.Value, bm.Args[1]), func(e *schema.Event) bool {
		return e.Args[0] == bm.Value && e.Args[1] == bm.Args[1] && e.Value == 0
	}, sysMunmap)
}

// ---------------------------------------------------------------------------
// 6. cpoint: client requests.

const (
	reqCPoint = 1
	reqMark   = 2
)

func TestCPointClientRequests(t *testing.T) {
	t.Parallel()
	bin := testprog.Build(t, "cpoint")
	rec := record(t, bin, nil)
	tr := readTrace(t, rec.trace)
	checkExited(t, rec, tr)

	var cpoints, marks int
	found := false
	for _, l := range lines(rec.stdout) {
		if _, err := fmt.Sscanf(l, "cpoints %d marks %d", &cpoints, &marks); err == nil {
			found = true
		}
	}
	if !found {
		t.Fatalf("cpoint printed no \"cpoints N marks M\" line:\n%s", rec.stdout)
	}
	if cpoints != 8 || marks != 1 {
		t.Errorf("cpoint says it passed %d C-points and %d marks, want 8 and 1 (README)", cpoints, marks)
	}

	var gotC, gotM, before, after int
	var others, unlocated []string
	for i := range tr.events {
		e := &tr.events[i]
		if e.Kind != schema.KindClientRequest {
			continue
		}
		loc := tr.r.Tables().Locate(e.PC)
		if filepath.Base(loc.File) != "cpoint.c" || loc.Line == 0 {
			in := "no Instruction entry"
			if tr.r.Tables().Instructions[e.PC] != nil {
				in = fmt.Sprintf("Instruction entry % x", tr.r.Tables().Instructions[e.PC].Code)
			}
			unlocated = append(unlocated, fmt.Sprintf("%s (file %q line %d; %s)", tr.describe(e), loc.File, loc.Line, in))
		}
		switch {
		case e.Num == reqCPoint && e.Name == "list":
			gotC++
			if gotM == 0 {
				before++
			} else {
				after++
				if e.Args[1] == 0 {
					t.Errorf("C-point after the mark (MGTRACE_CPOINT_AT) has no root in args[1]: %s", tr.describe(e))
				}
			}
		case e.Num == reqMark && e.Name == "phase-2":
			gotM++
		default:
			others = append(others, tr.describe(e))
		}
	}
	if gotC != cpoints {
		t.Errorf("%d CLIENT_REQUEST CPOINT events named \"list\", want %d (as the program printed)", gotC, cpoints)
	}
	if gotM != marks {
		t.Errorf("%d CLIENT_REQUEST MARK events named \"phase-2\", want %d (as the program printed)", gotM, marks)
	}
	if before != 6 || after != 2 {
		t.Errorf("C-points: %d before the mark and %d after, want 6 and 2", before, after)
	}
	if len(others) > 0 {
		t.Errorf("unexpected client requests: %v", others)
	}
	// Every event pc, the client requests' included, has an Instruction.
	if s := summarize(t, rec.trace); s.PCsWithoutInstruction != 0 {
		t.Errorf("%d distinct event pcs have no Instruction entry, want 0", s.PCsWithoutInstruction)
	}
	if len(unlocated) > 0 {
		t.Errorf("%d of %d client requests have a pc not located at a line of cpoint.c:\n  %s",
			len(unlocated), gotC+gotM+len(others), strings.Join(unlocated, "\n  "))
	}
}

// ---------------------------------------------------------------------------
// 7. Self-contained: the trace is read without the binary.

func TestSelfContained(t *testing.T) {
	t.Parallel()
	cached := testprog.Build(t, "list")
	data, err := os.ReadFile(cached)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "list")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	rec := record(t, bin, []string{"3"})
	if err := os.Remove(bin); err != nil {
		t.Fatal(err)
	}
	tr := readTrace(t, rec.trace)
	checkExited(t, rec, tr)

	printfLine := uint32(testprog.Line(t, "list", `printf("node %p val %ld next %p\n"`))
	mainLine := uint32(testprog.Line(t, "list", "main(int argc, char **argv)"))
	src, err := os.ReadFile(testprog.Source(t, "list"))
	if err != nil {
		t.Fatal(err)
	}
	lastLine := uint32(strings.Count(string(src), "\n") + 1)

	tables := tr.r.Tables()
	seen := map[uint64]bool{}
	var inMain, atPrintf int
	for i := range tr.events {
		e := &tr.events[i]
		if !e.Kind.HasPC() || seen[e.PC] {
			continue
		}
		seen[e.PC] = true
		loc := tables.Locate(e.PC)
		if loc.Function != "main" || loc.Module != "" && filepath.Base(loc.Module) != "list" {
			continue
		}
		if filepath.Base(loc.File) != "list.c" {
			t.Errorf("instruction %#x of main: file %q, want list.c (%s)", e.PC, loc.File, loc)
			continue
		}
		inMain++
		if loc.Line < mainLine || loc.Line > lastLine {
			t.Errorf("instruction %#x of main at line %d, outside main (lines %d-%d)", e.PC, loc.Line, mainLine, lastLine)
		}
		if loc.Line == printfLine {
			atPrintf++
		}
	}
	if inMain == 0 {
		t.Fatalf("no executed instruction is located in main of list.c")
	}
	if atPrintf == 0 {
		t.Errorf("no executed instruction of main is at list.c:%d (the node printf); %d instructions of main located", printfLine, inMain)
	}

	ty := tables.Types["node"]
	if ty == nil {
		var names []string
		for n := range tables.Types {
			names = append(names, n)
		}
		t.Fatalf("struct type \"node\" is not in the trace's tables (types: %v)", names)
	}
	if ty.Size != 16 {
		t.Errorf("struct node has size %d, want 16", ty.Size)
	}
	members := map[string]int{}
	for i, m := range ty.Members {
		members[m.Name] = i
	}
	if i, ok := members["val"]; !ok || ty.Members[i].Offset != 0 || ty.Members[i].Size != 8 || ty.Members[i].Pointer {
		t.Errorf("struct node member val: %v, want offset 0 size 8 not a pointer (members %v)", memberOf(ty.Members, "val"), ty.Members)
	}
	if i, ok := members["next"]; !ok || ty.Members[i].Offset != 8 || ty.Members[i].Size != 8 || !ty.Members[i].Pointer {
		t.Errorf("struct node member next: %v, want offset 8 size 8 pointer (members %v)", memberOf(ty.Members, "next"), ty.Members)
	} else if p := ty.Members[i].Pointee; p != "node" {
		t.Errorf("struct node member next points to %q, want \"node\"", p)
	}
}

func memberOf[M interface{ GetName() string }](ms []M, name string) any {
	for _, m := range ms {
		if m.GetName() == name {
			return m
		}
	}
	return "(none)"
}

// ---------------------------------------------------------------------------
// 8. Real programs keep their behaviour.

var hexRE = regexp.MustCompile(`0x[0-9a-f]+`)

func TestRealPrograms(t *testing.T) {
	t.Parallel()
	needProbe(t)
	type prog struct {
		name string
		path func(t *testing.T) string
		args []string
		// addresses, when set, says that the output holds addresses, which
		// differ natively (address space randomisation): they are replaced
		// by ADDR before comparing.
		addresses bool
	}
	lookPath := func(name string) func(t *testing.T) string {
		return func(t *testing.T) string {
			p, err := exec.LookPath(name)
			if err != nil {
				t.Skipf("%s is not installed: %v", name, err)
			}
			return p
		}
	}
	progs := []prog{
		{"ls", lookPath("ls"), []string{"-R", "/usr/include"}, false},
		{"python3", func(t *testing.T) string {
			if raceEnabled {
				t.Skip("python3 runs 100 M events: about 190 s to record under the race detector (15 s without)")
			}
			if testing.Short() {
				t.Skip("python3 takes 15 s to record; skipped in -short mode")
			}
			p := lookPath("python3")(t)
			// python3 may be a shim script (pyenv) that execs the real
			// interpreter, which valgrind would then not follow: record the
			// interpreter itself.
			out, err := exec.Command(p, "-c", "import sys; print(sys.executable)").Output()
			if err != nil {
				t.Skipf("python3 does not run: %v", err)
			}
			if exe := strings.TrimSpace(string(out)); exe != "" {
				return exe
			}
			return p
		}, []string{"-c", "print(sum(range(1000)))"}, false},
		{"perl", lookPath("perl"), []string{"-e", "print 6*7"}, false},
		{"list-static", func(t *testing.T) string { return testprog.Build(t, "list", testprog.Static()) }, []string{"5"}, true},
		{"list-stripped", func(t *testing.T) string { return testprog.Build(t, "list", testprog.Stripped()) }, []string{"5"}, true},
	}
	for _, p := range progs {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			path := p.path(t)
			cmd := exec.Command(path, p.args...)
			cmd.Stdin = strings.NewReader("")
			var nstderr bytes.Buffer
			cmd.Stderr = &nstderr
			native, err := cmd.Output()
			if err != nil {
				t.Fatalf("native run of %s %v: %v\n%s", path, p.args, err, nstderr.String())
			}
			rec := record(t, path, p.args)
			checkExited(t, rec, nil)
			got, want := rec.stdout, string(native)
			if p.addresses {
				got, want = hexRE.ReplaceAllString(got, "ADDR"), hexRE.ReplaceAllString(want, "ADDR")
			}
			if got != want {
				t.Errorf("recorded stdout differs from native (%d bytes vs %d)\nrecorded: %.300q\nnative:   %.300q",
					len(got), len(want), got, want)
			}
			s := summarize(t, rec.trace)
			if !s.End.Whole {
				t.Errorf("trace is not whole: truncated at byte %d (%s)", s.End.TruncatedAt, s.End.Reason)
			}
			if s.Events == 0 {
				t.Errorf("trace has no events")
			}
			if s.KindCounts[schema.KindLoad] == 0 || s.KindCounts[schema.KindStore] == 0 {
				t.Errorf("trace has %d loads and %d stores, want some of each", s.KindCounts[schema.KindLoad], s.KindCounts[schema.KindStore])
			}
			if !s.Exit.Ended || s.Exit.Code != 0 || s.Exit.Signal != 0 {
				t.Errorf("trace says exit %+v, want code 0", s.Exit)
			}
			if s.Events != rec.res.Events {
				t.Errorf("trace holds %d events, Result says %d", s.Events, rec.res.Events)
			}
		})
	}
}

// ---------------------------------------------------------------------------
// 9. Without valgrind.

func TestNoValgrind(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "x.trace")
	res, err := Record(Options{Program: "true", Output: out, Valgrind: "/nonexistent/valgrind",
		Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard})
	if !errors.Is(err, ErrNoValgrind) {
		t.Fatalf("Record with Valgrind /nonexistent/valgrind: error %v, want ErrNoValgrind", err)
	}
	if res != nil {
		t.Errorf("Record without valgrind returned a result: %+v", res)
	}
	if !strings.Contains(err.Error(), "install") {
		t.Errorf("error %q does not say what to install", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Record without valgrind left a trace file behind (stat: %v)", err)
	}
}

// ---------------------------------------------------------------------------
// 10. Many blocks.

func TestManyBlocks(t *testing.T) {
	t.Parallel()
	bin := testprog.Build(t, "list")
	rec := record(t, bin, []string{"200"}, func(o *Options) { o.BatchEvents = 1000 })
	checkExited(t, rec, nil)
	s := summarize(t, rec.trace)
	if !s.End.Whole {
		t.Errorf("trace is not whole: truncated at byte %d (%s)", s.End.TruncatedAt, s.End.Reason)
	}
	ev, tb := s.BlockCounts[schema.BlockEvents], s.BlockCounts[schema.BlockTables]
	if want := int(s.Events / 1000); ev < want {
		t.Errorf("%d EVENTS blocks for %d events with BatchEvents 1000, want at least %d", ev, s.Events, want)
	}
	if ev < 50 || tb < 5 {
		t.Errorf("%d EVENTS and %d TABLES blocks, want many of each (>= 50 and >= 5)", ev, tb)
	}
	if s.PCsWithoutInstruction != 0 {
		t.Errorf("%d distinct event pcs have no Instruction entry (capped: %v), want 0", s.PCsWithoutInstruction, s.PCsWithoutInstructionCapped)
	}
	if s.Events != rec.res.Events {
		t.Errorf("trace holds %d events, Result says %d", s.Events, rec.res.Events)
	}
	if s.Exit.Source != schema.ExitFromFooter || !s.Exit.Ended || s.Exit.Code != 0 {
		t.Errorf("exit status %+v, want code 0 from the footer", s.Exit)
	}
	t.Logf("%d events in %d EVENTS and %d TABLES blocks; %d instructions, %d functions", s.Events, ev, tb, s.Tables.Instructions, s.Tables.Functions)
}

// TestExec records a shell that execs the list program (as wrapper
// scripts do): the trace follows the exec, so it holds the list's stores,
// located in list.c, on the one thread the shell started with; the list's
// own struct layouts are there because its image is the main module.
func TestExec(t *testing.T) {
	t.Parallel()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	list := testprog.Build(t, "list")
	rec := record(t, sh, []string{"-c", "exec " + list + " 3"})
	if rec.res.Status() != 0 {
		t.Fatalf("exit status %d, want 0", rec.res.Status())
	}
	nodes := 0
	for _, line := range strings.Split(rec.stdout, "\n") {
		if strings.HasPrefix(line, "node ") {
			nodes++
		}
	}
	if nodes != 3 {
		t.Fatalf("the program printed %d nodes, want 3:\n%s", nodes, rec.stdout)
	}
	tr := readTrace(t, rec.trace, schema.KindStore, schema.KindThreadCreate, schema.KindThreadSwitch)
	inList := 0
	for _, ev := range tr.events {
		switch ev.Kind {
		case schema.KindThreadCreate, schema.KindThreadSwitch:
			t.Fatalf("exec made a thread event: %+v", ev)
		case schema.KindStore:
			if strings.HasSuffix(tr.r.Tables().Locate(ev.PC).File, "list.c") {
				inList++
			}
		}
	}
	if inList < 6 {
		t.Fatalf("%d stores located in list.c after the exec, want at least 6 (two fields of three nodes)", inList)
	}
	if tr.r.Tables().Types["node"] == nil {
		t.Fatalf("struct node is not in the trace's tables: the exec'd image should be the main module")
	}
	if th := tr.r.Footer().Threads; len(th) != 1 {
		t.Fatalf("%d threads in the footer, want 1", len(th))
	}
}

// TestForkedChildNotRecorded records a shell that runs the list program
// in a forked child (a pipeline): the program still runs and prints, the
// trace is whole and holds the shell only (docs/record.md, Limits).
func TestForkedChildNotRecorded(t *testing.T) {
	t.Parallel()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	list := testprog.Build(t, "list")
	rec := record(t, sh, []string{"-c", list + " 2 | cat"})
	if rec.res.Status() != 0 || strings.Count(rec.stdout, "node ") != 2 {
		t.Fatalf("exit status %d, output:\n%s", rec.res.Status(), rec.stdout)
	}
	tr := readTrace(t, rec.trace, schema.KindStore)
	if !tr.r.End().Whole {
		t.Fatalf("trace not whole: %+v", tr.r.End())
	}
	for _, ev := range tr.events {
		if strings.HasSuffix(tr.r.Tables().Locate(ev.PC).File, "list.c") {
			t.Fatalf("a store of the forked child's list program is in the trace: %+v", ev)
		}
	}
}

// TestFailedExec records a program whose exec fails: the probe hands its
// chunks back before execve and must take one again to record the rest.
func TestFailedExec(t *testing.T) {
	t.Parallel()
	rec := record(t, testprog.Build(t, "execfail"), nil)
	if rec.res.Status() != 0 || !strings.Contains(rec.stdout, "exec returned -1, sum 84") {
		t.Fatalf("exit status %d, output %q", rec.res.Status(), rec.stdout)
	}
	tr := readTrace(t, rec.trace, schema.KindStore)
	line := testprog.Line(t, "execfail", "/* AFTER */")
	after := 0
	for _, ev := range tr.events {
		if loc := tr.r.Tables().Locate(ev.PC); strings.HasSuffix(loc.File, "execfail.c") && int(loc.Line) == line {
			after++
		}
	}
	if after != 8 {
		t.Fatalf("%d stores on the AFTER line (%d), want 8", after, line)
	}
}

// TestProgress records with a progress callback (run under -race: the
// callback runs on its own goroutine while the trace is written).
func TestProgress(t *testing.T) {
	t.Parallel()
	var calls, last uint64
	var mu sync.Mutex
	rec := record(t, testprog.Build(t, "tree"), []string{"20000"}, func(o *Options) {
		o.Progress = func(events uint64, bytes int64) {
			mu.Lock()
			defer mu.Unlock()
			if events < last {
				t.Errorf("progress went back from %d to %d events", last, events)
			}
			calls++
			last = events
		}
	})
	mu.Lock()
	defer mu.Unlock()
	if rec.res.Status() != 0 {
		t.Fatalf("exit status %d", rec.res.Status())
	}
	if last > rec.res.Events {
		t.Fatalf("progress reported %d events, the trace has %d", last, rec.res.Events)
	}
	t.Logf("%d progress calls, last at %d of %d events", calls, last, rec.res.Events)
}
