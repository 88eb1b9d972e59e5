package alloc

import "testing"

func TestClassifyFamily(t *testing.T) {
	for _, c := range []struct {
		name string
		fn   Fn
		fam  Family
	}{
		{"malloc", Malloc, FamilyMalloc},
		{"malloc@plt", Malloc, FamilyMalloc},
		{"__libc_malloc", Malloc, FamilyMalloc},
		{"calloc@@GLIBC_2.2.5", Calloc, FamilyMalloc},
		{"realloc", Realloc, FamilyMalloc},
		{"reallocarray", ReallocArray, FamilyMalloc},
		{"aligned_alloc", Aligned, FamilyMalloc},
		{"posix_memalign", PosixMemalign, FamilyMalloc},
		{"free", Free, FamilyMalloc},
		{"_Znwm", Malloc, FamilyNew},
		{"_ZnwmSt11align_val_t", Malloc, FamilyNew},
		{"_Znam", Malloc, FamilyNewArray},
		{"_ZdlPvm", Free, FamilyNew},
		{"_ZdlPv@plt", Free, FamilyNew},
		{"_ZdaPv", Free, FamilyNewArray},
		{"_int_malloc", Internal, FamilyNone},
		{"main", NotAlloc, FamilyNone},
		{"mallocx", NotAlloc, FamilyNone},
	} {
		fn, fam := ClassifyFamily(c.name)
		if fn != c.fn || fam != c.fam {
			t.Errorf("ClassifyFamily(%q) = %v, %v; want %v, %v", c.name, fn, fam, c.fn, c.fam)
		}
	}
}

func TestIndex(t *testing.T) {
	x := NewIndex()
	x.Set(1, 0x1000, 0x1010)
	x.Set(2, 0x1010, 0x3000) // spans pages
	x.Set(3, 0x5000, 0x5008)
	for _, c := range []struct {
		a  uint64
		id uint32
	}{{0xfff, 0}, {0x1000, 1}, {0x100f, 1}, {0x1010, 2}, {0x2fff, 2}, {0x3000, 0}, {0x5004, 3}, {0x5008, 0}} {
		if got := x.Find(c.a); got != c.id {
			t.Errorf("Find(%#x) = %d, want %d", c.a, got, c.id)
		}
	}
	if x.Free(0x1008, 0x1018, 0) || !x.Free(0x3000, 0x5000, 0) || !x.Free(0x1010, 0x2000, 2) {
		t.Error("Free is wrong")
	}
	x.Set(2, 0, 0)
	if x.Live(2) || x.Find(0x2000) != 0 || !x.Live(1) || x.Live(99) {
		t.Error("removing an extent left it findable")
	}
	var seen []uint32
	x.Overlapping(0, 0x6000, 0, func(id uint32) bool { seen = append(seen, id); return true })
	if len(seen) != 2 {
		t.Errorf("Overlapping saw %v, want ids 1 and 3", seen)
	}
}

func TestEntryPatterns(t *testing.T) {
	exact, prefixes := EntryPatterns()
	for _, n := range exact {
		if fn := Classify(n); fn == NotAlloc || fn == Internal {
			t.Errorf("EntryPatterns gives %q, which Classify calls %v", n, fn)
		}
	}
	for _, p := range prefixes {
		if fn := Classify(p + "St11align_val_t"); fn == NotAlloc || fn == Internal {
			t.Errorf("EntryPatterns gives prefix %q, which Classify does not take", p)
		}
	}
	if len(exact) == 0 || len(prefixes) == 0 {
		t.Fatal("no patterns")
	}
}
