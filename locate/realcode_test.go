package locate

import (
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/internal/testprog"
)

// TestRealCodeForms checks the forms for real code (connections over
// chosen slots, count and sum, global constraints, % & ~, the attribute
// cycle rule, edge arrays) on small runs of the suite's dlist
// (struct dnode {key; next; prev}) and chash.
func TestRealCodeForms(t *testing.T) {
	if testing.Short() {
		t.Skip("records two programs")
	}
	dlist := testprog.Record(t, testprog.Build(t, "ds/dlist"), "1", "20", "40")
	chash := testprog.Record(t, testprog.Build(t, "ds/chash"), "1", "40", "60")
	const dnode = "dnode FIELD 3 EDGE 2;\n"
	cases := []struct {
		name, trace, spec string
		bad               bool // some C-point has a violation
		cycle             bool // ... noted "cycle"
	}{
		{"acyclic over next", dlist, dnode + "dnode X; dnode Y; X ~>[2] Y => Y !~>[2] X;", false, false},
		{"acyclic over all slots", dlist, dnode + "dnode X; dnode Y; X ~> Y => Y !~> X;", true, false},
		{"next has prev back", dlist, dnode + "dnode X; dnode Y; X ->[2] Y => Y ->[3] X;", false, false},
		{"next has next back", dlist, dnode + "dnode X; dnode Y; X ->[2] Y => Y ->[2] X;", true, false},
		{"chosen paths enumerate", dlist, dnode + "dnode X; dnode Y; X ~>[2] Y => X !~>[3] Y;", false, false},
		{"one first, one last", dlist, dnode + "count(dnode X : X[3] == NULL) <= 1;\ncount(dnode X : X[2] == NULL) <= 1;", false, false},
		{"count and sum agree", dlist, dnode + "dnode X; sum(dnode N, 1) == count(dnode N) and count(dnode N : N ~>[2] X) + count(dnode N : X ~>[2] N) + 1 == count(dnode N);", false, false},
		{"a global count fails", dlist, dnode + "count(dnode X) <= 10;", true, false},
		{"% & ~", dlist, dnode + "dnode X; X[1] % 100000 == X[1] and X[1] & 0 == 0 and X[1] & -1 == X[1] and ~X[1] == -X[1] - 1 and -7 % 3 == -1;", false, false},
		{"% 0 is undefined", dlist, dnode + "dnode X; X[1] % 0 != 1 + X[1] % 0;", true, false},
		{"an attribute over next only", dlist, dnode + "dnode.LEN DEFAULT 0;\ndnode X; X.LEN = (X[2]).LEN + 1;\ndnode X; X.LEN >= 1;", false, false},
		{"an attribute over both links", dlist, dnode + "dnode.B DEFAULT 0;\ndnode X; X.B = (X[2]).B + (X[3]).B + 1;\ndnode X; X.B >= 1;", true, true},
		{"bucket slots are edges", chash, "entry FIELD 2 EDGE 1;\ndict FIELD 10 EDGE 2;\nARRAY bucket OF 8 EDGE;\nbucket ALLOC table_alloc;\ncount(entry E : E.INDEGREE == 0) == 0;\nbucket B; entry E; B -> E => E.INDEGREE == 1;\ndict D; D[5] + D[6] == count(entry E : (D[9]) ~> E or (D[10]) ~> E);", false, false},
		{"plain arrays have no edges", chash, "entry FIELD 2 EDGE 1;\nARRAY bucket OF 8;\nbucket ALLOC table_alloc;\ncount(entry E : E.INDEGREE == 0) == 0;", true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ses := traceSpec(t, tc.trace, tc.spec)
			bad, cycle, points := false, false, 0
			ses.Check(func(r PointResult) bool {
				points++
				for _, v := range r.Violations {
					bad = true
					cycle = cycle || v.Cycle
				}
				return true
			})
			if points < 10 {
				t.Fatalf("%d C-points", points)
			}
			if bad != tc.bad || cycle != tc.cycle {
				t.Errorf("violations %v (cycle %v), want %v (cycle %v)", bad, cycle, tc.bad, tc.cycle)
			}
		})
	}
}

// TestRealCodeLocateGlobal traces a global constraint's violation (no
// node) back: the eleventh node's creation introduced it.
func TestRealCodeLocateGlobal(t *testing.T) {
	if testing.Short() {
		t.Skip("records a program")
	}
	trace := testprog.Record(t, testprog.Build(t, "ds/dlist"), "1", "20", "40")
	ses := traceSpec(t, trace, "dnode FIELD 3 EDGE 2;\ncount(dnode X) <= 10;\n")
	res, err := ses.Locate()
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Violations) != 1 || len(res.Violations[0].Nodes) != 0 {
		t.Fatalf("violations %+v, want one without nodes", res.Violations)
	}
	if len(res.Faults) != 1 || len(res.Faults[0].Ops) != 1 || res.Faults[0].Ops[0].Kind != "create" {
		t.Fatalf("faults %+v, want one: the eleventh node's creation", res.Faults)
	}
	if len(res.Pending) > 0 {
		t.Errorf("pending %+v", res.Pending)
	}
	if !strings.Contains(res.Faults[0].Why, "introduced") {
		t.Errorf("why %q", res.Faults[0].Why)
	}
}
