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
	out  output
}

func (kv) Name() string                     { return "kv" }
func (kv) Init() lin.State                  { return lin.Value{} }
func (kv) Hash(s lin.State) uint64          { return hashValue(normKV(s.(lin.Value))) }
func (kv) Equal(s, t lin.State) bool        { return kvEqual(s.(lin.Value), t.(lin.Value)) }
func (kv) DescribeState(s lin.State) string { return s.(lin.Value).String() }

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
	a := &kvAction{key: string(op.Key.AppendKey(nil)), v: op.Input, out: outputOf(op)}
	switch op.Name {
	case "get", "read":
		a.kind = kvGet
	case "put", "write":
		a.kind = kvPut
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
	st := s.(lin.Value)
	act := a.(*kvAction)
	switch act.kind {
	case kvGet:
		return !act.out.known || kvEqual(act.out.v, st), s
	case kvPut:
		return true, act.v
	}
	prefix := ""
	if st.Kind == lin.String {
		prefix = st.S
	} else if !st.IsNil() {
		prefix = st.String()
	}
	return true, lin.StringValue(prefix + act.v.S)
}

func (kv) PartitionKey(a lin.Action) (string, bool) { return a.(*kvAction).key, true }

func (kv) ReadOnly(a lin.Action) bool { return a.(*kvAction).kind == kvGet }

func (kv) Describe(op *lin.Op) string { return describe(op, op.Name == "get" || op.Name == "read") }
