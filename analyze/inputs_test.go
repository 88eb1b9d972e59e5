package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/mgtrace/mgtrace/inputs"
	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/schema"
)

// TestInputsUsage checks analyze inputs' usage errors: each is one line
// and exit status 2.
func TestInputsUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"inputs", "x.trace"}, "missing --criterion"},
		{[]string{"inputs", "--criterion", "a.c:0", "x.trace"}, "is not a line number"},
		{[]string{"inputs", "--criterion", "crash", "--reg", "rax", "--addr", "0x10", "x.trace"}, "both given"},
		{[]string{"inputs", "--list", "--criterion", "crash", "x.trace"}, "takes no --criterion"},
		{[]string{"inputs", "--list", "--format", "arrow", "x.trace"}, "not arrow"},
		{[]string{"inputs", "--criterion", "crash", "--format", "csv", "x.trace"}, "unknown --format"},
		{[]string{"inputs", "--criterion", "crash", "--sources", "disk", "x.trace"}, "--sources \"disk\""},
		{[]string{"inputs", "--criterion", "crash"}, "missing trace file"},
		{[]string{"inputs", "--criterion", "crash", "/nonexistent.trace"}, "nonexistent"},
	} {
		out, errOut, status := runAnalyze(t, tc.args...)
		if status != exitError || out != "" || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") > 2 {
			t.Errorf("%v: status %d, stdout %q, stderr %q; want status 2 and %q", tc.args, status, out, errOut, tc.want)
		}
	}
}

// TestInputsFig45 runs analyze inputs on a recording of
// testdata/programs/inputs/fig45.c reading "body\0": the value is_body
// returns is derived from the input's last byte through the mapping chain
// 0 (cmp) -> 2 (tag) -> 1 (seeBody), in JSON, text and Arrow, and --list
// lists the input's source.
func TestInputsFig45(t *testing.T) {
	bin := testprog.Build(t, "inputs/fig45", testprog.Flags("-g", "-O0", "-fno-omit-frame-pointer"))
	in := filepath.Join(t.TempDir(), "body")
	if err := os.WriteFile(in, []byte("body\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	trace := testprog.Record(t, bin, in)
	line := func(marker string) int { return testprog.Line(t, "inputs/fig45", "//@ "+marker) }
	crit := fmt.Sprintf("fig45.c:%d", line("ret"))

	out, errOut, status := runAnalyze(t, "inputs", "--criterion", crit, "--format", "json", "--sources", "all", trace)
	if status != 0 {
		t.Fatalf("status %d: %s", status, errOut)
	}
	var rel inputs.Relevance
	if err := json.Unmarshal([]byte(out), &rel); err != nil {
		t.Fatalf("json: %v", err)
	}
	if len(rel.Der) != 1 || !rel.Der[0].Strong || len(rel.Der[0].Chain) != 3 {
		t.Fatalf("DER %+v, want one strong element with a chain of 3 links", rel.Der)
	}
	for k, want := range []struct {
		value  int64
		marker string
	}{{0, "cmp"}, {2, "tag"}, {1, "see"}} {
		l := rel.Der[0].Chain[k]
		if l.Value != want.value || l.Statement != fmt.Sprintf("fig45.c:%d", line(want.marker)) {
			t.Errorf("chain link %d: %+v, want %d at the line marked %s", k, l, want.value, want.marker)
		}
	}
	var der []inputs.EntityRange
	for _, r := range rel.Ranges {
		if r.Set == inputs.SetDer {
			der = append(der, r)
		}
	}
	if len(der) != 1 || der[0].Offset != 4 || der[0].Len != 1 || rel.Sources[der[0].Source].Bytes != 5 {
		t.Errorf("DER ranges %+v, want offset 4 of the 5-byte input", der)
	}
	cinf := 0
	for _, e := range rel.Cinf {
		if e.Strong {
			cinf++
		}
	}
	if cinf < 5 {
		t.Errorf("CINF %+v: want at least the 5 input bytes, strong", rel.Cinf)
	}

	// Text: the input's line with its marks, the chain.
	out, errOut, status = runAnalyze(t, "inputs", "--criterion", crit, "--sources", "all", trace)
	if status != 0 {
		t.Fatalf("status %d: %s", status, errOut)
	}
	wants := []string{
		"relevant inputs of " + crit,
		"CA=  CA=  CA=  CA=  DC=",
		fmt.Sprintf("at fig45.c:%d) -> 2 (", line("cmp")),
		"DERIVED: 1 entity",
	}
	if recordedBytes(t, trace) {
		// A trace with INPUT events shows the bytes.
		wants = append(wants, `b    o    d    y    \0`, fmt.Sprintf(`chain: entity %d "\x00"= -> 0 (`, der[0].First))
	}
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}

	// Arrow: one row per entity and set.
	file := filepath.Join(t.TempDir(), "rel.arrow")
	if _, errOut, status = runAnalyze(t, "inputs", "--criterion", crit, "--format", "arrow", "-o", file, "--sources", "all", trace); status != 0 {
		t.Fatalf("status %d: %s", status, errOut)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := ipc.NewFileReader(f, ipc.WithAllocator(memory.DefaultAllocator))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	rows := int64(0)
	for k := 0; k < rd.NumRecords(); k++ {
		rec, err := rd.Record(k)
		if err != nil {
			t.Fatal(err)
		}
		rows += rec.NumRows()
	}
	if want := len(rel.Der) + len(rel.Cinf) + len(rel.Ainf); rows != int64(want) {
		t.Errorf("arrow: %d rows, want %d", rows, want)
	}

	// --list: the input is one source of 5 bytes.
	out, errOut, status = runAnalyze(t, "inputs", "--list", "--format", "json", trace)
	if status != 0 {
		t.Fatalf("--list: status %d: %s", status, errOut)
	}
	var ents inputs.Entities
	if err := json.Unmarshal([]byte(out), &ents); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range ents.Sources {
		found = found || s.Bytes == 5
	}
	if !found {
		t.Errorf("--list: no 5-byte source among %+v", ents.Sources)
	}
}

// recordedBytes says whether the trace holds the bytes of its input (INPUT
// events).
func recordedBytes(t *testing.T, trace string) bool {
	t.Helper()
	r, err := schema.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ents, err := inputs.Read(r)
	if err != nil {
		t.Fatal(err)
	}
	return ents.Unrecorded < ents.Total
}
