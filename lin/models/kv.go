package models

import (
	"fmt"

	"github.com/mgtrace/mgtrace/lin"
)

// kv is a key-value store with get, put and append (porcupine's and
// Jepsen's key-value tests). It is partitioned by key (Horn and Kroening's
// P-compositionality), so its state is one key's value: Nil when absent,
// which a get may also see as "" (append starts from the empty string).
type kv struct{}

func newKV(init lin.Value) (lin.Model, error) {
	if !init.IsNil() {
		return nil, fmt.Errorf("takes no initial value (every key starts absent)")
	}
	return kv{}, nil
}

type kvKind uint8

const (
	kvGet kvKind = iota
	kvPut
	kvAppend
)

type kvAction struct {
	kind kvKind
	key  string
	v    lin.Value
	put  *kvState // put's state, made once
	out  output
}

// kvState is one key's value with its hash, computed once: a string's
// hash is FNV-1a over its bytes, so an append continues it from the old
// value's hash.
type kvState struct {
	v lin.Value
	h uint64
}

const fnvBasis = 14695981039346656037

func newKVState(v lin.Value) *kvState {
	v = normKV(v)
	if v.Kind == lin.String {
		return &kvState{v: v, h: fnvString(fnvBasis, v.S)}
	}
	if v.IsNil() {
		return &kvState{h: fnvBasis}
	}
	return &kvState{v: v, h: hashValue(v) ^ 0x5bd1e995}
}

func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return h
}

func (kv) Name() string            { return "kv" }
func (kv) Init() lin.State         { return newKVState(lin.Value{}) }
func (kv) Hash(s lin.State) uint64 { return s.(*kvState).h }
func (kv) Equal(s, t lin.State) bool {
	a, b := s.(*kvState), t.(*kvState)
	return a == b || (a.h == b.h && a.v.Equal(b.v))
}
func (kv) DescribeState(s lin.State) string { return s.(*kvState).v.String() }

// normKV maps "" to Nil: an absent key reads as either.
func normKV(v lin.Value) lin.Value {
	if v.Kind == lin.String && v.S == "" {
		return lin.Value{}
	}
	return v
}

func kvEqual(a, b lin.Value) bool { return normKV(a).Equal(normKV(b)) }

func (kv) Action(op *lin.Op) (lin.Action, error) {
	if op.Key.IsNil() {
		return nil, fmt.Errorf("kv operation %s has no key", op.Name)
	}
	a := &kvAction{key: op.Key.String(), v: op.Input, out: outputOf(op)}
	switch op.Name {
	case "get", "read":
		a.kind = kvGet
	case "put", "write":
		a.kind = kvPut
		a.put = newKVState(op.Input)
	case "append":
		if op.Input.Kind != lin.String {
			return nil, fmt.Errorf("append needs a string to append, not %s", op.Input)
		}
		a.kind = kvAppend
	default:
		return nil, unknownOp("kv", op)
	}
	return a, nil
}

func (kv) Step(s lin.State, a lin.Action) (bool, lin.State) {
	st := s.(*kvState)
	act := a.(*kvAction)
	switch act.kind {
	case kvGet:
		return !act.out.known || kvEqual(act.out.v, st.v), s
	case kvPut:
		return true, act.put
	}
	if act.v.S == "" {
		return true, s
	}
	switch st.v.Kind {
	case lin.String:
		return true, &kvState{v: lin.StringValue(st.v.S + act.v.S), h: fnvString(st.h, act.v.S)}
	case lin.Nil:
		return true, &kvState{v: act.v, h: fnvString(fnvBasis, act.v.S)}
	}
	return true, newKVState(lin.StringValue(st.v.String() + act.v.S))
}

func (kv) PartitionKey(a lin.Action) (string, bool) { return a.(*kvAction).key, true }

func (kv) ReadOnly(a lin.Action) bool { return a.(*kvAction).kind == kvGet }

func (kv) Describe(op *lin.Op) string { return describe(op, op.Name == "get" || op.Name == "read") }
