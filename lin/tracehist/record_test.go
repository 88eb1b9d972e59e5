package tracehist

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/lin"
	"github.com/mgtrace/mgtrace/schema"
)

// TestExtractRecorded records testdata/programs/lin/ops_probe.c and
// checks the histories that ops_probe.lin gives, operation by operation.
func TestExtractRecorded(t *testing.T) {
	if testing.Short() {
		t.Skip("records a program under Valgrind")
	}
	const prog = "lin/ops_probe"
	bin := testprog.Build(t, prog)
	out, err := exec.Command(bin).Output()
	if err != nil || string(out) != "ops_probe one 0 two 4\n" {
		t.Fatalf("%s natively: %q, %v", bin, out, err)
	}
	trace := testprog.Record(t, bin)
	ops, err := ReadOps(filepath.Join(testprog.Root(t), "testdata", "programs", "lin", "ops_probe.lin"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := schema.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ex, err := Extract(r, ops, Options{})
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	if len(ex.Warnings) != 0 {
		t.Errorf("warnings: %q", ex.Warnings)
	}
	wantCalls := map[string]int{
		"stk_push": 6, "stk_push_name": 1, "stk_try_push": 2, "stk_pop": 4, "stk_wait_pop": 1,
		"stk_has": 1, "stk_fill": 4, "stk_top2": 1, "stk_peek": 1,
	}
	if fmt.Sprint(ex.Calls) != fmt.Sprint(wantCalls) {
		t.Errorf("calls = %v, want %v", ex.Calls, wantCalls)
	}
	if len(ex.Histories) != 2 {
		t.Fatalf("%d histories, want 2 (s1, s2)", len(ex.Histories))
	}

	type want struct {
		name, marker, caller string
		key, input, output   lin.Value
		status               lin.Status
	}
	i, s, nilv := lin.IntValue, lin.StringValue, lin.Value{}
	l := lin.ListValue
	wants := [][]want{{ // s1
		{"push", "CALL-MAIN", "main", nilv, i(1), nilv, lin.OK},
		{"push", "CALL-A1", "worker_a", nilv, i(10), nilv, lin.OK},
		{"pop", "CALL-A2", "worker_a", nilv, nilv, i(10), lin.OK},
		{"pop", "CALL-A3", "worker_a", nilv, nilv, i(1), lin.OK},
		{"pop", "CALL-A4", "worker_a", nilv, nilv, nilv, lin.OK},
		{"contains", "CALL-A5", "worker_a", nilv, i(10), lin.BoolValue(false), lin.OK},
		{"push", "CALL-A6", "worker_a", s("one"), s("hello"), nilv, lin.OK},
		{"pop", "CALL-A7", "worker_a", nilv, nilv, i(5), lin.OK},
	}, { // s2
		{"fill", "CALL-B1", "worker_b", nilv, i(3), i(3), lin.OK},
		{"push", "CALL-B2", "worker_b", nilv, i(7), nilv, lin.OK},
		{"read", "CALL-B4", "worker_b", nilv, nilv, l(i(7), i(3)), lin.OK},
		{"peek", "CALL-B5", "worker_b", nilv, nilv, l(i(107), i(-7), i(4)), lin.OK},
		{"pop", "CALL-C1", "worker_c", nilv, nilv, nilv, lin.Pending},
	}}
	objectSource := regexp.MustCompile(`^` + regexp.QuoteMeta(trace) + ` object 0x[0-9a-f]+$`)
	clients := make(map[string]int) // caller -> client
	for k, h := range ex.Histories {
		if h.Model != "stack" || !h.Init.Equal(lin.ListValue()) || !objectSource.MatchString(h.Source) {
			t.Errorf("history %d: model %q init %v source %q", k, h.Model, h.Init, h.Source)
		}
		if wantDropped := k; h.Dropped != wantDropped { // s2's failed try_push(8)
			t.Errorf("history %d: %d dropped, want %d", k, h.Dropped, wantDropped)
		}
		if len(h.Ops) != len(wants[k]) {
			for _, o := range h.Ops {
				t.Logf("  %+v", o)
			}
			t.Fatalf("history %d: %d operations, want %d", k, len(h.Ops), len(wants[k]))
		}
		for n, w := range wants[k] {
			o := h.Ops[n]
			src := fmt.Sprintf("ops_probe.c:%d (%s)", testprog.Line(t, prog, "/* "+w.marker+" */"), w.caller)
			if o.Name != w.name || o.Source != src || !o.Key.Equal(w.key) || !o.Input.Equal(w.input) ||
				!o.Output.Equal(w.output) || o.Status != w.status || o.ID != n {
				t.Errorf("history %d op %d = %s key %v status %s at %s, want %s key %v -> %v (%s) at %s",
					k, n, o.Describe(), o.Key, o.Status, o.Source, w.name, w.key, w.output, w.status, src)
			}
			if w.status == lin.Pending {
				if o.Return != lin.Never {
					t.Errorf("pending op %d returns at %d", n, o.Return)
				}
			} else if o.Call >= o.Return {
				t.Errorf("history %d op %d: call %d, return %d", k, n, o.Call, o.Return)
			}
			if c, ok := clients[w.caller]; ok && c != o.Client {
				t.Errorf("%s's operations have clients %d and %d", w.caller, c, o.Client)
			}
			clients[w.caller] = o.Client
		}
	}
	seen := make(map[int]string)
	for caller, c := range clients {
		if other, ok := seen[c]; ok {
			t.Errorf("%s and %s share client %d", caller, other, c)
		}
		seen[c] = caller
	}
	if ex.Histories[0].Source == ex.Histories[1].Source {
		t.Errorf("both histories are %s", ex.Histories[0].Source)
	}
}
