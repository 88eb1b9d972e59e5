package slice

import (
	"testing"

	"github.com/mgtrace/mgtrace/slice/insn"
)

// graph builds a funcGraph from successor lists; -1 stands for the exit.
func graph(succ [][]int) *funcGraph {
	g := &funcGraph{index: map[uint64]int{}}
	for i, ss := range succ {
		n := cfgNode{pc: uint64(0x100 + i)}
		for _, s := range ss {
			if s < 0 {
				s = len(succ)
			}
			n.succ = append(n.succ, s)
		}
		g.index[n.pc] = i
		g.nodes = append(g.nodes, n)
	}
	return g
}

func TestPostDominatorTree(t *testing.T) {
	const x = -1 // the exit
	tests := []struct {
		name string
		succ [][]int
		want []int // immediate post-dominator; len(succ) = exit
	}{
		{"straight", [][]int{{1}, {2}, {x}}, []int{1, 2, 3}},
		{"if-then", [][]int{{1, 2}, {2}, {x}}, []int{2, 2, 3}},
		{"if-then-else", [][]int{{1, 2}, {3}, {3}, {x}}, []int{3, 3, 3, 4}},
		{"early return", [][]int{{1, 2}, {x}, {x}}, []int{3, 3, 3}},
		{"loop", [][]int{{1}, {2, 3}, {1}, {x}}, []int{1, 3, 1, 4}},
		{"switch", [][]int{{1, 2, 3}, {4}, {4}, {4}, {x}}, []int{4, 4, 4, 4, 5}},
		{"no way out", [][]int{{1, 2}, {1}, {x}}, []int{2, -1, 3}},
	}
	for _, tt := range tests {
		got := graph(tt.succ).postDominatorTree()
		for i := range tt.want {
			if got[i] != tt.want[i] {
				t.Errorf("%s: ipdom(%d) = %d, want %d (all %v)", tt.name, i, got[i], tt.want[i], got)
			}
		}
	}
}

func TestIsPadding(t *testing.T) {
	tests := []struct {
		info insn.Info
		want bool
	}{
		{insn.Info{Len: 1}, true},
		{insn.Info{Len: 1, Class: insn.Halt}, true},
		{insn.Info{Len: 3, Defs: 1 << 1}, false},
		{insn.Info{Len: 2, Class: insn.Jump}, false},
	}
	for _, tt := range tests {
		if got := isPadding(tt.info); got != tt.want {
			t.Errorf("isPadding(%+v) = %v, want %v", tt.info, got, tt.want)
		}
	}
}
