package insn

import (
	"golang.org/x/arch/x86/x86asm"

	"github.com/mgtrace/mgtrace/schema/tracepb"
)

// regKind says what kind of location an x86asm register names.
type regKind uint8

const (
	kindOther regKind = iota // segment, control, debug, ... registers: REG_OTHER
	kindGPR                  // a general-purpose register (any width)
	kindXMM                  // xmm/ymm n
	kindX87                  // x87 stack or MMX register
	kindRIP                  // the instruction pointer
)

// reg describes one register operand: the location it belongs to, its kind
// and, for general-purpose registers, its width in bits.
type reg struct {
	loc   tracepb.Register
	kind  regKind
	width int
}

// partial reports whether writing the register keeps part of the old value
// of its location: 8- and 16-bit GPR writes, and any write to the x87/MMX
// stack or to REG_OTHER (both modelled as single aggregate locations).
func (r reg) partial() bool {
	switch r.kind {
	case kindGPR:
		return r.width < 32
	case kindX87, kindOther:
		return true
	}
	return false
}

// gpr returns the 64-bit general-purpose register with hardware number n
// (0 = rax ... 15 = r15).
func gpr(n int) tracepb.Register { return tracepb.Register_RAX + tracepb.Register(n&15) }

// xmm returns the vector register with number n.
func xmm(n int) tracepb.Register { return tracepb.Register_XMM0 + tracepb.Register(n&15) }

// mapReg maps an x86asm register to its location in the trace's numbering.
func mapReg(r x86asm.Reg) reg {
	switch {
	case r >= x86asm.AL && r <= x86asm.R15B:
		i := int(r - x86asm.AL)
		if i >= 4 { // ah ch dh bh -> rax..rbx; spl bpl sil dil r8b.. -> rsp..
			i -= 4
		}
		return reg{gpr(i), kindGPR, 8}
	case r >= x86asm.AX && r <= x86asm.R15W:
		return reg{gpr(int(r - x86asm.AX)), kindGPR, 16}
	case r >= x86asm.EAX && r <= x86asm.R15L:
		return reg{gpr(int(r - x86asm.EAX)), kindGPR, 32}
	case r >= x86asm.RAX && r <= x86asm.R15:
		return reg{gpr(int(r - x86asm.RAX)), kindGPR, 64}
	case r == x86asm.IP || r == x86asm.EIP || r == x86asm.RIP:
		return reg{tracepb.Register_RIP, kindRIP, 64}
	case r >= x86asm.F0 && r <= x86asm.M7:
		return reg{tracepb.Register_X87, kindX87, 0}
	case r >= x86asm.X0 && r <= x86asm.X15:
		return reg{xmm(int(r - x86asm.X0)), kindXMM, 128}
	}
	return reg{tracepb.Register_REG_OTHER, kindOther, 0}
}

// regRange returns the set of registers from lo to hi inclusive.
func regRange(lo, hi tracepb.Register) Regs {
	var s Regs
	for r := lo; r <= hi; r++ {
		s |= 1 << uint(r)
	}
	return s
}

// Register sets used by several instructions.
var (
	allXMM      = regRange(tracepb.Register_XMM0, tracepb.Register_XMM15)
	validRegs   = regRange(tracepb.Register_RAX, tracepb.Register_GS_BASE) | allXMM | Of(tracepb.Register_X87, tracepb.Register_REG_OTHER)
	syscallArgs = Of(tracepb.Register_RAX, tracepb.Register_RDI, tracepb.Register_RSI, tracepb.Register_RDX,
		tracepb.Register_R10, tracepb.Register_R8, tracepb.Register_R9)
)

// Valid reports whether every register in the set is one that Decode can
// produce (a GPR, RIP, RFLAGS, FS_BASE, GS_BASE, XMM0-15, X87, REG_OTHER).
func (s Regs) Valid() bool { return s&^validRegs == 0 }
