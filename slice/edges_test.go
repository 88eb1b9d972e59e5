package slice

import (
	"math/rand"
	"slices"
	"sort"
	"testing"

	"github.com/mgtrace/mgtrace/schema/tracepb"
)

// TestMergeEdges checks mergeEdges (the counting sort by user) against a
// plain sort followed by the same joining.
func TestMergeEdges(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for round := 0; round < 200; round++ {
		n := rng.Intn(300)
		es := make([]Edge, n)
		for k := range es {
			e := Edge{User: int64(rng.Intn(40)) - 1, Def: int64(rng.Intn(40)), Kind: DepKind(1 + rng.Intn(3))}
			switch e.Kind {
			case DepRegister:
				e.Reg = tracepb.Register(1 + rng.Intn(3))
			case DepMemory:
				e.Addr, e.Size = uint64(rng.Intn(64)), uint64(1+rng.Intn(8))
			}
			es[k] = e
		}
		want := referenceMerge(slices.Clone(es))
		got := mergeEdges(slices.Clone(es))
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: mergeEdges(%v)\n= %v\nwant %v", round, es, got, want)
		}
	}
}

// referenceMerge is mergeEdges with sort.Slice.
func referenceMerge(es []Edge) []Edge {
	sort.Slice(es, func(a, b int) bool { return compareEdges(es[a], es[b]) < 0 })
	out := es[:0]
	for _, e := range es {
		if k := len(out); k > 0 {
			p := &out[k-1]
			if p.User == e.User && p.Def == e.Def && p.Kind == e.Kind && p.Reg == e.Reg {
				if e.Kind != DepMemory {
					continue
				}
				if e.Addr <= p.Addr+p.Size {
					if end := e.Addr + e.Size; end > p.Addr+p.Size {
						p.Size = end - p.Addr
					}
					continue
				}
			}
		}
		out = append(out, e)
	}
	return out
}
