package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mgtrace/mgtrace/lin"
	"github.com/mgtrace/mgtrace/lin/models"
)

func TestParseExpectations(t *testing.T) {
	src := `
func checkJepsen(t *testing.T, logNum int, correct bool) {}
func TestEtcdJepsen000(t *testing.T) {
	checkJepsen(t, 0, false)
}
func TestEtcdJepsen002(t *testing.T) { checkJepsen(t, 2, true) }
func benchJepsen(b *testing.B, logNum int, correct bool) {}
func BenchmarkEtcdJepsen002(b *testing.B) { benchJepsen(b, 2, true) }
func TestKv1ClientOk(t *testing.T) { checkKv(t, "c01-ok", true, true) }
func TestKvNoPartition1ClientOk(t *testing.T) { checkKv(t, "c01-ok", true, false) }
func TestKv1ClientBad(t *testing.T) { checkKv(t, "c01-bad", false, true) }
func TestKvOdd(t *testing.T) { checkKv(t, "c01-bad", true, false) }
`
	e, err := parseExpectations(src)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"jepsen/etcd_000.log": false, "jepsen/etcd_002.log": true, "kv/c01-ok.txt": true, "kv/c01-bad.txt": true}
	if len(e.verdict) != len(want) {
		t.Errorf("verdicts = %v, want %v", e.verdict, want)
	}
	for k, v := range want {
		if got, ok := e.verdict[k]; !ok || got != v {
			t.Errorf("%s: %v, %v; want %v", k, got, ok, v)
		}
	}
	if len(e.conflicts) != 1 || e.conflicts[0] != "kv/c01-bad.txt" {
		t.Errorf("conflicts = %v", e.conflicts)
	}
	if _, err := parseExpectations("package porcupine"); err == nil {
		t.Error("no expectations: no error")
	}
}

func TestToPorcupine(t *testing.T) {
	h := &lin.History{Ops: []lin.Op{
		{Client: 0, Name: "write", Input: lin.IntValue(1), Call: 0, Return: 3},
		{Client: 1, Name: "cas", Input: lin.ListValue(lin.IntValue(1), lin.IntValue(2)), Call: 1, Return: lin.Never, Status: lin.Info},
		{Client: 2, Name: "read", Call: 2, Return: 5, Status: lin.Unknown},
		{Client: 3, Name: "read", Output: lin.IntValue(2), Call: 6, Return: 7},
		{Client: 4, Name: "cas", Input: lin.ListValue(lin.IntValue(0), lin.IntValue(3)), Output: lin.BoolValue(false), Call: 8, Return: 9},
		{Client: 5, Name: "write", Input: lin.IntValue(4), Call: 10, Return: lin.Never, Status: lin.Pending},
	}}
	h.Sort()
	_, ops, err := toPorcupine("cas-register", h)
	if err != nil {
		t.Fatal(err)
	}
	if ops[1].Return != 11 || !ops[1].Output.(casOutput).unknown || ops[5].Return != 11 {
		t.Errorf("info and pending: %+v, %+v; want a return of 11 and an unknown output", ops[1], ops[5])
	}
	if ops[2].Return != 5 || !ops[2].Output.(casOutput).unknown {
		t.Errorf("unknown read: %+v", ops[2])
	}
	if out := ops[3].Output.(casOutput); !out.exists || out.value != 2 || out.unknown {
		t.Errorf("read: %+v", out)
	}
	if in, out := ops[4].Input.(casInput), ops[4].Output.(casOutput); in.op != 2 || in.arg1 != 0 || in.arg2 != 3 || out.ok || out.unknown {
		t.Errorf("failed cas: %+v %+v", in, out)
	}
	if _, _, err := toPorcupine("set", h); err == nil {
		t.Error("a model porcupine lacks: no error")
	}
	bad := &lin.History{Ops: []lin.Op{{Name: "write", Input: lin.StringValue("x"), Return: 1}}}
	if _, _, err := toPorcupine("register", bad); err == nil {
		t.Error("a string written to the register: no error")
	}
}

// TestShapes generates every shape at small sizes and checks that both
// checkers give the verdict it has by construction, and that the same seed
// gives the same history.
func TestShapes(t *testing.T) {
	for _, sh := range shapes() {
		m, err := models.New(sh.model, lin.Value{})
		if err != nil {
			t.Fatal(err)
		}
		want := lin.NotLinearizable
		if sh.linearizable {
			want = lin.Linearizable
		}
		for _, n := range []int{12, 16} {
			for seed := uint64(1); seed <= 3; seed++ {
				h, err := sh.generate(n, seed)
				if err != nil {
					t.Fatalf("%s: %v", sh.name, err)
				}
				if len(h.Ops) < n-3 || len(h.Ops) > n+3 {
					t.Errorf("%s n=%d: %d operations", sh.name, n, len(h.Ops))
				}
				again, _ := sh.generate(n, seed)
				if len(again.Ops) != len(h.Ops) || again.Ops[len(h.Ops)-1].Output.String() != h.Ops[len(h.Ops)-1].Output.String() {
					t.Errorf("%s n=%d seed=%d: not the same history twice", sh.name, n, seed)
				}
				res, err := lin.Check(context.Background(), m, h, lin.Options{NoCounterexample: true, Timeout: 10 * time.Second})
				if err != nil {
					t.Fatalf("%s: %v", sh.name, err)
				}
				pm, ops, err := toPorcupine(sh.model, h)
				if err != nil {
					t.Fatalf("%s: %v", sh.name, err)
				}
				porc := checkPorcupine(pm, ops, 10*time.Second)
				if res.Verdict != want || porc.verdict != want {
					t.Errorf("%s n=%d seed=%d: ours %s, porcupine %s; want %s", sh.name, n, seed, res.Verdict, porc.verdict, want)
				}
			}
		}
	}
}

func TestTiming(t *testing.T) {
	calls := 0
	tm := repeat(5, time.Hour, false, func() outcome {
		calls++
		return outcome{verdict: lin.Linearizable, elapsed: time.Duration(calls) * time.Millisecond}
	})
	if len(tm.runs) != 5 || tm.median() != 3*time.Millisecond || !tm.consistent() {
		t.Errorf("5 runs: %+v, median %v", tm.runs, tm.median())
	}
	tm = repeat(5, time.Hour, false, func() outcome { return outcome{verdict: lin.Undecided, elapsed: time.Second} })
	if len(tm.runs) != 1 || tm.timeCell(0, 5) != "> 1.00 s" {
		t.Errorf("no answer: %d runs, %q", len(tm.runs), tm.timeCell(0, 5))
	}
	tm = repeat(5, 25*time.Millisecond, false, func() outcome {
		return outcome{verdict: lin.NotLinearizable, elapsed: 10 * time.Millisecond}
	})
	if len(tm.runs) != 2 || tm.timeCell(0, 5) != "10.0 ms (2 runs)" {
		t.Errorf("budget: %d runs, %q", len(tm.runs), tm.timeCell(0, 5))
	}
	if medianOf([]time.Duration{4, 1, 2, 9}) != 3 || medianOf(nil) != 0 {
		t.Error("medianOf")
	}
}

func TestParseArgs(t *testing.T) {
	cfg, err := parseArgs([]string{"-quick", "-sizes", "10,30", "-shapes", "queue*"})
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.quick || len(cfg.sizes) != 2 || cfg.runs != 1 || cfg.timeoutPorc != time.Second ||
		!cfg.shapeSelected("queue-dup") || cfg.shapeSelected("kv-info") || !cfg.parts["suite"] || !cfg.parts["adversarial"] {
		t.Errorf("parseArgs = %+v", cfg)
	}
	full, _ := parseArgs(nil)
	if full.runs != 5 || full.timeoutOurs != 10*time.Second || full.timeoutPorc != time.Minute || len(full.sizes) != 5 {
		t.Errorf("defaults = %+v", full)
	}
	for _, bad := range [][]string{{"-parts", "x"}, {"-parts", ","}, {"-sizes", "2"}, {"-sizes", "x"}, {"-shapes", "nothing"},
		{"-shapes", "[x"}, {"-runs", "0"}, {"-timeout-ours", "0s"}, {"extra"}} {
		if _, err := parseArgs(bad); err == nil {
			t.Errorf("parseArgs(%q): no error", bad)
		}
	}
}

// TestSmoke runs the benchmark with tiny sizes: porcupine's histories
// (every tenth etcd log, the small key-value ones) and a few shapes, and
// writes the results section to a file.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("the smoke run takes a few seconds")
	}
	cfg, err := parseArgs([]string{"-quick", "-sizes", "12", "-shapes", "register-reads,counter-inc,cas-jepsen*,kv-info"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := findPorcupine(context.Background(), "."); err != nil {
		t.Skipf("porcupine's module is not at hand: %v", err)
	}
	rep, err := run(context.Background(), &cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if p := rep.problems(); len(p) > 0 {
		t.Errorf("problems: %q", p)
	}
	if len(rep.suite) < 10 || len(rep.adv) != 5 {
		t.Errorf("%d test histories, %d generated", len(rep.suite), len(rep.adv))
	}
	path := filepath.Join(t.TempDir(), "RESULTS.md")
	if err := section.Update(path, rep.markdown()); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	md := string(data)
	for _, want := range []string{section.Begin(), section.End(), "**Partial run:**", "### Porcupine's test histories",
		"| all | ", "| etcd logs | ", "### Generated histories", "| register-reads | 12 |", "Reading:"} {
		if !strings.Contains(md, want) {
			t.Errorf("results lack %q:\n%s", want, md)
		}
	}
	var b strings.Builder
	rep.summary(&b)
	if !strings.Contains(b.String(), "ours faster on") {
		t.Errorf("summary:\n%s", b.String())
	}
}
