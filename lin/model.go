package lin

// State is a model's state. Step must treat it as immutable: a state once
// returned may be kept by the checker and compared with later ones.
type State any

// Action is an operation as a model reads it: its name, input and output
// converted once, before the search, into whatever Step needs.
type Action any

// Model is a sequential specification: what an object does when its
// operations run one at a time. The checker asks whether some order of a
// history's operations, consistent with their real-time order, is a run
// of the model.
//
// A model's methods must be safe to call from several goroutines at once
// (the checker searches partitions in parallel) and Step must be pure.
type Model interface {
	// Name is the model's name on the command line ("queue").
	Name() string
	// Init returns the state before any operation.
	Init() State
	// Action converts an operation for Step, or says why the model cannot
	// run it (an unknown name, a missing input). For an operation whose
	// Status is not OK the output is unknown: Step must then accept it in
	// any state where it can take effect, and apply its effect.
	Action(op *Op) (Action, error)
	// Step runs action a in state s. ok is false when the operation could
	// not have returned its output in s; otherwise next is the state
	// after it.
	Step(s State, a Action) (ok bool, next State)
	// Equal reports whether two states are the same.
	Equal(s, t State) bool
	// Hash returns a hash of s: equal states have equal hashes.
	Hash(s State) uint64
	// DescribeState formats s for people ("[1 2 3]").
	DescribeState(s State) string
}

// Partitioner is a Model whose operations on different keys are
// independent (Horn and Kroening's P-compositionality): a history is
// linearizable if and only if each key's sub-history is, each checked from
// Init. PartitionKey returns the key of an action, or ok=false when the
// action touches every key (then the history is not partitioned).
type Partitioner interface {
	PartitionKey(a Action) (key string, ok bool)
}

// ReadOnlyModel is a Model that can say of an action that it never
// changes the state in which it is legal (a read, a failed
// compare-and-swap, a dequeue that found the queue empty). The checker
// places such an action as soon as it is legal and minimal, without
// trying the other orders: no linearization needs them.
type ReadOnlyModel interface {
	ReadOnly(a Action) bool
}

// Describer is a Model that formats operations itself (otherwise
// Op.Describe does).
type Describer interface {
	Describe(op *Op) string
}

// DescribeOp formats op with m's Describe when it has one.
func DescribeOp(m Model, op *Op) string {
	if d, ok := m.(Describer); ok {
		return d.Describe(op)
	}
	return op.Describe()
}
