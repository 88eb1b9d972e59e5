package debuginfo

import (
	"debug/dwarf"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/mgtrace/mgtrace/schema/tracepb"
	"google.golang.org/protobuf/proto"
)

// MaxSlots is the most leaf slots StructTypes gives one type. Slots past
// it (large arrays, mostly) are left out; the type's Size still covers
// them.
const MaxSlots = 4096

// maxTypeDepth bounds the nesting StructTypes follows, against cyclic
// (corrupt) type graphs.
const maxTypeDepth = 64

// structDef is one flattened struct type with the path of the file that
// declares it.
type structDef struct {
	pb       *tracepb.StructType
	declFile string
}

// StructTypes returns every named struct, union and class type that the
// module's DWARF defines (declarations alone do not count), flattened into
// leaf slots in offset order:
//
//   - nested structs and unions are expanded with dotted names ("inner.x");
//     members of anonymous struct or union members keep their own names;
//   - arrays are expanded element by element ("a[0]", "a[1]", "m[1][2]",
//     "arr[1].next"); flexible and zero-length arrays give no slot;
//   - consecutive bit-fields that share a storage unit give one slot, named
//     after the first of them, covering the unit (the aligned unit of the
//     bit-field's declared type, shrunk so it does not overlap the members
//     around it);
//   - a pointer slot has Pointer set, and Pointee is the name of the struct
//     type it points to, seen through typedefs and qualifiers (empty for
//     pointers to anything else, pointers to pointers included);
//   - TypeName is the C spelling of the slot's declared type ("int",
//     "struct node *", "size_t", "char (*)[8]").
//
// A type gets at most MaxSlots slots. "typedef struct {...} name" gives a
// type named after the typedef; a typedef of a named struct
// ("typedef struct list list_t") also gives its layout under the typedef's
// name. A name defined identically in several compilation units appears
// once; when definitions differ, the first one in .debug_info order wins.
// Names are the DWARF names, not qualified by C++ namespaces. Line is the
// declaration line; FileId is left 0 (Tables fills it in).
//
// The result is computed once and cached; callers get their own copies.
func (m *Module) StructTypes() []*tracepb.StructType {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.loadStructs()
	out := make([]*tracepb.StructType, len(m.structs))
	for i, d := range m.structs {
		out[i] = proto.Clone(d.pb).(*tracepb.StructType)
	}
	return out
}

// loadStructs fills m.structs. The caller holds m.mu.
func (m *Module) loadStructs() {
	if m.structsDone {
		return
	}
	m.structsDone = true
	m.loadDWARF()
	if m.dw == nil || m.closed {
		return
	}
	if err := m.walkStructs(); err != nil {
		m.warn(fmt.Errorf("read %s DWARF types: %w", m.path, err))
	}
}

// walkStructs visits every DIE, flattening struct definitions and typedefs
// of them.
func (m *Module) walkStructs() (err error) {
	defer dwarfErr(&err)
	// A name seen once is not looked at again: identical or not, the
	// first definition stays.
	byName := make(map[string]bool)
	var files []string // the current unit's file table
	r := m.dw.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			return err
		}
		if e == nil {
			return nil
		}
		var name string
		var st *dwarf.StructType
		switch e.Tag {
		case dwarf.TagCompileUnit, dwarf.TagPartialUnit:
			files = m.unitFiles(e)
			continue
		case dwarf.TagStructType, dwarf.TagUnionType, dwarf.TagClassType:
			name, _ = e.Val(dwarf.AttrName).(string)
			if name == "" || byName[name] || e.Val(dwarf.AttrDeclaration) != nil {
				continue
			}
			t, err := m.safeType(e.Offset)
			if err != nil {
				m.warn(fmt.Errorf("read %s DWARF type %q at %#x: %w", m.path, name, e.Offset, err))
				continue
			}
			st, _ = t.(*dwarf.StructType)
		case dwarf.TagTypedef:
			name, _ = e.Val(dwarf.AttrName).(string)
			if name == "" || byName[name] {
				continue
			}
			t, err := m.safeType(e.Offset)
			if err != nil {
				m.warn(fmt.Errorf("read %s DWARF typedef %q at %#x: %w", m.path, name, e.Offset, err))
				continue
			}
			if td, ok := t.(*dwarf.TypedefType); ok {
				st, _ = stripQual(td.Type).(*dwarf.StructType)
			}
		default:
			continue
		}
		if st == nil || st.Incomplete || st.ByteSize < 0 {
			continue
		}
		pb := flattenStruct(name, st)
		if l, ok := e.Val(dwarf.AttrDeclLine).(int64); ok && l > 0 && l < 1<<32 {
			pb.Line = uint32(l)
		}
		decl := ""
		if f, ok := e.Val(dwarf.AttrDeclFile).(int64); ok && f >= 0 && f < int64(len(files)) {
			decl = files[f]
		}
		byName[name] = true
		m.structs = append(m.structs, structDef{pb: pb, declFile: decl})
	}
}

// unitFiles returns the file names of a unit's line table, indexed as
// DW_AT_decl_file counts.
func (m *Module) unitFiles(cu *dwarf.Entry) (names []string) {
	defer func() {
		if recover() != nil {
			names = nil
		}
	}()
	lr, err := m.dw.LineReader(cu)
	if err != nil || lr == nil {
		return nil
	}
	for _, f := range lr.Files() {
		if f == nil {
			names = append(names, "")
		} else {
			names = append(names, f.Name)
		}
	}
	return names
}

// safeType is dwarf.Data.Type with panics turned into errors.
func (m *Module) safeType(off dwarf.Offset) (t dwarf.Type, err error) {
	defer dwarfErr(&err)
	return m.dw.Type(off)
}

// stripQual removes typedefs and const/volatile/restrict qualifiers.
func stripQual(t dwarf.Type) dwarf.Type {
	for range maxTypeDepth {
		switch x := t.(type) {
		case *dwarf.TypedefType:
			t = x.Type
		case *dwarf.QualType:
			t = x.Type
		default:
			return t
		}
	}
	return t
}

// flattener accumulates the leaf slots of one struct type.
type flattener struct {
	slots []*tracepb.Member
	full  bool
}

// flattenStruct lays out st under the given name.
func flattenStruct(name string, st *dwarf.StructType) *tracepb.StructType {
	f := &flattener{}
	f.fields(st, 0, "", 0)
	sort.SliceStable(f.slots, func(i, j int) bool { return f.slots[i].Offset < f.slots[j].Offset })
	size := uint64(st.ByteSize)
	members := f.slots[:0]
	for _, s := range f.slots {
		if s.Offset+s.Size <= size && s.Offset+s.Size >= s.Offset {
			members = append(members, s)
		}
	}
	return &tracepb.StructType{Name: name, Size: size, Kind: st.Kind, Members: members}
}

// add appends one slot unless the type is full.
func (f *flattener) add(s *tracepb.Member) {
	if len(f.slots) >= MaxSlots {
		f.full = true
		return
	}
	f.slots = append(f.slots, s)
}

// join names a member of the aggregate called prefix.
func join(prefix, name string) string {
	switch {
	case name == "":
		return prefix
	case prefix == "":
		return name
	}
	return prefix + "." + name
}

// fields flattens the members of st, which starts at byte base of the
// outermost type.
func (f *flattener) fields(st *dwarf.StructType, base uint64, prefix string, depth int) {
	if depth > maxTypeDepth {
		return
	}
	var lastBFLo, lastBFHi int64 = -1, -1
	prevEnd := int64(0) // end of the previous member that is not a bit-field
	for i, fld := range st.Field {
		if f.full {
			return
		}
		if fld.BitSize <= 0 {
			f.value(fld.Type, base+uint64(fld.ByteOffset), join(prefix, fld.Name), depth+1)
			if sz := fld.Type.Size(); sz > 0 && st.Kind != "union" {
				prevEnd = fld.ByteOffset + sz
			}
			continue
		}
		if fld.Name == "" {
			continue // unnamed padding bit-field
		}
		nextStart := st.ByteSize
		if st.Kind == "union" {
			prevEnd = 0
		} else {
			for _, nf := range st.Field[i+1:] {
				if nf.BitSize <= 0 {
					nextStart = nf.ByteOffset
					break
				}
			}
		}
		lo, hi := bitFieldUnit(fld, prevEnd, nextStart)
		if lo < 0 || (lo == lastBFLo && hi == lastBFHi) {
			continue
		}
		lastBFLo, lastBFHi = lo, hi
		f.add(&tracepb.Member{
			Name:     join(prefix, fld.Name),
			Offset:   base + uint64(lo),
			Size:     uint64(hi - lo),
			TypeName: cType(fld.Type, ""),
		})
	}
}

// bitFieldUnit returns the byte range [lo, hi) of the storage unit holding
// bit-field fld, relative to its struct, clipped to [prevEnd, nextStart);
// lo < 0 when the field's position makes no sense.
func bitFieldUnit(fld *dwarf.StructField, prevEnd, nextStart int64) (lo, hi int64) {
	var bit int64
	if fld.ByteSize > 0 { // DWARF 2/3 style: DW_AT_bit_offset from the unit's MSB
		bit = fld.ByteOffset*8 + fld.ByteSize*8 - fld.BitOffset - fld.BitSize
	} else {
		bit = fld.ByteOffset*8 + fld.DataBitOffset
	}
	if bit < 0 {
		return -1, -1
	}
	first, last := bit/8, (bit+fld.BitSize+7)/8
	unit := fld.Type.Size()
	if unit <= 0 {
		unit = fld.ByteSize
	}
	if unit <= 0 {
		return first, last
	}
	lo = bit / (unit * 8) * unit
	hi = lo + unit
	lo, hi = max(lo, prevEnd), min(hi, nextStart)
	if lo > first || hi < last {
		return first, last
	}
	return lo, hi
}

// value flattens one value of type t at byte off, named name.
func (f *flattener) value(t dwarf.Type, off uint64, name string, depth int) {
	if f.full || depth > maxTypeDepth || t == nil {
		return
	}
	switch u := stripQual(t).(type) {
	case *dwarf.StructType:
		f.fields(u, off, name, depth+1)
		return
	case *dwarf.ArrayType:
		stride := u.StrideBitSize / 8
		if stride <= 0 && u.Type != nil {
			stride = u.Type.Size()
		}
		if u.Count <= 0 || stride <= 0 {
			return
		}
		for i := int64(0); i < u.Count && !f.full; i++ {
			f.value(u.Type, off+uint64(i*stride), name+"["+strconv.FormatInt(i, 10)+"]", depth+1)
		}
		return
	}
	_, isPtr := stripQual(t).(*dwarf.PtrType)
	size := t.Size()
	if isPtr && size <= 0 {
		size = 8
	}
	if size <= 0 {
		return
	}
	s := &tracepb.Member{Name: name, Offset: off, Size: uint64(size), Pointer: isPtr, TypeName: cType(t, "")}
	if isPtr {
		s.Pointee = pointee(stripQual(t).(*dwarf.PtrType).Type)
	}
	f.add(s)
}

// pointee returns the name of the struct type t is, through typedefs and
// qualifiers: the struct's tag, or for an anonymous struct the nearest
// typedef naming it. "" when t is not a struct.
func pointee(t dwarf.Type) string {
	typedef := ""
	for range maxTypeDepth {
		switch x := t.(type) {
		case *dwarf.TypedefType:
			typedef = x.Name
			t = x.Type
			continue
		case *dwarf.QualType:
			t = x.Type
			continue
		case *dwarf.StructType:
			if x.StructName != "" {
				return x.StructName
			}
			return typedef
		}
		return ""
	}
	return ""
}

// cType spells type t in C around the declarator inner ("" for an abstract
// declarator): cType(int*, "") = "int *", cType(char[4], "*") =
// "char (*)[4]".
func cType(t dwarf.Type, inner string) string {
	return spell(t, inner, 0)
}

func spell(t dwarf.Type, inner string, depth int) string {
	around := func(base string) string {
		if inner == "" {
			return base
		}
		return base + " " + inner
	}
	if depth > maxTypeDepth {
		return around("?")
	}
	switch x := t.(type) {
	case nil:
		return around("void")
	case *dwarf.VoidType:
		return around("void")
	case *dwarf.TypedefType:
		return around(x.Name)
	case *dwarf.StructType:
		if x.StructName == "" {
			return around(x.Kind + " {...}")
		}
		return around(x.Kind + " " + x.StructName)
	case *dwarf.EnumType:
		if x.EnumName == "" {
			return around("enum {...}")
		}
		return around("enum " + x.EnumName)
	case *dwarf.PtrType:
		switch x.Type.(type) {
		case *dwarf.ArrayType, *dwarf.FuncType:
			return spell(x.Type, "(*"+inner+")", depth+1)
		}
		return spell(x.Type, "*"+inner, depth+1)
	case *dwarf.QualType:
		switch x.Type.(type) {
		case *dwarf.PtrType:
			return spell(x.Type, strings.TrimSpace(x.Qual+" "+inner), depth+1)
		case *dwarf.ArrayType:
			return spell(x.Type, inner, depth+1)
		}
		return x.Qual + " " + spell(x.Type, inner, depth+1)
	case *dwarf.ArrayType:
		n := ""
		if x.Count >= 0 {
			n = strconv.FormatInt(x.Count, 10)
		}
		return spell(x.Type, inner+"["+n+"]", depth+1)
	case *dwarf.FuncType:
		params := make([]string, len(x.ParamType))
		for i, p := range x.ParamType {
			params[i] = spell(p, "", depth+1)
		}
		ps := strings.Join(params, ", ")
		if len(params) == 0 {
			ps = "void"
		}
		return spell(x.ReturnType, inner+"("+ps+")", depth+1)
	case *dwarf.DotDotDotType:
		return "..."
	}
	if name := t.Common().Name; name != "" {
		return around(name)
	}
	return around(t.String())
}
