package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/internal/testprog"
)

const tracesDir = "../testdata/traces/"

// TestMGText checks analyze mg's summaries of committed traces against
// golden files.
func TestMGText(t *testing.T) {
	for _, tc := range []struct {
		golden string
		args   []string
		status int
	}{
		{"mg_list.golden", []string{"mg", "--mode", "agnostic", tracesDir + "list.trace"}, 0},
		{"mg_breaklist_at.golden", []string{"mg", "--mode", "aware", "--at", "mark:end", tracesDir + "breaklist.trace"}, 0},
		{"mg_overflow.golden", []string{"mg", "--mode", "agnostic", "--overflow", tracesDir + "overflow.trace"}, 1},
		{"mg_dlpool_all.golden", []string{"mg", "--mode", "agnostic", "--scope", "all", tracesDir + "dlpool.trace"}, 0},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			out, errOut, status := runAnalyze(t, tc.args...)
			if status != tc.status || errOut != "" {
				t.Fatalf("status %d (want %d), stderr %q", status, tc.status, errOut)
			}
			checkGolden(t, goldenPath(t, tc.golden), out)
		})
	}
	// The overflow is reported at the line marked OVERFLOW.
	out, _, _ := runAnalyze(t, "mg", "--mode", "agnostic", "--overflow", tracesDir+"overflow.trace")
	want := "testdata/programs/overflow.c:" + itoa(testprog.Line(t, "overflow", "/* OVERFLOW */")) + " (fill): store"
	if !strings.Contains(out, want) {
		t.Errorf("no finding at %q in:\n%s", want, out)
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestMGJSONAndDOT checks the machine formats.
func TestMGJSONAndDOT(t *testing.T) {
	out, errOut, status := runAnalyze(t, "mg", "--format", "json", "--mode", "aware", "--at", "mark:end", tracesDir+"breaklist.trace")
	if status != 0 || errOut != "" {
		t.Fatalf("json: status %d, stderr %q", status, errOut)
	}
	var doc struct {
		Mode  string `json:"mode"`
		Nodes []struct {
			ID   int    `json:"id"`
			Stmt string `json:"stmt"`
		} `json:"nodes"`
		Edges []struct {
			From    int    `json:"from"`
			To      int    `json:"to"`
			Offset  uint64 `json:"offset"`
			Pointer bool   `json:"pointer"`
			Value   string `json:"value"`
		} `json:"edges"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	// At the end marker: both nodes, both next fields NULL.
	nulls := 0
	for _, e := range doc.Edges {
		if e.Offset == 8 && e.Value == "0x0" && !e.Pointer {
			nulls++
		}
	}
	if doc.Mode != "aware" || len(doc.Nodes) < 2 || nulls != 2 {
		t.Errorf("json: mode %s, %d nodes, %d NULL next fields:\n%s", doc.Mode, len(doc.Nodes), nulls, out)
	}
	out, _, status = runAnalyze(t, "mg", "--format", "dot", "--mode", "agnostic", "--scope", "all", tracesDir+"dlpool.trace")
	if status != 0 || !strings.HasPrefix(out, "digraph mg {") || !strings.Contains(out, "shape=diamond") || !strings.HasSuffix(out, "}\n") {
		t.Errorf("dot: status %d:\n%s", status, out)
	}
}

// TestMGErrors checks one-line errors and exit status 2.
func TestMGErrors(t *testing.T) {
	for _, args := range [][]string{
		{"mg", "--mode", "psychic", tracesDir + "list.trace"},
		{"mg", "--scope", "some", tracesDir + "list.trace"},
		{"mg", "--at", "cpoint:99", tracesDir + "list.trace"},
		{"mg", "--at", "yesterday", tracesDir + "list.trace"},
		{"mg", "--format", "xml", tracesDir + "list.trace"},
		{"mg", "--format", "dot", "--overflow", tracesDir + "overflow.trace"},
		{"mg", "no-such.trace"},
		{"mg"},
	} {
		out, errOut, status := runAnalyze(t, args...)
		if status != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "analyze: ") {
			t.Errorf("%v: status %d, stdout %q, stderr %q", args, status, out, errOut)
		}
	}
}

// TestMGTables checks that --format arrow and parquet write the two table
// files (their contents are checked in mgbuild/mgarrow) and need -o.
func TestMGTables(t *testing.T) {
	trace, err := filepath.Abs(tracesDir + "dlpool.trace")
	if err != nil {
		t.Fatal(err)
	}
	inTempDir(t)
	for _, format := range []string{"arrow", "parquet"} {
		out, errOut, status := runAnalyze(t, "mg", "--format", format, "-o", "h", trace)
		if status != 0 || out != "" || errOut != "" {
			t.Fatalf("%s: status %d, stdout %q, stderr %q", format, status, out, errOut)
		}
		for _, table := range []string{"nodes", "edges"} {
			if st, err := os.Stat("h." + table + "." + format); err != nil || st.Size() == 0 {
				t.Errorf("%s: %s table: %v", format, table, err)
			}
		}
		if _, errOut, status := runAnalyze(t, "mg", "--format", format, trace); status != 2 || !strings.Contains(errOut, "-o") {
			t.Errorf("%s without -o: status %d, stderr %q", format, status, errOut)
		}
	}
}

// TestMGAutoMode: by default a trace with allocator calls gets the aware
// graph, which shows what the program freed (the agnostic graph never
// frees a node); --mode agnostic still gives the other one.
func TestMGAutoMode(t *testing.T) {
	auto, errOut, status := runAnalyze(t, "mg", tracesDir+"breaklist.trace")
	if status != 0 || errOut != "" {
		t.Fatalf("status %d, stderr %q", status, errOut)
	}
	aware, _, _ := runAnalyze(t, "mg", "--mode", "aware", tracesDir+"breaklist.trace")
	agnostic, _, _ := runAnalyze(t, "mg", "--mode", "agnostic", tracesDir+"breaklist.trace")
	if auto != aware || !strings.Contains(auto, "mode aware") {
		t.Errorf("the default is not the aware graph:\n%s", auto)
	}
	if agnostic == aware || !strings.Contains(agnostic, "mode agnostic") {
		t.Errorf("--mode agnostic does not give the agnostic graph:\n%s", agnostic)
	}
}
