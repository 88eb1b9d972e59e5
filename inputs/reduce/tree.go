package reduce

import (
	"fmt"
	"slices"
)

// Tree is an input decomposition tree (step 2 of IDTHDD, Wang's
// dissertation, chapter 4): the root stands for the failure's wrong value
// and is labelled with every entity of the input, each node's children
// split its label into disjoint parts, and the leaves are single entities,
// each read by the program where the tree's edge into it says. Level k
// (the nodes at depth k, with the leaves of upper levels counted again)
// partitions the input.
type Tree struct {
	Root *Node
}

// Node is one node of a Tree.
type Node struct {
	// Entities is the node's label: the entities (indices, ascending)
	// reachable from it through the tree's edges.
	Entities []int
	// Children are the node's children, in the order of their first
	// entity; none for a leaf.
	Children []*Node
	// Inst is the instruction instance the node stands for (-1 for the
	// criterion's location and for a leaf, an entity).
	Inst int64
}

// TreeStats describe a Tree's shape.
type TreeStats struct {
	// Nodes, Leaves and Depth (the deepest level; the root is level 0).
	Nodes  int `json:"nodes"`
	Leaves int `json:"leaves"`
	Depth  int `json:"depth"`
	// Width is the number of nodes per level.
	Width []int `json:"width"`
}

// Levels returns the tree's nodes by depth (levels[0] is the root), each
// level in the order of the nodes' first entities.
func (t *Tree) Levels() [][]*Node {
	if t == nil || t.Root == nil {
		return nil
	}
	var out [][]*Node
	level := []*Node{t.Root}
	for len(level) > 0 {
		slices.SortFunc(level, func(a, b *Node) int { return a.Entities[0] - b.Entities[0] })
		out = append(out, level)
		var next []*Node
		for _, n := range level {
			next = append(next, n.Children...)
		}
		level = next
	}
	return out
}

// Stats returns the tree's shape.
func (t *Tree) Stats() *TreeStats {
	st := &TreeStats{}
	for d, l := range t.Levels() {
		st.Depth = d
		st.Width = append(st.Width, len(l))
		st.Nodes += len(l)
		for _, n := range l {
			if len(n.Children) == 0 {
				st.Leaves++
			}
		}
	}
	return st
}

// Check verifies the tree's invariants for an input of the entities want
// (ascending): the root is labelled with want; a leaf has one entity; an
// internal node has at least two children whose labels are disjoint and
// make its own. Then each level's labels, with the upper levels' leaves,
// partition want.
func (t *Tree) Check(want []int) error {
	if t == nil || t.Root == nil {
		return fmt.Errorf("%w: no root", errTree)
	}
	if !slices.Equal(t.Root.Entities, want) {
		return fmt.Errorf("%w: the root holds %d entities, the input %d", errTree, len(t.Root.Entities), len(want))
	}
	var check func(n *Node) error
	check = func(n *Node) error {
		if len(n.Entities) == 0 {
			return fmt.Errorf("%w: a node without entities", errTree)
		}
		if !slices.IsSorted(n.Entities) {
			return fmt.Errorf("%w: a label out of order", errTree)
		}
		if len(n.Children) == 0 {
			if len(n.Entities) != 1 {
				return fmt.Errorf("%w: a leaf with %d entities", errTree, len(n.Entities))
			}
			return nil
		}
		if len(n.Children) == 1 {
			return fmt.Errorf("%w: a node with one child (chains are collapsed)", errTree)
		}
		var union []int
		for _, c := range n.Children {
			if err := check(c); err != nil {
				return err
			}
			union = append(union, c.Entities...)
		}
		slices.Sort(union)
		if !slices.Equal(union, n.Entities) || len(slices.Compact(union)) != len(n.Entities) {
			return fmt.Errorf("%w: the children of a node do not split its label", errTree)
		}
		return nil
	}
	return check(t.Root)
}

// DepGraph is what a decomposition tree is built from: the dependences of
// a failure's wrong value, as a backward dynamic slice gives them.
type DepGraph struct {
	// Roots are the criterion's instances (the wrong value's).
	Roots []int64
	// Deps are, for each instance, the instances it depends on (data
	// and control), in order.
	Deps map[int64][]int64
	// Reads are, for each instance, the entities it read directly from
	// what an input system call brought in, in order.
	Reads map[int64][]int
}

// BuildTree builds the input decomposition tree of the entities want
// (ascending) from g: a breadth-first spanning tree of the dependences
// from the roots, where an entity becomes a leaf under the first instance
// the search meets that read it; the search stops once every entity of
// want has its place. The branches that reach no entity of want are cut,
// chains of single children are collapsed, and each node is labelled with
// the entities below it, so the labels of one level are disjoint. Entities
// of want that no dependence reaches hang from the root. Nil when want is
// empty.
func BuildTree(g *DepGraph, want []int) *Tree {
	if len(want) == 0 {
		return nil
	}
	wanted := make(map[int]bool, len(want))
	for _, e := range want {
		wanted[e] = true
	}
	type bnode struct {
		inst     int64
		entity   int // -1 for an instance
		children []*bnode
	}
	root := &bnode{inst: -1, entity: -1}
	placed := make(map[int]bool, len(want))
	seen := make(map[int64]bool)
	queue := make([]*bnode, 0, len(g.Roots))
	for _, r := range g.Roots {
		if !seen[r] {
			seen[r] = true
			b := &bnode{inst: r, entity: -1}
			root.children = append(root.children, b)
			queue = append(queue, b)
		}
	}
	for len(queue) > 0 && len(placed) < len(want) {
		u := queue[0]
		queue = queue[1:]
		for _, e := range g.Reads[u.inst] {
			if wanted[e] && !placed[e] {
				placed[e] = true
				u.children = append(u.children, &bnode{inst: -1, entity: e})
			}
		}
		for _, d := range g.Deps[u.inst] {
			if !seen[d] {
				seen[d] = true
				b := &bnode{inst: d, entity: -1}
				u.children = append(u.children, b)
				queue = append(queue, b)
			}
		}
	}
	for _, e := range want {
		if !placed[e] {
			root.children = append(root.children, &bnode{inst: -1, entity: e})
		}
	}
	// Cut, collapse and label, bottom up (iteratively: chains can be
	// long).
	type frame struct {
		b    *bnode
		next int
		kids []*Node
	}
	var top *Node
	stack := []*frame{{b: root}}
	for len(stack) > 0 {
		f := stack[len(stack)-1]
		if f.next < len(f.b.children) {
			stack = append(stack, &frame{b: f.b.children[f.next]})
			f.next++
			continue
		}
		stack = stack[:len(stack)-1]
		var n *Node
		switch {
		case f.b.entity >= 0:
			n = &Node{Entities: []int{f.b.entity}, Inst: -1}
		case len(f.kids) == 1:
			n = f.kids[0] // a chain: the child stands for it
		case len(f.kids) > 1:
			n = &Node{Inst: f.b.inst, Children: f.kids}
			for _, k := range f.kids {
				n.Entities = append(n.Entities, k.Entities...)
			}
			slices.Sort(n.Entities)
			slices.SortFunc(n.Children, func(a, b *Node) int { return a.Entities[0] - b.Entities[0] })
		}
		if len(stack) == 0 {
			top = n
		} else if n != nil {
			p := stack[len(stack)-1]
			p.kids = append(p.kids, n)
		}
	}
	return &Tree{Root: top}
}
