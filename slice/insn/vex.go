package insn

import (
	"fmt"

	"github.com/mgtrace/mgtrace/schema/tracepb"
)

// vex holds the fields of a VEX prefix.
type vex struct {
	r, x, b, w bool
	vvvv       int  // the extra register, un-inverted
	l          bool // 256-bit
	pp         int  // implied prefix: 0 none, 1 66, 2 F3, 3 F2
	mmap       int  // opcode map: 1 0F, 2 0F38, 3 0F3A
}

// Implied prefixes of VEX.pp.
const (
	ppNone = 0
	pp66   = 1
	ppF3   = 2
	ppF2   = 3
)

// vexForm describes the operands of a VEX instruction.
type vexForm struct {
	reg, vvvv, rm          role // what is done with each operand
	regGPR, vvvvGPR, rmGPR bool // the operand is a general-purpose register
	memOnly                bool // r/m must be memory
	flags                  bool // writes RFLAGS
	uses, defs             Regs // implicit operands
	vsib                   bool // a gather: r/m is a VSIB address
	is4                    bool // imm8[7:4] names a fourth (source) register
	zeroIdiom              bool // the same register as vvvv and r/m: no dependence
	ones                   bool // that zero idiom gives all ones (vpcmpeq*)
	computed               bool // that zero idiom gives no constant (vsubp*: NaN - NaN is NaN)
	moveBytes              int  // a copy between reg and r/m: its size in bytes, or vecLen; 0 if not
}

// vecLen as a vexForm's moveBytes is the vector length: 16, or 32 with
// VEX.L.
const vecLen = -1

// asMove returns f marked as a copy of n bytes (or vecLen).
func asMove(f vexForm, n int) vexForm {
	f.moveBytes = n
	return f
}

// Frequent forms.
var (
	// reg = f(vvvv, r/m): most arithmetic, logic, shuffles, compares.
	fNDS = vexForm{reg: rW, vvvv: rR, rm: rR}
	// reg = f(r/m): moves, loads, broadcasts, conversions.
	fMove = vexForm{reg: rW, rm: rR}
	// r/m = reg: stores (or register moves in the store direction).
	fStore = vexForm{reg: rR, rm: rW}
	// compares that only set RFLAGS.
	fFlags = vexForm{reg: rR, rm: rR, flags: true}
)

// decodeVEX decodes an instruction whose VEX prefix starts at code[p];
// seg is the segment base of an fs/gs override before it.
func decodeVEX(code []byte, p int, seg tracepb.Register) (Info, error) {
	var v vex
	switch code[p] {
	case 0xc5:
		if p+1 >= len(code) {
			return Info{}, ErrTruncated
		}
		b1 := code[p+1]
		v.r = b1&0x80 == 0
		v.vvvv = int(^b1>>3) & 15
		v.l = b1&4 != 0
		v.pp = int(b1 & 3)
		v.mmap = 1
		p += 2
	case 0xc4:
		if p+2 >= len(code) {
			return Info{}, ErrTruncated
		}
		b1, b2 := code[p+1], code[p+2]
		v.r, v.x, v.b = b1&0x80 == 0, b1&0x40 == 0, b1&0x20 == 0
		v.mmap = int(b1 & 0x1f)
		v.w = b2&0x80 != 0
		v.vvvv = int(^b2>>3) & 15
		v.l = b2&4 != 0
		v.pp = int(b2 & 3)
		p += 3
	}
	if p >= len(code) {
		return Info{}, ErrTruncated
	}
	op := code[p]
	p++
	if v.mmap == 1 && op == 0x77 { // vzeroupper / vzeroall
		in := Info{Len: p}
		if v.l {
			in.Defs = allXMM
		}
		return in, nil
	}
	if v.mmap < 1 || v.mmap > 3 {
		return Info{}, fmt.Errorf("VEX map %d: %w", v.mmap, ErrUnsupported)
	}
	// The reg field of group opcodes selects the operation, so peek at it.
	if p >= len(code) {
		return Info{}, ErrTruncated
	}
	regField := int(code[p]>>3) & 7
	modReg := code[p]>>6 == 3
	f, imm, ok := vexLookup(v, op, regField, modReg)
	if !ok {
		return Info{}, fmt.Errorf("VEX map %d opcode %#02x pp %d: %w", v.mmap, op, v.pp, ErrUnsupported)
	}
	m, err := parseModRM(code, p, v.r, v.x, v.b, f.vsib)
	if err != nil {
		return Info{}, err
	}
	if f.memOnly && !m.mem {
		return Info{}, fmt.Errorf("VEX map %d opcode %#02x with a register operand: %w", v.mmap, op, ErrUnsupported)
	}
	end := m.end
	if imm {
		end++
	}
	if end > len(code) {
		return Info{}, ErrTruncated
	}
	var b builder
	b.Len = end
	loc := func(n int, isGPR bool) reg {
		if isGPR {
			return reg{gpr(n), kindGPR, 64}
		}
		return reg{xmm(n), kindXMM, 256}
	}
	zero := f.zeroIdiom && !m.mem && m.rm == v.vvvv
	// VEX writes zero the upper bits of vector registers and GPR writes
	// are 32 or 64 bits wide, so rW is a full Def: reg() adds no Use.
	b.reg(loc(m.reg, f.regGPR), f.reg)
	if !zero {
		b.reg(loc(v.vvvv, f.vvvvGPR), f.vvvv)
	}
	if m.mem {
		if f.rm != rNone {
			b.Base, b.Index = m.base, m.index
			if seg != 0 {
				b.use(seg)
			}
			if f.vsib {
				b.use(xmm(m.vsibIdx))
			}
		}
	} else if !zero || f.rm != rR {
		b.reg(loc(m.rm, f.rmGPR), f.rm)
	}
	if f.is4 {
		b.use(xmm(int(code[end-1] >> 4)))
	}
	vexFlow(&b, v, f, m, zero)
	if f.flags {
		b.def(rflags)
	}
	b.Uses |= f.uses
	b.Defs |= f.defs
	return b.finish(), nil
}

// vexFlow fills in the value flow of a VEX instruction of form f: the
// constant of a zero (or all-ones) idiom, or a copy.
func vexFlow(b *builder, v vex, f vexForm, m modrm, zero bool) {
	vlen := 16
	if v.l {
		vlen = 32
	}
	switch {
	case zero && !f.computed:
		c := int64(0)
		if f.ones {
			c = -1
		}
		b.constant(operand{r: xmm(m.reg), bytes: vlen}, c)
	case f.moveBytes != 0:
		n := f.moveBytes
		if n == vecLen {
			n = vlen
		}
		r := operand{r: xmm(m.reg)}
		if f.regGPR {
			r.r = gpr(m.reg)
		}
		rm := operand{mem: true}
		if !m.mem {
			rm = operand{r: xmm(m.rm)}
			if f.rmGPR {
				rm.r = gpr(m.rm)
			}
		}
		if f.reg == rW {
			b.flow(FlowMove, r, rm, n)
		} else {
			b.flow(FlowMove, rm, r, n)
		}
	}
}

// vexLookup returns the form of a VEX instruction and whether it has an
// imm8; ok is false for opcodes not modelled. reg is the ModRM reg field
// (for group opcodes) and modReg whether r/m names a register.
func vexLookup(v vex, op byte, reg int, modReg bool) (f vexForm, imm, ok bool) {
	switch v.mmap {
	case 1:
		return vexMap1(v, op, reg, modReg)
	case 2:
		f, ok = vexMap2(v, op, reg)
		return f, false, ok
	case 3:
		f, ok = vexMap3(v, op)
		return f, true, ok
	}
	return vexForm{}, false, false
}

// vexMap1 covers the 0F map.
func vexMap1(v vex, op byte, reg int, modReg bool) (f vexForm, imm, ok bool) {
	scalar := v.pp == ppF3 || v.pp == ppF2
	switch {
	case op == 0x10: // vmovups/upd load; vmovss/sd
		if scalar && modReg {
			return fNDS, false, true // merges vvvv's upper part
		}
		return asMove(fMove, scalarBytes(v)), false, true
	case op == 0x11:
		if scalar && modReg {
			f = fStore
			f.vvvv = rR
			return f, false, true
		}
		return asMove(fStore, scalarBytes(v)), false, true
	case op == 0x12 || op == 0x16:
		switch v.pp {
		case ppNone, pp66: // vmovhlps/vmovlhps, vmovlps/hps/lpd/hpd loads
			return fNDS, false, true
		default: // vmovsldup, vmovshdup, vmovddup
			return fMove, false, true
		}
	case op == 0x13 || op == 0x17 || op == 0x2b || op == 0xe7:
		f = fStore
		f.memOnly = true
		if op == 0x2b || op == 0xe7 { // vmovntps/pd, vmovntdq
			f.moveBytes = vecLen
		}
		return f, false, true
	case op == 0x14 || op == 0x15:
		return fNDS, false, true
	case op == 0x28 || op == 0x5b || op == 0x6f || op == 0xe6:
		if op == 0x28 || op == 0x6f && (v.pp == pp66 || v.pp == ppF3) { // vmovaps/pd, vmovdqa/u
			return asMove(fMove, vecLen), false, true
		}
		return fMove, false, true
	case op == 0x29 || op == 0x7f:
		if op == 0x29 || v.pp == pp66 || v.pp == ppF3 {
			return asMove(fStore, vecLen), false, true
		}
		return fStore, false, true
	case op == 0x2a && scalar: // vcvtsi2ss/sd xmm, xmm, r/m32/64
		f = fNDS
		f.rmGPR = true
		return f, false, true
	case (op == 0x2c || op == 0x2d) && scalar: // vcvt(t)ss/sd2si
		f = fMove
		f.regGPR = true
		return f, false, true
	case op == 0x2e || op == 0x2f: // vucomis, vcomis
		return fFlags, false, true
	case op == 0x50: // vmovmskps/pd
		f = fMove
		f.regGPR = true
		return f, false, true
	case op >= 0x51 && op <= 0x53, op == 0x5a:
		if scalar {
			return fNDS, false, true
		}
		return fMove, false, true
	case op >= 0x54 && op <= 0x59, op >= 0x5c && op <= 0x5f:
		f = fNDS
		f.zeroIdiom = op == 0x57 || op == 0x55 || op == 0x5c // vxorp*, vandnp*, vsubp*
		f.computed = op == 0x5c
		return f, false, true
	case op >= 0x60 && op <= 0x6d && v.pp == pp66:
		f = fNDS
		f.zeroIdiom = op >= 0x64 && op <= 0x66 // vpcmpgt*
		return f, false, true
	case op == 0x6e && v.pp == pp66: // vmovd/q xmm, r/m
		f = asMove(fMove, gprBytes(v))
		f.rmGPR = true
		return f, false, true
	case op == 0x70 && v.pp != ppNone: // vpshufd/hw/lw
		return fMove, true, true
	case op >= 0x71 && op <= 0x73 && v.pp == pp66: // shifts by imm: vvvv = r/m shifted
		switch {
		case op == 0x73 && (reg == 2 || reg == 3 || reg == 6 || reg == 7),
			op != 0x73 && (reg == 2 || reg == 4 || reg == 6):
			return vexForm{vvvv: rW, rm: rR}, true, true
		}
		return vexForm{}, false, false
	case op >= 0x74 && op <= 0x76 && v.pp == pp66:
		f = fNDS
		f.zeroIdiom = true // vpcmpeq x,x: all ones
		f.ones = true
		return f, false, true
	case (op == 0x7c || op == 0x7d) && (v.pp == pp66 || v.pp == ppF2):
		return fNDS, false, true
	case op == 0x7e && v.pp == pp66: // vmovd/q r/m, xmm
		f = asMove(fStore, gprBytes(v))
		f.rmGPR = true
		return f, false, true
	case op == 0x7e && v.pp == ppF3: // vmovq xmm, xmm/m64
		return asMove(fMove, 8), false, true
	case op == 0xae && (reg == 2 || reg == 3) && v.pp == ppNone:
		f = vexForm{rm: rR, memOnly: true}
		if reg == 2 { // vldmxcsr
			f.defs = Of(other)
		} else { // vstmxcsr
			f.rm = rW
			f.uses = Of(other)
		}
		return f, false, true
	case op == 0xc2 || op == 0xc6:
		return fNDS, true, true
	case op == 0xc4 && v.pp == pp66: // vpinsrw
		f = fNDS
		f.rmGPR = true
		return f, true, true
	case op == 0xc5 && v.pp == pp66: // vpextrw r32, xmm, imm
		f = fMove
		f.regGPR = true
		return f, true, true
	case op == 0xd6 && v.pp == pp66: // vmovq xmm/m64, xmm
		return asMove(fStore, 8), false, true
	case op == 0xd7 && v.pp == pp66: // vpmovmskb
		f = fMove
		f.regGPR = true
		return f, false, true
	case op == 0xd0 && (v.pp == pp66 || v.pp == ppF2):
		return fNDS, false, true
	case op >= 0xd1 && op <= 0xfe && op != 0xd6 && op != 0xd7 && op != 0xe6 && op != 0xe7 &&
		op != 0xf0 && op != 0xf7 && v.pp == pp66:
		f = fNDS
		// vpandn, vpxor, vpsub*: the same source twice gives zero.
		f.zeroIdiom = op == 0xdf || op == 0xef || (op >= 0xf8 && op <= 0xfb) ||
			op == 0xd8 || op == 0xd9 || op == 0xe8 || op == 0xe9
		return f, false, true
	case op == 0xf0 && v.pp == ppF2: // vlddqu
		f = asMove(fMove, vecLen)
		f.memOnly = true
		return f, false, true
	case op == 0xf7 && v.pp == pp66: // vmaskmovdqu: a store to [rdi]
		return vexForm{reg: rR, rm: rR, uses: Of(rdi)}, false, true
	}
	return vexForm{}, false, false
}

// scalarBytes returns the size of what 0F 10/11 copy: 4 for vmovss, 8 for
// vmovsd, and the vector length for vmovups/upd.
func scalarBytes(v vex) int {
	switch v.pp {
	case ppF3:
		return 4
	case ppF2:
		return 8
	}
	return vecLen
}

// gprBytes returns the size of a vmovd (4) or vmovq (8, VEX.W) copy.
func gprBytes(v vex) int {
	if v.w {
		return 8
	}
	return 4
}

// vexMap2 covers the 0F38 map.
func vexMap2(v vex, op byte, reg int) (vexForm, bool) {
	gprForm := func(f vexForm) vexForm {
		f.regGPR, f.vvvvGPR, f.rmGPR = true, true, true
		return f
	}
	switch {
	case op >= 0xf2 && op <= 0xf7: // BMI1/BMI2, GPR operands
		switch {
		case op == 0xf2 && v.pp == ppNone: // andn
			f := gprForm(fNDS)
			f.flags = true
			return f, true
		case op == 0xf3 && v.pp == ppNone && reg >= 1 && reg <= 3: // blsr, blsmsk, blsi
			f := gprForm(vexForm{vvvv: rW, rm: rR})
			f.flags = true
			return f, true
		case op == 0xf5 && v.pp != pp66: // bzhi, pext, pdep
			f := gprForm(fNDS)
			f.flags = v.pp == ppNone
			return f, true
		case op == 0xf6 && v.pp == ppF2: // mulx: reg:vvvv = rdx * r/m
			f := gprForm(vexForm{reg: rW, vvvv: rW, rm: rR})
			f.uses = Of(rdx)
			return f, true
		case op == 0xf7: // bextr, shlx, sarx, shrx
			f := gprForm(fNDS)
			f.flags = v.pp == ppNone
			return f, true
		}
		return vexForm{}, false
	case v.pp != pp66:
		return vexForm{}, false
	case op <= 0x0d, op == 0x16, op >= 0x28 && op <= 0x2d && op != 0x2a, op >= 0x36 && op <= 0x40,
		op >= 0x45 && op <= 0x47, op == 0x8c, op >= 0xdc && op <= 0xdf:
		f := fNDS
		f.zeroIdiom = op == 0x29 || op == 0x37 // vpcmpeqq, vpcmpgtq
		f.ones = op == 0x29
		if op == 0x2c || op == 0x2d || op == 0x8c {
			f.memOnly = true // masked loads
		}
		return f, true
	case op == 0x0e || op == 0x0f || op == 0x17: // vtestps/pd, vptest
		return fFlags, true
	case op == 0x13, op >= 0x18 && op <= 0x1a, op >= 0x1c && op <= 0x1e, op >= 0x20 && op <= 0x25,
		op >= 0x30 && op <= 0x35, op == 0x41, op >= 0x58 && op <= 0x5a, op == 0x78, op == 0x79, op == 0xdb:
		return fMove, true
	case op == 0x2a: // vmovntdqa
		f := asMove(fMove, vecLen)
		f.memOnly = true
		return f, true
	case op == 0x2e || op == 0x2f || op == 0x8e: // masked stores
		return vexForm{reg: rR, vvvv: rR, rm: rW, memOnly: true}, true
	case op >= 0x90 && op <= 0x93: // gathers: dest and mask merge
		return vexForm{reg: rRW, vvvv: rRW, rm: rR, vsib: true, memOnly: true}, true
	case op >= 0x96 && op <= 0x9f, op >= 0xa6 && op <= 0xaf, op >= 0xb6 && op <= 0xbf: // FMA
		return vexForm{reg: rRW, vvvv: rR, rm: rR}, true
	}
	return vexForm{}, false
}

// vexMap3 covers the 0F3A map (every instruction has an imm8).
func vexMap3(v vex, op byte) (vexForm, bool) {
	if op == 0xf0 && v.pp == ppF2 { // rorx
		f := fMove
		f.regGPR, f.rmGPR = true, true
		return f, true
	}
	if v.pp != pp66 {
		return vexForm{}, false
	}
	switch {
	case op == 0x00 || op == 0x01 || op == 0x04 || op == 0x05 || op == 0x08 || op == 0x09 || op == 0xdf:
		return fMove, true
	case op == 0x02 || op == 0x06 || op >= 0x0a && op <= 0x0f || op == 0x18 || op == 0x21 ||
		op == 0x38 || op == 0x40 || op == 0x41 || op == 0x42 || op == 0x44 || op == 0x46:
		return fNDS, true
	case op >= 0x14 && op <= 0x17: // vpextrb/w/d/q, vextractps: r/m may be a GPR
		f := fStore
		f.rmGPR = true
		return f, true
	case op == 0x19 || op == 0x1d || op == 0x39: // vextractf128, vcvtps2ph, vextracti128
		return fStore, true
	case op == 0x20 || op == 0x22: // vpinsrb, vpinsrd/q
		f := fNDS
		f.rmGPR = true
		return f, true
	case op >= 0x4a && op <= 0x4c: // vblendvps/pd, vpblendvb
		f := fNDS
		f.is4 = true
		return f, true
	case op >= 0x60 && op <= 0x63: // vpcmpestrm/estri/istrm/istri
		f := fFlags
		if op <= 0x61 {
			f.uses = Of(rax, rdx)
		}
		if op&1 == 0 {
			f.defs = Of(xmm0)
		} else {
			f.defs = Of(rcx)
		}
		return f, true
	}
	return vexForm{}, false
}
