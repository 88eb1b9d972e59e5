package main

import (
	"bufio"
	enchex "encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/explore/state"
	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/locate/spec"
	"github.com/mgtrace/mgtrace/mgbuild"
	"github.com/mgtrace/mgtrace/schema"
)

// printedCell is one `cell` line of testdata/programs/state/cells.c.
type printedCell struct {
	addr, next       uint64
	key, weight, tag int64
	total            int64
	name             []byte
	hi               int
	fresh            bool
}

// parseCells returns the cells printed at each checkpoint (index K-1).
func parseCells(t *testing.T, out string) [][]printedCell {
	t.Helper()
	var cps [][]printedCell
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) > 0 && f[0] == "checkpoint":
			cps = append(cps, nil)
		case len(f) == 18 && f[0] == "cell":
			var c printedCell
			var err error
			num := func(s string, base int) int64 {
				v, e := strconv.ParseInt(s, base, 64)
				if e != nil {
					u, e2 := strconv.ParseUint(s, base, 64)
					v, e = int64(u), e2
				}
				if e != nil {
					err = e
				}
				return v
			}
			c.addr = uint64(num(f[1], 16))
			c.fresh = f[3] == "1"
			c.next = uint64(num(f[5], 16))
			c.key, c.weight, c.tag, c.total = num(f[7], 10), num(f[9], 10), num(f[11], 10), num(f[13], 10)
			c.hi = int(num(f[17], 10))
			if c.name, err = enchex.DecodeString(f[15]); err != nil || len(c.name) != c.hi || len(cps) == 0 {
				t.Fatalf("bad line %q", sc.Text())
			}
			cps[len(cps)-1] = append(cps[len(cps)-1], c)
		}
	}
	return cps
}

// checkNode compares a node's state with what the program printed; it
// returns the mismatches.
func checkNode(n state.Node, c printedCell) []string {
	var bad []string
	fields := map[string]state.Field{}
	for _, f := range n.Fields {
		fields[f.Name] = f
	}
	want := map[string]uint64{
		"next":   c.next,
		"key":    uint64(uint32(int32(c.key))),
		"weight": uint64(uint16(int16(c.weight))),
		"tag":    uint64(uint8(int8(c.tag))),
		"total":  uint64(c.total),
	}
	for name, w := range want {
		if got := fields[name].Value; got != fmt.Sprintf("%#x", w) {
			bad = append(bad, fmt.Sprintf("%s = %q, printed %#x", name, got, w))
		}
	}
	name := fields["name"]
	if len(name.Bytes) != 12 {
		return append(bad, fmt.Sprintf("name has %d bytes", len(name.Bytes)))
	}
	for i := 0; i < 12; i++ {
		b := name.Bytes[i]
		switch {
		case i < c.hi && (b == nil || *b != c.name[i]):
			bad = append(bad, fmt.Sprintf("name[%d] = %v, printed %#x", i, b, c.name[i]))
		case i >= c.hi && c.fresh && b != nil:
			bad = append(bad, fmt.Sprintf("name[%d] = %#x, never written: want unknown", i, *b))
		}
	}
	if c.fresh {
		for i := 36; i < 40 && i < len(n.Memory.Bytes); i++ {
			if b := n.Memory.Bytes[i]; b != nil {
				bad = append(bad, fmt.Sprintf("padding byte %d = %#x, never written: want unknown", i, *b))
			}
		}
	}
	return bad
}

// TestStateCells is the acceptance test of analyze state: at 20 random
// C-points of cells.c, every field of every cell that the program printed
// equals the state's value of its node, and the bytes the program never
// wrote are unknown, not zero.
func TestStateCells(t *testing.T) {
	bin := testprog.Build(t, "state/cells")
	trace, out := testprog.RecordOutput(t, bin, "150", "3", "3")
	cps := parseCells(t, out)
	if len(cps) != 50 {
		t.Fatalf("%d checkpoints printed, want 50", len(cps))
	}
	r, err := schema.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	g, err := mgbuild.Build(r, mgbuild.Options{Mode: mgbuild.Aware})
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(17, 4))
	fresh, unknownChecked, freed := 0, 0, 0
	for _, k := range rng.Perm(len(cps))[:20] {
		at := fmt.Sprintf("cpoint:%d", k+1)
		m, err := state.Resolve(g, at)
		if err != nil {
			t.Fatal(err)
		}
		snap := g.Snapshot(m.TS)
		q := state.Query{}
		for _, c := range cps[k] {
			id := snap.Find(c.addr)
			if lo, _, _ := snap.Extent(id); id == 0 || lo != c.addr {
				t.Fatalf("%s: no live node at %#x", at, c.addr)
			}
			q.Nodes = append(q.Nodes, id)
		}
		// A freed node shows as freed, with its last extent.
		for i := range g.Nodes {
			if n := &g.Nodes[i]; n.Ended != 0 && n.Ended <= m.TS && n.Size == 40 {
				q.Nodes = append(q.Nodes, n.ID)
				break
			}
		}
		r, err := schema.Open(trace)
		if err != nil {
			t.Fatal(err)
		}
		v, err := state.At(r, g, m, q, nil)
		r.Close()
		if err != nil {
			t.Fatalf("%s: %v", at, err)
		}
		for i, c := range cps[k] {
			n := v.Nodes[i]
			if n.Type != "cell" || n.TypeRule != "size" || n.Status != "live" {
				t.Fatalf("%s: node %d: type %q by %q, %s", at, n.ID, n.Type, n.TypeRule, n.Status)
			}
			for _, b := range checkNode(n, c) {
				t.Errorf("%s: cell %#x (node %d): %s", at, c.addr, n.ID, b)
			}
			if c.fresh {
				fresh++
				unknownChecked += 12 - c.hi + 4
			}
		}
		if len(v.Nodes) > len(cps[k]) {
			if n := v.Nodes[len(v.Nodes)-1]; n.Status != "freed" {
				t.Errorf("%s: node %d freed before the moment shows as %q", at, n.ID, n.Status)
			}
			freed++
		}
	}
	t.Logf("checked 20 C-points: %d fresh cells with %d never-written bytes, %d freed nodes", fresh, unknownChecked, freed)
	if fresh == 0 || unknownChecked == 0 || freed == 0 {
		t.Errorf("%d fresh cells, %d never-written bytes, %d freed nodes checked: the test checks too little", fresh, unknownChecked, freed)
	}

	// Without the graph: the same bytes by address, the C-point found
	// during the pass.
	k := 30
	m, err := state.Resolve(nil, fmt.Sprintf("cpoint:%d", k+1))
	if err != nil {
		t.Fatal(err)
	}
	c := cps[k][0]
	r, err = schema.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	v, err := state.At(r, nil, m, state.Query{Ranges: []state.Range{{Addr: c.addr + 24, Len: 12}}}, nil)
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < c.hi; i++ {
		if b := v.Memory[0].Bytes[i]; b == nil || *b != c.name[i] {
			t.Errorf("by address at cpoint:%d: name[%d] = %v, printed %#x", k+1, i, b, c.name[i])
		}
	}

	// The layout from a spec: a binding of the allocation site, and a
	// type without a binding (bound by size).
	for _, src := range []string{
		fmt.Sprintf("cell FIELD 6 EDGE 1;\ncell ALLOC cells.c:%d;\n", testprog.Line(t, "state/cells", "/* ALLOC */")),
		"cell FIELD 6 EDGE 1;\n",
	} {
		sp, err := spec.Parse("cells.spec", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		m, err := state.Resolve(g, fmt.Sprintf("cpoint:%d", k+1))
		if err != nil {
			t.Fatal(err)
		}
		r, err := schema.Open(trace)
		if err != nil {
			t.Fatal(err)
		}
		v, err := state.At(r, g, m, state.Query{Nodes: []mgbuild.NodeID{g.Snapshot(m.TS).Find(c.addr)}, Spec: sp}, nil)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		if n := v.Nodes[0]; n.Type != "cell" || n.TypeRule != "spec" {
			t.Errorf("spec %q: type %q by %q, want cell by spec", src, n.Type, n.TypeRule)
		}
	}

	// The command, once, in JSON.
	snap := g.Snapshot(g.Points[k].TS)
	id := snap.Find(c.addr)
	stdout, stderr, status := runAnalyze(t, "state", "--at", fmt.Sprintf("cpoint:%d", k+1), "--node", strconv.Itoa(int(id)), "--format", "json", trace)
	if status != 0 || stderr != "" {
		t.Fatalf("analyze state: status %d, stderr %q", status, stderr)
	}
	var view state.View
	if err := json.Unmarshal([]byte(stdout), &view); err != nil {
		t.Fatal(err)
	}
	if len(view.Nodes) != 1 {
		t.Fatalf("analyze state --node %d: %d nodes", id, len(view.Nodes))
	}
	for _, b := range checkNode(view.Nodes[0], c) {
		t.Errorf("analyze state --node %d: %s", id, b)
	}
	// And in text: the fields by name, unknown bytes as ??.
	stdout, _, status = runAnalyze(t, "state", "--at", fmt.Sprintf("cpoint:%d", k+1), "--node", strconv.Itoa(int(id)), trace)
	if status != 0 || !strings.Contains(stdout, "struct cell (chosen by size") || !strings.Contains(stdout, "??") {
		t.Errorf("analyze state text: status %d:\n%s", status, stdout)
	}
}

// TestStateUsageErrors checks that bad selections give one line and exit
// status 2.
func TestStateUsageErrors(t *testing.T) {
	tr := tracesDir + "cpoint.trace"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--addr", "zz"}, "--addr \"zz\": want ADDR[:LEN]"},
		{[]string{"--addr", "0x1000:0"}, "LEN must be"},
		{[]string{"--addr", "0xffffffffffffffff:8"}, "end of the address space"},
		{[]string{"--node", "x"}, "--node \"x\": want a node id"},
		{[]string{"--node", "0"}, "want a node id"},
		{[]string{"--node", "999"}, "node 999: the graph has nodes 1 to"},
		{[]string{"--global", "counter"}, "--global counter: the trace holds no data symbols"},
		{[]string{"--at", "cpoint:99"}, "the trace has 8 C-points"},
		{[]string{"--at", "seq:x", "--addr", "0x10"}, "bad sequence number"},
		{[]string{"--type", "nosuch", "--node", "1"}, "type \"nosuch\": the trace's debug information has no such struct"},
		{[]string{"--format", "xml"}, "unknown --format"},
	} {
		stdout, stderr, status := runAnalyze(t, append(append([]string{"state"}, tc.args...), tr)...)
		if status != 2 || stdout != "" || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: status %d, stdout %q, stderr %q; want status 2 and one line with %q", tc.args, status, stdout, stderr, tc.want)
		}
	}
}
