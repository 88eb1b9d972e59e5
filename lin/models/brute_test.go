package models_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/mgtrace/mgtrace/lin"
	"github.com/mgtrace/mgtrace/lin/models"
)

// brute decides linearizability by trying every order: every operation
// placed once its real-time predecessors are, optional ones placed or not.
// A partitioned model's keys are checked one by one.
func brute(m lin.Model, h *lin.History) bool {
	pm, ok := m.(lin.Partitioner)
	if !ok {
		return bruteAll(m, h)
	}
	keys := map[string]*lin.History{}
	for _, o := range h.Ops {
		a, err := m.Action(&o)
		if err != nil {
			panic(err)
		}
		k, ok := pm.PartitionKey(a)
		if !ok {
			return bruteAll(m, h)
		}
		if keys[k] == nil {
			keys[k] = &lin.History{}
		}
		keys[k].Ops = append(keys[k].Ops, o)
	}
	for _, sub := range keys {
		if !bruteAll(m, sub) {
			return false
		}
	}
	return true
}

func bruteAll(m lin.Model, h *lin.History) bool { return len(bruteFrom(m, h, m.Init(), true)) > 0 }

// bruteFrom tries every order of h's operations from state start and
// returns the states the complete ones end in (only the first when
// first is set).
func bruteFrom(m lin.Model, h *lin.History, start lin.State, first bool) []lin.State {
	acts := make([]lin.Action, len(h.Ops))
	for k := range h.Ops {
		a, err := m.Action(&h.Ops[k])
		if err != nil {
			panic(err)
		}
		acts[k] = a
	}
	placed := make([]bool, len(h.Ops))
	var finals []lin.State
	var try func(s lin.State) bool
	try = func(s lin.State) bool {
		done := true
		for k := range h.Ops {
			if !placed[k] && !h.Ops[k].Status.Optional() {
				done = false
			}
		}
		if done {
			for _, f := range finals {
				if m.Equal(f, s) {
					return first
				}
			}
			finals = append(finals, s)
			return first
		}
		for k := range h.Ops {
			if placed[k] {
				continue
			}
			ready := true
			for j := range h.Ops {
				if !placed[j] && j != k && h.Ops[j].Precedes(&h.Ops[k]) {
					ready = false
				}
			}
			if !ready {
				continue
			}
			ok, next := m.Step(s, acts[k])
			if !ok {
				continue
			}
			placed[k] = true
			if try(next) {
				placed[k] = false
				return true
			}
			placed[k] = false
		}
		return false
	}
	try(start)
	return finals
}

// gen makes a random operation of a model: name, key, input, and an
// output drawn from a small domain so that both verdicts occur.
type gen func(r *rand.Rand) (name string, key, in, out lin.Value)

func small(r *rand.Rand) lin.Value { return lin.IntValue(int64(r.IntN(3))) }

func maybeNil(r *rand.Rand) lin.Value {
	if r.IntN(4) == 0 {
		return lin.Value{}
	}
	return small(r)
}

var gens = map[string]gen{
	"register": func(r *rand.Rand) (string, lin.Value, lin.Value, lin.Value) {
		if r.IntN(2) == 0 {
			return "write", none, small(r), none
		}
		return "read", none, none, maybeNil(r)
	},
	"cas-register": func(r *rand.Rand) (string, lin.Value, lin.Value, lin.Value) {
		switch r.IntN(3) {
		case 0:
			return "write", none, small(r), none
		case 1:
			return "cas", none, lin.ListValue(maybeNil(r), small(r)), lin.BoolValue(r.IntN(2) == 0)
		}
		return "read", none, none, maybeNil(r)
	},
	"kv": func(r *rand.Rand) (string, lin.Value, lin.Value, lin.Value) {
		k := lin.StringValue(string(rune('a' + r.IntN(2))))
		s := func() lin.Value { return lin.StringValue([]string{"", "x", "y", "xy", "yx"}[r.IntN(5)]) }
		switch r.IntN(3) {
		case 0:
			return "put", k, s(), none
		case 1:
			return "append", k, lin.StringValue([]string{"x", "y"}[r.IntN(2)]), none
		}
		return "get", k, none, s()
	},
	"set": func(r *rand.Rand) (string, lin.Value, lin.Value, lin.Value) {
		switch r.IntN(5) {
		case 0:
			return "add", none, small(r), lin.BoolValue(r.IntN(2) == 0)
		case 1:
			return "add", none, small(r), none
		case 2:
			return "remove", none, small(r), lin.BoolValue(r.IntN(2) == 0)
		case 3:
			return "contains", none, small(r), lin.BoolValue(r.IntN(2) == 0)
		}
		var els []lin.Value
		for k := int64(0); k < 3; k++ {
			if r.IntN(2) == 0 {
				els = append(els, lin.IntValue(k))
			}
		}
		return "read", none, none, lin.ListValue(els...)
	},
	"queue": func(r *rand.Rand) (string, lin.Value, lin.Value, lin.Value) {
		if r.IntN(2) == 0 {
			return "enqueue", none, small(r), none
		}
		return "dequeue", none, none, maybeNil(r)
	},
	"stack": func(r *rand.Rand) (string, lin.Value, lin.Value, lin.Value) {
		if r.IntN(2) == 0 {
			return "push", none, small(r), none
		}
		return "pop", none, none, maybeNil(r)
	},
	"counter": func(r *rand.Rand) (string, lin.Value, lin.Value, lin.Value) {
		switch r.IntN(3) {
		case 0:
			return "inc", none, none, none
		case 1:
			return "add", none, lin.IntValue(int64(r.IntN(3) - 1)), none
		}
		return "read", none, none, lin.IntValue(int64(r.IntN(4)))
	},
	"snapshot": func(r *rand.Rand) (string, lin.Value, lin.Value, lin.Value) {
		if r.IntN(2) == 0 {
			return "write", none, lin.ListValue(lin.IntValue(int64(r.IntN(2))), small(r)), none
		}
		return "read", none, none, lin.ListValue(maybeNil(r), maybeNil(r))
	},
}

// randomHistory lays out n operations of g over up to three clients.
func randomHistory(r *rand.Rand, g gen, n int) *lin.History {
	clients := 1 + r.IntN(3)
	free := make([]int64, clients) // when each client may call next
	h := &lin.History{}
	for k := 0; k < n; k++ {
		c := r.IntN(clients)
		if free[c] < 0 {
			continue // its last operation never returned
		}
		call := free[c] + int64(r.IntN(4))
		o := lin.Op{Client: c, Call: call, Return: call + int64(r.IntN(6))}
		o.Name, o.Key, o.Input, o.Output = g(r)
		switch r.IntN(10) {
		case 0, 2, 3:
			o.Status, o.Return, o.Output = lin.Info, lin.Never, none
		case 1:
			o.Status, o.Output = lin.Unknown, none
		}
		if o.Return == lin.Never {
			free[c] = -1
		} else {
			free[c] = o.Return + 1
		}
		h.Ops = append(h.Ops, o)
	}
	h.Sort()
	return h
}

// TestAgainstBruteForce compares the checker, with its reductions, with
// trying every order, on random small histories of every model.
func TestAgainstBruteForce(t *testing.T) {
	runs := 1500
	if testing.Short() {
		runs = 300
	}
	withBefore := 0
	for _, name := range models.Names() {
		g := gens[name]
		if g == nil {
			t.Fatalf("no generator for model %s", name)
		}
		m, err := models.New(name, lin.Value{})
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(1, uint64(len(name))))
		counts := map[bool]int{}
		for run := 0; run < runs; run++ {
			h := randomHistory(r, g, 2+r.IntN(9))
			want := brute(m, h)
			res, err := lin.Check(context.Background(), m, h, lin.Options{})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got := res.Verdict == lin.Linearizable
			if got != want || res.Verdict == lin.Undecided {
				t.Fatalf("%s run %d: checker says %s, trying every order says %v\n%s", name, run, res.Verdict, want, dump(m, h))
			}
			counts[want]++
			if !want {
				checkCounterexample(t, m, h, res)
				if res.Counterexample.Before > 0 {
					withBefore++
				}
			}
		}
		if counts[true] < runs/10 || counts[false] < runs/10 {
			t.Errorf("%s: %d linearizable and %d not: the generator should give both often", name, counts[true], counts[false])
		}
	}
	if withBefore < runs/20 {
		t.Errorf("only %d counterexamples start after earlier operations: the generator should give more", withBefore)
	}
	t.Logf("%d counterexamples start from the states of earlier operations", withBefore)
}

// checkCounterexample asserts what a counterexample promises: from each
// of its start states (the states its Before earlier operations can
// leave the object in, or the initial one), its operations are not
// linearizable; from some, they are with the operations returning at the
// cut pending; the failing operation is among them; and removing any one
// that precedes the failing one breaks that.
func checkCounterexample(t *testing.T, m lin.Model, h *lin.History, res *lin.Result) {
	t.Helper()
	cx := res.Counterexample
	if cx == nil {
		t.Fatalf("no counterexample\n%s", dump(m, h))
	}
	fail := &h.Ops[cx.Failing]
	starts := []lin.State{m.Init()}
	if cx.Before > 0 {
		// The partition's first Before operations called by the cut.
		key := func(o *lin.Op) string { return "" }
		if pm, ok := m.(lin.Partitioner); ok {
			pkey := func(o *lin.Op) (string, bool) {
				a, _ := m.Action(o)
				return pm.PartitionKey(a)
			}
			all := true
			for k := range h.Ops {
				if _, ok := pkey(&h.Ops[k]); !ok {
					all = false
				}
			}
			if all {
				key = func(o *lin.Op) string { k, _ := pkey(o); return k }
			}
		}
		before := &lin.History{}
		for k := range h.Ops {
			o := h.Ops[k]
			if len(before.Ops) < cx.Before && o.Call <= cx.Cut && key(&o) == key(fail) {
				o.ID = len(before.Ops)
				before.Ops = append(before.Ops, o)
			}
		}
		starts = bruteFrom(m, before, m.Init(), false)
	}
	if len(starts) != len(cx.Start) {
		t.Fatalf("counterexample starts from %d states %v, trying every order gives %d\n%s", len(cx.Start), cx.Start, len(starts), dump(m, h))
	}
	failing := -1
	for k := range cx.Operations {
		if cx.Operations[k].ID == cx.Failing {
			failing = k
		}
	}
	if failing < 0 {
		t.Fatalf("failing op %d not in the counterexample %v\n%s", cx.Failing, cx.Ops, dump(m, h))
	}
	isCounter := func(ops []lin.Op) bool {
		for _, st := range starts {
			if len(bruteFrom(m, renumber(ops, -1), st, true)) > 0 {
				return false
			}
		}
		for _, st := range starts {
			if len(bruteFrom(m, renumber(ops, cx.Cut), st, true)) > 0 {
				return true
			}
		}
		return false
	}
	if !isCounter(cx.Operations) {
		t.Fatalf("counterexample %v (starts %v) is linearizable, or fails with its failing op pending\n%s", cx.Ops, cx.Start, dump(m, h))
	}
	for k := range cx.Operations {
		if !cx.Operations[k].Precedes(&cx.Operations[failing]) {
			continue
		}
		var less []lin.Op
		for j := range cx.Operations {
			if j != k {
				less = append(less, cx.Operations[j])
			}
		}
		if isCounter(less) {
			t.Fatalf("counterexample %v is not minimal: without op %d it still fails the same way\n%s", cx.Ops, cx.Operations[k].ID, dump(m, h))
		}
	}
}

// renumber copies ops, with those returning at cut (-1: none) made
// pending, and numbers them from 0.
func renumber(ops []lin.Op, cut int64) *lin.History {
	h := &lin.History{}
	for _, o := range ops {
		if o.Return == cut {
			o.Status, o.Return, o.Output = lin.Pending, lin.Never, lin.Value{}
		}
		o.ID = len(h.Ops)
		h.Ops = append(h.Ops, o)
	}
	return h
}

func dump(m lin.Model, h *lin.History) string {
	s := ""
	for _, o := range h.Ops {
		s += fmtOp(m, &o) + "\n"
	}
	return s
}

func fmtOp(m lin.Model, o *lin.Op) string {
	ret := "never"
	if o.Return != lin.Never {
		ret = lin.IntValue(o.Return).String()
	}
	return lin.IntValue(int64(o.ID)).String() + ": client " + lin.IntValue(int64(o.Client)).String() + " [" + lin.IntValue(o.Call).String() + ", " + ret + "] " + lin.DescribeOp(m, o)
}
