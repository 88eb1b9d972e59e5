package inputs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/inputs"
	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
	"github.com/mgtrace/mgtrace/slice"
)

// oneByteReads returns the entities of a run whose program reads its input
// one byte per read(2) call: every read of 1 byte that returned 1 is one
// entity of the one source, in order.
func oneByteReads(t *testing.T, trace string) *inputs.Entities {
	t.Helper()
	r, err := schema.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ents := &inputs.Entities{Sources: []inputs.Source{{ID: 0, Kind: inputs.SourceFile, Name: "input"}}}
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		if ev.Kind != schema.KindSyscall || ev.Num != 0 || ev.Args[2] != 1 || ev.Value != 1 {
			continue
		}
		k := ents.Total
		ents.Ranges = append(ents.Ranges, inputs.Range{First: k, Len: 1, Source: 0, Offset: k, Addr: ev.Args[1],
			Seq: ev.Seq, Thread: ev.Thread, Syscall: "read"})
		ents.Total++
	}
	ents.Sources[0].Bytes = ents.Total
	return ents
}

// recorded is a test program's run with its input.
type recorded struct {
	name  string // under testdata/programs
	base  string // the C file's base name
	run   *slice.Run
	ents  *inputs.Entities
	lines map[int]string // line -> its //@ marker
}

// recordProgram builds program name (-O0 -g), writes input to a file, records the
// program reading it, and loads the run.
func recordProgram(t *testing.T, name string, input []byte) *recorded {
	t.Helper()
	bin := testprog.Build(t, name, testprog.Flags("-g", "-O0", "-fno-omit-frame-pointer"))
	in := filepath.Join(t.TempDir(), "input")
	if err := os.WriteFile(in, input, 0o644); err != nil {
		t.Fatal(err)
	}
	trace := testprog.Record(t, bin, in)
	r, err := schema.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	run, err := slice.Load(r, slice.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorded{name: name, base: filepath.Base(name) + ".c", run: run, ents: oneByteReads(t, trace), lines: map[int]string{}}
	if rec.ents.Total != uint64(len(input)) {
		t.Fatalf("%s: %d entities, want one per input byte (%d)", name, rec.ents.Total, len(input))
	}
	src, err := os.ReadFile(testprog.Source(t, name))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`//@ (\w+)`)
	for i, l := range strings.Split(string(src), "\n") {
		if m := re.FindStringSubmatch(l); m != nil {
			rec.lines[i+1] = m[1]
		}
	}
	return rec
}

// line returns the line marked //@ marker.
func (rec *recorded) line(t *testing.T, marker string) int {
	t.Helper()
	for n, m := range rec.lines {
		if m == marker {
			return n
		}
	}
	t.Fatalf("%s: no line marked //@ %s", rec.base, marker)
	return 0
}

// analyze runs the analysis at criterion "MARKER[#K][ reg R]".
func (rec *recorded) analyze(t *testing.T, crit string) *inputs.Relevance {
	t.Helper()
	fields := strings.Fields(crit)
	marker, k, _ := strings.Cut(fields[0], "#")
	c := slice.Criterion{Kind: slice.ByLine, File: rec.base, Line: uint32(rec.line(t, marker))}
	if k != "" {
		n, err := strconv.Atoi(k)
		if err != nil {
			t.Fatal(err)
		}
		c.K = n
	}
	if len(fields) == 3 && fields[1] == "reg" {
		reg, err := slice.ParseReg(fields[2])
		if err != nil {
			t.Fatal(err)
		}
		c.Reg = reg
	}
	p, err := rec.run.Resolve(c)
	if err != nil {
		t.Fatalf("%s: %v", crit, err)
	}
	rel, err := inputs.Analyze(rec.run, rec.ents, p, inputs.Options{})
	if err != nil {
		t.Fatalf("%s: %v", crit, err)
	}
	return rel
}

// format writes a set as "E[=][→VALUE@MARKER...] ...": entity numbers,
// = for strong, and a chain's links by value and the marker of their
// statement's line.
func (rec *recorded) format(els []inputs.Element) string {
	var parts []string
	for _, e := range els {
		s := strconv.FormatUint(e.Entity, 10)
		if e.Strong {
			s += "="
		}
		for _, l := range e.Chain {
			name := l.Statement
			if _, ln, ok := strings.Cut(l.Statement, ":"); ok {
				if n, err := strconv.Atoi(ln); err == nil && rec.lines[n] != "" {
					name = rec.lines[n]
				}
			}
			s += fmt.Sprintf("→%d@%s", l.Value, name)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

// row is one expected row: the criterion and the three sets as format
// writes them.
type row struct {
	crit            string
	der, cinf, ainf string
}

func checkRows(t *testing.T, rec *recorded, rows []row, strength bool) {
	t.Helper()
	for _, r := range rows {
		rel := rec.analyze(t, r.crit)
		got := []string{rec.format(rel.Der), rec.format(rel.Cinf), rec.format(rel.Ainf)}
		want := []string{r.der, r.cinf, r.ainf}
		if !strength {
			for i := range got {
				got[i] = strings.ReplaceAll(got[i], "=", "")
			}
		}
		if got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
			t.Errorf("%s %s (%s): DER {%s} CINF {%s} AINF {%s}, want {%s} {%s} {%s}", rec.base, r.crit, rel.Value,
				got[0], got[1], got[2], want[0], want[1], want[2])
		}
	}
}

// TestFigure43 checks the rows of figure 4.3 (strength ignored, as the
// figure does). Entities: 0 is 3, 1 is -15, 2 is 0.
func TestFigure43(t *testing.T) {
	rec := recordProgram(t, "inputs/fig43", []byte{3, 0xf1, 0})
	checkRows(t, rec, []row{
		{"read#1", "0", "", ""},
		{"store#1", "0", "", ""},
		{"read#2", "1", "", ""},
		{"store#2", "1", "", ""},
		{"read#3", "2", "", ""},
		{"store#3", "2", "", ""},
		{"loop#1", "", "", ""},
		{"load#1", "0", "", ""},
		{"zero#1", "0", "", ""},
		{"pos#1", "0", "0", ""},
		{"possum#1", "0", "0", ""},
		{"inc#1", "", "0", ""},
		{"loop#2", "", "0", ""},
		{"load#2", "1", "0", "0"},
		{"zero#2", "1", "0", "0"},
		{"pos#2", "1", "0 1", "0"},
		{"negsum#1", "1", "0 1", "0"},
		{"inc#2", "", "0 1", "0"},
		{"loop#3", "", "0 1", "0"},
		{"load#3", "2", "0 1", "0 1"},
		{"zero#3", "2", "0 1", "0 1"},
		{"printpos reg rsi", "0", "0", ""},
		{"printneg reg rsi", "1", "0 1", "0"},
	}, false)
}

// TestFigure45 checks the rows of figure 4.5 with strength and chains.
// Entities: 0-4 are b, o, d, y, \0. Chains are kept in CINF (the figure
// shows plain \0= there at line 27; docs/inputs.md says why).
func TestFigure45(t *testing.T) {
	rec := recordProgram(t, "inputs/fig45", []byte("body\x00"))
	checkRows(t, rec, []row{
		{"c0", "0=", "", ""},
		{"while#1", "0=", "", ""},
		{"end#1", "0", "0=", ""},
		{"inc#1", "", "0", ""},
		{"next#1", "1=", "0=", "0"},
		{"while#2", "1=", "0=", "0"},
		{"end#2", "1", "0= 1=", "0"},
		{"inc#2", "", "0 1", "0"},
		{"next#2", "2=", "0= 1=", "0 1"},
		{"end#3", "2", "0= 1= 2=", "0 1"},
		{"next#3", "3=", "0= 1= 2=", "0 1 2"},
		{"end#4", "3", "0= 1= 2= 3=", "0 1 2"},
		{"next#4", "4=", "0= 1= 2= 3=", "0 1 2 3"},
		{"end#5", "4=", "0= 1= 2= 3= 4=", "0 1 2 3"},
		{"cmp", "4=→0@cmp", "0= 1= 2= 3= 4=", "0 1 2 3"},
		{"differ", "4=", "0= 1= 2= 3=", "0 1 2 3"},
		{"other", "", "", ""},
		{"ifcmp", "4=→0@cmp", "0= 1= 2= 3= 4=", "0 1 2 3"},
		{"tag", "4=→0@cmp→2@tag", "0= 1= 2= 3= 4=→0@cmp", "0 1 2 3"},
		{"see", "4=→0@cmp→2@tag→1@see", "0= 1= 2= 3= 4=→0@cmp→2@tag", "0 1 2 3"},
		{"ret", "4=→0@cmp→2@tag→1@see", "0= 1= 2= 3= 4=→0@cmp→2@tag", "0 1 2 3"},
	}, true)
}

// TestStrength checks the three strength tables of section 4.1.4.
// Entities: 0 is x (10) of value(), 1 is x (0) of mapping(), 2 is x (10)
// of address(), 3..18 are buf[0..15] (13 is buf[10] = 50, 14 is buf[11] =
// 40).
func TestStrength(t *testing.T) {
	in := []byte{10, 0, 10}
	for k := 0; k < 16; k++ {
		in = append(in, byte(k))
	}
	in[3+10], in[3+11] = 50, 40
	rec := recordProgram(t, "inputs/strength", in)
	checkRows(t, rec, []row{
		{"v1", "0=", "", ""},
		{"v2", "0=", "", ""},
		{"v3", "0", "", ""},
		{"v4", "0", "", ""},
		{"v5", "0=", "", ""},
		{"v6", "0=", "", ""},
		{"v7", "0", "", ""},
		{"m1", "1=", "", ""},
		{"m2", "1=", "", ""},
		{"m3", "1=", "", ""},
		{"m4", "1=", "1=", ""},
		{"m5", "1=→1@m5", "1=", ""},
		{"m6", "1", "1", ""},
		{"a1", "2=", "", ""},
		{"a2", "13=", "", "2="},
		{"a3", "2", "", ""},
		{"a4", "14=", "", "2"},
		{"a5", "13", "", "2"},
	}, true)
}

var _ = tracepb.Register_RAX

// TestCalcBytes checks that a byte keeps its own sets through the C
// library's buffered input (a read(2) of the whole file into stdio's
// buffer, fgets's memcpy of the line): testdata/programs/inputs/calc.c's
// operator byte is derived from itself alone, strong, and the zero divisor
// that kills it (SIGFPE) from the digits of 7 / (3 - 3), weak (computed).
// The entities come from inputs.Read.
func TestCalcBytes(t *testing.T) {
	bin := testprog.Build(t, "inputs/calc", testprog.Flags("-g", "-O0", "-fno-omit-frame-pointer"))
	input := "12 + 3\n(7 / (3 - 3))\n"
	in := filepath.Join(t.TempDir(), "calc.in")
	if err := os.WriteFile(in, []byte(input), 0o644); err != nil {
		t.Fatal(err)
	}
	trace := testprog.Record(t, bin, in)
	r, err := schema.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	ents, err := inputs.Read(r)
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	if r, err = schema.Open(trace); err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	run, err := slice.Load(r, slice.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The offsets in the input file of a set's elements, "=" for strong.
	offsets := func(els []inputs.Element) string {
		var parts []string
		for _, e := range els {
			rg, off, ok := ents.Entity(e.Entity)
			if !ok || ents.Sources[rg.Source].Kind != inputs.SourceFile {
				parts = append(parts, fmt.Sprintf("?%d", e.Entity))
				continue
			}
			s := fmt.Sprint(rg.Offset + off)
			if e.Strong {
				s += "="
			}
			parts = append(parts, s)
		}
		return strings.Join(parts, " ")
	}
	line := testprog.Line(t, "inputs/calc", "char op = *p++;")
	for _, c := range []struct {
		crit slice.Criterion
		der  string
	}{
		// The last '/' read by term(): offset 10.
		{slice.Criterion{Kind: slice.ByLine, File: "calc.c", Line: uint32(line)}, "10="},
		// 7 at offset 8, the 3s at 13 and 17.
		{slice.Criterion{Kind: slice.ByCrash}, "8 13 17"},
	} {
		p, err := run.Resolve(c.crit)
		if err != nil {
			t.Fatal(err)
		}
		rel, err := inputs.Analyze(run, ents, p, inputs.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := offsets(rel.Der); got != c.der {
			t.Errorf("%s: DER at offsets %q, want %q", p.Label, got, c.der)
		}
		if len(rel.Cinf) == 0 {
			t.Errorf("%s: no CINF (the parse's branches)", p.Label)
		}
	}
}

// TestFigure42 checks figure 4.2 on testdata/programs/inputs/markup.c (the
// chapter's Tidy-like running example) with the figure's 26-entity input:
// at the crash (the NULL parent), DER is S2= with its chain to NULL, CINF
// the figure's twelve entities with their strength and B2's chain to
// true (seeEndBody), AINF the same twelve entities, and the strong
// elements of DER and CINF spell SSNB/BP, the 1-minimal failing input.
// Entities are given by their offsets in the input.
func TestFigure42(t *testing.T) {
	bin := testprog.Build(t, "inputs/markup", testprog.Flags("-g", "-O0", "-fno-omit-frame-pointer"))
	input := `SSFFNBP"a"/P/BP"b"/P/N/S/S`
	in := filepath.Join(t.TempDir(), "doc")
	if err := os.WriteFile(in, []byte(input), 0o644); err != nil {
		t.Fatal(err)
	}
	trace := testprog.Record(t, bin, in)
	r, err := schema.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	ents, err := inputs.Read(r)
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	if r, err = schema.Open(trace); err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	run, err := slice.Load(r, slice.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := run.Resolve(slice.Criterion{Kind: slice.ByCrash})
	if err != nil {
		t.Fatal(err)
	}
	rel, err := inputs.Analyze(run, ents, p, inputs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// "OFFSET[=][→VALUE...]" per element; without strength, per entity.
	show := func(els []inputs.Element, strength bool) string {
		var parts []string
		for _, e := range els {
			rg, off, ok := ents.Entity(e.Entity)
			if !ok {
				t.Fatalf("entity %d is not in the entities", e.Entity)
			}
			s := fmt.Sprint(rg.Offset + off)
			if strength && e.Strong {
				s += "="
			}
			for _, l := range e.Chain {
				if strength {
					s += fmt.Sprintf("→%d", l.Value)
				}
			}
			if k := len(parts); k > 0 && parts[k-1] == s {
				continue // one entity, several chains
			}
			parts = append(parts, s)
		}
		return strings.Join(parts, " ")
	}
	if got, want := show(rel.Der, true), "1=→0"; got != want {
		t.Errorf("DER %s, want %s (S2= → NULL)", got, want)
	}
	if got, want := show(rel.Cinf, true), "0= 1= 2 3 4= 5= 6 7 10 12= 13=→1 14="; got != want {
		t.Errorf("CINF %s, want %s (S1=,S2=,F1,F2,N1=,B1=,P1,\"1,/1,/2=,B2= → true,P3=)", got, want)
	}
	if got, want := show(rel.Ainf, false), "0 1 2 3 4 5 6 7 10 12 13 14"; got != want {
		t.Errorf("AINF %s, want %s", got, want)
	}
	var strong []byte
	seen := map[uint64]bool{}
	for _, e := range append(append([]inputs.Element{}, rel.Der...), rel.Cinf...) {
		rg, off, _ := ents.Entity(e.Entity)
		if e.Strong && !seen[rg.Offset+off] {
			seen[rg.Offset+off] = true
		}
	}
	for off := uint64(0); off < uint64(len(input)); off++ {
		if seen[off] {
			strong = append(strong, input[off])
		}
	}
	if string(strong) != "SSNB/BP" {
		t.Errorf("the strong elements of DER and CINF spell %q, want SSNB/BP", strong)
	}
}
