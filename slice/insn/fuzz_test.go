package insn

import (
	"encoding/hex"
	"strings"
	"testing"
)

// FuzzDecode checks that Decode never panics, that a decoded length lies
// within the bytes given, that only registers Decode can name appear, and
// that the value flow agrees with the registers (checkFlow).
func FuzzDecode(f *testing.F) {
	for _, c := range decodeCases {
		code, _ := hex.DecodeString(strings.ReplaceAll(c.hex, " ", ""))
		f.Add(code)
	}
	for _, c := range flowCases {
		code, _ := hex.DecodeString(strings.ReplaceAll(c.hex, " ", ""))
		f.Add(code)
	}
	f.Fuzz(func(t *testing.T, code []byte) {
		in, err := Decode(0x401000, code)
		if err != nil {
			return
		}
		if in.Len < 1 || in.Len > len(code) || in.Len > 15 {
			t.Fatalf("% x: Len %d", code, in.Len)
		}
		if !in.Uses.Valid() || !in.Defs.Valid() {
			t.Fatalf("% x: invalid registers: %v", code, in)
		}
		for _, r := range []Regs{Of(in.Base), Of(in.Index), Of(in.Save), Of(in.Restore)} {
			if r&^1 != 0 && !r.Valid() {
				t.Fatalf("% x: invalid register: %v", code, in)
			}
		}
		if in.Class > Halt {
			t.Fatalf("% x: class %d", code, in.Class)
		}
		if err := checkFlow(in); err != nil {
			t.Fatalf("% x: flow: %v: %v", code, err, in)
		}
		// Decoding again with trailing bytes gives the same result.
		again, err := Decode(0x401000, append(code[:in.Len:in.Len], 0x90))
		if err != nil || again != in {
			t.Fatalf("% x: %v, then %v, %v", code, in, again, err)
		}
	})
}
