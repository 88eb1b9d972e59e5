package models

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mgtrace/mgtrace/lin"
)

// counter is an integer with add (inc adds 1) and read.
type counter struct{ init int64 }

func newCounter(init lin.Value) (lin.Model, error) {
	switch init.Kind {
	case lin.Nil:
		return counter{}, nil
	case lin.Int:
		return counter{init: init.I}, nil
	}
	return nil, fmt.Errorf("the initial value must be an integer, not %s", init)
}

type counterAction struct {
	read  bool
	delta int64
	out   output
}

func (c counter) Name() string                     { return "counter" }
func (c counter) Init() lin.State                  { return c.init }
func (c counter) Hash(s lin.State) uint64          { return uint64(s.(int64)) * 0x9e3779b97f4a7c15 }
func (c counter) Equal(s, t lin.State) bool        { return s.(int64) == t.(int64) }
func (c counter) DescribeState(s lin.State) string { return strconv.FormatInt(s.(int64), 10) }

func (c counter) Action(op *lin.Op) (lin.Action, error) {
	switch op.Name {
	case "read", "get":
		a := &counterAction{read: true, out: outputOf(op)}
		if a.out.known && a.out.v.Kind != lin.Int {
			return nil, fmt.Errorf("read must return an integer, not %s", a.out.v)
		}
		return a, nil
	case "add", "inc", "increment":
		switch op.Input.Kind {
		case lin.Nil:
			return &counterAction{delta: 1}, nil
		case lin.Int:
			return &counterAction{delta: op.Input.I}, nil
		}
		return nil, fmt.Errorf("%s needs an integer, not %s", op.Name, op.Input)
	}
	return nil, unknownOp("counter", op)
}

func (c counter) Step(s lin.State, a lin.Action) (bool, lin.State) {
	n := s.(int64)
	act := a.(*counterAction)
	if act.read {
		return !act.out.known || act.out.v.I == n, s
	}
	return true, n + act.delta
}

func (c counter) ReadOnly(a lin.Action) bool { return a.(*counterAction).read }

func (c counter) Describe(op *lin.Op) string {
	return describe(op, op.Name == "read" || op.Name == "get")
}

// snapshot is an array of cells written one at a time and read all at
// once: the pair snapshot of Chen, Zhang, Wu and Zhang, "Automatic
// Localization of Linearizability Faults", with any number of cells.
// write takes [i v]; read returns [v0 v1 ...]. Cells never written are
// Nil.
type snapshot struct{ init []lin.Value }

func newSnapshot(init lin.Value) (lin.Model, error) {
	switch init.Kind {
	case lin.Nil:
		return snapshot{}, nil
	case lin.List:
		return snapshot{init: init.L}, nil
	}
	return nil, fmt.Errorf("the initial value must be the list of cells, not %s", init)
}

type snapAction struct {
	read bool
	cell int
	v    lin.Value
	out  output
}

// cells returns cell i of a snapshot state (Nil past its end).
func cells(s []lin.Value, i int) lin.Value {
	if i < len(s) {
		return s[i]
	}
	return lin.Value{}
}

func (m snapshot) Name() string    { return "snapshot" }
func (m snapshot) Init() lin.State { return m.init }

func (m snapshot) Hash(s lin.State) uint64 {
	var h uint64
	st := s.([]lin.Value)
	n := len(st)
	for n > 0 && st[n-1].IsNil() {
		n--
	}
	for i := 0; i < n; i++ {
		h = h*seqP + hashValue(st[i])
	}
	return h
}

func (m snapshot) Equal(s, t lin.State) bool {
	a, b := s.([]lin.Value), t.([]lin.Value)
	for i := 0; i < len(a) || i < len(b); i++ {
		if !cells(a, i).Equal(cells(b, i)) {
			return false
		}
	}
	return true
}

func (m snapshot) DescribeState(s lin.State) string {
	var parts []string
	for _, v := range s.([]lin.Value) {
		parts = append(parts, v.String())
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func (m snapshot) Action(op *lin.Op) (lin.Action, error) {
	switch op.Name {
	case "read":
		a := &snapAction{read: true, out: outputOf(op)}
		if a.out.known && a.out.v.Kind != lin.List {
			return nil, fmt.Errorf("read must return the list of cells, not %s", a.out.v)
		}
		return a, nil
	case "write":
		in := op.Input
		if in.Kind != lin.List || len(in.L) != 2 || in.L[0].Kind != lin.Int || in.L[0].I < 0 || in.L[0].I >= 1<<16 {
			return nil, fmt.Errorf("write needs the input [cell value] with a cell from 0 to 65535, not %s", in)
		}
		return &snapAction{cell: int(in.L[0].I), v: in.L[1]}, nil
	}
	return nil, unknownOp("snapshot", op)
}

func (m snapshot) Step(s lin.State, a lin.Action) (bool, lin.State) {
	st := s.([]lin.Value)
	act := a.(*snapAction)
	if act.read {
		if !act.out.known {
			return true, s
		}
		got := act.out.v.L
		for i := 0; i < len(got) || i < len(st); i++ {
			if !cells(got, i).Equal(cells(st, i)) {
				return false, s
			}
		}
		return true, s
	}
	n := max(len(st), act.cell+1)
	next := make([]lin.Value, n)
	copy(next, st)
	next[act.cell] = act.v
	return true, next
}

func (m snapshot) ReadOnly(a lin.Action) bool { return a.(*snapAction).read }

func (m snapshot) Describe(op *lin.Op) string { return describe(op, op.Name == "read") }
