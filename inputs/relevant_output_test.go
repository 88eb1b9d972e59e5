package inputs

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// outputCase is a small relevance over two sources: "ab\ncd" from a file
// (entities 0-4) and "xy" from standard input (5-6), the second without
// its bytes.
func outputCase() (*Relevance, *Entities) {
	ents := &Entities{
		Sources: []Source{{ID: 0, Kind: SourceFile, Path: "/in", Name: "/in", Bytes: 5}, {ID: 1, Kind: SourceStdin, Name: "stdin", Bytes: 2}},
		Ranges: []Range{
			{First: 0, Len: 5, Source: 0, Offset: 0, Addr: 0x1000, Seq: 10, Syscall: "read", Data: []byte("ab\ncd")},
			{First: 5, Len: 2, Source: 1, Offset: 0, Addr: 0x2000, Seq: 20, Syscall: "read"},
		},
		Total: 7,
	}
	rel := &Relevance{
		Criterion: "x.c:3#1", Instance: 42, Value: "the value the instance computes",
		Der:  []Element{{Entity: 1, Strong: true, Chain: []Link{{Value: 7, Location: "rax", Statement: "x.c:2", PC: 0x400}}}},
		Cinf: []Element{{Entity: 0, Strong: true}, {Entity: 1, Strong: true}, {Entity: 6}},
		Ainf: []Element{{Entity: 3}, {Entity: 4}},
		Ranges: []EntityRange{
			{Set: SetDer, Source: 0, First: 1, Len: 1, Offset: 1, Strong: true},
			{Set: SetCinf, Source: 0, First: 0, Len: 2, Offset: 0, Strong: true},
			{Set: SetCinf, Source: 1, First: 6, Len: 1, Offset: 1},
			{Set: SetAinf, Source: 0, First: 3, Len: 2, Offset: 3},
		},
		Sources: ents.Sources,
	}
	return rel, ents
}

func TestWriteText(t *testing.T) {
	rel, ents := outputCase()
	var b bytes.Buffer
	if err := WriteText(&b, rel, ents); err != nil {
		t.Fatal(err)
	}
	want := `relevant inputs of x.c:3#1: the value the instance computes (instance 42)

/in (file, 5 bytes):
         0  a    b    \n   c    d
            C=   DC=       A    A

stdin (stdin, 2 bytes):
         0  ··   ··
                 C

DERIVED: 1 entity
  entity 1: /in offset 1 "b", strong
  chain: entity 1 "b"= -> 7 (rax at x.c:2)

CINFLUENCED: 3 entities
  entities 0-1: /in offsets 0-1 "ab", strong
  entity 6: stdin offset 1, weak

AINFLUENCED: 2 entities
  entities 3-4: /in offsets 3-4 "cd", weak
`
	if b.String() != want {
		t.Errorf("WriteText:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	if err := WriteList(&b, ents); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"7 input entities from 2 sources", "source 1: stdin (stdin), 2 bytes",
		`entities 0-4: /in offsets 0-4, read (event 10, thread 0) at 0x1000 "ab\ncd"`, "entities 5-6: stdin offsets 0-1, read (event 20"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("WriteList lacks %q:\n%s", w, b.String())
		}
	}
}

func TestWriteArrow(t *testing.T) {
	rel, ents := outputCase()
	path := filepath.Join(t.TempDir(), "rel.arrow")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteArrow(f, rel, ents); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if f, err = os.Open(path); err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := ipc.NewFileReader(f, ipc.WithAllocator(memory.DefaultAllocator))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	rec, err := rd.Record(0)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for k := 0; k < int(rec.NumRows()); k++ {
		set := rec.Column(0).(*array.String).Value(k)
		ent := rec.Column(1).(*array.Uint64).Value(k)
		strong := rec.Column(2).(*array.Boolean).Value(k)
		byt := "null"
		if c := rec.Column(6).(*array.Uint8); c.IsValid(k) {
			byt = string(rune(c.Value(k)))
		}
		l := rec.Column(7).(*array.List)
		start, end := l.ValueOffsets(k)
		chains := l.ListValues().(*array.String)
		var cs []string
		for j := start; j < end; j++ {
			cs = append(cs, chains.Value(int(j)))
		}
		rows = append(rows, strings.Join([]string{set, string(rune('0' + ent)), map[bool]string{true: "=", false: ""}[strong], byt, strings.Join(cs, ";")}, "|"))
	}
	want := []string{"der|1|=|b|7(rax@x.c:2)", "cinf|0|=|a|", "cinf|1|=|b|", "cinf|6||null|", "ainf|3||c|", "ainf|4||d|"}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
}
