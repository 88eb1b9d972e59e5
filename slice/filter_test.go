package slice

import (
	"math/rand"
	"testing"
)

// TestMemFilter checks the filter against a byte map: after any sequence
// of adds, a range overlaps the filter exactly when it meets a byte that
// was added (the filter coalesces but never widens a range).
func TestMemFilter(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for round := 0; round < 50; round++ {
		var f memFilter
		var in [4096]bool
		for k := 0; k < 1000; k++ {
			lo := uint64(rng.Intn(4000))
			hi := lo + uint64(rng.Intn(16))
			f.add(lo, hi)
			for a := lo; a < hi; a++ {
				in[a] = true
			}
			if k%7 != 0 {
				continue
			}
			for q := 0; q < 20; q++ {
				lo := uint64(rng.Intn(4000))
				hi := lo + 1 + uint64(rng.Intn(16))
				want := false
				for a := lo; a < hi; a++ {
					want = want || in[a]
				}
				if got := f.overlaps(lo, hi); got != want {
					t.Fatalf("round %d, add %d: overlaps(%d, %d) = %v, want %v", round, k, lo, hi, got, want)
				}
			}
		}
		for i := 1; i < len(f.iv); i++ {
			if f.iv[i].lo <= f.iv[i-1].hi {
				t.Fatalf("round %d: intervals %v and %v not sorted, disjoint and apart", round, f.iv[i-1], f.iv[i])
			}
		}
	}
}
