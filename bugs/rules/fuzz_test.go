package rules

import (
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary bytes to Parse and then Check: neither may
// panic, every error must carry a position inside the file (Line >= 1),
// and a file that parses must print to a file that parses to the same
// syntax tree, positions aside. The seed corpus is testdata/fuzz/FuzzParse
// and the examples of the tests.
func FuzzParse(f *testing.F) {
	for _, src := range examples {
		f.Add([]byte(src))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		file, err := Parse("f.rules", src)
		if file == nil {
			t.Fatal("Parse returned a nil file")
		}
		lines := strings.Split(string(src), "\n")
		inside := func(err error) {
			if err == nil {
				return
			}
			list, ok := err.(Errors)
			if !ok {
				t.Fatalf("error %T, want Errors", err)
			}
			if len(list) == 0 || len(list) > maxErrors+1 {
				t.Fatalf("%d errors", len(list))
			}
			for _, e := range list {
				if e.Pos.Line < 1 || e.Pos.Line > len(lines) || e.Pos.Col < 1 || e.Pos.Col > len(lines[e.Pos.Line-1])+1 {
					t.Fatalf("error %q at %s is outside the file", e.Msg, e.Pos)
				}
				if e.Pos.File != "f.rules" || e.Msg == "" {
					t.Fatalf("error %+v", e)
				}
			}
		}
		inside(err)
		inside(Check(file))
		out := Format(file)
		again, err := Parse("f.rules", []byte(out))
		if err != nil {
			t.Fatalf("the formatted file does not parse: %v\n%s", err, out)
		}
		if Format(again) != out {
			t.Fatalf("Format is not stable:\n%s\nthen\n%s", out, Format(again))
		}
		if !sameFile(file, again) {
			t.Fatalf("round trip changes the file:\n%s", out)
		}
	})
}
