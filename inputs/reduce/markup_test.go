package reduce

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/slice"
)

// TestMarkupTree reduces markup's failing input (the running example of
// Wang's chapter 4) with IDTHDD and IDTHDD* from its recording: step 1
// keeps S F F F S N B / B P after 2 runs, as in figure 4.6, and step 3
// reaches S S N B / B P, which IDTHDD* proves 1-minimal.
func TestMarkupTree(t *testing.T) {
	if testing.Short() {
		t.Skip("records the program for every test")
	}
	bin := testprog.Build(t, "inputs/markup", testprog.Flags("-O0"))
	probe := testprog.Probe(t)
	rec := testprog.RecordTool(t)
	src := filepath.Join(testprog.Root(t), "testdata", "programs", "inputs", "markup.failing")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	ents, _ := Split(data, "bytes")
	for _, star := range []bool{false, true} {
		tester, err := NewTester(Runs{Program: []string{bin, "@@"}, Input: src, Oracle: OracleCrash, Record: rec,
			RecordArgs: []string{"--probe-dir", probe}, Timeout: time.Minute, Dir: t.TempDir(), KeepTrace: true})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if _, err := tester.Original(ctx, data); err != nil {
			t.Fatal(err)
		}
		orig := tester.OriginalRun()
		rec, err := ReadRecording(orig.Trace, slice.Criterion{Kind: slice.ByCrash}, InputFile{Path: orig.Input, Data: data, Entities: ents})
		if err != nil {
			t.Fatal(err)
		}
		g, label, rel := rec.Graph, rec.Criterion, rec.Relevance
		res, err := IDTHDD(ctx, IDTConfig{Config: Config{Entities: ents, Test: tester.Test, Jobs: 1, OriginalFails: true},
			Star: star, Relevance: rel, Tree: func(kept []int) (*Tree, error) { return BuildTree(g, kept), nil }})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range res.Step1 {
			var b []byte
			for _, e := range c.Kept {
				b = append(b, data[e])
			}
			t.Logf("%s: %q %s", c.Name, b, c.Outcome)
		}
		t.Logf("%s (%s): %q, %d runs: step 1 %d, tree %+v, levels %+v", res.Strategy, label, res.Input, res.Runs, res.Step1Runs, res.Tree, res.Levels)
		if string(res.Input) != "SSNB/BP" {
			t.Errorf("%s: reduced to %q, want SSNB/BP", res.Strategy, res.Input)
		}
		// Step 1 as in figure 4.6: DER= is "S", which passes; DER= ∪ CINF=
		// is "SFFFSNB/BP", which fails.
		if len(res.Step1) != 6 || res.Step1Runs != 2 || res.Step1[0].Outcome != "passes" || res.Step1[1].Outcome != "fails" ||
			string(join(ents, res.Step1[0].Kept)) != "S" || string(join(ents, res.Step1[1].Kept)) != "SFFFSNB/BP" {
			t.Errorf("%s: step 1 %+v in %d runs, want S passing and SFFFSNB/BP failing in 2", res.Strategy, res.Step1, res.Step1Runs)
		}
		// Figure 4.8 takes 15 distinct runs on the dissertation's
		// source-level tree; the tree of markup's binary groups N with
		// the body's first B one level deeper, which costs one more.
		if step3 := res.Runs - 1 - res.Step1Runs; !star && step3 > 16 {
			t.Errorf("%s: step 3 took %d runs, want at most 16", res.Strategy, step3)
		}
		if star {
			for i := range res.Input {
				less := append(append([]byte(nil), res.Input[:i]...), res.Input[i+1:]...)
				if v, err := tester.Test(ctx, less); err != nil || v == Fails {
					t.Errorf("%s: %q without byte %d still fails (%v): not 1-minimal", res.Strategy, res.Input, i, err)
				}
			}
		}
	}
}

func join(ents [][]byte, kept []int) []byte {
	var out []byte
	for _, e := range kept {
		out = append(out, ents[e]...)
	}
	return out
}
