package lin

import "time"

// Verdict is the answer of a check.
type Verdict string

// The verdicts.
const (
	// Linearizable: some order of the operations, consistent with their
	// real-time order, is a run of the model.
	Linearizable Verdict = "linearizable"
	// NotLinearizable: no such order exists.
	NotLinearizable Verdict = "not linearizable"
	// Undecided: the search ran out of time (or was cancelled) first. It
	// is never reported as linearizable.
	Undecided Verdict = "unknown"
)

// Result is what a check found.
type Result struct {
	Verdict Verdict `json:"verdict"`
	// Model is the name of the model checked against.
	Model string `json:"model"`
	// Source is the history's source (a file name).
	Source string `json:"source,omitempty"`
	// Operations counts the history's operations; Optional counts those
	// that may not have taken effect (info and pending).
	Operations int `json:"operations"`
	Optional   int `json:"optional,omitempty"`
	// Partitions counts the independent sub-histories checked (one per
	// key for a partitioned model); Decided counts those whose search
	// finished.
	Partitions int `json:"partitions"`
	Decided    int `json:"decided"`
	// Undecided names the partitions whose search ran out of time (their
	// keys; "" for an unpartitioned history).
	UndecidedKeys []string `json:"undecided_partitions,omitempty"`
	// Counterexample explains a NotLinearizable verdict.
	Counterexample *Counterexample `json:"counterexample,omitempty"`
	// Stats count the work done.
	Stats Stats `json:"stats"`
}

// Stats count what a check did.
type Stats struct {
	// Steps counts calls of Model.Step.
	Steps uint64 `json:"steps"`
	// Configurations counts the distinct (linearized set, state) pairs
	// the search remembered.
	Configurations uint64 `json:"configurations"`
	// Forced counts read-only operations placed without trying other
	// orders; Symmetric counts orders not tried because an identical
	// operation that returns earlier was tried instead; Dominated counts
	// configurations skipped because one with fewer optional operations
	// and the same state had already failed.
	Forced    uint64 `json:"forced"`
	Symmetric uint64 `json:"symmetric"`
	Dominated uint64 `json:"dominated"`
	// Absorbed counts optional operations not tried right after another
	// optional one that made no difference to them (a timed-out write
	// overwritten by the next).
	Absorbed uint64 `json:"absorbed"`
	// Elapsed is the wall-clock time of the check, minimisation included.
	Elapsed time.Duration `json:"elapsed_ns"`
	// MinimizeChecks counts the sub-histories checked while minimising.
	MinimizeChecks int `json:"minimize_checks,omitempty"`
}

// Counterexample is a part of a history that is not linearizable, found
// by cutting the history at the first response that cannot be explained
// and then removing operations.
type Counterexample struct {
	// Partition is the key of the sub-history that failed ("" when the
	// history is not partitioned).
	Partition string `json:"partition,omitempty"`
	// Failing is the ID of the operation that could not be placed: the
	// earliest response after which the history is not linearizable.
	Failing int `json:"failing"`
	// Cut is the Return position of Failing: the history up to there (with
	// operations still running then counted as pending) is not
	// linearizable, and no earlier prefix is.
	Cut int64 `json:"cut"`
	// Ops are the IDs of the minimised sub-history, in call order: the
	// failing operation, every operation that overlaps it, and the fewest
	// earlier operations without which it would be linearizable.
	// Operations still running at Cut are pending in it.
	Ops []int `json:"ops"`
	// Minimal is false when minimisation stopped at the time limit: Ops is
	// then not linearizable but may hold operations it does not need.
	Minimal bool `json:"minimal"`
	// Longest are the longest partial linearizations of the minimised
	// sub-history: orders of some of its operations that the model
	// accepts, after which no remaining operation can be placed.
	Longest []Partial `json:"longest"`
	// Operations are the operations of Ops, copied from the history, with
	// the ones still running at Cut marked pending: the counterexample is
	// readable without the history.
	Operations []Op `json:"operations"`
	// Init describes the model's initial state.
	Init string `json:"init"`
	// Before counts the operations before the counterexample that it
	// replaces by the states they can leave the object in (Start): they
	// all returned before any of its operations was called.
	Before int `json:"before"`
	// Start describes the states the counterexample starts from: the
	// model's initial state when Before is 0, else every state the
	// operations before it can leave the object in. The counterexample
	// fails from each.
	Start []string `json:"start"`
}

// Partial is a partial linearization: operations in the order the model
// ran them, with the state after each.
type Partial struct {
	// Start describes the state it starts from (one of
	// Counterexample.Start).
	Start string `json:"start"`
	// Ops are operation IDs, in linearization order.
	Ops []int `json:"ops"`
	// States describe the model's state after each operation.
	States []string `json:"states"`
	// Blocked is the ID of the operation whose response came next and
	// could not be explained: every way of placing it failed.
	Blocked int `json:"blocked"`
}
