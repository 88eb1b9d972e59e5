package spec

import (
	"fmt"
	"strconv"
	"strings"
)

// String formats the declaration as a statement: `qdtree FIELD 9 EDGE 5;`
// or `ARRAY shard OF 8;` (`ARRAY bucket OF 8 EDGE;`).
func (d *TypeDecl) String() string {
	if d.Array {
		if d.EdgeSlots {
			return fmt.Sprintf("ARRAY %s OF %d EDGE;", d.Name, d.SlotSize)
		}
		if d.SlotSize == 4 {
			return fmt.Sprintf("ARRAY %s;", d.Name)
		}
		return fmt.Sprintf("ARRAY %s OF %d;", d.Name, d.SlotSize)
	}
	return fmt.Sprintf("%s FIELD %d EDGE %d;", d.Name, d.Fields, d.Edges)
}

// String formats the declaration as a statement: `CONST BLACK = 1;`.
func (d *ConstDecl) String() string { return fmt.Sprintf("CONST %s = %d;", d.Name, d.Value) }

// String formats the binding as a statement: `qdtree ALLOC qdtree.c:19, split;`.
func (b *Binding) String() string {
	sites := make([]string, len(b.Sites))
	for i, s := range b.Sites {
		sites[i] = s.String()
	}
	return fmt.Sprintf("%s ALLOC %s;", b.Type, strings.Join(sites, ", "))
}

// String formats the statement: `task LINK 3, 5;`.
func (d *LinkDecl) String() string {
	slots := make([]string, len(d.Slots))
	for i, s := range d.Slots {
		slots[i] = strconv.Itoa(s.Slot)
	}
	return fmt.Sprintf("%s LINK %s;", d.Type, strings.Join(slots, ", "))
}

// String formats the statement: `lnode FREE pool_put;`.
func (d *FreeDecl) String() string {
	fns := make([]string, len(d.Funcs))
	for i, s := range d.Funcs {
		fns[i] = s.String()
	}
	return fmt.Sprintf("%s FREE %s;", d.Type, strings.Join(fns, ", "))
}

// String formats the variable declaration: `qdtree X;`.
func (v VarDecl) String() string { return fmt.Sprintf("%s %s;", v.Type, v.Name) }

// String formats the assignment: `X.HEIGHT = 0`.
func (a *Assign) String() string { return fmt.Sprintf("%s.%s = %s", a.Var, a.Attr, a.Value) }

// String formats the rule: its declarations, then `guard => a || a;` or
// `a;`.
func (r *Rule) String() string {
	var b strings.Builder
	writeVars(&b, r.Vars)
	if r.Guard != nil {
		fmt.Fprintf(&b, "%s => %s || %s;", r.Guard, r.Then, r.Else)
	} else {
		fmt.Fprintf(&b, "%s;", r.Then)
	}
	return b.String()
}

// String formats the attribute declaration followed by its rule, on two
// lines: `avltree.HEIGHT;` then `avltree X; ...`.
func (a *AttrDecl) String() string {
	s := fmt.Sprintf("%s.%s;", a.Type, a.Name)
	if a.HasDefault {
		s = fmt.Sprintf("%s.%s DEFAULT %d;", a.Type, a.Name, a.Default)
	}
	if a.Rule != nil {
		s += "\n" + a.Rule.String()
	}
	return s
}

// String formats the loop: `for I in 0 to 7`.
func (r *Range) String() string { return fmt.Sprintf("for %s in %d to %d", r.Var, r.From, r.To) }

// String formats the constraint from its parts (Text keeps the source):
// `qdtree X; qdtree Y; (X -> Y) => (X.OUTDEGREE == 4);`.
func (c *Constraint) String() string {
	var b strings.Builder
	writeVars(&b, c.Vars)
	if c.Range != nil {
		fmt.Fprintf(&b, "%s, ", c.Range)
	}
	if c.Guard != nil {
		fmt.Fprintf(&b, "%s => ", c.Guard)
	}
	fmt.Fprintf(&b, "%s;", c.Body)
	return b.String()
}

func writeVars(b *strings.Builder, vars []VarDecl) {
	for _, v := range vars {
		b.WriteString(v.String())
		b.WriteByte(' ')
	}
}

// String formats the whole spec, one statement per line, grouped: types,
// constants, bindings, FREE statements, LINK statements, C-points, attributes with their rules, then the
// constraints in order. Parsing the result gives the same spec.
func (s *Spec) String() string {
	var b strings.Builder
	for _, d := range s.Types {
		fmt.Fprintln(&b, d)
	}
	for _, d := range s.Consts {
		fmt.Fprintln(&b, d)
	}
	for _, d := range s.Bindings {
		fmt.Fprintln(&b, d)
	}
	for _, d := range s.Frees {
		fmt.Fprintln(&b, d)
	}
	for _, d := range s.Links {
		fmt.Fprintln(&b, d)
	}
	for _, d := range s.CPoints {
		fmt.Fprintf(&b, "CPOINT %s;\n", d)
	}
	for _, d := range s.Attrs {
		fmt.Fprintln(&b, d)
	}
	for _, d := range s.Constraints {
		fmt.Fprintln(&b, d)
	}
	return b.String()
}
