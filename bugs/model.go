package bugs

import (
	"fmt"
	"strconv"
	"strings"
)

// Hex is an address or a 64-bit value; in JSON it is a string of
// lower-case hex with a 0x prefix, as every analyze output writes them
// (64-bit numbers do not survive most JSON readers).
type Hex uint64

// MarshalJSON writes "0x...".
func (h Hex) MarshalJSON() ([]byte, error) { return []byte(fmt.Sprintf(`"%#x"`, uint64(h))), nil }

// UnmarshalJSON reads "0x...".
func (h *Hex) UnmarshalJSON(b []byte) error {
	s, err := strconv.Unquote(string(b))
	if err != nil {
		return fmt.Errorf("hex value %s: %w", b, err)
	}
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64)
	if err != nil {
		return fmt.Errorf("hex value %q: %w", s, err)
	}
	*h = Hex(v)
	return nil
}

// Report is what a bug analysis of one trace found.
type Report struct {
	Trace string   `json:"trace"`
	Rules []string `json:"rules"` // the rules that were checked, in order
	// StackRoots says a rule judged reachability (the leak rules), whose
	// roots include what the stacks hold: a trace recorded with --level
	// heap does not have it.
	StackRoots bool      `json:"-"`
	Findings   []Finding `json:"findings"` // in trace order
	// Truncated says the trace was cut short: the analysis covers the run
	// up to its last whole block.
	Truncated bool   `json:"truncated,omitempty"`
	Reason    string `json:"truncated_reason,omitempty"`
	Stats     Stats  `json:"stats"`
	// Dropped counts findings past the per-rule limit (the same rule at
	// the same statement is reported once; Options.MaxPerRule bounds the
	// rest).
	Dropped int `json:"dropped,omitempty"`
}

// Stats count what the analysis went through.
type Stats struct {
	Events      uint64 `json:"events"`
	Instances   uint64 `json:"instructions"`
	Allocations uint64 `json:"allocations"`
	Frees       uint64 `json:"frees"`
	Points      uint64 `json:"detection_points"` // detection points at which rules were evaluated
	Unplaced    int    `json:"unplaced_events,omitempty"`
	Undecoded   int    `json:"undecoded_instructions,omitempty"`
	Nodes       int    `json:"origin_nodes"` // value-propagation nodes alive at the end
	// Regions counts a region trace's regions (record --from/--to); the
	// rules run inside them only. EndSkipped says that the run ended
	// outside a region, so that the end-of-run rules (leaks) did not run.
	Regions    int  `json:"regions,omitempty"`
	EndSkipped bool `json:"end_rules_skipped,omitempty"`
}

// Finding is one bug: a rule whose condition held at a detection point.
type Finding struct {
	Rule    string `json:"rule"`    // the rule's name (the bug class for the built-in rules)
	Message string `json:"message"` // one line for people
	// Seq is the trace event of the instruction at which the bug was
	// detected: its load or store, its call of free, its fault (for
	// analyze mg --at seq:N and analyze slice --criterion seq:N, which
	// starts from that instruction); for the leak rules, the end of the
	// run. Instr is the instruction instance.
	Seq   uint64 `json:"seq"`
	Instr uint64 `json:"instruction"`
	// Thread is the recorder's thread id.
	Thread uint32 `json:"thread"`
	// Where is the statement at which it was detected, with its call
	// stack (innermost first).
	Where Site   `json:"where"`
	Stack []Site `json:"stack,omitempty"`
	// Address and Size describe the access, the freed pointer or the
	// value, when the detection point has one.
	Address Hex    `json:"address,omitempty"`
	Size    uint32 `json:"size,omitempty"`
	// Block is the heap block involved, when there is one.
	Block *BlockInfo `json:"block,omitempty"`
	// ByAddress says the block was found from the pointer's value or the
	// address, the pointer's provenance being lost (a degraded mode: an
	// overflow into a neighbour or an access after reuse may then be
	// misread).
	ByAddress bool `json:"by_address,omitempty"`
	// Chains are the value propagation chains the rule asks for (VPC(r),
	// VPC(r1), ...), in the rule's order.
	Chains []Chain `json:"chains,omitempty"`
	// Count is how many times the same rule fired at the same statement
	// (the first is reported).
	Count int `json:"count"`
}

// Site is an instruction with its source position.
type Site struct {
	PC       Hex    `json:"pc"`
	Function string `json:"function,omitempty"`
	File     string `json:"file,omitempty"`
	Line     uint32 `json:"line,omitempty"`
	Module   string `json:"module,omitempty"`
}

// BlockInfo describes a heap block.
type BlockInfo struct {
	ID     uint32 `json:"id"` // never reused within a run
	Base   Hex    `json:"base"`
	Size   uint64 `json:"size"`
	Family string `json:"family"` // malloc, new, new[], or the user allocator's name
	// AllocSeq is the event of the allocator's return; Alloc its call
	// site and stack.
	AllocSeq   uint64 `json:"alloc_seq"`
	Alloc      Site   `json:"alloc"`
	AllocStack []Site `json:"alloc_stack,omitempty"`
	// Freed blocks: the release's event, site and stack.
	Freed     bool   `json:"freed"`
	FreeSeq   uint64 `json:"free_seq,omitempty"`
	Free      *Site  `json:"free,omitempty"`
	FreeStack []Site `json:"free_stack,omitempty"`
}

// Chain is the value propagation chain of one value: from the detection
// point back through the copies that carried it to where it was generated.
type Chain struct {
	Var   string `json:"var"`   // the rule's variable (r, r1, v)
	Value Hex    `json:"value"` // the value at the detection point
	Steps []Step `json:"steps"` // newest first; the last is the generation, or the point where the trace lost track
	// Instructions is how many instructions the chain holds (what a user
	// examines to follow it).
	Instructions int `json:"instructions"`
}

// StepKind says what an instruction of a chain did with the value.
type StepKind string

// The step kinds.
const (
	StepStore   StepKind = "store"    // copied into memory
	StepLoad    StepKind = "load"     // copied from memory into a register
	StepMove    StepKind = "move"     // copied from register to register
	StepConst   StepKind = "constant" // generated: a constant
	StepCompute StepKind = "computed" // generated: arithmetic (pointer arithmetic included)
	StepAlloc   StepKind = "allocated"
	StepFree    StepKind = "freed" // the release the chain's value was passed to
	StepUnknown StepKind = "unknown"
	StepKernel  StepKind = "kernel" // written by a system call
)

// Step is one instruction of a chain.
type Step struct {
	Kind StepKind `json:"kind"`
	// Seq is the trace event of the step's instruction (0 for a
	// generating instruction, which the chain names by its statement).
	Seq     uint64 `json:"seq,omitempty"`
	Address Hex    `json:"address,omitempty"` // the memory location, for loads and stores
	Site
	// Note says more for the last step (the allocator, the constant, why
	// the chain ends).
	Note string `json:"note,omitempty"`
}
