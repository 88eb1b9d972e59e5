package insn

import (
	"errors"
	"fmt"

	"golang.org/x/arch/x86/x86asm"

	"github.com/mgtrace/mgtrace/schema/tracepb"
)

// Errors wrapped by Decode.
var (
	// ErrTruncated means that code ends before the instruction does.
	ErrTruncated = errors.New("truncated instruction")
	// ErrUnsupported means that the bytes are not an instruction Decode
	// knows (EVEX, XOP, an unknown VEX opcode, or one x86asm rejects).
	ErrUnsupported = errors.New("unsupported instruction")
)

// Short names for the registers used by implicit operands.
const (
	rax    = tracepb.Register_RAX
	rcx    = tracepb.Register_RCX
	rdx    = tracepb.Register_RDX
	rbx    = tracepb.Register_RBX
	rsp    = tracepb.Register_RSP
	rbp    = tracepb.Register_RBP
	rsi    = tracepb.Register_RSI
	rdi    = tracepb.Register_RDI
	r11    = tracepb.Register_R11
	rflags = tracepb.Register_RFLAGS
	fsBase = tracepb.Register_FS_BASE
	gsBase = tracepb.Register_GS_BASE
	xmm0   = tracepb.Register_XMM0
	x87    = tracepb.Register_X87
	other  = tracepb.Register_REG_OTHER
)

// Decode decodes the one x86-64 instruction in code, which holds that
// instruction's bytes (extra bytes after it are ignored); pc is its address,
// used to make the targets of relative branches and calls absolute. The
// error, if any, wraps ErrTruncated, ErrUnsupported or an x86asm error.
func Decode(pc uint64, code []byte) (Info, error) {
	in, err := decode(pc, code)
	if err != nil {
		return Info{}, fmt.Errorf("decode %#x: %w", pc, err)
	}
	return in, nil
}

func decode(pc uint64, code []byte) (Info, error) {
	if len(code) > 15 {
		code = code[:15]
	}
	// Segment and address-size prefixes may come before a VEX prefix; any
	// other legacy prefix before C4/C5 would make it LES/LDS, invalid in
	// 64-bit mode, which x86asm rejects.
	var seg tracepb.Register
	p := 0
scan:
	for ; p < len(code); p++ {
		switch code[p] {
		case 0x26, 0x2e, 0x36, 0x3e, 0x67:
		case 0x64:
			seg = fsBase
		case 0x65:
			seg = gsBase
		default:
			break scan
		}
	}
	if p < len(code) {
		switch code[p] {
		case 0xc4, 0xc5:
			return decodeVEX(code, p, seg)
		case 0x62:
			return Info{}, fmt.Errorf("EVEX: %w", ErrUnsupported)
		case 0x8f:
			if p+1 < len(code) && code[p+1]&0x38 != 0 { // XOP; 8F /0 is pop
				return Info{}, fmt.Errorf("XOP: %w", ErrUnsupported)
			}
		}
	}
	return decodeLegacy(pc, code)
}

// role is what an instruction does with an explicit operand.
type role uint8

const (
	rNone role = iota // ignored (nop's memory operand)
	rR                // read
	rW                // written; also read if the write is partial
	rRW               // read and written
	rA                // an address computed, not accessed (LEA): its registers are Uses
)

// builder accumulates an Info.
type builder struct {
	Info
}

func (b *builder) use(rs ...tracepb.Register) { b.Uses |= Of(rs...) }
func (b *builder) def(rs ...tracepb.Register) { b.Defs |= Of(rs...) }
func (b *builder) useDef(rs ...tracepb.Register) {
	b.use(rs...)
	b.def(rs...)
}

// reg applies ro to a register operand.
func (b *builder) reg(r reg, ro role) {
	bit := Of(r.loc)
	switch ro {
	case rR, rA:
		b.Uses |= bit
	case rW:
		b.Defs |= bit
		if r.partial() {
			b.Uses |= bit
		}
	case rRW:
		b.Uses |= bit
		b.Defs |= bit
	}
}

// mem applies ro to a memory operand: its registers become Base and Index
// (or Uses, for rA), and an fs/gs override uses FS_BASE/GS_BASE.
func (b *builder) mem(m x86asm.Mem, ro role) {
	if ro == rNone {
		return
	}
	var base, index tracepb.Register
	if m.Base != 0 {
		base = mapReg(m.Base).loc
	}
	if m.Index != 0 {
		index = mapReg(m.Index).loc
	}
	if ro == rA {
		if base != 0 {
			b.use(base)
		}
		if index != 0 {
			b.use(index)
		}
		return
	}
	b.Base, b.Index = base, index
	switch m.Segment {
	case x86asm.FS:
		b.use(fsBase)
	case x86asm.GS:
		b.use(gsBase)
	}
}

// arg applies ro to any explicit operand.
func (b *builder) arg(a x86asm.Arg, ro role) {
	switch a := a.(type) {
	case x86asm.Reg:
		b.reg(mapReg(a), ro)
	case x86asm.Mem:
		b.mem(a, ro)
	}
}

// args applies roles to the operands in order; operands beyond the roles
// given are read.
func (b *builder) args(args []x86asm.Arg, roles ...role) {
	for i, a := range args {
		ro := rR
		if i < len(roles) {
			ro = roles[i]
		}
		b.arg(a, ro)
	}
}

// zero records a write of r that does not depend on r's old value (xor
// r,r): a Def, and a Use only if the write is partial.
func (b *builder) zero(r reg) {
	b.def(r.loc)
	if r.partial() {
		b.use(r.loc)
	}
}

// finish applies the rules common to all instructions: the aggregate
// locations X87 and REG_OTHER are never wholly overwritten.
func (b *builder) finish() Info {
	if b.Defs.Has(x87) {
		b.use(x87)
	}
	if b.Defs.Has(other) {
		b.use(other)
	}
	return b.Info
}

// sameRegs reports whether the first two operands are the same register.
func sameRegs(args []x86asm.Arg) (reg, bool) {
	if len(args) < 2 {
		return reg{}, false
	}
	r0, ok0 := args[0].(x86asm.Reg)
	r1, ok1 := args[1].(x86asm.Reg)
	if !ok0 || !ok1 || r0 != r1 {
		return reg{}, false
	}
	return mapReg(r0), true
}

// width returns the operand size in bits of a register or memory operand.
func width(inst *x86asm.Inst, a x86asm.Arg) int {
	switch a := a.(type) {
	case x86asm.Reg:
		if r := mapReg(a); r.kind == kindGPR {
			return r.width
		}
	case x86asm.Mem:
		return inst.MemBytes * 8
	}
	return inst.DataSize
}

// stackSlot reports whether m is [rsp+d] or [rbp+d] (no index, no
// segment override): the slots of callee saves.
func stackSlot(m x86asm.Mem) bool {
	return (m.Base == x86asm.RSP || m.Base == x86asm.RBP) && m.Index == 0 && m.Segment == 0
}

// gpr64 returns the register if a is a 64-bit general-purpose register.
func gpr64(a x86asm.Arg) tracepb.Register {
	if r, ok := a.(x86asm.Reg); ok && r >= x86asm.RAX && r <= x86asm.R15 {
		return mapReg(r).loc
	}
	return 0
}

// hasRep reports whether the instruction carries a rep/repne prefix.
func hasRep(inst *x86asm.Inst) bool {
	for _, p := range inst.Prefix {
		if p == 0 {
			break
		}
		if p&prefixByte == x86asm.PrefixREP || p&prefixByte == x86asm.PrefixREPN {
			return true
		}
	}
	return false
}

// prefixByte selects the prefix byte of an x86asm.Prefix.
const prefixByte x86asm.Prefix = 0xff

func decodeLegacy(pc uint64, code []byte) (Info, error) {
	inst, err := x86asm.Decode(code, 64)
	if err != nil {
		if errors.Is(err, x86asm.ErrTruncated) {
			return Info{}, ErrTruncated
		}
		if in, err2 := decodeOther(code); err2 == nil {
			return in, nil
		}
		return Info{}, fmt.Errorf("%w: %v", ErrUnsupported, err)
	}
	if inst.Op == 0 {
		// x86asm reports an unknown or a cut-short instruction as its
		// first prefix byte alone.
		in, err := decodeOther(code)
		if err == nil || !errors.Is(err, ErrUnsupported) {
			return in, err
		}
		padded := append(append(make([]byte, 0, len(code)+15), code...), make([]byte, 15)...)
		if inst, err := x86asm.Decode(padded, 64); err == nil && inst.Op != 0 && inst.Len > len(code) {
			return Info{}, ErrTruncated
		}
		return Info{}, err
	}
	if inst.Len < 1 || inst.Len > len(code) {
		return Info{}, ErrTruncated
	}
	var b builder
	b.Len = inst.Len
	var args []x86asm.Arg
	for _, a := range inst.Args {
		if a == nil {
			break
		}
		args = append(args, a)
		if r, ok := a.(x86asm.Rel); ok {
			b.Target = pc + uint64(inst.Len) + uint64(int64(r))
		}
	}
	legacy(&b, &inst, args)
	legacyFlow(&b, &inst, args, pc)
	return b.finish(), nil
}
