package slice_test

import (
	"fmt"
	"testing"

	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/slice"
)

func recordSliceProg(t *testing.T, prog string, flags ...string) *slice.Run {
	t.Helper()
	if len(flags) == 0 {
		flags = []string{"-g", "-O0", "-fno-omit-frame-pointer", "-pthread"}
	}
	return loadRun(t, testprog.Record(t, testprog.Build(t, "slice/"+prog, testprog.Flags(flags...))))
}

func mustSlice(t *testing.T, run *slice.Run, p slice.Point, opt slice.Options) *slice.Result {
	t.Helper()
	res, err := slice.Slice(run, p, opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func memberSet(res *slice.Result) map[uint32]bool {
	m := make(map[uint32]bool, len(res.Members))
	for _, i := range res.Members {
		m[i] = true
	}
	return m
}

func subset(a, b map[uint32]bool) bool {
	for i := range a {
		if !b[i] {
			return false
		}
	}
	return true
}

// TestOptionsNarrow checks that every option that drops dependences gives
// a subset of the full slice, and what each keeps.
func TestOptionsNarrow(t *testing.T) {
	run := recordSliceProg(t, "loop")
	p, err := run.Resolve(slice.Criterion{Kind: slice.ByLine, File: "loop.c", Line: 44})
	if err != nil {
		t.Fatal(err)
	}
	full := memberSet(mustSlice(t, run, p, slice.Options{}))
	for _, i := range p.Insts {
		if !full[i] {
			t.Errorf("criterion instance %d is not in its slice", i)
		}
	}
	narrower := map[string]slice.Options{
		"data-only":  {DataOnly: true},
		"no-address": {NoAddress: true},
		"depth 1":    {MaxDepth: 1},
		"depth 3":    {MaxDepth: 3},
	}
	for name, opt := range narrower {
		res := mustSlice(t, run, p, opt)
		got := memberSet(res)
		if !subset(got, full) {
			t.Errorf("%s: slice is not a subset of the full slice", name)
		}
		if len(got) >= len(full) {
			t.Errorf("%s: %d instances, the full slice %d: nothing dropped", name, len(got), len(full))
		}
		if name == "data-only" {
			for _, e := range res.Edges {
				if e.Kind == slice.DepControl {
					t.Errorf("data-only: control edge %+v", e)
				}
			}
		}
	}
	// Depth 1: the criterion and what it reads directly.
	res := mustSlice(t, run, p, slice.Options{MaxDepth: 1})
	direct := map[uint32]bool{}
	for _, i := range p.Insts {
		direct[i] = true
	}
	for _, e := range res.Edges {
		if e.User >= 0 && direct[uint32(e.User)] && e.Def >= 0 {
			direct[uint32(e.Def)] = true
		}
	}
	for _, i := range res.Members {
		if !direct[i] {
			t.Errorf("depth 1: instance %d is neither the criterion nor a direct dependence", i)
		}
	}
	// A region that starts at the criterion keeps only the criterion.
	res = mustSlice(t, run, p, slice.Options{From: p.Insts[0]})
	if len(res.Members) != len(p.Insts) {
		t.Errorf("region from the criterion: %d instances, want the criterion's %d", len(res.Members), len(p.Insts))
	}
	// Every edge joins two members (or the criterion's location).
	all := mustSlice(t, run, p, slice.Options{})
	m := memberSet(all)
	for _, e := range all.Edges {
		if (e.User >= 0 && !m[uint32(e.User)]) || !m[uint32(e.Def)] {
			t.Errorf("edge %+v leaves the slice", e)
		}
	}
}

// TestNarrowedCriterion slices one register after the criterion line: a
// subset of the line's whole slice that still holds the line's writer of
// the register.
func TestNarrowedCriterion(t *testing.T) {
	run := recordSliceProg(t, "straight")
	c := slice.Criterion{Kind: slice.ByLine, File: "straight.c", Line: 39}
	whole, err := run.Resolve(c)
	if err != nil {
		t.Fatal(err)
	}
	full := memberSet(mustSlice(t, run, whole, slice.Options{}))
	c.Reg = 1 // rax: the line computes r in eax
	p, err := run.Resolve(c)
	if err != nil {
		t.Fatal(err)
	}
	res := mustSlice(t, run, p, slice.Options{})
	got := memberSet(res)
	if len(got) == 0 || !subset(got, full) {
		t.Fatalf("slice of rax after straight.c:39: %d instances, subset of the line's %v", len(got), subset(got, full))
	}
	fromCrit := false
	for _, e := range res.Edges {
		if e.User == -1 {
			fromCrit = true
			if e.Kind != slice.DepRegister {
				t.Errorf("the criterion's location edge is %v, want register", e.Kind)
			}
		}
	}
	if !fromCrit {
		t.Error("no edge from the criterion's register")
	}
}

// TestPruneSubset checks that save/restore pruning only removes: the
// pruned slice lies inside the unpruned one, and some pair was bypassed.
func TestPruneSubset(t *testing.T) {
	run := recordSliceProg(t, "saverestore", "-g", "-O2", "-fno-omit-frame-pointer", "-pthread")
	if run.Pairs() == 0 {
		t.Fatal("no save/restore pair verified in saverestore")
	}
	p, err := run.Resolve(slice.Criterion{Kind: slice.ByLine, File: "saverestore.c", Line: 61})
	if err != nil {
		t.Fatal(err)
	}
	full := memberSet(mustSlice(t, run, p, slice.Options{}))
	res := mustSlice(t, run, p, slice.Options{PruneSaveRestore: true})
	if !subset(memberSet(res), full) {
		t.Error("the pruned slice is not a subset of the unpruned one")
	}
	if res.Stats.Bypassed == 0 {
		t.Error("no pair bypassed")
	}
}

// TestThreadFilter writes only one thread's instances while the slice still
// crosses threads.
func TestThreadFilter(t *testing.T) {
	run := recordSliceProg(t, "threads")
	p, err := run.Resolve(slice.Criterion{Kind: slice.ByLine, File: "threads.c", Line: 81})
	if err != nil {
		t.Fatal(err)
	}
	res := mustSlice(t, run, p, slice.Options{})
	threads := map[schema.ThreadID]int{}
	if err := res.Rows(nil, func(r slice.Row) error { threads[r.Thread]++; return nil }); err != nil {
		t.Fatal(err)
	}
	if len(threads) < 2 {
		t.Fatalf("slice spans threads %v, want the main thread and thread A", threads)
	}
	for tid, n := range threads {
		got := 0
		err := res.Rows([]schema.ThreadID{tid}, func(r slice.Row) error {
			if r.Thread != tid {
				t.Errorf("--thread %d: row of thread %d", tid, r.Thread)
			}
			got++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if got != n {
			t.Errorf("--thread %d: %d rows, want %d", tid, got, n)
		}
	}
}

func TestParseCriterion(t *testing.T) {
	tests := []struct {
		in   string
		want slice.Criterion
		bad  bool
	}{
		{in: "crash", want: slice.Criterion{Kind: slice.ByCrash}},
		{in: "seq:42", want: slice.Criterion{Kind: slice.BySeq, Seq: 42}},
		{in: "list.c:12", want: slice.Criterion{Kind: slice.ByLine, File: "list.c", Line: 12}},
		{in: "src/a/list.c:12#3", want: slice.Criterion{Kind: slice.ByLine, File: "src/a/list.c", Line: 12, K: 3}},
		{in: "seq:", bad: true},
		{in: "seq:x", bad: true},
		{in: "list.c", bad: true},
		{in: "list.c:0", bad: true},
		{in: "list.c:-1", bad: true},
		{in: "list.c:3#0", bad: true},
		{in: "list.c:3#x", bad: true},
		{in: ":3", bad: true},
	}
	for _, tt := range tests {
		got, err := slice.ParseCriterion(tt.in)
		if tt.bad {
			if err == nil {
				t.Errorf("ParseCriterion(%q) = %+v, want an error", tt.in, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseCriterion(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

func TestParseAddrReg(t *testing.T) {
	if a, n, err := slice.ParseAddr("0x1000:4"); err != nil || a != 0x1000 || n != 4 {
		t.Errorf("ParseAddr(0x1000:4) = %#x %d %v", a, n, err)
	}
	if a, n, err := slice.ParseAddr("4096"); err != nil || a != 4096 || n != 8 {
		t.Errorf("ParseAddr(4096) = %#x %d %v", a, n, err)
	}
	for _, bad := range []string{"", "zz", "0x10:0", "0x10:x", "0x10:99999999"} {
		if _, _, err := slice.ParseAddr(bad); err == nil {
			t.Errorf("ParseAddr(%q): no error", bad)
		}
	}
	regs := map[string]string{"rax": "rax", "eax": "rax", "al": "rax", "%rbx": "rbx", "r9d": "r9", "r12": "r12", "xmm3": "xmm3", "ymm3": "xmm3", "rflags": "rflags", "dil": "rdi"}
	for in, want := range regs {
		r, err := slice.ParseReg(in)
		if err != nil || schema.Reg(r).String() != want {
			t.Errorf("ParseReg(%q) = %v, %v; want %s", in, schema.Reg(r), err, want)
		}
	}
	for _, bad := range []string{"", "foo", "reg_other", "rsp2"} {
		if _, err := slice.ParseReg(bad); err == nil {
			t.Errorf("ParseReg(%q): no error", bad)
		}
	}
}

// TestNoEdges checks that leaving the edges out changes nothing else.
func TestNoEdges(t *testing.T) {
	run := recordSliceProg(t, "loop")
	p, err := run.Resolve(slice.Criterion{Kind: slice.ByLine, File: "loop.c", Line: 44})
	if err != nil {
		t.Fatal(err)
	}
	for _, alg := range []slice.Algorithm{slice.Improved, slice.Baseline} {
		full := mustSlice(t, run, p, slice.Options{Algorithm: alg})
		bare := mustSlice(t, run, p, slice.Options{Algorithm: alg, NoEdges: true})
		if len(bare.Edges) != 0 {
			t.Errorf("%v: NoEdges kept %d edges", alg, len(bare.Edges))
		}
		if len(full.Edges) == 0 || fmt.Sprint(full.Members) != fmt.Sprint(bare.Members) {
			t.Errorf("%v: members differ without edges (%d against %d), or the full slice has no edges", alg, len(bare.Members), len(full.Members))
		}
	}
}
