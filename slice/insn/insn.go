package insn

import "github.com/mgtrace/mgtrace/schema/tracepb"

// Regs is a set of registers: bit n is tracepb.Register n.
type Regs uint64

// Has reports whether r is in the set.
func (s Regs) Has(r tracepb.Register) bool { return s&(1<<uint(r)) != 0 }

// Of returns the set holding the given registers.
func Of(rs ...tracepb.Register) Regs {
	var s Regs
	for _, r := range rs {
		s |= 1 << uint(r)
	}
	return s
}

// Class says how an instruction transfers control.
type Class uint8

// The control-transfer classes.
const (
	Plain        Class = iota // falls through to the next instruction
	CondJump                  // jcc, jrcxz, loop*: to Target or the next instruction
	Jump                      // jmp rel: to Target
	IndirectJump              // jmp r/m
	Call                      // call rel: to Target, returns to the next instruction
	IndirectCall              // call r/m
	Return                    // ret, iret
	Syscall                   // syscall, int 0x80, sysenter
	Halt                      // hlt, ud2, int3: no successor
)

// Info is what the slicer needs to know of one instruction.
type Info struct {
	Len    int    // length in bytes
	Class  Class  // control transfer
	Target uint64 // absolute target of a direct Jump, CondJump or Call

	// Uses are the registers whose values the instruction reads as data:
	// explicit source operands, a destination it also reads (add, and a
	// write of 8 or 16 bits, which keeps the rest of the register), and
	// implicit operands (rax/rdx of mul and div, rcx/rsi/rdi of string
	// operations, RFLAGS of jcc/setcc/cmovcc/adc, ...). The registers of
	// an LEA's address are Uses. Registers that only form a memory
	// operand's address are not in Uses (see Base and Index).
	Uses Regs
	// Defs are the registers the instruction writes (RFLAGS included).
	Defs Regs
	// Base and Index are the registers of the memory operand's address
	// (0 when none; RIP for rip-relative). Not set for LEA, whose address
	// registers are Uses.
	Base, Index tracepb.Register

	// Save is the register a push or a 64-bit mov of a register to
	// [rsp+d] or [rbp+d] stores (a candidate callee save); 0 otherwise.
	Save tracepb.Register
	// Restore is the register a pop or a 64-bit mov from [rsp+d] or
	// [rbp+d] loads (a candidate restore); 0 otherwise.
	Restore tracepb.Register
}
