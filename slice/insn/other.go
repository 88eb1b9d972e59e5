package insn

// decodeOther handles the legacy encodings x86asm does not know: the hint
// nops of 0F 18-1F (endbr64, endbr32 and rdssp live there; without CET, as
// under Valgrind, they all do nothing) and adcx/adox.
func decodeOther(code []byte) (Info, error) {
	p := 0
	var rex byte
	var op66, opF3 bool
prefixes:
	for ; p < len(code); p++ {
		switch c := code[p]; {
		case c == 0x66:
			op66 = true
		case c == 0xf3:
			opF3 = true
		case c == 0x67 || c == 0xf2 || c == 0xf0 || c == 0x2e || c == 0x36 || c == 0x3e ||
			c == 0x26 || c == 0x64 || c == 0x65:
		default:
			break prefixes
		}
	}
	if p < len(code) && code[p]&0xf0 == 0x40 {
		rex = code[p]
		p++
	}
	if p+1 >= len(code) || code[p] != 0x0f {
		return Info{}, unsupportedOrTruncated(code, p+2)
	}
	rexR, rexX, rexB := rex&4 != 0, rex&2 != 0, rex&1 != 0
	switch op := code[p+1]; {
	case op == 0x01 && p+2 < len(code) && code[p+2] == 0xee: // rdpkru
		return Info{Len: p + 3, Uses: Of(rcx, other), Defs: Of(rax, rdx)}, nil
	case op == 0x01 && p+2 < len(code) && code[p+2] == 0xef: // wrpkru
		return Info{Len: p + 3, Uses: Of(rax, rcx, rdx, other), Defs: Of(other)}, nil
	case op >= 0x18 && op <= 0x1f:
		m, err := parseModRM(code, p+2, rexR, rexX, rexB, false)
		if err != nil {
			return Info{}, err
		}
		return Info{Len: m.end}, nil
	case op == 0x38 && p+2 < len(code) && code[p+2] == 0xf6 && (op66 || opF3):
		// adcx (66) / adox (F3) r, r/m: read-modify-write, CF or OF only.
		m, err := parseModRM(code, p+3, rexR, rexX, rexB, false)
		if err != nil {
			return Info{}, err
		}
		var b builder
		b.Len = m.end
		b.useDef(gpr(m.reg), rflags)
		if m.mem {
			b.Base, b.Index = m.base, m.index
		} else {
			b.use(gpr(m.rm))
		}
		return b.Info, nil
	}
	return Info{}, unsupportedOrTruncated(code, p+3)
}

// unsupportedOrTruncated returns ErrTruncated if code is shorter than need
// bytes (so the instruction might be longer than what was given), else
// ErrUnsupported.
func unsupportedOrTruncated(code []byte, need int) error {
	if len(code) < need {
		return ErrTruncated
	}
	return ErrUnsupported
}
