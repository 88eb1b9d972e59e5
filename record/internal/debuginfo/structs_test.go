package debuginfo

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/schema/tracepb"
)

// structSrc defines the types of the struct tests; every one is used so
// that gcc keeps it in the debug info.
const structSrc = `#include <stddef.h>

struct node { int val; struct node *next; }; /* L:node */

struct point { int x; int y; };
struct rect { struct point tl; struct point br; const char *label; };

struct arrs { int a[3]; struct node nodes[2]; char m[2][2]; };

union value { int i; double d; struct node *n; };

typedef struct { long id; union value v; } item_t; /* L:item_t */

struct flags { unsigned a:3; unsigned b:5; unsigned c:9; int after; unsigned char d:1; };

typedef struct list { struct node *head; size_t len; item_t *items; } list_t;

struct anon { int kind; union { int ival; float fval; }; struct { short lo, hi; } pair; };

struct fnp {
	int (*cmp)(const void *, const void *);
	char (*buf)[8];
	volatile int *const vp;
	list_t *lp;
	struct node **pp;
};

struct big { char buf[10000]; };

struct opaque;
struct opaque *op;

struct node gnode;
struct rect grect;
struct arrs garrs;
union value gvalue;
item_t gitem;
struct flags gflags;
list_t glist;
struct anon ganon;
struct fnp gfnp = { .vp = 0 };
struct big gbig;

int main(void) { return gnode.val; }
`

// slot is a compact golden form of a Member:
// "name@offset+size type [-> pointee]".
func slot(m *tracepb.Member) string {
	s := fmt.Sprintf("%s@%d+%d %s", m.Name, m.Offset, m.Size, m.TypeName)
	if m.Pointer {
		s += " ->" + m.Pointee
	}
	return s
}

// structGolden is what StructTypes must say about structSrc (big aside).
var structGolden = map[string]struct {
	kind  string
	size  uint64
	slots []string
}{
	"node":  {"struct", 16, []string{"val@0+4 int", "next@8+8 struct node * ->node"}},
	"point": {"struct", 8, []string{"x@0+4 int", "y@4+4 int"}},
	"rect": {"struct", 24, []string{
		"tl.x@0+4 int", "tl.y@4+4 int", "br.x@8+4 int", "br.y@12+4 int", "label@16+8 const char * ->"}},
	"arrs": {"struct", 56, []string{
		"a[0]@0+4 int", "a[1]@4+4 int", "a[2]@8+4 int",
		"nodes[0].val@16+4 int", "nodes[0].next@24+8 struct node * ->node",
		"nodes[1].val@32+4 int", "nodes[1].next@40+8 struct node * ->node",
		"m[0][0]@48+1 char", "m[0][1]@49+1 char", "m[1][0]@50+1 char", "m[1][1]@51+1 char"}},
	"value": {"union", 8, []string{"i@0+4 int", "d@0+8 double", "n@0+8 struct node * ->node"}},
	"item_t": {"struct", 16, []string{
		"id@0+8 long int", "v.i@8+4 int", "v.d@8+8 double", "v.n@8+8 struct node * ->node"}},
	"flags": {"struct", 12, []string{"a@0+4 unsigned int", "after@4+4 int", "d@8+1 unsigned char"}},
	"list": {"struct", 24, []string{
		"head@0+8 struct node * ->node", "len@8+8 size_t", "items@16+8 item_t * ->item_t"}},
	"list_t": {"struct", 24, []string{
		"head@0+8 struct node * ->node", "len@8+8 size_t", "items@16+8 item_t * ->item_t"}},
	"anon": {"struct", 12, []string{
		"kind@0+4 int", "ival@4+4 int", "fval@4+4 float", "pair.lo@8+2 short int", "pair.hi@10+2 short int"}},
	"fnp": {"struct", 40, []string{
		"cmp@0+8 int (*)(const void *, const void *) ->",
		"buf@8+8 char (*)[8] ->",
		"vp@16+8 volatile int *const ->",
		"lp@24+8 list_t * ->list",
		"pp@32+8 struct node ** ->"}},
}

func TestStructTypes(t *testing.T) {
	for _, flags := range [][]string{{"-g", "-O0"}, {"-gdwarf-4", "-O0"}, {"-g", "-O2"}} {
		t.Run(strings.Join(flags, ""), func(t *testing.T) {
			t.Parallel()
			bin := compileC(t, t.TempDir(), "st", structSrc, flags...)
			m := openAt(t, bin, pieBase)
			types := m.StructTypes()
			byName := make(map[string]*tracepb.StructType)
			var names []string
			for _, ty := range types {
				if byName[ty.Name] != nil {
					t.Errorf("type %s twice", ty.Name)
				}
				byName[ty.Name] = ty
				names = append(names, ty.Name)
			}
			sort.Strings(names)
			if want := "anon arrs big flags fnp item_t list list_t node point rect value"; strings.Join(names, " ") != want {
				t.Errorf("types %v, want %s", names, want)
			}
			for name, g := range structGolden {
				ty := byName[name]
				if ty == nil {
					continue
				}
				var got []string
				for _, mm := range ty.Members {
					got = append(got, slot(mm))
				}
				if ty.Kind != g.kind || ty.Size != g.size || strings.Join(got, "\n") != strings.Join(g.slots, "\n") {
					t.Errorf("%s: got %s %d bytes\n\t%s\nwant %s %d bytes\n\t%s", name, ty.Kind, ty.Size,
						strings.Join(got, "\n\t"), g.kind, g.size, strings.Join(g.slots, "\n\t"))
				}
			}
			if ty := byName["node"]; ty != nil && ty.Line != lineOf(t, structSrc, "L:node") {
				t.Errorf("node declared at line %d", ty.Line)
			}
			if ty := byName["item_t"]; ty != nil && ty.Line != lineOf(t, structSrc, "L:item_t") {
				t.Errorf("item_t declared at line %d", ty.Line)
			}
			if big := byName["big"]; big != nil {
				n := len(big.Members)
				if n != MaxSlots || big.Size != 10000 || big.Members[n-1].Name != fmt.Sprintf("buf[%d]", MaxSlots-1) {
					t.Errorf("big: %d slots, size %d, last %s", n, big.Size, big.Members[n-1].Name)
				}
			}
			// Callers get copies.
			types[0].Name = "changed"
			if m.StructTypes()[0].Name == "changed" {
				t.Errorf("StructTypes shares its cache")
			}
		})
	}
}

// TestStructTypesAcrossUnits checks that a type defined in two compilation
// units appears once and that the first of two different definitions wins.
func TestStructTypesAcrossUnits(t *testing.T) {
	dir := t.TempDir()
	// gcc gets "unit1.c -o bin main.c": unit1.c is the first unit.
	unit1 := filepath.Join(dir, "unit1.c")
	src1 := "struct node { int val; struct node *next; };\nstruct point { long x, y, z; };\n" +
		"struct node n1; struct point p1;\nint f1(void) { return n1.val + (int)p1.z; }\n"
	if err := os.WriteFile(unit1, []byte(src1), 0o644); err != nil {
		t.Fatal(err)
	}
	src2 := "struct node { int val; struct node *next; };\nstruct point { int x, y; };\n" +
		"struct node n2; struct point p2;\nint f1(void);\nint main(void) { return n2.val + p2.x + f1(); }\n"
	bin := compileC(t, dir, "main", src2, "-g", unit1)
	m := openAt(t, bin, pieBase)
	count := make(map[string]int)
	for _, ty := range m.StructTypes() {
		count[ty.Name]++
		if ty.Name == "point" && ty.Size != 24 {
			t.Errorf("point: got the second unit's definition (%d bytes), want the first's (24 bytes)", ty.Size)
		}
	}
	if count["node"] != 1 || count["point"] != 1 {
		t.Errorf("counts %v, want node and point once", count)
	}
}
