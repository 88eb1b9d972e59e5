// Package models holds the built-in sequential models of the
// linearizability checker: register, cas-register, kv, set, queue, stack,
// counter and snapshot. New makes one by the name the command line uses.
//
// Each model reads the operations of a lin.History by name (Op.Name) and
// takes its values from Op.Key, Op.Input and Op.Output; docs/lin.md lists
// the operations of each. An operation whose output is not known (status
// unknown, info or pending) is accepted wherever it can take effect, and
// takes it.
package models

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mgtrace/mgtrace/lin"
)

// constructor makes a model with an initial value (Nil: the default).
type constructor func(init lin.Value) (lin.Model, error)

// table lists the models by name; a function, not a variable, so that no
// state is shared.
func table() map[string]constructor {
	return map[string]constructor{
		"register":     newRegister,
		"cas-register": newCASRegister,
		"kv":           newKV,
		"set":          newSet,
		"queue":        newQueue,
		"stack":        newStack,
		"counter":      newCounter,
		"snapshot":     newSnapshot,
	}
}

// Names returns the built-in models' names, sorted.
func Names() []string {
	var names []string
	for n := range table() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// New returns the built-in model called name, starting from init (Nil for
// the model's own initial state: see docs/lin.md).
func New(name string, init lin.Value) (lin.Model, error) {
	c, ok := table()[name]
	if !ok {
		return nil, fmt.Errorf("unknown model %q (the models are %s)", name, strings.Join(Names(), ", "))
	}
	m, err := c(init)
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", name, err)
	}
	return m, nil
}

// Ops returns the operation names model name knows (nil for an unknown
// model).
func Ops(name string) []string {
	switch name {
	case "register":
		return []string{"read", "write"}
	case "cas-register":
		return []string{"read", "write", "cas"}
	case "kv":
		return []string{"get", "put", "append"}
	case "set":
		return []string{"add", "remove", "contains", "read"}
	case "queue":
		return []string{"enqueue", "dequeue"}
	case "stack":
		return []string{"push", "pop"}
	case "counter":
		return []string{"add", "inc", "read"}
	case "snapshot":
		return []string{"write", "read"}
	}
	return nil
}

// hashValue hashes a value (FNV-1a over its kind and contents, without
// allocating).
func hashValue(v lin.Value) uint64 {
	return hashInto(14695981039346656037, v)
}

const fnvPrime = 1099511628211

func hashInto(h uint64, v lin.Value) uint64 {
	h = (h ^ uint64(v.Kind)) * fnvPrime
	switch v.Kind {
	case lin.Int, lin.Bool:
		x := uint64(v.I)
		for i := 0; i < 8; i++ {
			h = (h ^ (x & 0xff)) * fnvPrime
			x >>= 8
		}
	case lin.String:
		for i := 0; i < len(v.S); i++ {
			h = (h ^ uint64(v.S[i])) * fnvPrime
		}
		h = (h ^ 0xff) * fnvPrime
	case lin.List:
		for _, e := range v.L {
			h = hashInto(h, e)
		}
		h = (h ^ 0xfe) * fnvPrime
	}
	return h
}

// output is an operation's output as a model reads it.
type output struct {
	v     lin.Value
	known bool
}

func outputOf(op *lin.Op) output {
	if op.Status != lin.OK {
		return output{}
	}
	return output{v: op.Output, known: true}
}

// unknownOp is the error for an operation name the model does not know.
func unknownOp(model string, op *lin.Op) error {
	return fmt.Errorf("the %s model has no operation %q (it has %s)", model, op.Name, strings.Join(Ops(model), ", "))
}

// describe formats an operation, with its output unless showOutput is
// false.
func describe(op *lin.Op, showOutput bool) string { return op.DescribeAs(showOutput) }
