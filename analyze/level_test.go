package main

import (
	"io"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
	"github.com/mgtrace/mgtrace/tarantula"
)

func recordLevels(t *testing.T) map[string]string {
	t.Helper()
	prog := testprog.Build(t, "list")
	traces := map[string]string{}
	for _, l := range []string{"full", "heap", "flow"} {
		tr, _, errOut := testprog.RecordWith(t, []string{"--level", l}, prog, "50")
		if errOut != "" {
			t.Fatalf("record --level %s: %s", l, errOut)
		}
		traces[l] = tr
	}
	return traces
}

// kindCounts counts a trace's events by kind, and its loads and stores
// whose base register is rsp or rbp.
func kindCounts(t *testing.T, path string) (counts map[schema.Kind]int, stack int, level schema.Level) {
	t.Helper()
	r, err := schema.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	level, err = schema.HeaderLevel(r.Header())
	if err != nil {
		t.Fatal(err)
	}
	counts = map[schema.Kind]int{}
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		counts[ev.Kind]++
		if (ev.Kind == schema.KindLoad || ev.Kind == schema.KindStore) &&
			(ev.BaseReg == schema.Reg(tracepb.Register_RSP) || ev.BaseReg == schema.Reg(tracepb.Register_RBP)) {
			stack++
		}
	}
	return counts, stack, level
}

var mgHistory = regexp.MustCompile(`(\d+) nodes, (\d+) edges`)

// TestRecordLevels records list.c at each level: heap keeps no access
// based on rsp or rbp and gives the same MG++ graph as full; flow keeps no
// data and gives the same coverage.
func TestRecordLevels(t *testing.T) {
	traces := recordLevels(t)
	full, fullStack, lvl := kindCounts(t, traces["full"])
	if lvl != schema.LevelFull || fullStack == 0 || full[schema.KindLoad] == 0 {
		t.Fatalf("full trace: level %v, %d stack accesses, %d loads", lvl, fullStack, full[schema.KindLoad])
	}
	heap, heapStack, lvl := kindCounts(t, traces["heap"])
	if lvl != schema.LevelHeap || heapStack != 0 {
		t.Errorf("heap trace: level %v, %d accesses based on rsp or rbp (want none)", lvl, heapStack)
	}
	if heap[schema.KindStore] == 0 || heap[schema.KindStore] >= full[schema.KindStore] || heap[schema.KindLoad] >= full[schema.KindLoad] {
		t.Errorf("heap trace: %d loads, %d stores; full: %d, %d", heap[schema.KindLoad], heap[schema.KindStore], full[schema.KindLoad], full[schema.KindStore])
	}
	if heap[schema.KindBlock] != full[schema.KindBlock] || heap[schema.KindCall] != full[schema.KindCall] {
		t.Errorf("heap trace: %d blocks, %d calls; full: %d, %d", heap[schema.KindBlock], heap[schema.KindCall], full[schema.KindBlock], full[schema.KindCall])
	}
	flow, _, lvl := kindCounts(t, traces["flow"])
	if lvl != schema.LevelFlow || flow[schema.KindLoad]+flow[schema.KindStore]+flow[schema.KindDerive] != 0 {
		t.Errorf("flow trace: level %v, %d loads, %d stores, %d derivations (want none)", lvl, flow[schema.KindLoad], flow[schema.KindStore], flow[schema.KindDerive])
	}
	if flow[schema.KindBlock] != full[schema.KindBlock] || flow[schema.KindCall] != full[schema.KindCall] || flow[schema.KindReturn] != full[schema.KindReturn] {
		t.Errorf("flow trace: %d blocks, %d calls, %d returns; full: %d, %d, %d", flow[schema.KindBlock], flow[schema.KindCall], flow[schema.KindReturn],
			full[schema.KindBlock], full[schema.KindCall], full[schema.KindReturn])
	}

	// The same MG++ graph from full and heap.
	graph := map[string][]string{}
	for _, l := range []string{"full", "heap"} {
		out, errOut, status := runAnalyze(t, "mg", traces[l])
		m := mgHistory.FindStringSubmatch(out)
		if status != 0 || errOut != "" || m == nil {
			t.Fatalf("mg on the %s trace: status %d, stderr %q, output:\n%s", l, status, errOut, out)
		}
		graph[l] = m[1:]
	}
	if !reflect.DeepEqual(graph["full"], graph["heap"]) || graph["full"][0] == "0" {
		t.Errorf("MG++ nodes and edges: full %v, heap %v", graph["full"], graph["heap"])
	}

	// The same coverage from full and flow.
	cov := map[string][]tarantula.Covered{}
	for _, l := range []string{"full", "flow"} {
		r, err := schema.Open(traces[l])
		if err != nil {
			t.Fatal(err)
		}
		c, err := tarantula.ReadCoverage(r, tarantula.Options{})
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		cov[l] = c.Statements
	}
	if len(cov["full"]) == 0 || !reflect.DeepEqual(cov["full"], cov["flow"]) {
		t.Errorf("coverage: full %d statements, flow %d, or they differ", len(cov["full"]), len(cov["flow"]))
	}

	// analyze info shows the level.
	out, _, _ := runAnalyze(t, "info", traces["heap"])
	if !strings.Contains(out, "level:       heap") {
		t.Errorf("info does not show the level:\n%s", out)
	}
}

// TestLevelMessages checks each analysis's one line about a trace whose
// level is coarser than it needs.
func TestLevelMessages(t *testing.T) {
	traces := recordLevels(t)
	spec := "testdata/specsem_cycle.spec"
	for _, tc := range []struct {
		level  string
		args   []string
		status int
		stderr string // the one line, "" for none
	}{
		{"flow", []string{"mg"}, 2, "analyze: mg needs memory accesses, and TRACE was recorded with --level flow: record it with --level heap or full"},
		{"flow", []string{"bugs"}, 2, "analyze: bugs needs memory accesses, and TRACE was recorded with --level flow: record it with --level heap or full"},
		{"flow", []string{"state"}, 2, "analyze: state needs memory accesses, and TRACE was recorded with --level flow: record it with --level heap or full"},
		{"flow", []string{"slice", "--format", "text", "--criterion", "list.c:103"}, 2, "analyze: slice needs memory accesses, and TRACE was recorded with --level flow: record it with --level heap or full"},
		{"flow", []string{"inputs", "--criterion", "list.c:103"}, 2, "analyze: inputs needs memory accesses, and TRACE was recorded with --level flow: record it with --level heap or full"},
		{"flow", []string{"check", "TRACE", spec}, 2, "analyze: check needs memory accesses, and TRACE was recorded with --level flow: record it with --level heap or full"},
		{"flow", []string{"locate", "TRACE", spec}, 2, "analyze: locate needs memory accesses, and TRACE was recorded with --level flow: record it with --level heap or full"},
		{"flow", []string{"report", "-o", "r.html"}, 2, "analyze: report needs memory accesses, and TRACE was recorded with --level flow: record it with --level heap or full"},
		{"flow", []string{"serve", "--listen", "127.0.0.1:0"}, 2, "analyze: serve needs memory accesses, and TRACE was recorded with --level flow: record it with --level heap or full"},
		{"flow", []string{"info"}, 0, ""},
		{"flow", []string{"dump", "--kind", "call"}, 0, ""},
		{"flow", []string{"tarantula", "--fail"}, 0, ""},
		{"heap", []string{"mg"}, 0, ""},
		{"heap", []string{"bugs"}, 0, "analyze: warning: TRACE was recorded with --level heap: stack findings are out of reach: the leak rules' roots on the stacks are not recorded"},
		{"heap", []string{"bugs", "--only", "double_free"}, 0, ""},
		{"heap", []string{"state"}, 0, "analyze: warning: TRACE was recorded with --level heap: stack bytes are unknown"},
		{"heap", []string{"slice", "--format", "text", "--criterion", "list.c:103"}, 0, "analyze: warning: TRACE was recorded with --level heap: stack dependences are missing"},
		{"heap", []string{"inputs", "--criterion", "list.c:103"}, 0, "analyze: warning: TRACE was recorded with --level heap: stack dependences are missing"},
		{"full", []string{"state"}, 0, ""},
		{"full", []string{"slice", "--format", "text", "--criterion", "list.c:103"}, 0, ""},
	} {
		t.Run(tc.level+"/"+strings.Join(tc.args, " "), func(t *testing.T) {
			trace := traces[tc.level]
			args := append([]string(nil), tc.args...)
			if i := indexOf(args, "TRACE"); i >= 0 {
				args[i] = trace
			} else {
				args = append(args, trace)
			}
			_, errOut, status := runAnalyze(t, args...)
			want := strings.ReplaceAll(tc.stderr, "TRACE", trace)
			if want != "" {
				want += "\n"
			}
			if status != tc.status || errOut != want {
				t.Errorf("status %d, stderr %q; want %d, %q", status, errOut, tc.status, want)
			}
		})
	}
}

func indexOf(s []string, x string) int {
	for i, v := range s {
		if v == x {
			return i
		}
	}
	return -1
}
