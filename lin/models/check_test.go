package models_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/mgtrace/mgtrace/lin"
	"github.com/mgtrace/mgtrace/lin/models"
)

// op builds an operation for the tables below.
func op(client int, name string, in, out lin.Value, call, ret int64) lin.Op {
	return lin.Op{Client: client, Name: name, Input: in, Output: out, Call: call, Return: ret}
}

var (
	i    = lin.IntValue
	l    = lin.ListValue
	b    = lin.BoolValue
	none = lin.Value{}
)

// pairSnapshot is the history of figure 3 of Chen, Zhang, Wu and Zhang,
// "Automatic Localization of Linearizability Faults": thread 1 writes
// (0,2), (1,2), (1,1), (0,1) in turn while thread 2 reads once; the
// cells start at <1,1>.
func pairSnapshot(read lin.Value) *lin.History {
	h := &lin.History{Ops: []lin.Op{
		op(1, "write", l(i(0), i(2)), none, 0, 2),
		op(2, "read", none, read, 1, 8),
		op(1, "write", l(i(1), i(2)), none, 3, 4),
		op(1, "write", l(i(1), i(1)), none, 5, 6),
		op(1, "write", l(i(0), i(1)), none, 7, 9),
	}}
	h.Sort()
	return h
}

func check(t *testing.T, model string, init lin.Value, h *lin.History) *lin.Result {
	t.Helper()
	m, err := models.New(model, init)
	if err != nil {
		t.Fatal(err)
	}
	res, err := lin.Check(context.Background(), m, h, lin.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestPairSnapshotFigure3(t *testing.T) {
	for _, tc := range []struct {
		read lin.Value
		want lin.Verdict
	}{
		{l(i(1), i(2)), lin.NotLinearizable},
		{l(i(2), i(1)), lin.Linearizable},
		{l(i(2), i(2)), lin.Linearizable},
		{l(i(1), i(1)), lin.Linearizable},
	} {
		h := pairSnapshot(tc.read)
		res := check(t, "snapshot", l(i(1), i(1)), h)
		if res.Verdict != tc.want {
			t.Errorf("read -> %s: verdict %s, want %s", tc.read, res.Verdict, tc.want)
			continue
		}
		if tc.want != lin.NotLinearizable {
			continue
		}
		cx := res.Counterexample
		if cx == nil {
			t.Fatalf("read -> %s: no counterexample", tc.read)
		}
		// The read and the four writes it overlaps.
		if got := fmt.Sprint(cx.Ops); got != "[0 1 2 3 4]" {
			t.Errorf("counterexample ops %s, want all five", got)
		}
		if cx.Failing != 1 || h.Ops[cx.Failing].Name != "read" {
			t.Errorf("failing op %d, want the read (1)", cx.Failing)
		}
		if !cx.Minimal || len(cx.Longest) == 0 {
			t.Errorf("minimal %v, %d partial linearizations", cx.Minimal, len(cx.Longest))
		}
		for _, p := range cx.Longest {
			if p.Blocked != 1 {
				t.Errorf("partial %v blocked by %d, want the read", p.Ops, p.Blocked)
			}
		}
	}
}
