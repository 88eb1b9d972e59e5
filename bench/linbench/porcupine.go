package main

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"

	"github.com/anishathalye/porcupine"
	"github.com/mgtrace/mgtrace/lin"
)

// This file holds porcupine's side of the comparison: its models, written
// as its own tests write them (porcupine_test.go: etcdModel, kvModel), and
// the conversion of a lin.History into porcupine.Operation values.
//
// Porcupine has no operation that may or may not have taken effect: every
// operation is linearized somewhere between its call and its return. Its
// own test parsers give an operation that never completed (Jepsen's :info,
// or a log that ends first) a return after every other event and an
// output that the model accepts in any state; an operation whose response
// is known but whose output is not (a read that timed out) keeps its
// return and gets that same "unknown" output. toPorcupine does the same
// for Info and Pending operations (Return = the largest finite position +
// 1) and for Unknown ones (their Return).

// casInput and casOutput are the inputs and outputs of porcupine's etcd
// model (its test's etcdInput and etcdOutput): a register of integers,
// absent at first, with read, write and compare-and-set.
type casInput struct {
	op   uint8 // 0 read, 1 write, 2 cas
	arg1 int64 // write's value, cas's expected value
	arg2 int64 // cas's new value
}

type casOutput struct {
	ok      bool  // cas succeeded
	exists  bool  // read found a value
	value   int64 // read's value
	unknown bool  // the output is not known
}

// casAbsent is the state of a register never written (porcupine's test
// uses the same sentinel).
const casAbsent = -1000000

// casModel is porcupine's etcd model (porcupine_test.go, etcdModel). It
// also serves the plain register, whose histories have no cas.
func casModel() porcupine.Model {
	return porcupine.Model{
		Init: func() any { return int64(casAbsent) },
		Step: func(state, input, output any) (bool, any) {
			st := state.(int64)
			in := input.(casInput)
			out := output.(casOutput)
			switch in.op {
			case 0:
				ok := (!out.exists && st == casAbsent) || (out.exists && st == out.value) || out.unknown
				return ok, state
			case 1:
				return true, in.arg1
			}
			ok := (in.arg1 == st && out.ok) || (in.arg1 != st && !out.ok) || out.unknown
			if in.arg1 == st {
				return ok, in.arg2
			}
			return ok, state
		},
		Hash: func(state any) uint64 { return uint64(state.(int64)) },
	}
}

// kvInput and kvOutput are porcupine's key-value test model's (kvInput,
// kvOutput), with an unknown output added for operations that never
// completed.
type kvInput struct {
	op    uint8 // 0 get, 1 put, 2 append
	key   string
	value string
}

type kvOutput struct {
	value   string
	unknown bool
}

// kvModel is porcupine's partitioned key-value model (porcupine_test.go,
// kvModel): one key's value per partition, "" at first.
func kvModel() porcupine.Model {
	return porcupine.Model{
		Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
			byKey := make(map[string][]porcupine.Operation)
			for _, op := range history {
				k := op.Input.(kvInput).key
				byKey[k] = append(byKey[k], op)
			}
			keys := make([]string, 0, len(byKey))
			for k := range byKey {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			parts := make([][]porcupine.Operation, 0, len(keys))
			for _, k := range keys {
				parts = append(parts, byKey[k])
			}
			return parts
		},
		Init: func() any { return "" },
		Step: func(state, input, output any) (bool, any) {
			st := state.(string)
			in := input.(kvInput)
			out := output.(kvOutput)
			switch in.op {
			case 0:
				return out.unknown || out.value == st, state
			case 1:
				return true, in.value
			}
			return true, st + in.value
		},
		Hash: func(state any) uint64 {
			h := fnv.New64a()
			h.Write([]byte(state.(string)))
			return h.Sum64()
		},
	}
}

// counterInput and counterOutput are a counter's: add delta, or read.
type counterInput struct {
	read  bool
	delta int64
}

type counterOutput struct {
	value   int64
	unknown bool
}

// counterModel is an integer counter, 0 at first, in porcupine's style.
func counterModel() porcupine.Model {
	return porcupine.Model{
		Init: func() any { return int64(0) },
		Step: func(state, input, output any) (bool, any) {
			st := state.(int64)
			in := input.(counterInput)
			if in.read {
				out := output.(counterOutput)
				return out.unknown || out.value == st, state
			}
			return true, st + in.delta
		},
		Hash: func(state any) uint64 { return uint64(state.(int64)) * 0x9e3779b97f4a7c15 },
	}
}

// queueInput and queueOutput are a FIFO queue's: enqueue a value, or
// dequeue one (empty when the queue was).
type queueInput struct {
	enqueue bool
	value   int64
}

type queueOutput struct {
	value   int64
	empty   bool
	unknown bool
}

// queueModel is a FIFO queue of integers, empty at first, in porcupine's
// style. A state is a []int64 never modified once made.
func queueModel() porcupine.Model {
	return porcupine.Model{
		Init: func() any { return []int64(nil) },
		Step: func(state, input, output any) (bool, any) {
			st := state.([]int64)
			in := input.(queueInput)
			if in.enqueue {
				next := make([]int64, len(st)+1)
				copy(next, st)
				next[len(st)] = in.value
				return true, next
			}
			out := output.(queueOutput)
			if len(st) == 0 {
				return out.unknown || out.empty, state
			}
			return out.unknown || (!out.empty && out.value == st[0]), st[1:]
		},
		Equal: func(s, t any) bool {
			a, b := s.([]int64), t.([]int64)
			if len(a) != len(b) {
				return false
			}
			for i := range a {
				if a[i] != b[i] {
					return false
				}
			}
			return true
		},
		Hash: func(state any) uint64 {
			h := uint64(14695981039346656037)
			for _, v := range state.([]int64) {
				h = (h ^ uint64(v)) * 1099511628211
			}
			return h
		},
	}
}

// porcupineModel returns the porcupine model for our model name and the
// conversion of an operation's input and output for it (unknown: its
// output is not known).
func porcupineModel(name string) (porcupine.Model, func(op *lin.Op, unknown bool) (any, any, error), error) {
	switch name {
	case "register", "cas-register":
		return casModel(), casOp, nil
	case "kv":
		return kvModel(), kvOp, nil
	case "counter":
		return counterModel(), counterOp, nil
	case "queue":
		return queueModel(), queueOp, nil
	}
	return porcupine.Model{}, nil, fmt.Errorf("no porcupine model for %q", name)
}

// intOf returns v's integer, or an error naming what it is.
func intOf(v lin.Value, what string) (int64, error) {
	if v.Kind != lin.Int {
		return 0, fmt.Errorf("%s is %s, not an integer", what, v)
	}
	return v.I, nil
}

// casOp converts an operation for the register's porcupine model.
func casOp(op *lin.Op, unknown bool) (any, any, error) {
	out := casOutput{unknown: unknown}
	switch op.Name {
	case "read":
		if !unknown && !op.Output.IsNil() {
			v, err := intOf(op.Output, "read's output")
			if err != nil {
				return nil, nil, err
			}
			out.exists, out.value = true, v
		}
		return casInput{op: 0}, out, nil
	case "write":
		v, err := intOf(op.Input, "write's input")
		if err != nil {
			return nil, nil, err
		}
		return casInput{op: 1, arg1: v}, out, nil
	case "cas":
		if op.Input.Kind != lin.List || len(op.Input.L) != 2 {
			return nil, nil, fmt.Errorf("cas's input is %s, not [old new]", op.Input)
		}
		from, err := intOf(op.Input.L[0], "cas's old value")
		if err != nil {
			return nil, nil, err
		}
		to, err := intOf(op.Input.L[1], "cas's new value")
		if err != nil {
			return nil, nil, err
		}
		if !unknown {
			out.ok = op.Output.Kind != lin.Bool || op.Output.I != 0
		}
		return casInput{op: 2, arg1: from, arg2: to}, out, nil
	}
	return nil, nil, fmt.Errorf("the register has no operation %q", op.Name)
}

// stringOf returns v as porcupine's key-value test reads it: a string, nil
// as "".
func stringOf(v lin.Value, what string) (string, error) {
	switch v.Kind {
	case lin.String:
		return v.S, nil
	case lin.Nil:
		return "", nil
	}
	return "", fmt.Errorf("%s is %s, not a string", what, v)
}

// kvOp converts an operation for the key-value store's porcupine model.
func kvOp(op *lin.Op, unknown bool) (any, any, error) {
	key, err := stringOf(op.Key, "the key")
	if err != nil {
		return nil, nil, err
	}
	out := kvOutput{unknown: unknown}
	switch op.Name {
	case "get":
		if !unknown {
			if out.value, err = stringOf(op.Output, "get's output"); err != nil {
				return nil, nil, err
			}
		}
		return kvInput{op: 0, key: key}, out, nil
	case "put", "append":
		v, err := stringOf(op.Input, op.Name+"'s input")
		if err != nil {
			return nil, nil, err
		}
		code := uint8(1)
		if op.Name == "append" {
			code = 2
		}
		return kvInput{op: code, key: key, value: v}, out, nil
	}
	return nil, nil, fmt.Errorf("the key-value store has no operation %q", op.Name)
}

// counterOp converts an operation for the counter's porcupine model.
func counterOp(op *lin.Op, unknown bool) (any, any, error) {
	switch op.Name {
	case "read":
		out := counterOutput{unknown: unknown}
		if !unknown {
			v, err := intOf(op.Output, "read's output")
			if err != nil {
				return nil, nil, err
			}
			out.value = v
		}
		return counterInput{read: true}, out, nil
	case "inc":
		return counterInput{delta: 1}, counterOutput{}, nil
	case "add":
		v, err := intOf(op.Input, "add's input")
		if err != nil {
			return nil, nil, err
		}
		return counterInput{delta: v}, counterOutput{}, nil
	}
	return nil, nil, fmt.Errorf("the counter has no operation %q", op.Name)
}

// queueOp converts an operation for the queue's porcupine model.
func queueOp(op *lin.Op, unknown bool) (any, any, error) {
	switch op.Name {
	case "enqueue":
		v, err := intOf(op.Input, "enqueue's input")
		if err != nil {
			return nil, nil, err
		}
		return queueInput{enqueue: true, value: v}, queueOutput{}, nil
	case "dequeue":
		out := queueOutput{unknown: unknown}
		if !unknown {
			if op.Output.IsNil() {
				out.empty = true
			} else {
				v, err := intOf(op.Output, "dequeue's output")
				if err != nil {
					return nil, nil, err
				}
				out.value = v
			}
		}
		return queueInput{}, out, nil
	}
	return nil, nil, fmt.Errorf("the queue has no operation %q", op.Name)
}

// toPorcupine converts h for porcupine's model of the same name: the same
// operations, clients, calls and returns, except that Info and Pending
// operations return after every position of the history (the largest
// finite call or return, plus one) with an unknown output, and Unknown
// ones keep their return with an unknown output.
func toPorcupine(model string, h *lin.History) (porcupine.Model, []porcupine.Operation, error) {
	pm, conv, err := porcupineModel(model)
	if err != nil {
		return pm, nil, err
	}
	var last int64
	for i := range h.Ops {
		o := &h.Ops[i]
		last = max(last, o.Call)
		if o.Return != lin.Never {
			last = max(last, o.Return)
		}
	}
	ops := make([]porcupine.Operation, len(h.Ops))
	for i := range h.Ops {
		o := &h.Ops[i]
		in, out, err := conv(o, o.Status != lin.OK)
		if err != nil {
			return pm, nil, fmt.Errorf("operation %d (%s): %w", i, where(o), err)
		}
		ret := o.Return
		if o.Status.Optional() {
			ret = last + 1
		}
		ops[i] = porcupine.Operation{ClientId: o.Client, Input: in, Call: o.Call, Output: out, Return: ret}
	}
	return pm, ops, nil
}

// where names an operation for a message: its source, or its index.
func where(o *lin.Op) string {
	if o.Source != "" {
		return o.Source
	}
	return "#" + strconv.Itoa(o.ID)
}

// porcupineVerdict maps porcupine's result to ours.
func porcupineVerdict(r porcupine.CheckResult) lin.Verdict {
	switch r {
	case porcupine.Ok:
		return lin.Linearizable
	case porcupine.Illegal:
		return lin.NotLinearizable
	}
	return lin.Undecided
}

// verdictWord is a verdict in a table cell: "yes" (linearizable), "no",
// or "no answer" (the search ran out of time).
func verdictWord(v lin.Verdict) string {
	switch v {
	case lin.Linearizable:
		return "yes"
	case lin.NotLinearizable:
		return "no"
	}
	return "no answer"
}
