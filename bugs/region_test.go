package bugs_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/bugs"
	"github.com/mgtrace/mgtrace/internal/regioncut"
	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/schema"
)

func analyzeFile(t *testing.T, path string) *bugs.Report {
	t.Helper()
	tr, err := schema.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	rep, err := bugs.Analyze(tr, bugs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func isLeak(rule string) bool { return strings.Contains(rule, "leak") }

// TestRegionBugs runs the built-in rules on region traces that start in
// the middle of main: every finding is one the whole trace makes inside
// the region (at the same event), none comes from the missing flow
// outside it; the memory MEMORY events give counts as initialized, so
// the data built before the region gives no uninitialized read; a region
// that runs to the end gets the whole trace's leaks of the blocks it
// allocated, and one that ends before gets none.
func TestRegionBugs(t *testing.T) {
	for _, tc := range []struct {
		prog string
		a, b float64 // the region, as parts of main's events (b = 0: to the end)
		want string  // a rule the region's findings must hold ("" = none)
	}{
		{"bugs/df_simple", 0.5, 0, "double_free"},
		{"bugs/dp_write", 0.5, 0, "dangling_pointer_deref"},
		{"bugs/ho_neighbour", 0.05, 0, "heap_buffer_overflow"},
		{"bugs/dl_overwrite", 0, 0, "definite_leak"},
		{"bugs/ok_list", 0.5, 0, ""},
		{"bugs/ok_hash", 0.3, 0.7, ""},
		{"bugs/lt_history", 0.1, 0.5, ""},
		{"slicework", 0.5, 0.9, ""},
	} {
		t.Run(tc.prog, func(t *testing.T) {
			whole := testprog.Record(t, testprog.Build(t, tc.prog))
			first, last, err := regioncut.FunctionSpan(whole, "main")
			if err != nil {
				t.Fatal(err)
			}
			span := float64(last - first)
			to := uint64(0)
			if tc.b > 0 {
				to = first + uint64(span*tc.b)
			}
			region := filepath.Join(t.TempDir(), "region.trace")
			reg, err := regioncut.Cut(whole, region, first+uint64(span*tc.a), to)
			if err != nil {
				t.Fatal(err)
			}
			wrep, rrep := analyzeFile(t, whole), analyzeFile(t, region)
			key := func(f bugs.Finding, seq uint64) string {
				return fmt.Sprintf("%s at %s:%d event %d", f.Rule, filepath.Base(f.Where.File), f.Where.Line, seq)
			}
			var inside []string
			for _, f := range wrep.Findings {
				if isLeak(f.Rule) {
					continue
				}
				if reg.Inside(f.Seq) {
					s, _ := reg.Seq(f.Seq)
					inside = append(inside, key(f, s))
				}
			}
			var got, rules []string
			leaks := 0
			for _, f := range rrep.Findings {
				rules = append(rules, f.Rule)
				if isLeak(f.Rule) {
					leaks++
					continue
				}
				got = append(got, key(f, f.Seq))
				if !slices.Contains(inside, key(f, f.Seq)) {
					t.Errorf("region finding %q is not a finding of the whole trace inside the region %q", key(f, f.Seq), inside)
				}
			}
			if tc.want != "" && !slices.Contains(rules, tc.want) {
				t.Errorf("no %s in the region's findings %q", tc.want, rules)
			}
			if tc.b > 0 && (leaks != 0 || !rrep.Stats.EndSkipped) {
				t.Errorf("the region ends before the run: %d leaks, end rules skipped %v", leaks, rrep.Stats.EndSkipped)
			}
			if rrep.Stats.Regions != 1 || rrep.Stats.Unplaced != 0 {
				t.Errorf("stats: %d regions, %d unplaced", rrep.Stats.Regions, rrep.Stats.Unplaced)
			}
			var text strings.Builder
			if err := bugs.WriteText(&text, rrep); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(text.String(), "region trace") {
				t.Errorf("the text report does not say it is of a region trace:\n%s", text.String())
			}
			t.Logf("whole: %d findings (%d inside the region); region: %q", len(wrep.Findings), len(inside), rules)
		})
	}
}
