package models

import (
	"fmt"
	"strings"

	"github.com/mgtrace/mgtrace/lin"
)

// seq is a FIFO queue or a LIFO stack. Its state is the elements in
// order (front or bottom first), never modified once made, with a hash
// kept up to date in O(1) per operation: the sum of each element's hash
// times P to the power of its position (P odd, so it has an inverse
// modulo 2^64 and the queue's front can be taken out).
type seq struct {
	name string
	lifo bool
	init seqState
}

type seqState struct {
	items []lin.Value
	hash  uint64
	hs    []uint64 // the elements' hashes
}

const (
	seqP    uint64 = 0x9e3779b97f4a7c15 // odd
	seqPInv uint64 = 0xf1de83e19937733d // seqP * seqPInv == 1 mod 2^64
)

func newQueue(init lin.Value) (lin.Model, error) { return newSeq("queue", false, init) }
func newStack(init lin.Value) (lin.Model, error) { return newSeq("stack", true, init) }

func newSeq(name string, lifo bool, init lin.Value) (lin.Model, error) {
	m := &seq{name: name, lifo: lifo}
	switch init.Kind {
	case lin.Nil:
	case lin.List:
		for _, v := range init.L {
			m.init = m.init.push(v)
		}
	default:
		return nil, fmt.Errorf("the initial value must be a list of elements, not %s", init)
	}
	return m, nil
}

// pow returns seqP^n.
func pow(n int) uint64 {
	r, b := uint64(1), seqP
	for e := uint(n); e > 0; e >>= 1 {
		if e&1 != 0 {
			r *= b
		}
		b *= b
	}
	return r
}

func (s seqState) push(v lin.Value) seqState {
	h := hashValue(v)
	n := seqState{
		items: append(append(make([]lin.Value, 0, len(s.items)+1), s.items...), v),
		hs:    append(append(make([]uint64, 0, len(s.hs)+1), s.hs...), h),
	}
	n.hash = s.hash + h*pow(len(s.items))
	return n
}

// popFront removes the first element (a queue's dequeue).
func (s seqState) popFront() seqState {
	return seqState{items: s.items[1:], hs: s.hs[1:], hash: (s.hash - s.hs[0]) * seqPInv}
}

// popBack removes the last element (a stack's pop).
func (s seqState) popBack() seqState {
	n := len(s.items) - 1
	return seqState{items: s.items[:n:n], hs: s.hs[:n:n], hash: s.hash - s.hs[n]*pow(n)}
}

type seqAction struct {
	push bool
	v    lin.Value
	out  output
}

func (m *seq) Name() string              { return m.name }
func (m *seq) Init() lin.State           { return m.init }
func (m *seq) Hash(s lin.State) uint64   { return s.(seqState).hash }
func (m *seq) Equal(s, t lin.State) bool { return equalValues(s.(seqState).items, t.(seqState).items) }

func equalValues(a, b []lin.Value) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Equal(b[i]) {
			return false
		}
	}
	return true
}

func (m *seq) DescribeState(s lin.State) string {
	var parts []string
	for _, v := range s.(seqState).items {
		parts = append(parts, v.String())
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func (m *seq) Action(op *lin.Op) (lin.Action, error) {
	pushName, popName := "enqueue", "dequeue"
	if m.lifo {
		pushName, popName = "push", "pop"
	}
	switch op.Name {
	case pushName:
		return &seqAction{push: true, v: op.Input}, nil
	case popName:
		return &seqAction{out: outputOf(op)}, nil
	}
	return nil, unknownOp(m.name, op)
}

func (m *seq) Step(s lin.State, a lin.Action) (bool, lin.State) {
	st := s.(seqState)
	act := a.(*seqAction)
	if act.push {
		return true, st.push(act.v)
	}
	if len(st.items) == 0 {
		// Only "empty" (or an unknown output) fits an empty one.
		return !act.out.known || act.out.v.IsNil(), s
	}
	var got lin.Value
	var next seqState
	if m.lifo {
		got, next = st.items[len(st.items)-1], st.popBack()
	} else {
		got, next = st.items[0], st.popFront()
	}
	if act.out.known && !act.out.v.Equal(got) {
		return false, s
	}
	return true, next
}

// ReadOnly: a dequeue or pop that found it empty.
func (m *seq) ReadOnly(a lin.Action) bool {
	act := a.(*seqAction)
	return !act.push && act.out.known && act.out.v.IsNil()
}

func (m *seq) Describe(op *lin.Op) string {
	if op.Status == lin.OK && op.Output.IsNil() && (op.Name == "dequeue" || op.Name == "pop") {
		return op.Name + "() -> empty"
	}
	return describe(op, op.Name == "dequeue" || op.Name == "pop")
}
