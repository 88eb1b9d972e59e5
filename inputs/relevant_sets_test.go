package inputs

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// show writes set id as "E[=][>V...]" elements, by entity.
func show(t *setTable, id uint32) string {
	d := &t.sets[id]
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
		s := t.intern(setData{runs: []run{{e, e + 1, strong}}})
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
	st := newSetTable()
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
	for _, r := range t.sets[id].runs {
		for e := r.lo; e < r.hi; e++ {
			if r.strong {
				m[e] = "="
			} else {
				m[e] = ""
			}
		}
	}
	for _, c := range t.sets[id].chains {
		m[c.ent] += fmt.Sprintf(">%d", c.chain)
	}
	return m
}

// randomSet makes a set of up to 12 elements over entities 0..19, some
// strong, some with chains.
func randomSet(t *setTable, rng *rand.Rand) uint32 {
	var els []string
	for k := rng.IntN(12); k > 0; k-- {
		e := fmt.Sprint(rng.IntN(20))
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
	st := newSetTable()
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

// TestRunsUnion checks unionRuns on overlapping runs of mixed strength.
func TestRunsUnion(t *testing.T) {
	got := unionRuns([]run{{0, 10, false}, {20, 30, true}}, []run{{5, 25, true}, {40, 41, false}})
	want := []run{{0, 5, false}, {5, 30, true}, {40, 41, false}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("unionRuns = %v, want %v", got, want)
	}
	got = unionRuns([]run{{0, 10, true}}, []run{{2, 4, false}, {10, 12, true}})
	want = []run{{0, 12, true}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("unionRuns = %v, want %v", got, want)
	}
}
