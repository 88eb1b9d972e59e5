package reduce

import (
	"context"
	"math/rand"
	"slices"
	"strings"
	"sync"
	"testing"
)

// node builds a tree node from its children, or a leaf for one entity.
func node(children ...*Node) *Node {
	n := &Node{Children: children, Inst: -1}
	for _, c := range children {
		n.Entities = append(n.Entities, c.Entities...)
	}
	slices.Sort(n.Entities)
	return n
}

func leaf(e int) *Node { return &Node{Entities: []int{e}, Inst: -1} }

// figure47 is the decomposition tree of the running example of Wang's
// chapter 4 over step 1's input S F F F S N B / B P (entities 0 to 9), as
// the tests of figure 4.8 show it: level 1 splits off P, level 2 the
// framesets from the body, level 3 gives S F F F, S, N, B /, B; level 4
// S F F and F, B and /; level 5 S F and F; level 6 S and F.
func figure47() *Tree {
	i := node(leaf(0), leaf(1))
	h := node(i, leaf(2))
	e := node(h, leaf(3))
	g := node(leaf(6), leaf(7))
	c := node(e, leaf(4))
	d := node(leaf(5), g, leaf(8))
	a := node(c, d)
	return &Tree{Root: node(a, leaf(9))}
}

// TestFigure48 replays figure 4.8: IDTHDD's step 3 on the tree of figure
// 4.7 makes the figure's 22 tests, of which 15 are distinct inputs (the
// others are answered from memory), and finds S S N B / B P.
func TestFigure48(t *testing.T) {
	tests := []string{ // figure 4.8, in order; * fails
		"P", "SFFFSNB/B",
		"NB/BP", "SFFFSP",
		"NB/BP", "SFFFSP", "SNB/BP", "SFFFNB/BP", "SFFFSB/BP", "SFFFSNBP", "SFFFSNB/P",
		"SNB/BP", "SFFFSNBP", "FSNB/BP", "*SFFSNB/BP", "SNB/BP", "SFFSN/BP", "SFFSNBBP",
		"FSNB/BP", "*SFSNB/BP",
		"FSNB/BP", "*SSNB/BP",
	}
	verdict := map[string]Verdict{"SFFFSNB/BP": Fails}
	var distinct []string
	for _, s := range tests {
		v := Passes
		if strings.HasPrefix(s, "*") {
			s, v = s[1:], Fails
		}
		if _, ok := verdict[s]; !ok {
			distinct = append(distinct, s)
		}
		verdict[s] = v
	}
	if len(distinct) != 15 {
		t.Fatalf("the figure has %d distinct tests, want 15", len(distinct))
	}
	ents, _ := Split([]byte("SFFFSNB/BP"), "bytes")
	var mu sync.Mutex
	var made []string
	test := func(_ context.Context, in []byte) (Verdict, error) {
		mu.Lock()
		defer mu.Unlock()
		made = append(made, string(in))
		v, ok := verdict[string(in)]
		if !ok {
			t.Errorf("tested %q, which figure 4.8 does not", in)
		}
		return v, nil
	}
	res, err := IDTHDD(context.Background(), IDTConfig{
		Config: Config{Entities: ents, Test: test, Jobs: 1, OriginalFails: true},
		Tree:   func([]int) (*Tree, error) { return figure47(), nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(made, distinct) {
		t.Errorf("tests made:\n%q\nwant figure 4.8's distinct ones:\n%q", made, distinct)
	}
	total := 0
	for _, s := range res.Steps {
		total += s.Runs + s.Cached
	}
	if string(res.Input) != "SSNB/BP" || res.Runs != 1+15 || total != 22 || res.Cached != 7 {
		t.Errorf("got %q in %d runs (%d tests, %d cached), want SSNB/BP in 1+15 runs, 22 tests, 7 cached", res.Input, res.Runs, total, res.Cached)
	}
	var perLevel []int
	for _, l := range res.Levels {
		perLevel = append(perLevel, l.Runs+l.Cached)
	}
	if want := []int{2, 2, 7, 7, 2, 2}; !slices.Equal(perLevel, want) {
		t.Errorf("tests per level %v, want %v", perLevel, want)
	}

	// IDTHDD* on the same tree: upper leaves are reconsidered, and the
	// result is 1-minimal.
	// markup's crash on the subsequences of S F F F S N B / B P (checked
	// against the program on all 1023): without the frames, exactly
	// S S N B / B P.
	star := func(_ context.Context, in []byte) (Verdict, error) {
		if strings.ReplaceAll(string(in), "F", "") == "SSNB/BP" {
			return Fails, nil
		}
		return Passes, nil
	}
	res, err = IDTHDD(context.Background(), IDTConfig{
		Config: Config{Entities: ents, Test: star, Jobs: 2},
		Star:   true,
		Tree:   func([]int) (*Tree, error) { return figure47(), nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Input) != "SSNB/BP" || res.Strategy != StrategyIDTHDDStar {
		t.Errorf("IDTHDD*: %q (%s), want SSNB/BP", res.Input, res.Strategy)
	}
	checkOneMinimal(t, res.Input, star)
}

// checkOneMinimal fails the test when in without some byte still fails.
func checkOneMinimal(t *testing.T, in []byte, test Test) {
	t.Helper()
	for i := range in {
		less := append(append([]byte(nil), in[:i]...), in[i+1:]...)
		if v, _ := test(context.Background(), less); v == Fails {
			t.Errorf("%q without byte %d still fails: not 1-minimal", in, i)
		}
	}
}

// TestStep1 checks the nested candidates and that the first failing one
// is kept after as many runs as candidates tried, and the fallback to
// ddmin when none fails.
func TestStep1(t *testing.T) {
	rel := []Rel{
		0,                      // irrelevant
		Der | DerStrong | Cinf, // DER=
		Cinf | CinfStrong,      // CINF=
		Ainf | AinfStrong,      // AINF=
		Der,                    // DER
		Cinf,                   // CINF
		Ainf,                   // AINF
		Cinf | CinfStrong,      // CINF=
	}
	cands := Candidates(rel)
	want := [][]int{{1}, {1, 2, 7}, {1, 2, 3, 7}, {1, 2, 3, 4, 7}, {1, 2, 3, 4, 5, 7}, {1, 2, 3, 4, 5, 6, 7}}
	for k, c := range cands {
		if !slices.Equal(c.Kept, want[k]) {
			t.Errorf("candidate %d (%s) = %v, want %v", k+1, c.Name, c.Kept, want[k])
		}
		if k > 0 && !isSubset(cands[k-1].Kept, c.Kept) {
			t.Errorf("candidate %d is not within candidate %d", k, k+1)
		}
	}
	if c := Candidates([]Rel{Der, Der}); c[0].Outcome != "empty" || c[4].Outcome != "same" || c[3].Outcome != "" {
		t.Errorf("empty and repeated candidates: %+v", c)
	}
	ents, _ := Split([]byte("abcdefgh"), "bytes")
	for _, tc := range []struct {
		needs    string // the failure needs these bytes
		input    string
		runs     int
		fallback bool
	}{
		{"bc", "bc", 2, false},    // candidate 2 fails
		{"b", "b", 1, false},      // candidate 1 fails
		{"a", "a", 6, true},       // none fails (a is irrelevant): ddmin
		{"bg", "bg", 6, false},    // candidate 6; step 3 without a tree: ddmin
		{"bh", "bh", 2, false},    // candidate 2
		{"dh", "dh", 3, false},    // candidate 3
		{"abcdefgh", "", 0, true}, // the whole input is needed
	} {
		test := func(_ context.Context, in []byte) (Verdict, error) {
			for _, c := range tc.needs {
				if !strings.ContainsRune(string(in), c) {
					return Passes, nil
				}
			}
			return Fails, nil
		}
		res, err := IDTHDD(context.Background(), IDTConfig{Config: Config{Entities: ents, Test: test, Jobs: 1}, Relevance: rel})
		if err != nil {
			t.Fatal(err)
		}
		if tc.input != "" && string(res.Input) != tc.input {
			t.Errorf("needs %q: reduced to %q, want %q", tc.needs, res.Input, tc.input)
		}
		if res.Fallback != tc.fallback || (tc.runs > 0 && res.Step1Runs != tc.runs) {
			t.Errorf("needs %q: step 1 %d runs, fallback %v; want %d, %v (%+v)", tc.needs, res.Step1Runs, res.Fallback, tc.runs, tc.fallback, res.Step1)
		}
		if v, _ := test(context.Background(), res.Input); v != Fails {
			t.Errorf("needs %q: the result %q does not fail", tc.needs, res.Input)
		}
	}
}

func isSubset(a, b []int) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// randomGraph makes a dependence graph of n instances over m entities:
// each instance depends on a few later-numbered ones (so the graph is a
// DAG rooted at 0, as a slice is) and reads a few entities.
func randomGraph(rng *rand.Rand, n, m int) *DepGraph {
	g := &DepGraph{Roots: []int64{0}, Deps: map[int64][]int64{}, Reads: map[int64][]int{}}
	for u := 0; u < n; u++ {
		for k := rng.Intn(4); k > 0 && u+1 < n; k-- {
			g.Deps[int64(u)] = append(g.Deps[int64(u)], int64(u+1+rng.Intn(n-u-1)))
		}
		if rng.Intn(3) == 0 {
			for k := 1 + rng.Intn(3); k > 0; k-- {
				g.Reads[int64(u)] = append(g.Reads[int64(u)], rng.Intn(m))
			}
		}
	}
	return g
}

// TestTreeInvariants is a property test of BuildTree on random graphs:
// every tree passes Check (labels split at every node, no single child,
// leaves of one entity, the root holds the input), and each level's
// labels with the upper levels' leaves partition the input.
func TestTreeInvariants(t *testing.T) {
	rng := rand.New(rand.NewSource(16))
	for trial := 0; trial < 500; trial++ {
		n, m := 1+rng.Intn(60), 1+rng.Intn(30)
		g := randomGraph(rng, n, m)
		var want []int
		for e := 0; e < m; e++ {
			if rng.Intn(4) != 0 {
				want = append(want, e)
			}
		}
		tree := BuildTree(g, want)
		if len(want) == 0 {
			if tree != nil {
				t.Fatalf("trial %d: a tree of no entities", trial)
			}
			continue
		}
		if err := tree.Check(want); err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		levels := tree.Levels()
		var upperLeaves []int
		for d, level := range levels {
			cover := append([]int(nil), upperLeaves...)
			for _, nd := range level {
				cover = append(cover, nd.Entities...)
			}
			slices.Sort(cover)
			if !slices.Equal(cover, want) {
				t.Fatalf("trial %d: level %d covers %v, want %v", trial, d, cover, want)
			}
			for _, nd := range level {
				if len(nd.Children) == 0 {
					upperLeaves = append(upperLeaves, nd.Entities...)
				}
			}
		}
		st := tree.Stats()
		if st.Depth != len(levels)-1 || st.Leaves != len(want) {
			t.Fatalf("trial %d: stats %+v for %d levels, %d entities", trial, st, len(levels), len(want))
		}
	}
}

// TestTreeCheck checks that Check refuses malformed trees.
func TestTreeCheck(t *testing.T) {
	for name, tree := range map[string]*Tree{
		"no root":      {},
		"single child": {Root: &Node{Entities: []int{0, 1}, Children: []*Node{node(leaf(0), leaf(1))}}},
		"big leaf":     {Root: &Node{Entities: []int{0, 1}}},
		"overlap":      {Root: &Node{Entities: []int{0, 1}, Children: []*Node{leaf(0), leaf(0)}}},
		"wrong root":   {Root: node(leaf(0), leaf(2))},
	} {
		if err := tree.Check([]int{0, 1}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestIDTHDDProperties runs IDTHDD and IDTHDD* on random trees and
// failures: both results fail, IDTHDD* is 1-minimal and no larger than
// IDTHDD, and every run is a distinct input (memoisation).
func TestIDTHDDProperties(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	for trial := 0; trial < 200; trial++ {
		m := 2 + rng.Intn(20)
		g := randomGraph(rng, 1+rng.Intn(40), m)
		input := make([]byte, m)
		for i := range input {
			input[i] = byte('a' + i)
		}
		ents, _ := Split(input, "bytes")
		needs := map[byte]bool{}
		for k := 1 + rng.Intn(3); k > 0; k-- {
			needs[input[rng.Intn(m)]] = true
		}
		var sizes [2]int
		for k, star := range []bool{false, true} {
			seen := map[string]bool{}
			var mu sync.Mutex
			test := func(_ context.Context, in []byte) (Verdict, error) {
				mu.Lock()
				if seen[string(in)] {
					t.Errorf("trial %d: %q tested twice", trial, in)
				}
				seen[string(in)] = true
				mu.Unlock()
				for c := range needs {
					if !strings.ContainsRune(string(in), rune(c)) {
						return Passes, nil
					}
				}
				return Fails, nil
			}
			res, err := IDTHDD(context.Background(), IDTConfig{
				Config: Config{Entities: ents, Test: test, Jobs: 1 + rng.Intn(3)},
				Star:   star,
				Tree:   func(kept []int) (*Tree, error) { return BuildTree(g, kept), nil },
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Runs != len(seen) {
				t.Errorf("trial %d: %d runs, %d distinct inputs", trial, res.Runs, len(seen))
			}
			pure := func(_ context.Context, in []byte) (Verdict, error) {
				for c := range needs {
					if !strings.ContainsRune(string(in), rune(c)) {
						return Passes, nil
					}
				}
				return Fails, nil
			}
			if v, _ := pure(context.Background(), res.Input); v != Fails {
				t.Errorf("trial %d: the result %q does not fail", trial, res.Input)
			}
			if star {
				checkOneMinimal(t, res.Input, pure)
			}
			sizes[k] = res.Entities
		}
		if sizes[1] > sizes[0] {
			t.Errorf("trial %d: IDTHDD* kept %d entities, IDTHDD %d", trial, sizes[1], sizes[0])
		}
	}
}

// TestWideLevel: on a level of many units, a round after a removal goes
// on from the unit after the one removed, so that one sweep removes all
// the irrelevant units: 20 leaves under the root, 3 of them needed, take
// 2 tests of halves, one sweep of 20 and a last round of 3.
func TestWideLevel(t *testing.T) {
	var leaves []*Node
	data := []byte("abcdefghijklmnopqrst")
	for i := range data {
		leaves = append(leaves, leaf(i))
	}
	ents, _ := Split(data, "bytes")
	test := func(_ context.Context, in []byte) (Verdict, error) {
		if strings.Contains(string(in), "d") && strings.Contains(string(in), "l") && strings.Contains(string(in), "r") {
			return Fails, nil
		}
		return Passes, nil
	}
	for _, star := range []bool{false, true} {
		res, err := IDTHDD(context.Background(), IDTConfig{
			Config: Config{Entities: ents, Test: test, Jobs: 1, OriginalFails: true},
			Star:   star,
			Tree:   func([]int) (*Tree, error) { return &Tree{Root: node(leaves...)}, nil },
		})
		if err != nil {
			t.Fatal(err)
		}
		if string(res.Input) != "dlr" || res.Runs != 1+2+20+3 {
			t.Errorf("star %v: %q in %d runs, want dlr in 1+2+20+3", star, res.Input, res.Runs)
		}
	}
}
