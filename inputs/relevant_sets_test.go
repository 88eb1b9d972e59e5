package inputs

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// show writes set id as "E[=][>V...]" elements, by entity.
func show(t *setTable, id uint32) string {
	d := t.data(id)
	var parts []string
	ci := 0
	for _, r := range d.runs {
		for e := r.lo; e < r.hi; e++ {
			for ci < len(d.chains) && d.chains[ci].ent < e {
				ci++
			}
			if r.strong && ci < len(d.chains) && d.chains[ci].ent == e {
				for ; ci < len(d.chains) && d.chains[ci].ent == e; ci++ {
					s := fmt.Sprintf("%d=", e)
					for _, l := range t.links(d.chains[ci].chain) {
						s += fmt.Sprintf(">%d", l.value)
					}
					parts = append(parts, s)
				}
				continue
			}
			s := fmt.Sprint(e)
			if r.strong {
				s += "="
			}
			parts = append(parts, s)
		}
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// mk builds a set from elements "E", "E=" and "E=>V>V...".
func mk(t *setTable, elems ...string) uint32 {
	var id uint32
	for _, el := range elems {
		var e uint64
		var rest string
		strong := strings.Contains(el, "=")
		num, chain, _ := strings.Cut(strings.Replace(el, "=", "", 1), ">")
		fmt.Sscan(num, &e)
		rest = chain
		s := t.fromData(setData{runs: []run{{e, e + 1, strong}}})
		if rest != "" {
			for _, v := range strings.Split(rest, ">") {
				var n int64
				fmt.Sscan(v, &n)
				s = t.Extend(s, linkKey{value: n, loc: 1, pc: 0x1000})
			}
		}
		id = t.Union(id, s)
	}
	return id
}

// TestOperatorIdentities checks the identities of section 4.1.5 of Wang's
// dissertation: the union keeps the stronger element and the longer chain,
// and weakening drops strength and chains.
func TestOperatorIdentities(t *testing.T) {
	st := newSetTable(1 << 20)
	cases := []struct {
		name string
		got  uint32
		want string
	}{
		{"{c=} ⊎ {c}", st.Union(mk(st, "5="), mk(st, "5")), "{5=}"},
		{"{c} ⊎ {c=}", st.Union(mk(st, "5"), mk(st, "5=")), "{5=}"},
		{"{c=→d} ⊎ {c=}", st.Union(mk(st, "5=>7"), mk(st, "5=")), "{5=>7}"},
		{"{c=→d→e} ⊎ {c=→d}", st.Union(mk(st, "5=>7>8"), mk(st, "5=>7")), "{5=>7>8}"},
		{"{c=→d} ⊎ {c}", st.Union(mk(st, "5=>7"), mk(st, "5")), "{5=>7}"},
		{"{c=→d} ⊎ {c=→e}", st.Union(mk(st, "5=>7"), mk(st, "5=>9")), "{5=>7 5=>9}"},
		{"weak{c1=, c2=, c3=→d, c3}", st.Weak(mk(st, "1=", "2=", "3=>4", "3")), "{1 2 3}"},
		{"{1=,3} ⊎ {2,3=}", st.Union(mk(st, "1=", "3"), mk(st, "2", "3=")), "{1= 2 3=}"},
		{"extend {1=, 2, 3=>4}", st.Extend(mk(st, "1=", "2", "3=>4"), linkKey{value: 9, loc: 1, pc: 0x1000}), "{1=>9 3=>4>9}"},
		{"weak ∅", st.Weak(0), "{}"},
		{"∅ ⊎ {1}", st.Union(0, mk(st, "1")), "{1}"},
	}
	for _, c := range cases {
		if got := show(st, c.got); got != c.want {
			t.Errorf("%s = %s, want %s", c.name, got, c.want)
		}
	}
}

// naive is a set as a map: entity -> strong, and its chains by entity.
func naive(t *setTable, id uint32) map[uint64]string {
	m := map[uint64]string{}
	d := t.data(id)
	for _, r := range d.runs {
		for e := r.lo; e < r.hi; e++ {
			if r.strong {
				m[e] = "="
			} else {
				m[e] = ""
			}
		}
	}
	for _, c := range d.chains {
		m[c.ent] += fmt.Sprintf(">%d", c.chain)
	}
	return m
}

// randomSet makes a set of up to 12 elements over a few entities, some
// strong, some with chains.
func randomSet(t *setTable, rng *rand.Rand) uint32 {
	var els []string
	for k := rng.IntN(12); k > 0; k-- {
		// Entities in one leaf, across leaves and across nodes.
		pool := []int{0, 1, 2, 3, 5, 62, 63, 64, 65, 127, 128, 4095, 4096, 4097, 70000, 262143, 262144, 1<<20 - 1}
		e := fmt.Sprint(pool[rng.IntN(len(pool))])
		switch rng.IntN(4) {
		case 0:
			els = append(els, e)
		case 1, 2:
			els = append(els, e+"=")
		default:
			el := e + "="
			for n := 1 + rng.IntN(3); n > 0; n-- {
				el += fmt.Sprintf(">%d", rng.IntN(3))
			}
			els = append(els, el)
		}
	}
	return mk(t, els...)
}

// TestOperatorProperties: the union is commutative, associative and
// idempotent, weakening is idempotent and distributes over the union, and
// the union's runs hold each entity at its stronger strength.
func TestOperatorProperties(t *testing.T) {
	st := newSetTable(1 << 20)
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 3000; n++ {
		a, b, c := randomSet(st, rng), randomSet(st, rng), randomSet(st, rng)
		if st.Union(a, b) != st.Union(b, a) {
			t.Fatalf("not commutative: %s ⊎ %s", show(st, a), show(st, b))
		}
		if st.Union(st.Union(a, b), c) != st.Union(a, st.Union(b, c)) {
			t.Fatalf("not associative: %s, %s, %s: %s vs %s", show(st, a), show(st, b), show(st, c),
				show(st, st.Union(st.Union(a, b), c)), show(st, st.Union(a, st.Union(b, c))))
		}
		if st.Union(a, a) != a {
			t.Fatalf("not idempotent: %s", show(st, a))
		}
		if st.Weak(st.Weak(a)) != st.Weak(a) {
			t.Fatalf("weak not idempotent: %s", show(st, a))
		}
		if st.Weak(st.Union(a, b)) != st.Union(st.Weak(a), st.Weak(b)) {
			t.Fatalf("weak does not distribute: %s, %s", show(st, a), show(st, b))
		}
		u := naive(st, st.Union(a, b))
		na, nb := naive(st, a), naive(st, b)
		for e, s := range u {
			sa, ina := na[e]
			sb, inb := nb[e]
			if !ina && !inb {
				t.Fatalf("%d in %s but in neither %s nor %s", e, show(st, st.Union(a, b)), show(st, a), show(st, b))
			}
			strong := strings.HasPrefix(sa, "=") || strings.HasPrefix(sb, "=")
			if strings.HasPrefix(s, "=") != strong {
				t.Fatalf("%d has the wrong strength in %s = %s ⊎ %s", e, show(st, st.Union(a, b)), show(st, a), show(st, b))
			}
		}
		for e := range na {
			if _, ok := u[e]; !ok {
				t.Fatalf("%d of %s missing from the union", e, show(st, a))
			}
		}
		// The triples' operators are the sets' set by set.
		ta := st.tripleOf(triple{a, b, c})
		tb := st.tripleOf(triple{c, a, b})
		if got := st.triples[st.TUnion(ta, tb)]; got != (triple{st.Union(a, c), st.Union(b, a), st.Union(c, b)}) {
			t.Fatalf("TUnion is not the union set by set")
		}
	}
}

// TestTreeRuns checks that the trees give back the runs they were built
// from, across leaves and levels.
func TestTreeRuns(t *testing.T) {
	st := newSetTable(1 << 20)
	d := setData{runs: []run{{0, 10, false}, {10, 70, true}, {4090, 4200, false}, {262140, 262150, true}}}
	id := st.fromData(d)
	if got := st.data(id).runs; fmt.Sprint(got) != fmt.Sprint(d.runs) {
		t.Errorf("runs %v, want %v", got, d.runs)
	}
	w := st.data(st.Weak(id)).runs
	if want := []run{{0, 70, false}, {4090, 4200, false}, {262140, 262150, false}}; fmt.Sprint(w) != fmt.Sprint(want) {
		t.Errorf("weak runs %v, want %v", w, want)
	}
	// Adding one entity to a big set makes a few nodes, not a copy.
	before := len(st.tr.nodes)
	st.Union(id, st.single(5000))
	if n := len(st.tr.nodes) - before; n > 2*(st.tr.depth+1) {
		t.Errorf("adding one entity made %d nodes", n)
	}
}
