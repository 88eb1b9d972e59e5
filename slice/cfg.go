package slice

import (
	"sort"

	"github.com/mgtrace/mgtrace/slice/insn"
)

// exitPC stands for a function's exit in post-dominator results: no
// instruction is at address 0.
const exitPC = 0

// cfgNode is one instruction of a function's control-flow graph.
type cfgNode struct {
	pc   uint64
	info insn.Info
	succ []int // node indices; exit is len(nodes)
}

// funcGraph is the control-flow graph of one function, as far as the trace
// shows it: the whole function when the trace carries its code, otherwise
// the instructions that ran.
type funcGraph struct {
	nodes []cfgNode
	index map[uint64]int // pc -> node
}

// postDominators computes, for every executed instruction, whether it is
// a branch and its immediate post-dominator (an address, exitPC for the
// function's exit).
func (r *Run) postDominators() (branch []bool, ipdom []uint64) {
	branch = make([]bool, len(r.Statics))
	ipdom = make([]uint64, len(r.Statics))
	byFunc := make(map[uint32][]uint32)
	for s := range r.Statics {
		f := r.Statics[s].Function
		byFunc[f] = append(byFunc[f], uint32(s))
	}
	funcs := make([]uint32, 0, len(byFunc))
	for f := range byFunc {
		funcs = append(funcs, f)
	}
	sort.Slice(funcs, func(i, j int) bool { return funcs[i] < funcs[j] })
	for _, f := range funcs {
		g := r.buildGraph(f, byFunc[f])
		idom := g.postDominatorTree()
		for _, s := range byFunc[f] {
			n, ok := g.index[r.Statics[s].PC]
			if !ok {
				continue
			}
			if d := idom[n]; d >= 0 && d < len(g.nodes) {
				ipdom[s] = g.nodes[d].pc
			}
			succ := g.nodes[n].succ
			switch r.Statics[s].Info.Class {
			case insn.CondJump:
				branch[s] = distinct(succ) > 1
			case insn.IndirectJump:
				branch[s] = distinct(succ) > 1
			}
		}
	}
	return branch, ipdom
}

func distinct(xs []int) int {
	n := 0
	for i, x := range xs {
		seen := false
		for _, y := range xs[:i] {
			if y == x {
				seen = true
				break
			}
		}
		if !seen {
			n++
		}
	}
	return n
}

// buildGraph makes the graph of function f from its code when the trace
// has it, else from the instructions that ran (statics).
func (r *Run) buildGraph(f uint32, statics []uint32) *funcGraph {
	g := &funcGraph{index: make(map[uint64]int)}
	full := false
	if f != 0 {
		if fn := r.Tables.Functions[f]; fn != nil {
			full = g.decodeAll(fn.Low, functionCode(fn))
		}
		for _, s := range statics {
			if _, ok := g.index[r.Statics[s].PC]; !ok && full {
				full = false // the sweep lost the instruction boundaries
			}
		}
	}
	if !full {
		g.nodes = g.nodes[:0]
		g.index = make(map[uint64]int)
		ss := append([]uint32(nil), statics...)
		sort.Slice(ss, func(i, j int) bool { return r.Statics[ss[i]].PC < r.Statics[ss[j]].PC })
		for _, s := range ss {
			g.index[r.Statics[s].PC] = len(g.nodes)
			g.nodes = append(g.nodes, cfgNode{pc: r.Statics[s].PC, info: r.Statics[s].Info})
		}
		if r.Regions != nil {
			// A region trace: the instructions of the function that ran
			// outside the regions are in the tables too, so that its
			// graph is the one the whole run shows.
			for _, pc := range r.tableCode()[f] {
				if _, ok := g.index[pc]; ok {
					continue
				}
				in := r.Tables.Instructions[pc]
				info, err := insn.Decode(pc, in.Code)
				if err != nil || info.Len != len(in.Code) {
					info = insn.Info{Len: len(in.Code)}
				}
				g.index[pc] = len(g.nodes)
				g.nodes = append(g.nodes, cfgNode{pc: pc, info: info})
			}
			sort.Slice(g.nodes, func(i, j int) bool { return g.nodes[i].pc < g.nodes[j].pc })
			for i := range g.nodes {
				g.index[g.nodes[i].pc] = i
			}
		}
	}
	exit := len(g.nodes)
	node := func(pc uint64) int {
		if n, ok := g.index[pc]; ok {
			return n
		}
		return exit
	}
	// Targets observed at the function's indirect jumps.
	observed := make(map[uint64][]int)
	for _, s := range statics {
		for _, t := range r.indirect[s] {
			observed[r.Statics[s].PC] = append(observed[r.Statics[s].PC], node(r.Statics[t].PC))
		}
	}
	hasPred := make([]bool, len(g.nodes)+1)
	for i := range g.nodes {
		n := &g.nodes[i]
		next := n.pc + uint64(n.info.Len)
		switch n.info.Class {
		case insn.Plain, insn.Call, insn.IndirectCall, insn.Syscall:
			n.succ = []int{node(next)}
		case insn.CondJump:
			n.succ = []int{node(next), node(n.info.Target)}
		case insn.Jump:
			n.succ = []int{node(n.info.Target)}
		case insn.IndirectJump:
			n.succ = append([]int(nil), observed[n.pc]...)
			if !full {
				// Unseen targets are unknown: they may leave the function.
				n.succ = append(n.succ, exit)
			}
		default: // Return, Halt
			n.succ = []int{exit}
		}
		if n.info.Len == 0 {
			n.succ = []int{exit}
		}
		if n.info.Class != insn.IndirectJump {
			for _, s := range n.succ {
				hasPred[s] = true
			}
		}
	}
	if full {
		// A jump table's cases are reached only through it: the blocks
		// that nothing else reaches are the possible targets of the
		// function's indirect jumps that stay in it.
		var orphans []int
		for i := 1; i < len(g.nodes); i++ {
			if !hasPred[i] && !isPadding(g.nodes[i].info) {
				orphans = append(orphans, i)
			}
		}
		for i := range g.nodes {
			n := &g.nodes[i]
			if n.info.Class != insn.IndirectJump {
				continue
			}
			inside := false
			for _, s := range n.succ {
				if s != exit {
					inside = true
				}
			}
			if inside || len(n.succ) == 0 {
				n.succ = append(n.succ, orphans...)
			}
			if len(n.succ) == 0 {
				n.succ = []int{exit}
			}
		}
	}
	return g
}

// tableCode returns the pcs of the tables' instructions by function (0:
// those of no known function), built once.
func (r *Run) tableCode() map[uint32][]uint64 {
	if r.byFunction == nil {
		r.byFunction = make(map[uint32][]uint64)
		for pc, in := range r.Tables.Instructions {
			r.byFunction[in.FunctionId] = append(r.byFunction[in.FunctionId], pc)
		}
	}
	return r.byFunction
}

// isPadding says whether an instruction is alignment padding (nop, int3):
// padding after a function's last jump has no predecessor but is not a
// jump-table target.
func isPadding(info insn.Info) bool {
	return info.Class == insn.Halt || (info.Uses == 0 && info.Defs == 0 && info.Class == insn.Plain && info.Base == 0)
}

// decodeAll fills the graph with every instruction of a function's code,
// decoded in a linear sweep. It returns false when the code is missing or
// does not decode to the end.
func (g *funcGraph) decodeAll(low uint64, code []byte) bool {
	if len(code) == 0 {
		return false
	}
	for off := 0; off < len(code); {
		end := off + 15
		if end > len(code) {
			end = len(code)
		}
		info, err := insn.Decode(low+uint64(off), code[off:end])
		if err != nil || info.Len == 0 {
			return false
		}
		g.index[low+uint64(off)] = len(g.nodes)
		g.nodes = append(g.nodes, cfgNode{pc: low + uint64(off), info: info})
		off += info.Len
	}
	return true
}

// postDominatorTree returns each node's immediate post-dominator (a node
// index, len(nodes) for the exit, -1 when the node cannot reach the exit)
// by the iterative algorithm of Cooper, Harvey and Kennedy on the reversed
// graph.
func (g *funcGraph) postDominatorTree() []int {
	n := len(g.nodes)
	exit := n
	// Predecessors in the reversed graph are the successors; walk the
	// reversed graph from the exit: its successors are the predecessors.
	preds := make([][]int, n+1)
	for i := range g.nodes {
		for _, s := range g.nodes[i].succ {
			preds[s] = append(preds[s], i)
		}
	}
	order := make([]int, 0, n+1) // postorder of the reversed graph
	num := make([]int, n+1)      // postorder number, -1 = unreached
	for i := range num {
		num[i] = -1
	}
	visited := make([]bool, n+1)
	type frame struct{ v, k int }
	stack := []frame{{exit, 0}}
	visited[exit] = true
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.k < len(preds[top.v]) {
			w := preds[top.v][top.k]
			top.k++
			if !visited[w] {
				visited[w] = true
				stack = append(stack, frame{w, 0})
			}
			continue
		}
		num[top.v] = len(order)
		order = append(order, top.v)
		stack = stack[:len(stack)-1]
	}
	idom := make([]int, n+1)
	for i := range idom {
		idom[i] = -1
	}
	idom[exit] = exit
	intersect := func(a, b int) int {
		for a != b {
			for num[a] < num[b] {
				a = idom[a]
			}
			for num[b] < num[a] {
				b = idom[b]
			}
		}
		return a
	}
	for changed := true; changed; {
		changed = false
		for k := len(order) - 1; k >= 0; k-- {
			v := order[k]
			if v == exit {
				continue
			}
			nd := -1
			for _, s := range g.nodes[v].succ {
				if idom[s] == -1 {
					continue
				}
				if nd == -1 {
					nd = s
				} else {
					nd = intersect(s, nd)
				}
			}
			if nd != -1 && idom[v] != nd {
				idom[v] = nd
				changed = true
			}
		}
	}
	return idom[:n]
}
