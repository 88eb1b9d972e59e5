package locate

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/mgtrace/mgtrace/internal/regioncut"
	"github.com/mgtrace/mgtrace/internal/testprog"
)

var timestamp = regexp.MustCompile(`timestamp \d+`)

// faultSummary is what a fault location result says, by statement.
func faultSummary(res *Result) []string {
	var out []string
	for _, f := range res.Faults {
		// (Not the timestamps in the why: a region trace's graph counts
		// its changes from the region's MEMORY edges.)
		out = append(out, fmt.Sprintf("%d. %s:%d %s", f.Rank, filepath.Base(f.File), f.Line, timestamp.ReplaceAllString(f.Why, "timestamp T")))
	}
	for _, f := range res.Stores {
		out = append(out, fmt.Sprintf("store %s:%d %s", filepath.Base(f.File), f.Line, f.Why))
	}
	return out
}

// TestRegionLocate checks and locates faults of the data-structure suite
// on region traces that start two C-points before the first violated one:
// the C-points before the region are skipped, the first violated one is
// the whole trace's, and fault location reports the same statements.
func TestRegionLocate(t *testing.T) {
	for _, tc := range []struct {
		name string
		k    int
	}{
		{"dlist", 1}, {"ordlist", 1}, {"qdtree", 1}, {"circlist", 2},
	} {
		t.Run(fmt.Sprintf("%s FAULT=%d", tc.name, tc.k), func(t *testing.T) {
			bin := testprog.Build(t, "ds/"+tc.name, testprog.Flags(fmt.Sprintf("-DFAULT=%d", tc.k)))
			whole := testprog.Record(t, bin)
			ws := traceSession(t, tc.name, whole)
			var points []Point
			first := -1
			ws.Check(func(r PointResult) bool {
				points = append(points, r.Point)
				if len(r.Violations) > 0 {
					first = len(points) - 1
					return false
				}
				return true
			})
			if first < 2 {
				t.Fatalf("the first violation is at C-point %d: no room for a region before it", first)
			}
			wres, err := ws.Locate()
			if err != nil {
				t.Fatal(err)
			}
			region := filepath.Join(t.TempDir(), "region.trace")
			reg, err := regioncut.Cut(whole, region, points[first-2].Seq, 0)
			if err != nil {
				t.Fatal(err)
			}
			rs, rrun := traceSpecRunFile(t, region, tc.name)
			// The program's own C-points before the region are found and
			// skipped (a function's ENTRY and EXIT are not found there:
			// the trace has no calls outside the regions but the
			// allocator's).
			requests := 0
			for _, pt := range points[:first-2] {
				if pt.Kind == PointRequest {
					requests++
				}
			}
			if rrun.Skipped < requests {
				t.Errorf("%d C-points skipped, %d requests before the region", rrun.Skipped, requests)
			}
			for _, pt := range rrun.Points {
				if pt.Seq < reg.Start {
					t.Errorf("C-point %s (event %d) before the region's start %d", pt.Label, pt.Seq, reg.Start)
				}
			}
			rres, err := rs.Locate()
			if err != nil {
				t.Fatalf("region trace: %v", err)
			}
			if want, _ := reg.Seq(wres.Point.Seq); rres.Point.Seq != want || rres.Point.Label != wres.Point.Label {
				t.Errorf("violated C-point: region %s (event %d), whole %s (event %d = region event %d)",
					rres.Point.Label, rres.Point.Seq, wres.Point.Label, wres.Point.Seq, want)
			}
			if len(rres.Violations) != len(wres.Violations) {
				t.Errorf("%d violations, the whole trace's %d", len(rres.Violations), len(wres.Violations))
			}
			w, r := faultSummary(wres), faultSummary(rres)
			if !slices.Equal(w, r) || len(w) == 0 {
				t.Errorf("faults differ:\nwhole  %q\nregion %q", w, r)
			}
			t.Logf("%d C-points skipped; faults %q", rrun.Skipped, r)
		})
	}
}

// traceSpecRunFile opens a session on trace with the suite spec of name.
func traceSpecRunFile(t *testing.T, trace, name string) (*Session, *Run) {
	t.Helper()
	path := filepath.Join(testprog.Root(t), "testdata", "programs", "ds", name+".spec")
	src, err := readFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return traceSpecRun(t, trace, path, src)
}

func readFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}

// TestRecordedRegionLocate records ds/dlist with FAULT=1 whole and from
// its 1050th dl_insert on (record --from), which is before the fault
// fires: the region trace's violated C-point and faulty statements are
// the whole trace's.
func TestRecordedRegionLocate(t *testing.T) {
	t.Parallel()
	bin := testprog.Build(t, "ds/dlist", testprog.Flags("-DFAULT=1"))
	whole := testprog.Record(t, bin)
	region, _, _ := testprog.RecordWith(t, []string{"--from", "dl_insert#1050"}, bin)
	ws, _ := traceSpecRunFile(t, whole, "dlist")
	wres, err := ws.Locate()
	if err != nil {
		t.Fatal(err)
	}
	rs, rrun := traceSpecRunFile(t, region, "dlist")
	rres, err := rs.Locate()
	if err != nil {
		t.Fatalf("region trace: %v", err)
	}
	if rres.Point.Label != wres.Point.Label || len(rres.Violations) != len(wres.Violations) {
		t.Errorf("violated C-point %s with %d violations, the whole trace's %s with %d",
			rres.Point.Label, len(rres.Violations), wres.Point.Label, len(wres.Violations))
	}
	w, r := faultSummary(wres), faultSummary(rres)
	if !slices.Equal(w, r) || len(w) == 0 {
		t.Errorf("faults differ:\nwhole  %q\nregion %q", w, r)
	}
	if rrun.Skipped == 0 {
		t.Error("no C-point before the region was skipped")
	}
	t.Logf("%d C-points skipped; faults %q", rrun.Skipped, r)
}
