package inputs

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/slice"
)

// TestCollect checks that collecting the tables every 4096 instances
// changes no answer: fig45's sets at each of its marked lines are the same
// as without collections.
func TestCollect(t *testing.T) {
	bin := testprog.Build(t, "inputs/fig45", testprog.Flags("-g", "-O0", "-fno-omit-frame-pointer"))
	in := filepath.Join(t.TempDir(), "input")
	if err := os.WriteFile(in, []byte("body\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	trace := testprog.Record(t, bin, in)
	r, err := schema.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	ents, err := Read(r)
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	if r, err = schema.Open(trace); err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	run, err := slice.Load(r, slice.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, marker := range []string{"ret", "next", "cmp", "tag"} {
		p, err := run.Resolve(slice.Criterion{Kind: slice.ByLine, File: "fig45.c", Line: uint32(testprog.Line(t, "inputs/fig45", "//@ "+marker))})
		if err != nil {
			t.Fatal(err)
		}
		// Every source, the loader's reads too: many sets to collect.
		all := []SourceKind{SourceFile, SourceStdin, SourceSocket, SourcePipe, SourceOther, SourceModule}
		want, err := Analyze(run, ents, p, Options{Sources: all})
		if err != nil {
			t.Fatal(err)
		}
		got, err := Analyze(run, ents, p, Options{Sources: all, gcLimit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if got.Stats.Collections < 10 {
			t.Errorf("%s: %d collections, want one every 4096 instances", marker, got.Stats.Collections)
		}
		if !reflect.DeepEqual(got.Der, want.Der) || !reflect.DeepEqual(got.Cinf, want.Cinf) || !reflect.DeepEqual(got.Ainf, want.Ainf) {
			t.Errorf("%s: the sets differ with collections:\n got %v %v %v\nwant %v %v %v", marker,
				got.Der, len(got.Cinf), len(got.Ainf), want.Der, len(want.Cinf), len(want.Ainf))
		}
		if len(want.Cinf) == 0 {
			t.Errorf("%s: no CINF: the test compares nothing", marker)
		}
	}
}
