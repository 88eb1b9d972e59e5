package bugs_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/bugs"
	"github.com/mgtrace/mgtrace/bugs/corpus"
	"github.com/mgtrace/mgtrace/internal/testprog"
)

// program returns the corpus program called name.
func program(t *testing.T, name string) *corpus.Program {
	t.Helper()
	progs, err := corpus.Load(testprog.Root(t))
	if err != nil {
		t.Fatal(err)
	}
	for i := range progs {
		if progs[i].Name == name {
			return &progs[i]
		}
	}
	t.Fatalf("no corpus program %s", name)
	return nil
}

func only(t *testing.T, rep *bugs.Report, rule string) *bugs.Finding {
	t.Helper()
	var got *bugs.Finding
	for i := range rep.Findings {
		if rep.Findings[i].Rule == rule {
			if got != nil {
				t.Fatalf("two %s findings:%s", rule, describe(rep))
			}
			got = &rep.Findings[i]
		}
	}
	if got == nil {
		t.Fatalf("no %s finding:%s", rule, describe(rep))
	}
	return got
}

// TestOverflowIntoLiveBlock: the overflowing store lands inside the next
// live block, a valid address for memcheck; provenance names the block
// the pointer came from.
func TestOverflowIntoLiveBlock(t *testing.T) {
	p := program(t, "ho_neighbour")
	rep := analyzeProgram(t, p)
	f := only(t, rep, "heap_buffer_overflow")
	if !strings.Contains(f.Message, "inside live block") {
		t.Errorf("the overflow is not reported as landing in the live neighbour: %s", f.Message)
	}
	if f.Block == nil || !p.HasLine(f.Block.Alloc, p.Roots["heap_buffer_overflow"]) {
		t.Errorf("the overflow does not name the allocation of the block it overflows: %+v", f.Block)
	}
}

// TestDanglingAfterReuse: the freed block's address is handed out again;
// the stale pointer's provenance still names the freed block, and its
// first free is the root.
func TestDanglingAfterReuse(t *testing.T) {
	p := program(t, "dp_reused")
	rep := analyzeProgram(t, p)
	f := only(t, rep, "dangling_pointer_deref")
	if f.Block == nil || !f.Block.Freed || f.Block.Free == nil || !p.HasLine(*f.Block.Free, p.Roots["dangling_pointer_deref"]) {
		t.Fatalf("the dangling read does not name the free: %+v", f.Block)
	}
	if !p.HasLine(f.Where, p.Symptoms["dangling_pointer_deref"]) {
		t.Errorf("detected at %s:%d, not the symptom line", filepath.Base(f.Where.File), f.Where.Line)
	}
	if rep.Stats.Allocations < 2 {
		t.Errorf("%d allocations", rep.Stats.Allocations)
	}
}

// TestNullKeptInStructure: the NULL that a list's tail stored in a node's
// field reaches the dereference through a load of that field; the chain
// shows the load and the statement that stored the constant NULL.
func TestNullKeptInStructure(t *testing.T) {
	p := program(t, "np_list_tail")
	rep := analyzeProgram(t, p)
	f := only(t, rep, "null_pointer_deref")
	if len(f.Chains) != 1 {
		t.Fatalf("%d chains", len(f.Chains))
	}
	var load, root bool
	for _, s := range f.Chains[0].Steps {
		load = load || s.Kind == bugs.StepLoad && s.Address != 0
		root = root || p.HasLine(s.Site, p.Roots["null_pointer_deref"])
	}
	if !load || !root {
		t.Errorf("the chain lacks the load from the structure or the root line %v:%s", p.Roots["null_pointer_deref"], describe(rep))
	}
	last := f.Chains[0].Steps[len(f.Chains[0].Steps)-1]
	if last.Kind != bugs.StepConst {
		t.Errorf("the chain ends in a %s, not the constant NULL", last.Kind)
	}
}

// TestFreedKeptInStructure: a pointer freed through one structure and
// used later through another; both chains end at the allocation.
func TestFreedKeptInStructure(t *testing.T) {
	p := program(t, "df_two_owners")
	rep := analyzeProgram(t, p)
	f := only(t, rep, "double_free")
	if len(f.Chains) != 2 {
		t.Fatalf("%d chains, want VPC(r) and VPC(r1)", len(f.Chains))
	}
	for _, c := range f.Chains {
		last := c.Steps[len(c.Steps)-1]
		if last.Kind != bugs.StepAlloc {
			t.Errorf("VPC(%s) ends in a %s, not the allocation:%s", c.Var, last.Kind, describe(rep))
		}
	}
}
