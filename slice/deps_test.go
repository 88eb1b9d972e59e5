package slice

import (
	"fmt"
	"math/rand"
	"sort"
	"testing"
)

// TestDepListsAgree runs random sequences of uses and kills on the
// baseline's list and the indexed list: every kill must report the same
// users waiting on the same bytes.
func TestDepListsAgree(t *testing.T) {
	for seed := int64(1); seed <= 200; seed++ {
		rng := rand.New(rand.NewSource(seed))
		l, x := &listDeps{}, newIndexedDeps()
		for step := 0; step < 300; step++ {
			addr := uint64(0x1000 + rng.Intn(64))
			size := uint64(1 + rng.Intn(16))
			th, reg := uint32(rng.Intn(2)), uint8(1+rng.Intn(4))
			user := int64(rng.Intn(1000))
			switch rng.Intn(5) {
			case 0:
				l.useMem(addr, size, user)
				x.useMem(addr, size, user)
			case 1:
				l.useReg(th, reg, user)
				x.useReg(th, reg, user)
			case 2:
				a, b := byteUsers(), byteUsers()
				ha := l.killMem(addr, size, a.add)
				hb := x.killMem(addr, size, b.add)
				if ha != hb || a.String() != b.String() {
					t.Fatalf("seed %d step %d: killMem(%#x, %d): list %v %s, indexed %v %s", seed, step, addr, size, ha, a, hb, b)
				}
			case 3:
				var ua, ub []int64
				ha := l.killReg(th, reg, func(u int64) { ua = append(ua, u) })
				hb := x.killReg(th, reg, func(u int64) { ub = append(ub, u) })
				if ha != hb || fmt.Sprint(sorted(ua)) != fmt.Sprint(sorted(ub)) {
					t.Fatalf("seed %d step %d: killReg(%d, %d): list %v %v, indexed %v %v", seed, step, th, reg, ha, ua, hb, ub)
				}
			case 4:
				ua, ub := l.takeReg(th, reg), x.takeReg(th, reg)
				if fmt.Sprint(sorted(ua)) != fmt.Sprint(sorted(ub)) {
					t.Fatalf("seed %d step %d: takeReg: list %v, indexed %v", seed, step, ua, ub)
				}
			}
		}
	}
}

// userBytes collects, per user, the bytes a kill reported.
type userBytes map[int64]map[uint64]bool

func byteUsers() userBytes { return userBytes{} }

func (u userBytes) add(user int64, addr, size uint64) {
	if u[user] == nil {
		u[user] = map[uint64]bool{}
	}
	for a := addr; a < addr+size; a++ {
		u[user][a] = true
	}
}

func (u userBytes) String() string {
	var users []int64
	for k := range u {
		users = append(users, k)
	}
	s := ""
	for _, k := range sorted(users) {
		var bs []int
		for a := range u[k] {
			bs = append(bs, int(a))
		}
		sort.Ints(bs)
		s += fmt.Sprintf("%d:%v ", k, bs)
	}
	return s
}

func sorted(xs []int64) []int64 {
	sort.Slice(xs, func(i, j int) bool { return xs[i] < xs[j] })
	return xs
}

// TestMemFilterCovers checks the filter never misses a range it was given
// and merges as it grows.
func TestMemFilterCovers(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	var f memFilter
	var all []interval
	for i := 0; i < 2000; i++ {
		lo := uint64(rng.Intn(100000))
		hi := lo + uint64(1+rng.Intn(32))
		f.add(lo, hi)
		all = append(all, interval{lo, hi})
	}
	for _, v := range all {
		if !f.overlaps(v.lo, v.hi) {
			t.Fatalf("filter misses [%d, %d)", v.lo, v.hi)
		}
	}
	f.merge()
	for k := 1; k < len(f.iv); k++ {
		if f.iv[k].lo <= f.iv[k-1].hi {
			t.Fatalf("intervals %v and %v overlap or touch after merging", f.iv[k-1], f.iv[k])
		}
	}
	if f.overlaps(200000, 200010) {
		t.Fatal("filter holds a range never added")
	}
}

func TestWordMask(t *testing.T) {
	tests := []struct {
		w, addr, size uint64
		want          uint8
	}{
		{0, 0, 8, 0xff},
		{0, 0, 1, 0x01},
		{0, 7, 1, 0x80},
		{0, 6, 4, 0xc0},
		{1, 6, 4, 0x03},
		{1, 0, 4, 0},
		{2, 8, 64, 0xff},
	}
	for _, tt := range tests {
		if got := wordMask(tt.w, tt.addr, tt.size); got != tt.want {
			t.Errorf("wordMask(%d, %d, %d) = %#x, want %#x", tt.w, tt.addr, tt.size, got, tt.want)
		}
	}
}
