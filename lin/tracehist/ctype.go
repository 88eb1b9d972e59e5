package tracehist

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mgtrace/mgtrace/schema/tracepb"
)

// intType is a C integer type of x86-64 Linux (LP64).
type intType struct {
	size   uint64 // bytes: 1, 2, 4 or 8
	signed bool
	rank   int // C's conversion rank: _Bool 0, char 1, short 2, int 3, long 4, long long 5
}

// holds reports whether the type can represent the non-negative v.
func (t intType) holds(v uint64) bool {
	bits := t.size * 8
	if t.signed {
		bits--
	}
	return bits >= 64 || v < 1<<bits
}

// intTypes are the integer types by canonical name, typedefs of <stdint.h>
// and <stddef.h> included.
var intTypes = map[string]intType{
	"_Bool":              {1, false, 0},
	"char":               {1, true, 1},
	"signed char":        {1, true, 1},
	"unsigned char":      {1, false, 1},
	"short":              {2, true, 2},
	"unsigned short":     {2, false, 2},
	"int":                {4, true, 3},
	"unsigned int":       {4, false, 3},
	"long":               {8, true, 4},
	"unsigned long":      {8, false, 4},
	"long long":          {8, true, 5},
	"unsigned long long": {8, false, 5},
	"int8_t":             {1, true, 1},
	"int16_t":            {2, true, 2},
	"int32_t":            {4, true, 3},
	"int64_t":            {8, true, 4},
	"uint8_t":            {1, false, 1},
	"uint16_t":           {2, false, 2},
	"uint32_t":           {4, false, 3},
	"uint64_t":           {8, false, 4},
	"size_t":             {8, false, 4},
	"ssize_t":            {8, true, 4},
	"intptr_t":           {8, true, 4},
	"uintptr_t":          {8, false, 4},
	"ptrdiff_t":          {8, true, 4},
}

// typedefNames are the integer typedefs a cast may name, alone.
var typedefNames = map[string]string{
	"bool": "_Bool", "_Bool": "_Bool",
	"int8_t": "int8_t", "int16_t": "int16_t", "int32_t": "int32_t", "int64_t": "int64_t",
	"uint8_t": "uint8_t", "uint16_t": "uint16_t", "uint32_t": "uint32_t", "uint64_t": "uint64_t",
	"size_t": "size_t", "ssize_t": "ssize_t", "intptr_t": "intptr_t", "uintptr_t": "uintptr_t",
	"ptrdiff_t": "ptrdiff_t",
	"void":      "void",
}

// isTypeWord reports whether s is a word of a C type name (not a typedef
// of a struct).
func isTypeWord(s string) bool {
	switch s {
	case "signed", "unsigned", "char", "short", "int", "long", "float", "double", "struct", "union", "enum":
		return true
	}
	_, ok := typedefNames[s]
	return ok
}

// canonicalType names the integer type that words spell ("long unsigned
// int" is "unsigned long"); ok is false when they spell none, and bad is
// then the word at fault.
func canonicalType(words []token) (name string, ok bool, bad Pos) {
	if len(words) == 1 {
		if n, ok := typedefNames[words[0].text]; ok {
			return n, true, Pos{}
		}
	}
	var signed, unsigned, char, short, intw, long int
	for _, w := range words {
		switch w.text {
		case "signed":
			signed++
		case "unsigned":
			unsigned++
		case "char":
			char++
		case "short":
			short++
		case "int":
			intw++
		case "long":
			long++
		default:
			return "", false, w.pos
		}
		if signed+unsigned > 1 || char > 1 || short > 1 || intw > 1 || long > 2 ||
			char+short > 1 || char > 0 && (intw > 0 || long > 0) || short > 0 && long > 0 {
			return "", false, w.pos
		}
	}
	prefix := ""
	if unsigned > 0 {
		prefix = "unsigned "
	}
	switch {
	case char > 0 && signed > 0:
		return "signed char", true, Pos{}
	case char > 0:
		return prefix + "char", true, Pos{}
	case short > 0:
		return prefix + "short", true, Pos{}
	case long == 1:
		return prefix + "long", true, Pos{}
	case long == 2:
		return prefix + "long long", true, Pos{}
	}
	return prefix + "int", true, Pos{}
}

// canonicalWords is canonicalType for a spelling in a string ("long
// unsigned int", as DWARF names base types).
func canonicalWords(s string) (string, bool) {
	var ws []token
	for _, f := range strings.Fields(s) {
		switch f {
		case "const", "volatile", "restrict", "_Atomic":
			continue
		}
		ws = append(ws, token{kind: tIdent, text: f})
	}
	if len(ws) == 0 {
		return "", false
	}
	n, ok, _ := canonicalType(ws)
	return n, ok
}

// kind of a ctype.
type kind uint8

const (
	kInt    kind = iota // an integer type (char included)
	kBool               // _Bool
	kPtr                // a pointer
	kVoid               // void, only as a pointee
	kStruct             // a struct, as a pointee or an lvalue
	kPart               // an aggregate part of a struct: a nested struct or an array member
	kOpaque             // a pointee whose type the trace does not say (char (*)[8], a typedef's)
)

// ctype is the type of an expression, resolved against the trace's
// tables.
type ctype struct {
	kind   kind
	name   string // C spelling, for messages
	size   uint64 // bytes (kInt, kBool, kPtr, kStruct; kPart: its extent)
	signed bool
	rank   int
	char   bool                // a character type: a pointer to it reads as a string
	elem   *ctype              // kPtr: the pointee
	st     *tracepb.StructType // kStruct, kPart: the struct
	path   string              // kPart: the flattened name of the part ("d", "s", "arr[0]")
}

// scalar reports whether a value of t can be used: an integer, _Bool or
// pointer.
func (t *ctype) scalar() bool { return t.kind == kInt || t.kind == kBool || t.kind == kPtr }

var (
	tyLong = intCType("long")
	tyInt  = intCType("int")
	tyVoid = &ctype{kind: kVoid, name: "void", size: 1}
)

// intCType returns the ctype of a canonical integer type name.
func intCType(name string) *ctype {
	it, ok := intTypes[name]
	if !ok {
		panic("tracehist: no integer type " + name)
	}
	k := kInt
	if name == "_Bool" {
		k = kBool
	}
	return &ctype{kind: k, name: name, size: it.size, signed: it.signed, rank: it.rank,
		char: name == "char" || name == "signed char" || name == "unsigned char"}
}

// pointerTo returns the pointer type to t.
func pointerTo(t *ctype) *ctype {
	name := t.name + " *"
	if t.kind == kPtr {
		name = t.name + "*"
	}
	return &ctype{kind: kPtr, name: name, size: 8, elem: t}
}

// normalize returns v truncated to t's size and extended back to 64 bits
// as t's signedness says; _Bool gives 0 or 1.
func (t *ctype) normalize(v uint64) uint64 {
	switch t.kind {
	case kBool:
		if v != 0 {
			return 1
		}
		return 0
	case kInt:
		if t.size >= 8 {
			return v
		}
		bits := t.size * 8
		if t.signed {
			return uint64(int64(v<<(64-bits)) >> (64 - bits))
		}
		return v & (1<<bits - 1)
	}
	return v
}

// promote applies C's integer promotions: types ranked below int become
// int.
func promote(t *ctype) *ctype {
	if (t.kind == kInt || t.kind == kBool) && t.rank < 3 {
		return tyInt
	}
	return t
}

// common returns the type of C's usual arithmetic conversions of two
// integer types.
func common(a, b *ctype) *ctype {
	a, b = promote(a), promote(b)
	if a.signed == b.signed {
		if b.rank > a.rank {
			return b
		}
		return a
	}
	u, s := a, b
	if a.signed {
		u, s = b, a
	}
	if u.rank >= s.rank {
		return u
	}
	if s.size > u.size {
		return s
	}
	if s.rank == 5 {
		return intCType("unsigned long long")
	}
	return intCType("unsigned long")
}

// splitStars splits a C type's spelling into its base type, without
// qualifiers, and its number of trailing stars: "const char *const *" is
// "char" and 2.
func splitStars(spelled string) (base string, stars int) {
	var words []string
	for _, f := range strings.Fields(strings.ReplaceAll(spelled, "*", " * ")) {
		switch f {
		case "const", "volatile", "restrict", "_Atomic":
		case "*":
			stars++
		default:
			if stars > 0 {
				// A word after a star ("char (*)[8]" is not split this
				// way): keep the spelling whole, without stars.
				return strings.Join(strings.Fields(spelled), " "), 0
			}
			words = append(words, f)
		}
	}
	return strings.Join(words, " "), stars
}

// typeTables resolves struct types by name (the trace's tables).
type typeTables interface {
	structType(name string) *tracepb.StructType
}

// structCType returns the ctype of the struct named name, or an error when
// the trace does not know it.
func structCType(tt typeTables, name, spelled string) (*ctype, error) {
	st := tt.structType(name)
	if st == nil {
		return nil, fmt.Errorf("the trace has no struct type %s (the program's debug information defines none by that name)", name)
	}
	return &ctype{kind: kStruct, name: spelled, size: st.Size, st: st}, nil
}

// castType resolves a cast's type.
func castType(tt typeTables, tn *TypeName) (*ctype, error) {
	var t *ctype
	switch {
	case tn.Struct != "":
		st, err := structCType(tt, tn.Struct, tn.Base)
		if err != nil {
			return nil, err
		}
		t = st
	case tn.Base == "void":
		t = tyVoid
	default:
		if _, ok := intTypes[tn.Base]; !ok {
			return nil, fmt.Errorf("unknown type %s", tn.Base)
		}
		t = intCType(tn.Base)
	}
	for range tn.Ptr {
		t = pointerTo(t)
	}
	return t, nil
}

// memberType returns the type of a leaf member of a struct from its C
// spelling in the trace (TypeName, Pointer, Pointee, Size).
func memberType(tt typeTables, m *tracepb.Member) (*ctype, error) {
	spelled, stars := splitStars(m.TypeName)
	if !m.Pointer {
		if n, ok := canonicalWords(spelled); ok {
			t := intCType(n)
			if t.size == m.Size {
				return t, nil
			}
		}
		if n, ok := typedefNames[spelled]; ok && n != "void" {
			if t := intCType(n); t.size == m.Size {
				return t, nil
			}
		}
		switch {
		case strings.Contains(spelled, "float") || strings.Contains(spelled, "double"):
			return nil, fmt.Errorf("its type is %s; only integers and pointers can be read", m.TypeName)
		case m.Size == 1 || m.Size == 2 || m.Size == 4 || m.Size == 8:
			// An enum, a typedef the table does not know: an integer of
			// the member's size, unsigned when its name says so.
			signed := !strings.Contains(spelled, "unsigned") && !strings.HasPrefix(spelled, "u")
			return &ctype{kind: kInt, name: m.TypeName, size: m.Size, signed: signed, rank: rankOfSize(m.Size)}, nil
		}
		return nil, fmt.Errorf("its type is %s of %d bytes; only integers and pointers can be read", m.TypeName, m.Size)
	}
	// A pointer: to a struct the trace knows, to an integer type, to
	// void, or to something opaque.
	var base *ctype
	switch {
	case m.Pointee != "" && tt.structType(m.Pointee) != nil:
		base, _ = structCType(tt, m.Pointee, "struct "+m.Pointee)
		if stars == 0 {
			stars = 1
		}
	case stars > 0 && !strings.ContainsAny(spelled, "()["):
		if n, ok := canonicalWords(spelled); ok {
			base = intCType(n)
		} else if n, ok := typedefNames[spelled]; ok {
			if n == "void" {
				base = tyVoid
			} else {
				base = intCType(n)
			}
		} else if strings.HasPrefix(spelled, "struct ") || strings.HasPrefix(spelled, "union ") {
			name := strings.TrimSpace(spelled[strings.IndexByte(spelled, ' ')+1:])
			if tt.structType(name) != nil {
				base, _ = structCType(tt, name, spelled)
			}
		} else if tt.structType(spelled) != nil {
			base, _ = structCType(tt, spelled, spelled)
		}
	}
	if base == nil {
		base = &ctype{kind: kOpaque, name: "?"}
		stars = 1
	}
	t := base
	for range stars {
		t = pointerTo(t)
	}
	t.name = m.TypeName
	return t, nil
}

func rankOfSize(size uint64) int {
	switch size {
	case 1:
		return 1
	case 2:
		return 2
	case 4:
		return 3
	}
	return 4
}

// part describes a flattened path inside a struct: a leaf member, or a
// prefix of leaves (a nested struct or an array).
type part struct {
	leaf   *tracepb.Member // the member, when the path names a leaf
	offset uint64          // of the leaf, or of the first leaf under the prefix
	extent uint64          // bytes from offset to the end of the last leaf
	array  bool            // the prefix's children are [0], [1], ...
	found  bool
}

// lookupPart finds path in st's flattened members.
func lookupPart(st *tracepb.StructType, path string) part {
	var p part
	lo, hi := uint64(0), uint64(0)
	for _, m := range st.Members {
		switch {
		case m.Name == path:
			return part{leaf: m, offset: m.Offset, extent: m.Size, found: true}
		case path == "" || strings.HasPrefix(m.Name, path) && (m.Name[len(path)] == '.' || m.Name[len(path)] == '['):
			if path != "" && m.Name[len(path)] == '[' {
				p.array = true
			}
			if !p.found || m.Offset < lo {
				lo = m.Offset
			}
			if !p.found || m.Offset+m.Size > hi {
				hi = m.Offset + m.Size
			}
			p.found = true
		}
	}
	p.offset, p.extent = lo, hi-lo
	return p
}

// memberList formats a struct's members for messages: its top-level
// names, arrays as "d[]".
func memberList(st *tracepb.StructType) string {
	var names []string
	seen := make(map[string]bool)
	for _, m := range st.Members {
		n := m.Name
		if i := strings.IndexAny(n, ".["); i >= 0 {
			if n[i] == '[' {
				n = n[:i] + "[]"
			} else {
				n = n[:i]
			}
		}
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	const most = 24
	if len(names) > most {
		return strings.Join(names[:most], ", ") + fmt.Sprintf(", ... (%d more)", len(names)-most)
	}
	return strings.Join(names, ", ")
}

// childList formats the names directly under path ("x, y" for s.x, s.y).
func childList(st *tracepb.StructType, path string) string {
	seen := make(map[string]bool)
	var names []string
	for _, m := range st.Members {
		if !strings.HasPrefix(m.Name, path+".") {
			continue
		}
		n := m.Name[len(path)+1:]
		if i := strings.IndexAny(n, ".["); i >= 0 {
			if n[i] == '[' {
				n = n[:i] + "[]"
			} else {
				n = n[:i]
			}
		}
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
