package spec

import (
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary bytes to Parse and then Check (with and
// without layouts): neither may panic, every error must lie inside the
// file, and a spec that parses and checks must print to a spec that
// parses to the same text.
func FuzzParse(f *testing.F) {
	for _, src := range examples {
		f.Add([]byte(src))
	}
	f.Add([]byte(realCodeExample))
	f.Fuzz(func(t *testing.T, src []byte) {
		s, err := Parse("f.spec", src)
		if s == nil {
			t.Fatal("Parse returned a nil spec")
		}
		lines := strings.Split(string(src), "\n")
		inside := func(err error) {
			if err == nil {
				return
			}
			list, ok := err.(ErrorList)
			if !ok {
				t.Fatalf("error %T, want ErrorList", err)
			}
			if len(list) == 0 || len(list) > maxErrors+1 {
				t.Fatalf("%d errors", len(list))
			}
			for _, e := range list {
				if e.Pos.Line < 1 || e.Pos.Line > len(lines) || e.Pos.Col < 1 || e.Pos.Col > len(lines[e.Pos.Line-1])+1 {
					t.Fatalf("error %q at %s is outside the file", e.Msg, e.Pos)
				}
				if e.File != "f.spec" || e.Msg == "" {
					t.Fatalf("error %+v", e)
				}
			}
		}
		inside(err)
		cerr := Check(s, fakeLayout)
		inside(cerr)
		inside(Check(s, nil))
		if err != nil || cerr != nil {
			return
		}
		out := s.String()
		s2, err := Parse("f.spec", []byte(out))
		if err != nil {
			t.Fatalf("the printed spec does not parse: %v\n%s", err, out)
		}
		if s2.String() != out {
			t.Fatalf("round trip:\n%s\nwant:\n%s", s2, out)
		}
	})
}
