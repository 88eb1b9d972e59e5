package reduce

import (
	"slices"
	"testing"

	"github.com/mgtrace/mgtrace/inputs"
)

// TestMapInput checks how the input file is found among a run's sources
// and how its bytes map to the reduction's entities.
func TestMapInput(t *testing.T) {
	data := []byte("12 + (3/0)")
	toks, _ := Split(data, "tokens:[0-9]+|[-+*/()]") // "12" " " "+" " " "(" "3" "/" "0" ")"
	ents := &inputs.Entities{
		Sources: []inputs.Source{
			{ID: 0, Kind: inputs.SourceModule, Path: "/lib/libc.so.6", Bytes: 10},
			{ID: 1, Kind: inputs.SourceFile, Path: "/tmp/x/in.txt", Bytes: 10},
			{ID: 2, Kind: inputs.SourceStdin, Name: "stdin", Bytes: 4},
		},
		Ranges: []inputs.Range{
			{First: 0, Len: 10, Source: 0, Addr: 0x1000},
			{First: 10, Len: 4, Source: 1, Offset: 0, Addr: 0x2000, Data: data[:4]},
			{First: 14, Len: 6, Source: 1, Offset: 4, Addr: 0x3000, Data: data[4:]},
			{First: 20, Len: 4, Source: 2, Addr: 0x4000},
		},
		Total: 24,
	}
	m, err := MapInput(ents, InputFile{Path: "/tmp/x/../x/in.txt", Data: data, Entities: toks})
	if err != nil || m.Source != 1 {
		t.Fatalf("by path: source %v, %v; want 1", m, err)
	}
	for _, tc := range []struct {
		rg   int
		addr uint64
		want int
	}{
		{1, 0x2000, 0}, {1, 0x2001, 0}, {1, 0x2003, 2}, {2, 0x3000, 3}, {2, 0x3005, 8},
		{0, 0x1000, -1}, {2, 0x3006, -1}, {1, 0x1fff, -1},
	} {
		if got := m.Entity(ents.Ranges[tc.rg], tc.addr); got != tc.want {
			t.Errorf("Entity(range %d, %#x) = %d, want %d", tc.rg, tc.addr, got, tc.want)
		}
	}
	if got := m.Entities([]uint64{19, 10, 11, 3, 15, 99}); !slices.Equal(got, []int{0, 4, 8}) {
		t.Errorf("Entities = %v, want [0 4 8]", got)
	}
	if m, err := MapInput(ents, InputFile{Data: []byte("abcd")}); err != nil || m.Source != 2 {
		t.Errorf("standard input: %v, %v; want source 2", m, err)
	}
	// Without paths: the source that brought the file's bytes.
	ents.Sources[1].Kind, ents.Sources[1].Path = inputs.SourceOther, ""
	if m, err := MapInput(ents, InputFile{Path: "/elsewhere/in.txt", Data: data, Entities: toks}); err != nil || m.Source != 1 {
		t.Errorf("by content: %v, %v; want source 1", m, err)
	}
	if _, err := MapInput(ents, InputFile{Path: "/elsewhere/in.txt", Data: []byte("other text"), Entities: toks}); err == nil {
		t.Errorf("no source with the file's bytes: no error")
	}
}
