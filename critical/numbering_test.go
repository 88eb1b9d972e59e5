package critical

import (
	"path/filepath"
	"testing"

	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/points"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/slice"
)

// TestNumberingMatchesPoints checks the candidates' FILE:LINE#N against
// the contract record uses: for every branch, call and anchor instance of
// the program's code in committed traces (all instances taken as the
// slice), package points' InstanceOf gives the same N, and the
// candidates come nearest first.
func TestNumberingMatchesPoints(t *testing.T) {
	dir := filepath.Join(testprog.Root(t), "testdata", "traces")
	for _, name := range []string{"list", "wild", "threads", "tree"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name+".trace")
			r, err := schema.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			run, err := slice.Load(r, slice.LoadOptions{})
			r.Close()
			if err != nil {
				t.Fatal(err)
			}
			all := make([]uint32, run.Instances())
			for i := range all {
				all[i] = uint32(i)
			}
			st := classify(run)
			preds, others, stmts := candidates(run, st, all, nil, nil, uint32(len(all)))
			if len(others) != 0 {
				t.Errorf("%d predicates beyond a slice that holds everything", len(others))
			}
			if len(preds) == 0 || len(stmts) == 0 {
				t.Fatalf("%d predicates, %d statements", len(preds), len(stmts))
			}
			checked := 0
			for _, group := range []struct {
				kind  points.Kind
				found []found
			}{{points.Switch, preds}, {points.Suppress, stmts}} {
				sampled := 0
				for k, f := range group.found {
					if k > 0 && f.inst >= group.found[k-1].inst {
						t.Errorf("%s candidate %d (instance %d) after instance %d: not nearest first", group.kind, k, f.inst, group.found[k-1].inst)
					}
					if !f.exact || k%7 != 0 || sampled == 15 { // a sample: each check walks the trace
						continue
					}
					sampled++
					l := st.lines[f.line]
					rule, err := points.TraceRule(run.Tables, group.kind, l.file, int(l.line))
					if err != nil {
						t.Fatalf("%s %s:%d: %v", group.kind, l.file, l.line, err)
					}
					tr, err := schema.Open(path)
					if err != nil {
						t.Fatal(err)
					}
					n, err := points.InstanceOf(tr, rule, uint64(f.inst))
					tr.Close()
					if err != nil {
						t.Fatalf("%s %s:%d instance %d: %v", group.kind, l.file, l.line, f.inst, err)
					}
					if n != uint64(f.n) {
						t.Errorf("%s %s:%d instance %d: #%d, points says #%d", group.kind, l.file, l.line, f.inst, f.n, n)
					}
					checked++
				}
			}
			if checked == 0 {
				t.Fatal("nothing checked")
			}
			t.Logf("%d predicates, %d statements; %d numbers checked", len(preds), len(stmts), checked)
		})
	}
}

// TestPotentialOutsideSlice: the potential dependences of a crash's slice
// are branches of the program's code that are not in the slice.
func TestPotentialOutsideSlice(t *testing.T) {
	total := 0
	for _, name := range []string{"wild", "list"} {
		path := filepath.Join(testprog.Root(t), "testdata", "traces", name+".trace")
		r, err := schema.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		run, err := slice.Load(r, slice.LoadOptions{})
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		// list exits normally: slice its last instruction instead.
		p := slice.Point{Label: "last", Insts: []uint32{uint32(run.Instances() - 1)}, Last: int64(run.Instances() - 1)}
		if run.Crash >= 0 {
			p = slice.Point{Label: "crash", Insts: []uint32{uint32(run.Crash)}, Last: run.Crash}
		}
		res, err := slice.Slice(run, p, slice.Options{NoEdges: true})
		if err != nil {
			t.Fatal(err)
		}
		st := classify(run)
		pot := potential(run, st, res.Members)
		member := make(map[uint32]bool)
		for _, m := range res.Members {
			member[m] = true
		}
		for i := range pot {
			if member[i] {
				t.Errorf("%s: potential dependence %d is in the slice", name, i)
			}
			if st.role[run.StaticOf(i).ID] != rolePred {
				t.Errorf("%s: potential dependence %d is not a branch of the program's code", name, i)
			}
		}
		t.Logf("%s: %d members, %d potential dependences", name, len(res.Members), len(pot))
		total += len(pot)
	}
	if total == 0 {
		t.Error("no potential dependence in either trace: nothing was checked")
	}
}
