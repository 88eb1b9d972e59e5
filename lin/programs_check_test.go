package lin_test

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/lin"
	"github.com/mgtrace/mgtrace/lin/models"
	"github.com/mgtrace/mgtrace/lin/tracehist"
	"github.com/mgtrace/mgtrace/schema"
)

// checkTrace extracts the histories of a recorded run with the program's
// operations file and checks each against the file's model.
func checkTrace(t *testing.T, trace, opsPath string) ([]*lin.Result, []*lin.History, lin.Model) {
	t.Helper()
	ops, err := tracehist.ReadOps(opsPath)
	if err != nil {
		t.Fatal(err)
	}
	r, err := schema.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	x, err := tracehist.Extract(r, ops, tracehist.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Warnings) > 0 {
		t.Errorf("extraction warnings: %q", x.Warnings)
	}
	m, err := models.New(x.Model, x.Init)
	if err != nil {
		t.Fatal(err)
	}
	var results []*lin.Result
	for _, h := range x.Histories {
		res, err := lin.Check(context.Background(), m, h, lin.Options{Timeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, res)
	}
	return results, x.Histories, m
}

// TestProgramsLinearizability is the acceptance of the programs in
// testdata/programs/lin: each FAULTY build, recorded in the interleaving
// that shows its fault, is not linearizable, and the operation that could
// not be placed is named by its source line in the program; each correct
// build is linearizable on ten recorded runs with different
// interleavings.
func TestProgramsLinearizability(t *testing.T) {
	if testing.Short() {
		t.Skip("records 55 runs")
	}
	root := testprog.Root(t)
	for _, p := range linPrograms {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			opsPath := filepath.Join(root, "testdata", "programs", "lin", p.name+".lin")
			correct, faulty := buildBoth(t, p.name)

			trace, _ := testprog.RecordOutput(t, faulty, "bad")
			results, hs, m := checkTrace(t, trace, opsPath)
			if len(results) != 1 {
				t.Fatalf("faulty bad: %d histories, want 1 (one object)", len(results))
			}
			res, h := results[0], hs[0]
			if res.Verdict != lin.NotLinearizable || res.Counterexample == nil {
				t.Fatalf("faulty bad: %s, want not linearizable with a counterexample", res.Verdict)
			}
			f := &h.Ops[res.Counterexample.Failing]
			if !strings.HasPrefix(f.Source, p.name+".c:") {
				t.Errorf("faulty bad: the operation that could not be placed, %s, is at %q, want a line of %s.c", lin.DescribeOp(m, f), f.Source, p.name)
			}
			t.Logf("faulty bad: %s could not be placed (%s); counterexample of %d operations", lin.DescribeOp(m, f), f.Source, len(res.Counterexample.Ops))

			for seed := 1; seed <= 10; seed++ {
				trace, _ := testprog.RecordOutput(t, correct, "seed", strconv.Itoa(seed))
				results, _, _ := checkTrace(t, trace, opsPath)
				for _, res := range results {
					if res.Verdict != lin.Linearizable {
						t.Errorf("correct seed %d: %s (%d operations)", seed, res.Verdict, res.Operations)
					}
				}
			}
		})
	}
}
