package schema_test

import (
	"bytes"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
)

// TestDocWorkedExample writes the trace of the worked example in
// docs/trace-format.md (section "Worked example") and checks that the
// document shows its bytes exactly, so that the example cannot go stale.
// If the encoding changes on purpose, regenerate the dump in the document
// with the program it shows.
func TestDocWorkedExample(t *testing.T) {
	var buf bytes.Buffer
	hdr := &tracepb.Header{Recorder: "example", Program: "./list", Arch: "x86_64", Os: "linux"}
	w, err := schema.NewWriter(&buf, hdr, schema.WriterOptions{Now: func() time.Time { return time.Unix(0, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	err = w.AddTables(&tracepb.Tables{Functions: []*tracepb.Function{{Id: 1, Name: "main", Low: 0x401126, High: 0x401140}}})
	if err != nil {
		t.Fatal(err)
	}
	const rbx = schema.Reg(tracepb.Register_RBX)
	for _, ev := range []schema.Event{
		{Kind: schema.KindBlock, Thread: 1, PC: 0x401126, Count: 4},
		{Kind: schema.KindLoad, Thread: 1, PC: 0x40112a, Addr: 0x4052a8, Size: 8, Value: 0x4052c0, BaseReg: rbx, Base: 0x4052a0},
		{Kind: schema.KindStore, Thread: 1, PC: 0x40112e, Addr: 0x4052a0, Size: 4, Value: 7, BaseReg: rbx, Base: 0x4052a0},
		{Kind: schema.KindExit, Thread: 1, Value: 3},
	} {
		if err := w.Write(&ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(&tracepb.ExitStatus{Ended: true, Code: 3}); err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../docs/trace-format.md")
	if err != nil {
		t.Fatal(err)
	}
	dump := hex.Dump(buf.Bytes())
	if !strings.Contains(string(doc), dump) {
		t.Fatalf("docs/trace-format.md does not show the worked example's bytes; they are now:\n%s", dump)
	}
}
