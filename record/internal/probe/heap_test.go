package probe

import (
	"math/rand/v2"
	"testing"
)

// TestHeapContains checks contains against a plain scan of the ranges
// after random mappings and unmappings.
func TestHeapContains(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var h heapRanges
	h.brkStart, h.brkEnd = 0x5000, 0x6000
	for i := 0; i < 2000; i++ {
		start := uint64(rng.IntN(1 << 16))
		end := start + uint64(1+rng.IntN(1<<10))
		if rng.IntN(3) == 0 {
			h.remove(start, end)
		} else {
			h.add(start, end)
		}
		for j := 0; j < 20; j++ {
			a := uint64(rng.IntN(1<<16 + 1<<11))
			want := a >= h.brkStart && a < h.brkEnd
			for _, r := range h.ranges {
				want = want || a >= r.start && a < r.end
			}
			if got := h.contains(a); got != want {
				t.Fatalf("step %d: contains(%#x) = %v, want %v (ranges %v)", i, a, got, want, h.ranges)
			}
		}
	}
}
