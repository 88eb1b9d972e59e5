package insn

import "github.com/mgtrace/mgtrace/schema/tracepb"

// modrm is a decoded ModRM byte with its SIB byte and displacement.
type modrm struct {
	mod      int  // the mod field
	reg      int  // the reg field, extended by REX.R / VEX.R
	rm       int  // the r/m field, extended by REX.B / VEX.B (register form only)
	mem      bool // r/m names memory
	base     tracepb.Register
	index    tracepb.Register // a GPR index (never set for VSIB)
	vsibIdx  int              // the vector index register of a VSIB address
	hasIndex bool             // a VSIB address has an index (always, by encoding)
	end      int              // offset just past the ModRM, SIB and displacement
}

// parseModRM decodes the ModRM byte at code[p] and what follows it. rexR,
// rexX and rexB extend the register numbers; vsib says that the SIB index
// names a vector register (gathers).
func parseModRM(code []byte, p int, rexR, rexX, rexB, vsib bool) (modrm, error) {
	if p >= len(code) {
		return modrm{}, ErrTruncated
	}
	b := code[p]
	p++
	m := modrm{mod: int(b >> 6), reg: int(b>>3) & 7, rm: int(b) & 7}
	if rexR {
		m.reg |= 8
	}
	if m.mod == 3 {
		if rexB {
			m.rm |= 8
		}
		m.end = p
		return m, nil
	}
	m.mem = true
	disp := 0
	switch m.mod {
	case 1:
		disp = 1
	case 2:
		disp = 4
	}
	switch {
	case m.rm == 4:
		if p >= len(code) {
			return modrm{}, ErrTruncated
		}
		s := code[p]
		p++
		idx := int(s>>3) & 7
		if rexX {
			idx |= 8
		}
		base := int(s) & 7
		if vsib {
			m.vsibIdx, m.hasIndex = idx, true
		} else if idx != 4 {
			m.index = gpr(idx)
		}
		if base == 5 && m.mod == 0 {
			disp = 4
		} else {
			if rexB {
				base |= 8
			}
			m.base = gpr(base)
		}
	case m.rm == 5 && m.mod == 0:
		m.base = tracepb.Register_RIP
		disp = 4
	default:
		r := m.rm
		if rexB {
			r |= 8
		}
		m.base = gpr(r)
	}
	p += disp
	if p > len(code) {
		return modrm{}, ErrTruncated
	}
	m.end = p
	return m, nil
}
