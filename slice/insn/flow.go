package insn

import (
	"golang.org/x/arch/x86/x86asm"

	"github.com/mgtrace/mgtrace/schema/tracepb"
)

// Op sets used by legacyFlow.
var (
	// Moves that copy their source whole into their destination (a
	// vector register, memory, or a GPR for movnti).
	moveOps = opSet(x86asm.MOVAPS, x86asm.MOVAPD, x86asm.MOVUPS, x86asm.MOVUPD, x86asm.MOVDQA,
		x86asm.MOVDQU, x86asm.LDDQU, x86asm.MOVNTDQA, x86asm.MOVNTDQ, x86asm.MOVNTPS, x86asm.MOVNTPD,
		x86asm.MOVNTI, x86asm.MOVZX, x86asm.MOVSX, x86asm.MOVSXD)
	// String moves (memory to memory), stores (from rax) and loads (into
	// rax), with their element sizes.
	movsOps = map[x86asm.Op]int{x86asm.MOVSB: 1, x86asm.MOVSW: 2, x86asm.MOVSD: 4, x86asm.MOVSQ: 8}
	stosOps = map[x86asm.Op]int{x86asm.STOSB: 1, x86asm.STOSW: 2, x86asm.STOSD: 4, x86asm.STOSQ: 8}
	lodsOps = map[x86asm.Op]int{x86asm.LODSB: 1, x86asm.LODSW: 2, x86asm.LODSD: 4, x86asm.LODSQ: 8}
	// Vector idioms whose result with equal operands is all ones rather
	// than zero.
	onesOps = opSet(x86asm.PCMPEQB, x86asm.PCMPEQW, x86asm.PCMPEQD, x86asm.PCMPEQQ)
)

// operand is an operand as value flow sees it: a register (r) or memory,
// and its size in bytes.
type operand struct {
	r     tracepb.Register
	mem   bool
	bytes int
}

// flowOperand returns a register or memory operand of inst; ok is false for
// operands whose value cannot be followed: immediates, x87 and MMX
// registers, segment and other special registers, the instruction pointer,
// and the high-byte registers ah, bh, ch and dh (which are not their
// location's low byte).
func flowOperand(inst *x86asm.Inst, a x86asm.Arg) (operand, bool) {
	switch a := a.(type) {
	case x86asm.Reg:
		if a >= x86asm.AH && a <= x86asm.BH {
			return operand{}, false
		}
		r := mapReg(a)
		switch r.kind {
		case kindGPR, kindXMM:
			return operand{r: r.loc, bytes: r.width / 8}, true
		}
	case x86asm.Mem:
		if inst.MemBytes > 0 {
			return operand{mem: true, bytes: inst.MemBytes}, true
		}
	}
	return operand{}, false
}

// flow records a flow from src to dst, dst being bytes wide.
func (b *builder) flow(f Flow, dst, src operand, bytes int) {
	b.Flow = f
	b.Dst, b.DstMem = dst.r, dst.mem
	b.Src, b.SrcMem = src.r, src.mem
	b.Width = uint8(bytes)
}

// constant records that dst receives c (sign-extended from dst.bytes).
func (b *builder) constant(dst operand, c int64) {
	b.flow(FlowConst, dst, operand{}, dst.bytes)
	b.Imm = signExtend(c, dst.bytes)
}

// signExtend sign-extends the low n bytes of v (n < 8; else v is kept).
func signExtend(v int64, n int) int64 {
	if n <= 0 || n >= 8 {
		return v
	}
	s := uint(64 - 8*n)
	return v << s >> s
}

// legacyFlow fills in the value flow of a non-VEX instruction decoded by
// x86asm at pc.
func legacyFlow(b *builder, inst *x86asm.Inst, args []x86asm.Arg, pc uint64) {
	op := inst.Op
	var dst, src operand
	dstOK, srcOK := false, false
	if len(args) > 0 {
		dst, dstOK = flowOperand(inst, args[0])
	}
	if len(args) > 1 {
		src, srcOK = flowOperand(inst, args[1])
	}
	switch {
	case cmovOps[op]:
		if dstOK && srcOK {
			b.flow(FlowCondMove, dst, src, dst.bytes)
		}
		return
	case moveOps[op]:
		if dstOK && srcOK {
			b.flow(FlowMove, dst, src, dst.bytes)
		}
		return
	case movsOps[op] != 0:
		b.flow(FlowMove, operand{mem: true}, operand{mem: true}, movsOps[op])
		return
	case stosOps[op] != 0:
		b.flow(FlowMove, operand{mem: true}, operand{r: rax}, stosOps[op])
		return
	case lodsOps[op] != 0:
		b.flow(FlowMove, operand{r: rax}, operand{mem: true}, lodsOps[op])
		return
	case vecZeroOps[op]:
		if r, ok := sameRegs(args); ok && r.kind == kindXMM {
			c := int64(0)
			if onesOps[op] {
				c = -1
			}
			b.constant(operand{r: r.loc, bytes: 16}, c)
		}
		return
	}

	switch op {
	case x86asm.MOV:
		if !dstOK {
			return
		}
		if n, ok := args[1].(x86asm.Imm); ok {
			b.constant(dst, int64(n))
		} else if srcOK {
			b.flow(FlowMove, dst, src, dst.bytes)
		}
	case x86asm.CBW, x86asm.CWDE, x86asm.CDQE:
		// rax's low half, sign-extended into the whole of the
		// destination.
		n := map[x86asm.Op]int{x86asm.CBW: 2, x86asm.CWDE: 4, x86asm.CDQE: 8}[op]
		b.flow(FlowMove, operand{r: rax, bytes: n}, operand{r: rax, bytes: n / 2}, n)
	case x86asm.MOVD, x86asm.MOVQ, x86asm.MOVSS, x86asm.MOVSD_XMM:
		// The copied value is 4 or 8 bytes, whatever the registers.
		if dstOK && srcOK {
			n := 8
			if op == x86asm.MOVD || op == x86asm.MOVSS {
				n = 4
			}
			b.flow(FlowMove, dst, src, n)
		}
	case x86asm.LEA:
		if m, ok := args[1].(x86asm.Mem); ok && dstOK {
			leaFlow(b, inst, dst, m, pc)
		}
	case x86asm.XCHG:
		if dstOK && srcOK {
			b.flow(FlowSwap, dst, src, dst.bytes)
		}
	case x86asm.XOR, x86asm.SUB, x86asm.ADD:
		if _, ok := sameRegs(args); ok && op != x86asm.ADD {
			if dstOK {
				b.constant(dst, 0)
			}
			return
		}
		if op == x86asm.XOR || !dstOK {
			return
		}
		sub := op == x86asm.SUB
		if n, ok := args[1].(x86asm.Imm); ok {
			addFlow(b, dst, dst.bytes)
			b.Imm = signExtend(int64(n), dst.bytes)
			if sub {
				b.Imm = -b.Imm
			}
			return
		}
		if !srcOK {
			return
		}
		addFlow(b, dst, dst.bytes)
		b.Sub = sub
		if src.mem {
			b.SrcMem = true
		} else {
			b.Src2, b.Scale = src.r, 1
		}
	case x86asm.INC, x86asm.DEC:
		if dstOK {
			addFlow(b, dst, dst.bytes)
			b.Imm = 1
			if op == x86asm.DEC {
				b.Imm = -1
			}
		}
	case x86asm.PUSH:
		// The pushed value goes to [rsp-n].
		switch a := args[0].(type) {
		case x86asm.Imm:
			n := 8 // the immediate is sign-extended to 64 bits
			if inst.DataSize == 16 {
				n = 2
			}
			b.constant(operand{mem: true, bytes: n}, int64(a))
		default:
			if dstOK {
				b.flow(FlowMove, operand{mem: true}, dst, dst.bytes)
			}
		}
	case x86asm.POP:
		if dstOK {
			b.flow(FlowMove, dst, operand{mem: true}, dst.bytes)
		}
	}
}

// addFlow records FlowAdd of a read-modify-write operand: Dst = Src + ...
func addFlow(b *builder, dst operand, bytes int) {
	b.flow(FlowAdd, dst, dst, bytes)
	if dst.mem {
		b.SrcMem = true
	}
}

// leaFlow fills in the flow of lea dst, m: a constant for an absolute or
// rip-relative address, a move for [base], an addition for base (+ index *
// scale) + displacement. An index without a base is taken as the base
// when its scale is 1; a scaled index alone is computed (FlowOther).
func leaFlow(b *builder, inst *x86asm.Inst, dst operand, m x86asm.Mem, pc uint64) {
	// x86asm zero-extends a 32-bit displacement; the CPU sign-extends it.
	disp := int64(int32(m.Disp))
	switch m.Base {
	case x86asm.RIP:
		b.constant(dst, int64(pc+uint64(inst.Len)+uint64(disp)))
		return
	case x86asm.EIP:
		b.constant(dst, int64(uint32(pc+uint64(inst.Len)+uint64(disp))))
		return
	}
	base, index, scale := m.Base, m.Index, m.Scale
	if base == 0 && scale == 1 {
		base, index = index, 0
	}
	switch {
	case base == 0 && index == 0:
		b.constant(dst, disp)
	case base == 0:
		return
	case index == 0 && disp == 0:
		b.flow(FlowMove, dst, operand{r: mapReg(base).loc}, dst.bytes)
	default:
		b.flow(FlowAdd, dst, operand{r: mapReg(base).loc}, dst.bytes)
		b.Imm = signExtend(disp, dst.bytes)
		if index != 0 {
			b.Src2, b.Scale = mapReg(index).loc, scale
		}
	}
}
