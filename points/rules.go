package points

import (
	"errors"
	"fmt"
	"sort"

	"golang.org/x/arch/x86/x86asm"

	"github.com/mgtrace/mgtrace/slice/insn"
)

// Kind is what record does to a line's instance.
type Kind uint8

// The kinds of alteration; their values are the trace's Alteration codes.
const (
	Switch   Kind = 1 // invert the line's conditional branch
	Suppress Kind = 2 // skip the line's call, or its stores
)

// String names the kind as its command-line flag does.
func (k Kind) String() string {
	switch k {
	case Switch:
		return "switch"
	case Suppress:
		return "suppress"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Role is what an instruction is to a rule.
type Role uint8

// The roles of instructions.
const (
	Other    Role = iota
	Branch        // a conditional branch: jcc, jrcxz, loop*
	CallInsn      // a call, direct or indirect
	Store         // writes memory through an explicit operand or a string store
)

// Insn is one instruction of the program.
type Insn struct {
	Addr uint64 // link-time address in the main program (run-time address for a trace)
	Loc  Loc    // where it is in its file
	Code []byte // its bytes
	Role Role
}

// Loc is an instruction's place in the file it is mapped from: the file's
// path and the instruction's offset in it. Unlike an address it does not
// depend on where the file was loaded.
type Loc struct {
	Path   string
	Offset uint64
}

// RoleOf classifies one instruction's code (pc makes relative targets
// absolute; it does not change the role).
func RoleOf(pc uint64, code []byte) Role {
	info, err := insn.Decode(pc, code)
	if err != nil {
		return Other
	}
	switch info.Class {
	case insn.CondJump:
		return Branch
	case insn.Call, insn.IndirectCall:
		return CallInsn
	case insn.Plain:
	default:
		return Other
	}
	inst, err := x86asm.Decode(code, 64)
	if err != nil {
		// VEX encodings x86asm does not know: a vector store has a memory
		// destination.
		if info.DstMem {
			return Store
		}
		return Other
	}
	switch inst.Op {
	case x86asm.STOSB, x86asm.STOSW, x86asm.STOSD, x86asm.STOSQ,
		x86asm.MOVSB, x86asm.MOVSW, x86asm.MOVSD, x86asm.MOVSQ:
		return Store
	case x86asm.CMP, x86asm.TEST, x86asm.PUSH, x86asm.POP, x86asm.BT, x86asm.NOP,
		x86asm.PREFETCHNTA, x86asm.PREFETCHT0, x86asm.PREFETCHT1, x86asm.PREFETCHT2, x86asm.PREFETCHW,
		x86asm.UCOMISS, x86asm.UCOMISD, x86asm.COMISS, x86asm.COMISD, x86asm.LEA,
		x86asm.CLFLUSH, x86asm.PTEST, x86asm.CMPSB, x86asm.CMPSW, x86asm.CMPSD, x86asm.CMPSQ,
		x86asm.SCASB, x86asm.SCASW, x86asm.SCASD, x86asm.SCASQ, x86asm.LODSB, x86asm.LODSW,
		x86asm.LODSD, x86asm.LODSQ:
		return Other
	}
	if _, ok := inst.Args[0].(x86asm.Mem); ok {
		return Store
	}
	return Other
}

// Rule is what a line's instances are for one kind of alteration (see the
// package comment).
type Rule struct {
	Kind Kind
	// Counted are the instructions whose executions, together, are the
	// line's instances, by address.
	Counted []Insn
	// Effect are the instructions the alteration changes, by address:
	// the counted ones, and for a store suppression the line's later
	// store instructions.
	Effect []Insn
	// Call says that a suppression skips calls.
	Call bool
}

// ErrNoBranch and its kin say why a line has no instance for a kind.
var (
	ErrNoBranch = errors.New("no conditional branch on that line")
	ErrNoEffect = errors.New("no call and no store on that line")
)

// RuleFor applies the package's instance rules to a line's instructions
// (any order; their Role is set here). It fails with ErrNoBranch or
// ErrNoEffect when the line has nothing to alter.
func RuleFor(kind Kind, line []Insn) (*Rule, error) {
	ins := append([]Insn(nil), line...)
	sort.Slice(ins, func(i, j int) bool { return ins[i].Addr < ins[j].Addr })
	r := &Rule{Kind: kind}
	var calls, stores []Insn
	for i := range ins {
		ins[i].Role = RoleOf(ins[i].Addr, ins[i].Code)
		switch ins[i].Role {
		case Branch:
			if kind == Switch {
				r.Counted = append(r.Counted, ins[i])
			}
		case CallInsn:
			calls = append(calls, ins[i])
		case Store:
			stores = append(stores, ins[i])
		}
	}
	switch {
	case kind == Switch:
		if len(r.Counted) == 0 {
			return nil, ErrNoBranch
		}
		r.Effect = r.Counted
	case len(calls) > 0:
		r.Counted, r.Effect, r.Call = calls, calls, true
	case len(stores) > 0:
		r.Counted, r.Effect = stores[:1], stores
	default:
		return nil, ErrNoEffect
	}
	return r, nil
}

// Counts reports whether an execution of the instruction at addr is one of
// the rule's instances.
func (r *Rule) Counts(addr uint64) bool {
	for _, in := range r.Counted {
		if in.Addr == addr {
			return true
		}
	}
	return false
}
