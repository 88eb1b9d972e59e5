package locate

import (
	"reflect"
	"testing"

	"github.com/mgtrace/mgtrace/internal/testprog"
)

// TestReturnsBlocks checks the blocks of a program's own allocators
// (testdata/programs/ownalloc.c): `T ALLOC f RETURNS [n]` makes a node of
// each pointer f returns, sizeof(struct T) or n bytes; it ends at a call
// of a FREE function on its head, when a newer block overlaps it, or when
// the malloc'd block holding it is freed.
func TestReturnsBlocks(t *testing.T) {
	bin := testprog.Build(t, "ownalloc")
	const src = `item FIELD 2 EDGE 1;
ARRAY raw OF 8;
item ALLOC item_get RETURNS;
item FREE item_put;
raw ALLOC raw_get RETURNS 24;
item X; X[1] > 0;
item X; item Y; X -> Y => X[1] < Y[1];
raw X; for I in 1 to 2, X[I] < X[I+1];
`
	ses, _ := session(t, bin, src)
	if got, want := ses.Bound(), map[string]int{"item": 2, "raw": 3}; !reflect.DeepEqual(got, want) {
		t.Errorf("bound %v, want %v", got, want)
	}
	var live []int
	var labels []string
	ses.Check(func(r PointResult) bool {
		labels = append(labels, r.Point.Label)
		live = append(live, ses.Nodes())
		for _, v := range r.Violations {
			t.Errorf("%s: violation %s", r.Point.Label, v.inc)
		}
		return true
	})
	// p1..p5, then the end of the run
	if want := []int{2, 1, 3, 3, 2, 2}; !reflect.DeepEqual(live, want) {
		t.Errorf("live nodes at %v: %v, want %v", labels, live, want)
	}

	// The nodes' bytes are what the program stored: break the order of
	// the items at p1 by reading the spec the other way round.
	ses, _ = session(t, bin, `item FIELD 2 EDGE 1;
item ALLOC item_get RETURNS;
item X; item Y; X -> Y => X[1] > Y[1];
`)
	res := checkAll(ses)
	if len(res) == 0 || len(res[0].Violations) != 1 || len(res[1].Violations) != 0 {
		t.Errorf("reversed order: want one violation at p1 and none at p2, got %+v", res)
	}

	// `T ALLOC f;` keeps its meaning, blocks malloc'd while f runs: none.
	ses, _ = session(t, bin, "item FIELD 2 EDGE 1;\nitem ALLOC item_get;\n")
	if got := ses.Bound()["item"]; got != 0 {
		t.Errorf("item ALLOC item_get: %d nodes bound, want 0", got)
	}
}
