package slice_test

import (
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/internal/regioncut"
	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/slice"
	"github.com/mgtrace/mgtrace/walk"
)

// instanceSeqs walks a trace and returns each instance's event.
type instanceSeqs []uint64

func (s *instanceSeqs) Instance(in *walk.Instance) error { *s = append(*s, in.Seq); return nil }
func (s *instanceSeqs) Event(*schema.Event) error        { return nil }

func loadRegionRun(t *testing.T, path string, events []uint64) (*slice.Run, []uint64) {
	t.Helper()
	tr, err := schema.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	run, err := slice.Load(tr, slice.LoadOptions{Events: events})
	tr.Close()
	if err != nil {
		t.Fatal(err)
	}
	tr, err = schema.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	var seqs instanceSeqs
	if _, err := walk.Walk(tr, &seqs, walk.Options{}); err != nil {
		t.Fatal(err)
	}
	return run, seqs
}

// criteria picks up to n LOAD and STORE events of the region's second half.
func criteria(t *testing.T, whole string, reg *regioncut.Region, n int) []uint64 {
	t.Helper()
	tr, err := schema.Open(whole)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	var all []uint64
	for {
		ev, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if (ev.Kind == schema.KindLoad || ev.Kind == schema.KindStore) && ev.Seq >= (reg.From+reg.To)/2 && reg.Inside(ev.Seq) {
			all = append(all, ev.Seq)
		}
	}
	var out []uint64
	for k := 1; k <= n && len(all) > 0; k++ {
		out = append(out, all[len(all)*k/(n+1)])
	}
	return out
}

// sortedSubset says whether every member of a is in b (both ascending).
func sortedSubset(a, b []uint32) bool {
	j := 0
	for _, x := range a {
		for j < len(b) && b[j] < x {
			j++
		}
		if j == len(b) || b[j] != x {
			return false
		}
	}
	return true
}

// TestRegionSlice slices region traces cut from recorded programs: the
// slice of an instance inside the region is the whole trace's slice of it
// restricted to the region's instances (the whole trace's slice from the
// region's start): the same for data dependences, part of it with control
// dependences.
func TestRegionSlice(t *testing.T) {
	for _, p := range []struct {
		prog string
		args []string
		a, b float64
	}{
		{"list", []string{"20"}, 0.3, 0.7},
		{"tree", []string{"60"}, 0.4, 0.8},
		{"slicework", []string{"300"}, 0.5, 0.9},
		{"ds/dlist", []string{"1", "200", "150"}, 0.3, 0.6},
	} {
		t.Run(p.prog, func(t *testing.T) {
			whole := testprog.Record(t, testprog.Build(t, p.prog), p.args...)
			first, last, err := regioncut.FunctionSpan(whole, "main")
			if err != nil {
				t.Fatal(err)
			}
			span := float64(last - first)
			region := filepath.Join(t.TempDir(), "region.trace")
			reg, err := regioncut.Cut(whole, region, first+uint64(span*p.a), first+uint64(span*p.b))
			if err != nil {
				t.Fatal(err)
			}
			crits := criteria(t, whole, reg, 6)
			var rcrits []uint64
			for _, c := range crits {
				rc, _ := reg.Seq(c)
				rcrits = append(rcrits, rc)
			}
			wrun, wseqs := loadRegionRun(t, whole, crits)
			rrun, rseqs := loadRegionRun(t, region, rcrits)
			if len(rrun.Regions) != 1 || rrun.Regions[0].Seq != reg.Start || wrun.Regions != nil {
				t.Fatalf("regions: whole %+v, region %+v (start %d)", wrun.Regions, rrun.Regions, reg.Start)
			}
			// Whole instance -> region instance.
			toRegion := make(map[uint32]uint32)
			k := uint32(0)
			for i, s := range wseqs {
				if reg.Inside(s) {
					toRegion[uint32(i)] = k
					k++
				}
			}
			if int(k) != len(rseqs) {
				t.Fatalf("the region trace has %d instances, the whole trace %d in the region", len(rseqs), k)
			}
			from, err := wrun.RegionStart(slice.Bound{Set: true, Seq: reg.From})
			if err != nil {
				t.Fatal(err)
			}
			fullDiff, fullAll := 0, 0
			for ci, c := range crits {
				// (Not PruneSaveRestore: a restore of an invocation that
				// began before the region has no save in the trace to pair
				// with, so it stays in the region's slice.)
				for _, opt := range []slice.Options{{DataOnly: true}, {DataOnly: true, Algorithm: slice.Baseline}, {}} {
					wp, err := wrun.Resolve(slice.Criterion{Kind: slice.BySeq, Seq: c})
					if err != nil {
						t.Fatal(err)
					}
					rp, err := rrun.Resolve(slice.Criterion{Kind: slice.BySeq, Seq: rcrits[ci]})
					if err != nil {
						t.Fatal(err)
					}
					wopt := opt
					wopt.From = from
					ws, err := slice.Slice(wrun, wp, wopt)
					if err != nil {
						t.Fatal(err)
					}
					rs, err := slice.Slice(rrun, rp, opt)
					if err != nil {
						t.Fatal(err)
					}
					var want []uint32
					for _, m := range ws.Members {
						ri, ok := toRegion[m]
						if !ok {
							t.Fatalf("seq:%d: whole member %d (event %d) lies outside the region", c, m, wseqs[m])
						}
						want = append(want, ri)
					}
					if !opt.DataOnly {
						// Control dependences on an indirect jump may
						// differ: the targets it took before the region
						// (a PLT stub's first jump into the dynamic
						// linker) are not in the trace, so it may be no
						// branch there. The region's slice is then part
						// of the whole trace's.
						if !sortedSubset(rs.Members, want) {
							t.Errorf("seq:%d (region seq:%d) %+v: the region slice (%d members) is not part of the whole trace's (%d)", c, rcrits[ci], opt, len(rs.Members), len(want))
						}
						fullDiff += len(want) - len(rs.Members)
						fullAll += len(want)
					} else if !slices.Equal(want, rs.Members) {
						t.Errorf("seq:%d (region seq:%d) %+v: region slice %d members, the whole trace's %d", c, rcrits[ci], opt, len(rs.Members), len(want))
					}
					if rs.Region != 0 || ws.Region != -1 {
						t.Errorf("Result.Region: whole %d, region %d", ws.Region, rs.Region)
					}
				}
			}
			// The text output says where the slice stops.
			rp, _ := rrun.Resolve(slice.Criterion{Kind: slice.BySeq, Seq: rcrits[0]})
			rs, _ := slice.Slice(rrun, rp, slice.Options{})
			sum, err := rs.Summarize(nil)
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			if err := sum.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), "region's start") {
				t.Errorf("the summary does not say that the slice stops at the region's start:\n%s", b.String())
			}
			t.Logf("%d criteria; with control dependences, the region's slices miss %d of the whole trace's %d members", len(crits), fullDiff, fullAll)
		})
	}
}

// TestRegionsSlice slices a trace with two regions: a slice from the
// second region stops at its start, and equals the whole trace's slice
// from there (data dependences).
func TestRegionsSlice(t *testing.T) {
	for _, prog := range []struct {
		name string
		args []string
	}{{"tree", []string{"60"}}, {"slicework", []string{"300"}}} {
		t.Run(prog.name, func(t *testing.T) {
			whole := testprog.Record(t, testprog.Build(t, prog.name), prog.args...)
			first, last, err := regioncut.FunctionSpan(whole, "main")
			if err != nil {
				t.Fatal(err)
			}
			at := func(f float64) uint64 { return first + uint64(float64(last-first)*f) }
			region := filepath.Join(t.TempDir(), "regions.trace")
			regs, err := regioncut.CutRanges(whole, region, [][2]uint64{{at(0.2), at(0.4)}, {at(0.6), at(0.9)}})
			if err != nil {
				t.Fatal(err)
			}
			crits := criteria(t, whole, regs[1], 3)
			var rcrits []uint64
			for _, c := range crits {
				rc, _ := regs[1].Seq(c)
				rcrits = append(rcrits, rc)
			}
			wrun, wseqs := loadRegionRun(t, whole, crits)
			rrun, _ := loadRegionRun(t, region, rcrits)
			if len(rrun.Regions) != 2 {
				t.Fatalf("regions %+v", rrun.Regions)
			}
			toRegion := make(map[uint32]uint32)
			k := uint32(0)
			for i, s := range wseqs {
				if regs[0].Inside(s) || regs[1].Inside(s) {
					toRegion[uint32(i)] = k
					k++
				}
			}
			from, err := wrun.RegionStart(slice.Bound{Set: true, Seq: regs[1].From})
			if err != nil {
				t.Fatal(err)
			}
			for ci, c := range crits {
				wp, err := wrun.Resolve(slice.Criterion{Kind: slice.BySeq, Seq: c})
				if err != nil {
					t.Fatal(err)
				}
				rp, err := rrun.Resolve(slice.Criterion{Kind: slice.BySeq, Seq: rcrits[ci]})
				if err != nil {
					t.Fatal(err)
				}
				ws, err := slice.Slice(wrun, wp, slice.Options{DataOnly: true, From: from})
				if err != nil {
					t.Fatal(err)
				}
				rs, err := slice.Slice(rrun, rp, slice.Options{DataOnly: true})
				if err != nil {
					t.Fatal(err)
				}
				var want []uint32
				for _, m := range ws.Members {
					want = append(want, toRegion[m])
				}
				if !slices.Equal(want, rs.Members) || rs.Region != 1 {
					t.Errorf("seq:%d: region slice %d members (region %d), the whole trace's %d", c, len(rs.Members), rs.Region, len(want))
				}
			}
		})
	}
}
