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
