package insn

import (
	"encoding/hex"
	"strings"
	"testing"
)

// TestCompareAndCond checks Info.Compare on the instructions that only
// compare, and Info.Cond on jcc, setcc and cmovcc (real encodings,
// assembled with GNU as and read back with objdump).
func TestCompareAndCond(t *testing.T) {
	cases := []struct {
		asm, hex string
		compare  bool
		cond     Cond
	}{
		{"cmp eax,0xa", "83 f8 0a", true, CondNone},
		{"cmp BYTE PTR [rbp-0x1],0x0", "80 7d ff 00", true, CondNone},
		{"cmp rax,rbx", "48 39 d8", true, CondNone},
		{"test eax,eax", "85 c0", true, CondNone},
		{"test al,0x1", "a8 01", true, CondNone},
		{"ucomisd xmm0,xmm1", "66 0f 2e c1", true, CondNone},
		{"sub eax,0xa", "83 e8 0a", false, CondNone},
		{"and eax,ecx", "21 c8", false, CondNone},
		{"mov eax,ebx", "89 d8", false, CondNone},
		{"je +0x10", "74 10", false, CondE},
		{"jne +0x10", "75 10", false, CondNE},
		{"jne near", "0f 85 00 01 00 00", false, CondNE},
		{"jl +0x10", "7c 10", false, CondL},
		{"jg +0x10", "7f 10", false, CondG},
		{"jbe +0x10", "76 10", false, CondBE},
		{"jo +0x10", "70 10", false, CondO},
		{"jnp +0x10", "7b 10", false, CondNP},
		{"sete al", "0f 94 c0", false, CondE},
		{"setg cl", "0f 9f c1", false, CondG},
		{"cmovne eax,ecx", "0f 45 c1", false, CondNE},
		{"cmovs rax,rbx", "48 0f 48 c3", false, CondS},
		{"jrcxz +0x10", "e3 10", false, CondNone},
		{"jmp +0x10", "eb 10", false, CondNone},
	}
	for _, c := range cases {
		code, err := hex.DecodeString(strings.ReplaceAll(c.hex, " ", ""))
		if err != nil {
			t.Fatal(err)
		}
		in, err := Decode(0x1000, code)
		if err != nil {
			t.Errorf("%s: %v", c.asm, err)
			continue
		}
		if in.Compare != c.compare || in.Cond != c.cond {
			t.Errorf("%s: Compare %v Cond %d, want %v %d", c.asm, in.Compare, in.Cond, c.compare, c.cond)
		}
	}
}
