package locate

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/locate/spec"
	"github.com/mgtrace/mgtrace/schema"
)

// session records prog (already built) with args, parses src as a spec
// and returns a session on the run.
func session(t *testing.T, prog string, src string, args ...string) (*Session, *Run) {
	t.Helper()
	return traceSpecRun(t, testprog.Record(t, prog, args...), "test.spec", src)
}

// traceSpec opens a session with the spec src on a recorded trace.
func traceSpec(t *testing.T, trace, src string) *Session {
	t.Helper()
	ses, _ := traceSpecRun(t, trace, "test.spec", src)
	return ses
}

// traceSpecRun is traceSpec with the spec's file name (for its errors)
// that also returns the loaded run.
func traceSpecRun(t *testing.T, trace, name, src string) (*Session, *Run) {
	t.Helper()
	s, err := spec.Parse(name, []byte(src))
	if err != nil {
		t.Fatalf("parse:\n%v\nspec:\n%s", err, src)
	}
	run, ses, err := Open(trace, s)
	if err != nil {
		t.Fatal(err)
	}
	return ses, run
}

// checkAll returns the check's results at every C-point.
func checkAll(ses *Session) []PointResult {
	var out []PointResult
	ses.Check(func(r PointResult) bool {
		out = append(out, r)
		return true
	})
	return out
}

// faultLines returns the source lines of the faults a result reports.
func faultLines(res *Result) []int {
	var out []int
	for _, f := range res.Faults {
		out = append(out, int(f.Line))
	}
	return out
}

func TestSemantics(t *testing.T) {
	bin := testprog.Build(t, "specsem")
	line := func(marker string) int { return testprog.Line(t, "specsem", marker) }
	cases := []struct {
		name, mode, spec string
		// points: the C-point kinds in order; bad: which of them have violations
		points []PointKind
		bad    []bool
		// the violations at the first bad point, as constraint index and node count
		wantViol []string
		fault    int // the line fault location must report alone
	}{
		{
			name: "array with a line C-point", mode: "shard",
			spec:   fmt.Sprintf("ARRAY shard;\nshard ALLOC make_shard;\nCPOINT specsem.c:%d;\nshard X; for I in 1 to 15, X[I] < X[I+1];\n", line("/* SHARD-CHECK */")),
			points: []PointKind{PointLine, PointLine, PointEnd}, bad: []bool{false, true, true},
			wantViol: []string{"c1{n1; I=9}"},
			fault:    line("/* SHARD-BREAK */"),
		},
		{
			name: "array slot past the end is skipped", mode: "shard",
			spec:   "ARRAY shard;\nshard ALLOC make_shard;\nshard X; for I in 10 to 20, X[I] <= X[I+1];\n",
			points: []PointKind{PointEnd}, bad: []bool{false},
		},
		{
			name: "cycle: path constraint and attribute", mode: "cycle",
			spec: "bnode FIELD 3 EDGE 2;\nbnode.HEIGHT;\n" +
				"bnode X; X.ISLEAF == true => X.HEIGHT = 0 || X.HEIGHT = ((X[2]).HEIGHT >= (X[3]).HEIGHT) ? (X[2]).HEIGHT + 1 : (X[3]).HEIGHT + 1;\n" +
				"CPOINT check_point ENTRY;\n" +
				"bnode X; (X[2]).HEIGHT - (X[3]).HEIGHT <= 1 and (X[2]).HEIGHT - (X[3]).HEIGHT >= -1;\n" +
				"bnode X; bnode Y; X ~> Y => Y !~> X;\n",
			points:   []PointKind{PointEntry, PointEntry, PointEnd},
			bad:      []bool{false, true, true},
			wantViol: []string{"c1{n1}", "c1{n3}", "c2{n1, n1}", "c2{n1, n3}", "c2{n3, n1}", "c2{n3, n3}"},
			fault:    line("/* CYCLE-BREAK */"),
		},
		{
			name: "existential: next is NULL or a node", mode: "wild",
			spec:     "lnode FIELD 2 EDGE 1;\nlnode X; lnode Y; X[2] != NULL => (X[2]) == Y;\n",
			points:   []PointKind{PointRequest, PointRequest, PointEnd},
			bad:      []bool{false, true, true},
			wantViol: []string{"c1{n2}"},
			fault:    line("/* WILD-BREAK */"),
		},
		{
			name: "degrees: a list node has one successor at most", mode: "wild",
			spec:   "lnode FIELD 2 EDGE 1;\nlnode X; X.OUTDEGREE <= 1 and X.INDEGREE <= 1;\nlnode X; X.ISROOT == true => X.EXTERNAL == true and X.INTERNAL == false;\n",
			points: []PointKind{PointRequest, PointRequest, PointEnd},
			bad:    []bool{false, false, false},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ses, _ := session(t, bin, tc.spec, tc.mode)
			res := checkAll(ses)
			if len(res) != len(tc.points) {
				t.Fatalf("%d C-points, want %d: %+v", len(res), len(tc.points), res)
			}
			first := -1
			for i, r := range res {
				if r.Point.Kind != tc.points[i] {
					t.Errorf("C-point %d is %v, want %v", i+1, r.Point.Kind, tc.points[i])
				}
				if got := len(r.Violations) > 0; got != tc.bad[i] {
					t.Errorf("C-point %d (%s): violations %v, want %v", i+1, r.Point.Label, r.Violations, tc.bad[i])
				}
				if first < 0 && len(r.Violations) > 0 {
					first = i
				}
			}
			if tc.wantViol == nil {
				return
			}
			var got []string
			for _, v := range res[first].Violations {
				got = append(got, v.inc.String())
			}
			if strings.Join(got, " ") != strings.Join(tc.wantViol, " ") {
				t.Errorf("violations at the first bad C-point: %v, want %v", got, tc.wantViol)
			}
			ses2, _ := session(t, bin, tc.spec, tc.mode)
			loc, err := ses2.Locate()
			if err != nil {
				t.Fatal(err)
			}
			if lines := faultLines(loc); len(lines) != 1 || lines[0] != tc.fault {
				t.Errorf("faulty lines %v, want [%d]", lines, tc.fault)
			}
			if len(loc.Pending) != 0 {
				t.Errorf("pending at the start: %v", loc.Pending)
			}
		})
	}
}

// TestSpecErrorsNeedTypes: a spec type without debug info and without a
// binding is a clear error.
func TestUnboundTypeWithoutDebugInfo(t *testing.T) {
	bin := testprog.Build(t, "specsem")
	trace := testprog.Record(t, bin, "wild")
	s, err := spec.Parse("x.spec", []byte("nosuch FIELD 2 EDGE 1;\nnosuch X; X.OUTDEGREE <= 1;\n"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := schema.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	run, err := Load(r, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(run, s)
	if err == nil || !strings.Contains(err.Error(), "no debug info for struct nosuch") {
		t.Errorf("New: %v, want an error about struct nosuch", err)
	}
}

func TestMain(m *testing.M) {
	os.Exit(m.Run())
}

// TestExposed: an unlink that leaves a node reached only through a
// cursor node passes its C-point; the later correct free of the cursor,
// or the clearing of its link, makes the inconsistency appear. Fault
// location reports the unlink first, above the exposing change.
func TestExposed(t *testing.T) {
	bin := testprog.Build(t, "specsem")
	line := func(marker string) int { return testprog.Line(t, "specsem", marker) }
	src := "lnode FIELD 2 EDGE 1;\nlnode X; X[1] >= 2 => X.INDEGREE >= 1;\n"
	for _, tc := range []struct{ mode, marker string }{
		{"expose-free", "/* EXPOSE-FREE */"},
		{"expose-store", "/* EXPOSE-STORE */"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			ses, _ := session(t, bin, src, tc.mode)
			res, err := ses.Locate()
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range res.Faults {
				t.Logf("%d. line %d: %s", f.Rank, f.Line, f.Why)
			}
			want := []int{line("/* EXPOSE-UNLINK */"), line(tc.marker)}
			if got := faultLines(res); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("faulty lines %v, want %v", got, want)
			}
			if f := res.Faults[0]; !strings.Contains(f.Why, "reachable only through the unlinked node") || f.Ops[len(f.Ops)-1].ExposedBy != res.Faults[1].Ops[0].TS {
				t.Errorf("the unlink's why %q, exposed by %d, want the exposing change %d", f.Why, f.Ops[len(f.Ops)-1].ExposedBy, res.Faults[1].Ops[0].TS)
			}
			if !strings.Contains(res.Faults[1].Why, whyExposes) {
				t.Errorf("the exposing change's why %q", res.Faults[1].Why)
			}
		})
	}
}
