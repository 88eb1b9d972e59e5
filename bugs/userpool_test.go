package bugs_test

import (
	"testing"

	"github.com/mgtrace/mgtrace/bugs"
	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/schema"
)

// TestUserAllocator: a program's own pool allocator, named with
// Options.Allocators and Deallocators, gives blocks like malloc's: its
// double free and an overflow of a slot are found; without the names the
// pool's arena is a global and nothing is.
func TestUserAllocator(t *testing.T) {
	bin := testprog.Build(t, "userpool")
	trace := testprog.Record(t, bin)
	analyze := func(opt bugs.Options) *bugs.Report {
		tr, err := schema.Open(trace)
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		rep, err := bugs.Analyze(tr, opt)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	rep := analyze(bugs.Options{Allocators: []string{"pool_alloc"}, Deallocators: []string{"pool_free"}})
	df := only(t, rep, "double_free")
	if int(df.Where.Line) != testprog.Line(t, "userpool", "/* SECOND-FREE */") {
		t.Errorf("double free at line %d", df.Where.Line)
	}
	if df.Block == nil || df.Block.Free == nil || int(df.Block.Free.Line) != testprog.Line(t, "userpool", "/* FIRST-FREE */") || df.Block.Family != "user" {
		t.Errorf("double free's block: %+v", df.Block)
	}
	ov := only(t, rep, "heap_buffer_overflow")
	if int(ov.Where.Line) != testprog.Line(t, "userpool", "/* OVERFLOW */") {
		t.Errorf("overflow at line %d", ov.Where.Line)
	}
	if rep := analyze(bugs.Options{}); len(rep.Findings) != 0 {
		t.Errorf("without the pool's names:%s", describe(rep))
	}
}
