package reduce

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/inputs"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/slice"
)

// markupStep1 are the entities of markup.failing that step 1 keeps in
// Wang's figure 4.6 (S F F F S N B / B P): DER= is the inner frameset's S,
// the others are CINF='s.
var markupStep1 = map[int]Rel{6: CinfStrong | Cinf, 7: CinfStrong | Cinf, 8: CinfStrong | Cinf, 9: CinfStrong | Cinf,
	10: DerStrong | Der, 13: CinfStrong | Cinf, 26: CinfStrong | Cinf, 39: CinfStrong | Cinf, 40: CinfStrong | Cinf, 41: CinfStrong | Cinf}

// TestMarkupTree records markup on its failing input and reduces it with
// IDTHDD from figure 4.6's step 1 sets (given, not computed): the
// decomposition tree comes from the crash's slice, and step 3 must reach
// S S N B / B P within 15 distinct runs, as in figure 4.8.
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
		tr, err := schema.Open(orig.Trace)
		if err != nil {
			t.Fatal(err)
		}
		all, err := inputs.Read(tr)
		tr.Close()
		if err != nil {
			t.Fatal(err)
		}
		m, err := MapInput(all, InputFile{Path: orig.Input, Data: data, Entities: ents})
		if err != nil {
			t.Fatal(err)
		}
		g, label, err := FailureGraph(orig.Trace, slice.Criterion{Kind: slice.ByCrash}, all, m)
		if err != nil {
			t.Fatal(err)
		}
		rel := make([]Rel, len(ents))
		for e, r := range markupStep1 {
			rel[e] = r
		}
		res, err := IDTHDD(ctx, IDTConfig{Config: Config{Entities: ents, Test: tester.Test, Jobs: 1, OriginalFails: true},
			Star: star, Relevance: rel, Tree: func(kept []int) (*Tree, error) { return BuildTree(g, kept), nil }})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		where := lineOf(orig.Trace)
		dumpTree2(BuildTree(g, res.Step1[1].Kept).Root, data, 0, &b, where)
		for _, e := range res.Step1[1].Kept {
			t.Logf("%d %c: %s", e, data[e], dumpPath(g, e, where))
		}
		t.Logf("tree:\n%s", b.String())
		t.Logf("%s (%s): %q, %d runs: step 1 %d, tree %+v, levels %+v", res.Strategy, label, res.Input, res.Runs, res.Step1Runs, res.Tree, res.Levels)
		if string(res.Input) != "SSNB/BP" {
			t.Errorf("%s: reduced to %q, want SSNB/BP", res.Strategy, res.Input)
		}
		if step3 := res.Runs - 1 - res.Step1Runs; res.Step1Runs != 2 || (!star && step3 > 15) {
			t.Errorf("%s: step 1 %d runs, step 3 %d runs; want 2 and at most 15", res.Strategy, res.Step1Runs, step3)
		}
	}
}
