package models

import (
	"fmt"

	"github.com/mgtrace/mgtrace/lin"
)

// register is a read/write register, and with cas a compare-and-set
// register (etcd's, as Jepsen tests it). Its state is a lin.Value; Nil is
// "absent".
type register struct {
	name string
	cas  bool
	init lin.Value
}

func newRegister(init lin.Value) (lin.Model, error) {
	return &register{name: "register", init: init}, nil
}

func newCASRegister(init lin.Value) (lin.Model, error) {
	return &register{name: "cas-register", cas: true, init: init}, nil
}

type regKind uint8

const (
	regRead regKind = iota
	regWrite
	regCAS
)

type regAction struct {
	kind     regKind
	v        lin.State // write's value, cas's new value (a lin.Value, boxed once)
	old      lin.Value // cas's expected value
	out      output
	casOK    bool // cas's known result
	casKnown bool
}

func (r *register) Name() string            { return r.name }
func (r *register) Init() lin.State         { return r.init }
func (r *register) Hash(s lin.State) uint64 { return hashValue(s.(lin.Value)) }
func (r *register) Equal(s, t lin.State) bool {
	return s.(lin.Value).Equal(t.(lin.Value))
}
func (r *register) DescribeState(s lin.State) string { return s.(lin.Value).String() }

func (r *register) Action(op *lin.Op) (lin.Action, error) {
	switch op.Name {
	case "read", "get":
		return &regAction{kind: regRead, out: outputOf(op)}, nil
	case "write", "put":
		return &regAction{kind: regWrite, v: lin.State(op.Input)}, nil
	case "cas":
		if !r.cas {
			break
		}
		if op.Input.Kind != lin.List || len(op.Input.L) != 2 {
			return nil, fmt.Errorf("cas needs the input [old new], not %s", op.Input)
		}
		a := &regAction{kind: regCAS, old: op.Input.L[0], v: lin.State(op.Input.L[1])}
		if op.Status == lin.OK {
			a.casKnown = true
			// A boolean output is the result; an ok cas with any other
			// output (Jepsen writes the input again) succeeded.
			a.casOK = op.Output.Kind != lin.Bool || op.Output.I != 0
		}
		return a, nil
	}
	return nil, unknownOp(r.name, op)
}

func (r *register) Step(s lin.State, a lin.Action) (bool, lin.State) {
	st := s.(lin.Value)
	act := a.(*regAction)
	switch act.kind {
	case regRead:
		return !act.out.known || act.out.v.Equal(st), s
	case regWrite:
		return true, act.v
	}
	match := act.old.Equal(st)
	if act.casKnown && act.casOK != match {
		return false, s
	}
	if match {
		return true, act.v
	}
	return true, s
}

// ReadOnly: reads, and a cas known to have failed.
func (r *register) ReadOnly(a lin.Action) bool {
	act := a.(*regAction)
	return act.kind == regRead || (act.kind == regCAS && act.casKnown && !act.casOK)
}

func (r *register) Describe(op *lin.Op) string {
	return describe(op, op.Name != "write" && op.Name != "put")
}
