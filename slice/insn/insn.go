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

// Flow says how an instruction's result relates to its sources, for
// analyses that follow values (pointer provenance, value propagation
// chains). See Info's Dst, Src, Src2, DstMem, SrcMem, Imm, Width, Scale and
// Sub for the operands of each flow.
type Flow uint8

// The value flows.
const (
	// FlowOther: the result is computed (or there is none): no value is
	// carried.
	FlowOther Flow = iota
	// FlowMove: Dst receives Src's value unchanged (a copy, perhaps
	// widened with zero or sign extension): mov, movzx, movsx, movsxd,
	// movd, movq, movss, movsd, full-width vector moves (movdqu, movaps,
	// vmovdqu, ...), push (DstMem), pop (SrcMem), string moves, stores
	// and loads (movs, stos, lods), and lea r, [base].
	FlowMove
	// FlowConst: Dst receives the constant Imm: mov r/m, imm; push imm;
	// the zero idioms (xor r,r; sub r,r; pxor x,x; vpxor x,x,x; ...) with
	// Imm 0 and the all-ones idioms (pcmpeq* x,x) with Imm -1; lea with a
	// rip-relative or absolute address (the address of a global).
	FlowConst
	// FlowAdd: pointer arithmetic, Dst = Src + Scale*Src2 + Imm (Src2
	// subtracted if Sub): add and sub of an immediate, a register or
	// memory; inc and dec; lea with a base register. The subtraction of
	// a register (sub r, r2, whose Sub is set) is FlowAdd too, so that
	// provenance analyses can treat p - q specially.
	FlowAdd
	// FlowSwap: xchg: Dst and Src exchange values.
	FlowSwap
	// FlowCondMove: cmovcc: Dst receives Src's value or keeps its own.
	FlowCondMove
)

// BitOp is the kind of a bitwise operation with an immediate.
type BitOp uint8

// The bitwise operations with an immediate.
const (
	BitNone BitOp = iota
	BitAnd        // and r/m, imm
	BitOr         // or r/m, imm
	BitXor        // xor r/m, imm
	BitTest       // test r/m, imm
	BitBT         // bt r/m, imm
	BitBTS        // bts r/m, imm
	BitBTR        // btr r/m, imm
	BitBTC        // btc r/m, imm
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

	// Flow says how the destination's value relates to the sources'.
	// The fields below it are zero for FlowOther.
	Flow Flow
	// Dst is the destination register and Src the source register, 0
	// when the operand is memory (DstMem, SrcMem) or absent (FlowConst
	// has no source). Src2 is FlowAdd's second register addend: the
	// register of add/sub r, r2, or lea's index; 0 otherwise. For add
	// and sub the destination is also Src, so that r + r2 keeps either
	// operand as the pointer: add r, r2 has Dst = Src = r, Src2 = r2.
	Dst, Src, Src2 tracepb.Register
	// DstMem and SrcMem say that the destination or the source operand
	// is memory: the explicit memory operand at Base and Index, the stack
	// slot of push (its destination) and pop (its source), or [rsi] and
	// [rdi] of string instructions. A string move has both. For
	// FlowAdd without DstMem, SrcMem says that the second addend is the
	// memory operand (add r, [m]: Dst = Src = r).
	DstMem, SrcMem bool
	// Sub says that FlowAdd's second addend (Src2, or the memory operand
	// of sub r, [m]) is subtracted rather than added.
	Sub bool
	// Width is the size in bytes of the value written to the destination
	// (1, 2, 4, 8, 16 or 32): the destination operand's size, except that
	// movd/movq and the scalar movss/movsd give the 4 or 8 bytes they
	// copy. A 4-byte write to a general-purpose register and a write to
	// a vector register zero the rest of it, unless the write is partial
	// (8- and 16-bit writes, movss/movsd between registers: Dst is then
	// also in Uses).
	Width uint8
	// Scale is Src2's multiplier: lea's scale (1, 2, 4 or 8), or 1 for
	// add and sub of a register; 0 when Src2 is 0.
	Scale uint8
	// BitOp says the instruction is a bitwise and, or, xor, test, bt,
	// bts, btr or btc with an immediate operand (Mask): it reads or sets particular bits of a value (a bit field,
	// a flag word), which analyses that track definedness by byte rather
	// than by bit treat apart. BitNone for every other instruction.
	BitOp BitOp
	// Mask is BitOp's immediate: the mask, or the bit number.
	Mask int64
	// Imm is FlowConst's constant and FlowAdd's constant addend (negated
	// for sub, the displacement for lea), sign-extended from Width bytes
	// (so -1 with Width 16 is all ones).
	Imm int64

	// Compare says the instruction compares its operands and keeps only
	// the outcome in RFLAGS: cmp, test, and the legacy-encoded
	// floating-point and vector compares that set flags (comiss, comisd,
	// ucomiss, ucomisd, ptest).
	Compare bool
	// Cond is the condition a jcc, setcc or cmovcc tests (CondNone for
	// every other instruction): with Compare on the instruction that set
	// the flags, a jcc with CondE that was taken, or one with CondNE that
	// was not, went the way that means "the operands were equal".
	Cond Cond
}

// Cond is an x86 condition code, as jcc, setcc and cmovcc name it.
type Cond uint8

// The conditions, in the encoding's order (the low nibble of jcc's opcode
// plus one).
const (
	CondNone Cond = iota
	CondO         // overflow
	CondNO        // no overflow
	CondB         // below (carry)
	CondAE        // above or equal (no carry)
	CondE         // equal (zero)
	CondNE        // not equal (not zero)
	CondBE        // below or equal
	CondA         // above
	CondS         // sign
	CondNS        // no sign
	CondP         // parity
	CondNP        // no parity
	CondL         // less
	CondGE        // greater or equal
	CondLE        // less or equal
	CondG         // greater
)

// flowFields returns an Info holding only in's value-flow fields (Flow
// through Imm).
func (in Info) flowFields() Info {
	return Info{Flow: in.Flow, Dst: in.Dst, Src: in.Src, Src2: in.Src2, DstMem: in.DstMem, SrcMem: in.SrcMem,
		Sub: in.Sub, Width: in.Width, Scale: in.Scale, Imm: in.Imm}
}
