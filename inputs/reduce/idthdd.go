package reduce

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Strategies: how an input is reduced.
const (
	// StrategyDDMin is Zeller and Hildebrandt's ddmin (DDMin).
	StrategyDDMin = "ddmin"
	// StrategyIDTHDD is the input-decomposition-tree-based hierarchical
	// delta debugging of chapter 4 of Yan Wang's dissertation ("Dynamic
	// Analysis Techniques for Effective and Efficient Debugging", UC
	// Riverside, 2014): the leaves of upper levels are always kept.
	StrategyIDTHDD = "idthdd"
	// StrategyIDTHDDStar is IDTHDD*: the leaves of upper levels are
	// reconsidered at every lower level, which makes the result
	// 1-minimal.
	StrategyIDTHDDStar = "idthdd*"
)

// Rel says which relevant input sets of the failure's wrong value hold one
// entity, and whether strongly (the "=" mark: the exact value matters).
type Rel uint8

// The bits of Rel. A strong bit implies its set's bit.
const (
	Der Rel = 1 << iota
	DerStrong
	Cinf
	CinfStrong
	Ainf
	AinfStrong
)

// Candidate is one input that step 1 of IDTHDD builds from the relevant
// input sets.
type Candidate struct {
	// Name says which sets it is made of, e.g. "DER= ∪ CINF=".
	Name string `json:"name"`
	// Kept are the indices of the entities it keeps, ascending.
	Kept []int `json:"-"`
	// Entities is len(Kept).
	Entities int `json:"entities"`
	// Outcome: "fails" (the first failing one: step 1's result),
	// "passes", "same" (the same entities as the one before: not
	// tested), "empty" (no entity: not tested), "untried" (a failing
	// one came before).
	Outcome string `json:"outcome"`
}

// candidateSets are step 1's six nested candidates, from the smallest: for
// each, the bits an entity needs (any of them) to be kept.
var candidateSets = []struct {
	name string
	any  Rel
}{
	{"DER=", DerStrong},
	{"DER= ∪ CINF=", DerStrong | CinfStrong},
	{"DER= ∪ CINF= ∪ AINF=", DerStrong | CinfStrong | AinfStrong},
	{"DER ∪ CINF= ∪ AINF=", Der | CinfStrong | AinfStrong},
	{"DER ∪ CINF ∪ AINF=", Der | Cinf | AinfStrong},
	{"DER ∪ CINF ∪ AINF", Der | Cinf | Ainf},
}

// Candidates returns step 1's six nested candidates for the entities'
// relevance rel (indexed by entity): DER=, DER= ∪ CINF=, DER= ∪ CINF= ∪
// AINF=, DER ∪ CINF= ∪ AINF=, DER ∪ CINF ∪ AINF=, DER ∪ CINF ∪ AINF (X=
// are X's strong elements). A candidate keeps the original input's
// entities in the sets, in their order. Empty candidates and repeats of
// the one before are marked so and not tested.
func Candidates(rel []Rel) []Candidate {
	out := make([]Candidate, 0, len(candidateSets))
	var prev []int
	for k, cs := range candidateSets {
		c := Candidate{Name: cs.name}
		for e, r := range rel {
			if r&cs.any != 0 {
				c.Kept = append(c.Kept, e)
			}
		}
		c.Entities = len(c.Kept)
		switch {
		case len(c.Kept) == 0:
			c.Outcome = "empty"
		case k > 0 && slices.Equal(c.Kept, prev):
			c.Outcome = "same"
		}
		prev = c.Kept
		out = append(out, c)
	}
	return out
}

// Level is what step 3 of IDTHDD did at one level of the decomposition
// tree.
type Level struct {
	// Level is the depth (the root is level 0).
	Level int `json:"level"`
	// Units is the number of units the level offered (its nodes still
	// in the input, and for IDTHDD* the upper levels' leaves), Fixed the
	// entities always kept (IDTHDD: the upper levels' leaves).
	Units int `json:"units"`
	Fixed int `json:"fixed"`
	// Entities is the input's size before the level, Kept after it.
	Entities int `json:"entities"`
	Kept     int `json:"kept"`
	// Runs and Cached as in Step.
	Runs   int `json:"runs"`
	Cached int `json:"cached"`
}

// IDTConfig is one reduction with IDTHDD or IDTHDD*.
type IDTConfig struct {
	Config
	// Star chooses IDTHDD* (upper-level leaves reconsidered: the result
	// is 1-minimal) over IDTHDD (they are always kept).
	Star bool
	// Relevance is, per entity, the relevant input sets of the failure's
	// wrong value that hold it (step 1); nil skips step 1 (the search
	// starts from the whole input).
	Relevance []Rel
	// Tree builds step 2's input decomposition tree over the entities
	// kept by step 1 (ascending indices). Nil, or a nil tree, makes step
	// 3 plain ddmin (Result.Tree is then nil).
	Tree func(kept []int) (*Tree, error)
}

// IDTHDD reduces cfg.Entities with the three steps of IDTHDD (Wang,
// chapter 4): step 1 tries the six nested candidates of the relevant
// input sets (Candidates) in order and keeps the first that fails (when
// none does, the whole input goes on and the search is ddmin: Fallback);
// step 2 builds the input decomposition tree over what step 1 kept; step
// 3 applies complement-only delta debugging level by level (Step3). Tests
// are memoised by input, as DDMin's, and made Jobs at a time.
func IDTHDD(ctx context.Context, cfg IDTConfig) (*Result, error) {
	if cfg.Test == nil {
		return nil, fmt.Errorf("reduce: no test")
	}
	if cfg.Jobs < 1 {
		cfg.Jobs = 1
	}
	start := time.Now()
	r := &reducer{cfg: cfg.Config, memo: map[string]Verdict{}}
	all := make([]int, len(cfg.Entities))
	for i := range all {
		all[i] = i
	}
	strategy := StrategyIDTHDD
	if cfg.Star {
		strategy = StrategyIDTHDDStar
	}
	res := &Result{Strategy: strategy, OriginalEntities: len(all), OriginalBytes: len(Join(cfg.Entities))}
	if cfg.OriginalFails {
		r.memo[r.keyOf(all)] = Fails
	}
	v, err := r.batch(ctx, [][]int{all}, len(all))
	if cfg.OriginalFails {
		r.cache--
	}
	if err != nil {
		return nil, err
	}
	if v < 0 {
		return nil, ErrNoFailure
	}
	cur := all
	if cfg.Relevance != nil {
		if len(cfg.Relevance) != len(all) {
			return nil, fmt.Errorf("reduce: relevance of %d entities for an input of %d", len(cfg.Relevance), len(all))
		}
		runs0 := r.runs
		cands := Candidates(cfg.Relevance)
		var tests [][]int
		var at []int
		for k, c := range cands {
			if c.Outcome == "" {
				tests, at = append(tests, c.Kept), append(at, k)
			}
		}
		i, err := r.batch(ctx, tests, len(all))
		if err != nil {
			return nil, err
		}
		for j, k := range at {
			switch {
			case i < 0 || j < i:
				cands[k].Outcome = "passes"
			case j == i:
				cands[k].Outcome = "fails"
			default:
				cands[k].Outcome = "untried"
			}
		}
		res.Step1, res.Step1Runs = cands, r.runs-runs0
		if i >= 0 {
			cur = tests[i]
		} else {
			res.Fallback = true
		}
	}
	var tree *Tree
	if cfg.Tree != nil && !res.Fallback {
		if tree, err = cfg.Tree(cur); err != nil {
			return nil, fmt.Errorf("decomposition tree: %w", err)
		}
	}
	if tree == nil {
		c, steps, err := r.ddmin(ctx, cur)
		if err != nil {
			return nil, err
		}
		cur, res.Steps = c, steps
	} else {
		if err := tree.Check(cur); err != nil {
			return nil, fmt.Errorf("decomposition tree: %w", err)
		}
		res.Tree = tree.Stats()
		if cur, err = r.step3(ctx, tree, cur, cfg.Star, res); err != nil {
			return nil, err
		}
	}
	r.finish(res, cur, start)
	return res, nil
}

// finish fills a result's sizes, input and counts from the configuration
// kept.
func (r *reducer) finish(res *Result, c []int, start time.Time) {
	res.Kept = c
	kept := make([][]byte, len(c))
	for i, e := range c {
		kept[i] = r.cfg.Entities[e]
	}
	res.Input = Join(kept)
	res.Entities, res.Bytes = len(c), len(res.Input)
	res.Runs, res.Cached = r.runs, r.cache
	if r.cfg.OriginalFails {
		res.Runs++
	}
	res.Seconds = time.Since(start).Seconds()
}

// step3 is IDTHDD's step 3 on tree from the configuration cur (the
// entities the tree covers): for each level from 1 down, the level's nodes
// still in the input are the units (IDTHDD* adds the upper levels' leaves
// still in it; IDTHDD always keeps them), and complement-only delta
// debugging removes units: with n parts (2 at first) it tests the input
// without each part, in order; a failing one is kept with n-1 parts (at
// least 2); when none fails, n becomes the number of units, and when n
// already is, the level is done. With one unit a part, the round after a
// removal starts at the unit that followed the one removed and wraps
// around, so that one sweep over a wide level removes every unit it can
// (the units before it were just tested in a larger input); every
// complement of the last round has still passed when the level is done.
func (r *reducer) step3(ctx context.Context, t *Tree, cur []int, star bool, res *Result) ([]int, error) {
	in := make(map[int]bool, len(cur))
	for _, e := range cur {
		in[e] = true
	}
	levels := t.Levels()
	for l := 1; l < len(levels); l++ {
		var units [][]int
		var fixed []int
		for _, n := range levels[l] {
			if in[n.Entities[0]] {
				units = append(units, n.Entities)
			}
		}
		for k := 1; k < l; k++ {
			for _, n := range levels[k] {
				if len(n.Children) == 0 && in[n.Entities[0]] {
					if star {
						units = append(units, n.Entities)
					} else {
						fixed = append(fixed, n.Entities...)
					}
				}
			}
		}
		slices.SortFunc(units, func(a, b []int) int { return a[0] - b[0] })
		lv := Level{Level: l, Units: len(units), Fixed: len(fixed), Entities: len(in)}
		runs0, cache0 := r.runs, r.cache
		configOf := func(us [][]int) []int {
			c := append([]int(nil), fixed...)
			for _, u := range us {
				c = append(c, u...)
			}
			slices.Sort(c)
			return c
		}
		n, start := 2, 0
		for len(units) >= 2 {
			step := Step{Level: l, Granularity: n, Entities: len(configOf(units))}
			s0, c0 := r.runs, r.cache
			bounds := splitBounds(len(units), n)
			comps := make([][]int, n)
			compUnits := make([][][]int, n)
			for k := 0; k < n; k++ {
				i := (start + k) % n
				compUnits[k] = append(slices.Clip(units[:bounds[i]]), units[bounds[i+1]:]...)
				comps[k] = configOf(compUnits[k])
			}
			k, err := r.batch(ctx, comps, step.Entities)
			if err != nil {
				return nil, err
			}
			switch {
			case k >= 0:
				// With one unit a part, the next round goes on from
				// the unit after the one removed (which now has its
				// index) instead of from the first, whose complements
				// have just passed.
				if n == len(units) {
					start = (start + k) % n
				} else {
					start = 0
				}
				units, n = compUnits[k], max(n-1, 2)
				if start >= n {
					start = 0
				}
				step.Outcome = "complement"
			case n < len(units):
				n = len(units)
				step.Outcome = "finer"
			default:
				step.Outcome = "next level"
			}
			step.Kept, step.Runs, step.Cached = len(configOf(units)), r.runs-s0, r.cache-c0
			res.Steps = append(res.Steps, step)
			if step.Outcome == "next level" {
				break
			}
		}
		in = make(map[int]bool, len(cur))
		for _, e := range configOf(units) {
			in[e] = true
		}
		lv.Kept, lv.Runs, lv.Cached = len(in), r.runs-runs0, r.cache-cache0
		res.Levels = append(res.Levels, lv)
	}
	out := make([]int, 0, len(in))
	for e := range in {
		out = append(out, e)
	}
	slices.Sort(out)
	return out, nil
}

// splitBounds cuts n things into k parts of nearly equal sizes, in order
// (as split does): part i is [b[i], b[i+1]).
func splitBounds(n, k int) []int {
	b := make([]int, k+1)
	for i := 0; i < k; i++ {
		b[i+1] = b[i] + (n-b[i])/(k-i)
	}
	return b
}

// ddmin is DDMin's search from configuration c (which fails): the
// 1-minimal configuration and the rounds.
func (r *reducer) ddmin(ctx context.Context, c []int) ([]int, []Step, error) {
	var steps []Step
	n := 2
	for len(c) >= 2 {
		step := Step{Granularity: n, Entities: len(c)}
		runs0, cache0 := r.runs, r.cache
		parts := split(c, n)
		if i, err := r.batch(ctx, parts, len(c)); err != nil {
			return nil, nil, err
		} else if i >= 0 {
			c, n = parts[i], 2
			step.Outcome = "subset"
		} else {
			comps := make([][]int, 0, len(parts))
			if n > 2 { // with 2 parts the complements are the subsets
				for i := range parts {
					comps = append(comps, complement(c, parts[i]))
				}
			}
			if i, err := r.batch(ctx, comps, len(c)); err != nil {
				return nil, nil, err
			} else if i >= 0 {
				c, n = comps[i], max(n-1, 2)
				step.Outcome = "complement"
			} else if n < len(c) {
				n = min(2*n, len(c))
				step.Outcome = "finer"
			} else {
				step.Outcome = "minimal"
			}
		}
		step.Kept, step.Runs, step.Cached = len(c), r.runs-runs0, r.cache-cache0
		steps = append(steps, step)
		if step.Outcome == "minimal" {
			break
		}
	}
	return c, steps, nil
}

// errTree is the root of a malformed tree's errors.
var errTree = errors.New("malformed decomposition tree")
