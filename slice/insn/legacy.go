package insn

import (
	"strings"

	"golang.org/x/arch/x86/x86asm"
)

// Op sets used by legacy.
var (
	jccOps = opSet(x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE, x86asm.JE, x86asm.JG, x86asm.JGE,
		x86asm.JL, x86asm.JLE, x86asm.JNE, x86asm.JNO, x86asm.JNP, x86asm.JNS, x86asm.JO, x86asm.JP, x86asm.JS)
	cmovOps = opSet(x86asm.CMOVA, x86asm.CMOVAE, x86asm.CMOVB, x86asm.CMOVBE, x86asm.CMOVE, x86asm.CMOVG,
		x86asm.CMOVGE, x86asm.CMOVL, x86asm.CMOVLE, x86asm.CMOVNE, x86asm.CMOVNO, x86asm.CMOVNP,
		x86asm.CMOVNS, x86asm.CMOVO, x86asm.CMOVP, x86asm.CMOVS)
	setOps = opSet(x86asm.SETA, x86asm.SETAE, x86asm.SETB, x86asm.SETBE, x86asm.SETE, x86asm.SETG,
		x86asm.SETGE, x86asm.SETL, x86asm.SETLE, x86asm.SETNE, x86asm.SETNO, x86asm.SETNP,
		x86asm.SETNS, x86asm.SETO, x86asm.SETP, x86asm.SETS)
	// Instructions with no register or flag effect at all.
	nopOps = opSet(x86asm.NOP, x86asm.PAUSE, x86asm.LFENCE, x86asm.MFENCE, x86asm.SFENCE,
		x86asm.PREFETCHNTA, x86asm.PREFETCHT0, x86asm.PREFETCHT1, x86asm.PREFETCHT2, x86asm.PREFETCHW,
		x86asm.CLFLUSH, x86asm.FNOP)
	// Zero (or all-ones) idioms when both operands are the same vector
	// register: the result does not depend on the register's value.
	vecZeroOps = opSet(x86asm.PXOR, x86asm.XORPS, x86asm.XORPD, x86asm.PANDN, x86asm.ANDNPS, x86asm.ANDNPD,
		x86asm.PSUBB, x86asm.PSUBW, x86asm.PSUBD, x86asm.PSUBQ, x86asm.PSUBSB, x86asm.PSUBSW,
		x86asm.PSUBUSB, x86asm.PSUBUSW, x86asm.PCMPEQB, x86asm.PCMPEQW, x86asm.PCMPEQD, x86asm.PCMPEQQ,
		x86asm.PCMPGTB, x86asm.PCMPGTW, x86asm.PCMPGTD, x86asm.PCMPGTQ)
	// Instructions whose first operand is entirely overwritten (a vector
	// register wholly, or a GPR with zero extension) from the others.
	fullWriteOps = opSet(x86asm.MOVAPS, x86asm.MOVAPD, x86asm.MOVUPS, x86asm.MOVUPD, x86asm.MOVDQA,
		x86asm.MOVDQU, x86asm.LDDQU, x86asm.MOVNTDQA, x86asm.MOVNTDQ, x86asm.MOVNTPS, x86asm.MOVNTPD,
		x86asm.MOVNTQ, x86asm.MOVNTI, x86asm.MOVNTSD, x86asm.MOVNTSS, x86asm.MOVDDUP, x86asm.MOVSHDUP, x86asm.MOVSLDUP,
		x86asm.PSHUFD, x86asm.PSHUFHW, x86asm.PSHUFLW, x86asm.PSHUFW,
		x86asm.PMOVZXBW, x86asm.PMOVZXBD, x86asm.PMOVZXBQ, x86asm.PMOVZXWD, x86asm.PMOVZXWQ, x86asm.PMOVZXDQ,
		x86asm.PMOVSXBW, x86asm.PMOVSXBD, x86asm.PMOVSXBQ, x86asm.PMOVSXWD, x86asm.PMOVSXWQ, x86asm.PMOVSXDQ,
		x86asm.CVTDQ2PS, x86asm.CVTPS2DQ, x86asm.CVTTPS2DQ, x86asm.CVTDQ2PD, x86asm.CVTPS2PD, x86asm.CVTPD2PS,
		x86asm.CVTPD2DQ, x86asm.CVTTPD2DQ, x86asm.CVTPI2PD,
		x86asm.CVTSD2SI, x86asm.CVTTSD2SI, x86asm.CVTSS2SI, x86asm.CVTTSS2SI,
		x86asm.CVTPS2PI, x86asm.CVTTPS2PI, x86asm.CVTPD2PI, x86asm.CVTTPD2PI,
		x86asm.SQRTPS, x86asm.SQRTPD, x86asm.RCPPS, x86asm.RSQRTPS, x86asm.ROUNDPS, x86asm.ROUNDPD,
		x86asm.PABSB, x86asm.PABSW, x86asm.PABSD, x86asm.PHMINPOSUW, x86asm.MOVD, x86asm.MOVQ,
		x86asm.MOVQ2DQ, x86asm.MOVDQ2Q, x86asm.AESIMC, x86asm.AESKEYGENASSIST,
		x86asm.MOVMSKPS, x86asm.MOVMSKPD, x86asm.PMOVMSKB,
		x86asm.PEXTRB, x86asm.PEXTRW, x86asm.PEXTRD, x86asm.PEXTRQ, x86asm.EXTRACTPS)
	// Vector compares that only set RFLAGS.
	flagCmpOps = opSet(x86asm.COMISS, x86asm.COMISD, x86asm.UCOMISS, x86asm.UCOMISD, x86asm.PTEST)
	xsaveOps   = opSet(x86asm.FXSAVE, x86asm.FXSAVE64, x86asm.XSAVE, x86asm.XSAVE64, x86asm.XSAVEC,
		x86asm.XSAVEC64, x86asm.XSAVEOPT, x86asm.XSAVEOPT64, x86asm.XSAVES, x86asm.XSAVES64)
	xrstorOps = opSet(x86asm.FXRSTOR, x86asm.FXRSTOR64, x86asm.XRSTOR, x86asm.XRSTOR64, x86asm.XRSTORS,
		x86asm.XRSTORS64)
)

// bitOp records a bitwise operation with an immediate and its mask or
// bit number (nothing when no operand is an immediate, or k is BitNone).
func (b *builder) bitOp(k BitOp, args []x86asm.Arg) {
	if k == BitNone {
		return
	}
	for _, a := range args {
		if imm, ok := a.(x86asm.Imm); ok {
			b.BitOp, b.Mask = k, int64(imm)
			return
		}
	}
}

// condOf maps each jcc, setcc and cmovcc to the condition it tests.
var condOf = func() map[x86asm.Op]Cond {
	m := make(map[x86asm.Op]Cond)
	for c, ops := range map[Cond][3]x86asm.Op{
		CondO: {x86asm.JO, x86asm.SETO, x86asm.CMOVO}, CondNO: {x86asm.JNO, x86asm.SETNO, x86asm.CMOVNO},
		CondB: {x86asm.JB, x86asm.SETB, x86asm.CMOVB}, CondAE: {x86asm.JAE, x86asm.SETAE, x86asm.CMOVAE},
		CondE: {x86asm.JE, x86asm.SETE, x86asm.CMOVE}, CondNE: {x86asm.JNE, x86asm.SETNE, x86asm.CMOVNE},
		CondBE: {x86asm.JBE, x86asm.SETBE, x86asm.CMOVBE}, CondA: {x86asm.JA, x86asm.SETA, x86asm.CMOVA},
		CondS: {x86asm.JS, x86asm.SETS, x86asm.CMOVS}, CondNS: {x86asm.JNS, x86asm.SETNS, x86asm.CMOVNS},
		CondP: {x86asm.JP, x86asm.SETP, x86asm.CMOVP}, CondNP: {x86asm.JNP, x86asm.SETNP, x86asm.CMOVNP},
		CondL: {x86asm.JL, x86asm.SETL, x86asm.CMOVL}, CondGE: {x86asm.JGE, x86asm.SETGE, x86asm.CMOVGE},
		CondLE: {x86asm.JLE, x86asm.SETLE, x86asm.CMOVLE}, CondG: {x86asm.JG, x86asm.SETG, x86asm.CMOVG},
	} {
		for _, op := range ops {
			m[op] = c
		}
	}
	return m
}()

// opSet builds a read-only set of ops.
func opSet(ops ...x86asm.Op) map[x86asm.Op]bool {
	m := make(map[x86asm.Op]bool, len(ops))
	for _, op := range ops {
		m[op] = true
	}
	return m
}

// legacy models a non-VEX instruction decoded by x86asm.
func legacy(b *builder, inst *x86asm.Inst, args []x86asm.Arg) {
	op := inst.Op
	b.Cond = condOf[op]
	switch {
	case jccOps[op]:
		b.Class = CondJump
		b.use(rflags)
		return
	case cmovOps[op]:
		b.args(args, rRW, rR) // the destination keeps its value when false
		b.use(rflags)
		return
	case setOps[op]:
		b.args(args, rW)
		b.use(rflags)
		return
	case nopOps[op]:
		return
	}

	switch op {
	// Data movement.
	case x86asm.MOV:
		b.args(args, rW, rR)
		if len(args) == 2 {
			if m, ok := args[1].(x86asm.Mem); ok && stackSlot(m) {
				b.Restore = gpr64(args[0])
			}
			if m, ok := args[0].(x86asm.Mem); ok && stackSlot(m) {
				b.Save = gpr64(args[1])
			}
		}
	case x86asm.MOVZX, x86asm.MOVSX, x86asm.MOVSXD, x86asm.MOVBE:
		b.args(args, rW, rR)
	case x86asm.LEA:
		b.args(args, rW, rA)
	case x86asm.XCHG, x86asm.XADD:
		b.args(args, rRW, rRW)
		if op == x86asm.XADD {
			b.def(rflags)
		}
	case x86asm.CMPXCHG:
		b.args(args, rRW, rR)
		b.useDef(rax)
		b.def(rflags)
	case x86asm.CMPXCHG8B, x86asm.CMPXCHG16B:
		b.args(args, rRW)
		b.useDef(rax, rdx)
		b.use(rbx, rcx)
		b.useDef(rflags) // only ZF is written
	case x86asm.BSWAP:
		b.args(args, rRW)
	case x86asm.CWD, x86asm.CDQ, x86asm.CQO:
		b.use(rax)
		b.def(rdx)
		if op == x86asm.CWD {
			b.use(rdx)
		}
	case x86asm.CBW, x86asm.CWDE, x86asm.CDQE:
		b.useDef(rax)

	// Integer arithmetic and logic.
	case x86asm.ADD, x86asm.OR, x86asm.AND, x86asm.SUB, x86asm.XOR:
		if r, ok := sameRegs(args); ok && (op == x86asm.XOR || op == x86asm.SUB) {
			b.zero(r)
		} else {
			b.args(args, rRW, rR)
		}
		b.def(rflags)
		b.bitOp(map[x86asm.Op]BitOp{x86asm.AND: BitAnd, x86asm.OR: BitOr, x86asm.XOR: BitXor}[op], args)
	case x86asm.ADC, x86asm.SBB:
		if r, ok := sameRegs(args); ok && op == x86asm.SBB {
			b.zero(r) // 0 or -1, from CF alone
		} else {
			b.args(args, rRW, rR)
		}
		b.useDef(rflags)
	case x86asm.CMP, x86asm.TEST:
		b.args(args, rR, rR)
		b.def(rflags)
		b.Compare = true
		if op == x86asm.TEST {
			b.bitOp(BitTest, args)
		}
	case x86asm.INC, x86asm.DEC:
		b.args(args, rRW)
		b.useDef(rflags) // CF is kept
	case x86asm.NEG:
		b.args(args, rRW)
		b.def(rflags)
	case x86asm.NOT:
		b.args(args, rRW)
	case x86asm.SHL, x86asm.SHR, x86asm.SAR, x86asm.SHLD, x86asm.SHRD:
		b.args(args, rRW, rR, rR)
		b.def(rflags)
		mask := int64(31)
		if width(inst, args[0]) == 64 {
			mask = 63
		}
		if n, ok := args[len(args)-1].(x86asm.Imm); !ok || int64(n)&mask == 0 {
			b.use(rflags) // a zero count leaves the flags alone
		}
	case x86asm.ROL, x86asm.ROR, x86asm.RCL, x86asm.RCR:
		b.args(args, rRW, rR)
		b.useDef(rflags) // rotates write CF and OF only
	case x86asm.BT:
		b.args(args, rR, rR)
		b.useDef(rflags) // CF only
		b.bitOp(BitBT, args)
	case x86asm.BTS, x86asm.BTR, x86asm.BTC:
		b.args(args, rRW, rR)
		b.useDef(rflags)
		b.bitOp(map[x86asm.Op]BitOp{x86asm.BTS: BitBTS, x86asm.BTR: BitBTR, x86asm.BTC: BitBTC}[op], args)
	case x86asm.BSF, x86asm.BSR:
		b.args(args, rRW, rR) // destination unchanged when the source is 0
		b.def(rflags)
	case x86asm.POPCNT, x86asm.LZCNT, x86asm.TZCNT:
		b.args(args, rW, rR)
		b.def(rflags)
	case x86asm.IMUL, x86asm.MUL:
		switch len(args) {
		case 1:
			mulDiv(b, inst, args[0], false)
		case 2:
			b.args(args, rRW, rR)
		default:
			b.args(args, rW, rR, rR)
		}
		b.def(rflags)
	case x86asm.DIV, x86asm.IDIV:
		mulDiv(b, inst, args[0], true)
		b.def(rflags)
	case x86asm.CRC32:
		b.args(args, rRW, rR)

	// Flags.
	case x86asm.LAHF:
		b.use(rflags)
		b.useDef(rax)
	case x86asm.SAHF:
		b.use(rax)
		b.useDef(rflags)
	case x86asm.CLC, x86asm.STC, x86asm.CMC, x86asm.CLD, x86asm.STD:
		b.useDef(rflags)
	case x86asm.CLI, x86asm.STI:
		b.useDef(other)

	// Stack.
	case x86asm.PUSH:
		b.useDef(rsp)
		switch a := args[0].(type) {
		case x86asm.Mem:
			b.mem(a, rR)
		case x86asm.Reg:
			b.arg(a, rR)
			b.Base = rsp
			b.Save = gpr64(a)
		default:
			b.Base = rsp
		}
	case x86asm.POP:
		b.useDef(rsp)
		switch a := args[0].(type) {
		case x86asm.Mem:
			b.mem(a, rW)
		case x86asm.Reg:
			b.arg(a, rW)
			b.Base = rsp
			b.Restore = gpr64(a)
		}
	case x86asm.PUSHF, x86asm.PUSHFD, x86asm.PUSHFQ:
		b.useDef(rsp)
		b.use(rflags)
		b.Base = rsp
	case x86asm.POPF, x86asm.POPFD, x86asm.POPFQ:
		b.useDef(rsp)
		b.def(rflags)
		if op == x86asm.POPF { // 16 bits: a partial write
			b.use(rflags)
		}
		b.Base = rsp
	case x86asm.LEAVE:
		b.use(rbp)
		b.def(rsp, rbp)
		b.Base = rbp
		b.Restore = rbp
	case x86asm.ENTER:
		b.useDef(rsp, rbp)
		b.Base = rsp

	// Control transfer.
	case x86asm.JMP, x86asm.LJMP:
		b.Class = IndirectJump
		if _, ok := args[0].(x86asm.Rel); ok {
			b.Class = Jump
		} else {
			b.args(args, rR)
		}
	case x86asm.CALL, x86asm.LCALL:
		b.useDef(rsp)
		b.Class = IndirectCall
		switch a := args[0].(type) {
		case x86asm.Rel:
			b.Class = Call
			b.Base = rsp
		case x86asm.Reg:
			b.arg(a, rR)
			b.Base = rsp
		default:
			b.arg(a, rR)
		}
	case x86asm.RET, x86asm.LRET:
		b.Class = Return
		b.useDef(rsp)
		b.Base = rsp
	case x86asm.IRET, x86asm.IRETD, x86asm.IRETQ, x86asm.SYSRET, x86asm.SYSEXIT:
		b.Class = Return
		b.useDef(rsp, rflags, other)
		b.Base = rsp
	case x86asm.JCXZ, x86asm.JECXZ, x86asm.JRCXZ:
		b.Class = CondJump
		b.use(rcx)
	case x86asm.LOOP, x86asm.LOOPE, x86asm.LOOPNE:
		b.Class = CondJump
		b.useDef(rcx)
		if op != x86asm.LOOP {
			b.use(rflags)
		}
	case x86asm.SYSCALL:
		b.Class = Syscall
		b.Uses |= syscallArgs
		b.use(rflags)
		b.def(rax, rcx, r11)
	case x86asm.SYSENTER:
		b.Class = Syscall
		b.Uses |= syscallArgs
		b.use(rbx, rcx, rbp, rflags)
		b.def(rax)
	case x86asm.INT:
		b.Class = Halt
		if n, ok := args[0].(x86asm.Imm); ok && n == 0x80 {
			b.Class = Syscall
			b.use(rax, rbx, rcx, rdx, rsi, rdi, rbp)
			b.def(rax)
		}
	case x86asm.ICEBP, x86asm.HLT, x86asm.UD0, x86asm.UD1, x86asm.UD2:
		b.Class = Halt

	// String instructions: implicit [rsi]/[rdi]; DF is read.
	case x86asm.MOVSB, x86asm.MOVSW, x86asm.MOVSD, x86asm.MOVSQ:
		b.useDef(rsi, rdi)
		b.use(rflags)
		rep(b, inst)
	case x86asm.STOSB, x86asm.STOSW, x86asm.STOSD, x86asm.STOSQ:
		b.useDef(rdi)
		b.use(rax, rflags)
		rep(b, inst)
	case x86asm.LODSB, x86asm.LODSW, x86asm.LODSD, x86asm.LODSQ:
		b.useDef(rsi)
		b.use(rflags)
		b.def(rax)
		if op == x86asm.LODSB || op == x86asm.LODSW || hasRep(inst) {
			b.use(rax)
		}
		rep(b, inst)
	case x86asm.SCASB, x86asm.SCASW, x86asm.SCASD, x86asm.SCASQ:
		b.useDef(rdi, rflags)
		b.use(rax)
		rep(b, inst)
	case x86asm.CMPSB, x86asm.CMPSW, x86asm.CMPSD, x86asm.CMPSQ:
		b.useDef(rsi, rdi, rflags)
		rep(b, inst)
	case x86asm.INSB, x86asm.INSW, x86asm.INSD, x86asm.OUTSB, x86asm.OUTSW, x86asm.OUTSD:
		b.useDef(rsi, rdi, other)
		b.use(rdx, rflags)
		rep(b, inst)
	case x86asm.XLATB:
		b.useDef(rax)
		b.Base = rbx

	// Special registers.
	case x86asm.CPUID:
		b.use(rax, rcx)
		b.def(rax, rbx, rcx, rdx)
	case x86asm.RDTSC:
		b.def(rax, rdx)
	case x86asm.RDTSCP:
		b.def(rax, rdx, rcx)
	case x86asm.XGETBV, x86asm.RDPMC, x86asm.RDMSR:
		b.use(rcx)
		b.def(rax, rdx)
	case x86asm.RDRAND:
		b.args(args, rW)
		b.def(rflags)
	case x86asm.RDFSBASE, x86asm.RDGSBASE:
		b.args(args, rW)
		if op == x86asm.RDFSBASE {
			b.use(fsBase)
		} else {
			b.use(gsBase)
		}
	case x86asm.WRFSBASE, x86asm.WRGSBASE:
		b.args(args, rR)
		if op == x86asm.WRFSBASE {
			b.def(fsBase)
		} else {
			b.def(gsBase)
		}

	// SSE.
	case x86asm.MOVSS, x86asm.MOVSD_XMM:
		if _, ok := args[1].(x86asm.Mem); ok {
			b.args(args, rW, rR) // a load zeroes the rest
		} else {
			b.args(args, rRW, rR) // reg-reg keeps the rest of the destination
		}
	case x86asm.BLENDVPS, x86asm.BLENDVPD, x86asm.PBLENDVB:
		b.args(args, rRW, rR, rR)
		b.use(xmm0)
	case x86asm.PCMPESTRI, x86asm.PCMPESTRM, x86asm.PCMPISTRI, x86asm.PCMPISTRM:
		b.args(args, rR, rR)
		b.def(rflags)
		if op == x86asm.PCMPESTRI || op == x86asm.PCMPESTRM {
			b.use(rax, rdx)
		}
		if op == x86asm.PCMPESTRI || op == x86asm.PCMPISTRI {
			b.def(rcx)
		} else {
			b.def(xmm0)
		}
	case x86asm.MASKMOVDQU, x86asm.MASKMOVQ:
		b.args(args, rR, rR)
		b.use(rdi)
	case x86asm.LDMXCSR:
		b.args(args, rR)
		b.def(other)
	case x86asm.STMXCSR:
		b.args(args, rW)
		b.use(other)
	case x86asm.EMMS:
		b.useDef(x87)

	default:
		switch {
		case fullWriteOps[op]:
			b.args(args, rW, rR)
		case flagCmpOps[op]:
			b.args(args, rR, rR)
			b.def(rflags)
			b.Compare = true
		case vecZeroOps[op]:
			if r, ok := sameRegs(args); ok {
				b.zero(r)
			} else {
				b.args(args, rRW, rR)
			}
		case xsaveOps[op]:
			b.args(args, rW)
			b.Uses |= allXMM | Of(x87, other, rax, rdx)
		case xrstorOps[op]:
			b.args(args, rR)
			b.Uses |= allXMM | Of(rax, rdx)
			b.Defs |= allXMM
			b.def(x87, other)
		case isX87(op):
			b.useDef(x87)
			for _, a := range args {
				b.arg(a, rRW)
			}
			switch op {
			case x86asm.FCOMI, x86asm.FCOMIP, x86asm.FUCOMI, x86asm.FUCOMIP:
				b.def(rflags)
			case x86asm.FCMOVB, x86asm.FCMOVBE, x86asm.FCMOVE, x86asm.FCMOVNB, x86asm.FCMOVNBE,
				x86asm.FCMOVNE, x86asm.FCMOVNU, x86asm.FCMOVU:
				b.use(rflags)
			}
		default:
			// Not specifically modelled: the first operand is read and
			// written, the others read; flags are read, not written.
			// Vector instructions (packed arithmetic, scalar arithmetic
			// that keeps the upper part, shuffles, ...) fit this rule,
			// and do not read the flags.
			b.args(args, rRW, rR)
			if len(args) == 0 {
				b.use(other)
				b.def(other)
				b.use(rflags)
			} else if r, ok := args[0].(x86asm.Reg); !ok || mapReg(r).kind != kindXMM {
				b.use(rflags)
			}
		}
	}
}

// isX87 reports whether op is an x87 floating-point instruction.
func isX87(op x86asm.Op) bool {
	s := op.String()
	return strings.HasPrefix(s, "F") && !strings.HasPrefix(s, "FX")
}

// rep adds rcx to a string instruction with a rep prefix.
func rep(b *builder, inst *x86asm.Inst) {
	if hasRep(inst) {
		b.useDef(rcx)
	}
}

// mulDiv models one-operand mul, imul, div and idiv: rdx:rax (or ax for
// the 8-bit forms) against the explicit source.
func mulDiv(b *builder, inst *x86asm.Inst, src x86asm.Arg, div bool) {
	b.arg(src, rR)
	switch width(inst, src) {
	case 8: // ax = al*src; al, ah = ax/src
		b.useDef(rax)
	case 16: // partial writes of ax and dx
		b.useDef(rax, rdx)
	default:
		b.use(rax)
		if div {
			b.use(rdx)
		}
		b.def(rax, rdx)
	}
}
