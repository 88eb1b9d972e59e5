package reduce

import (
	"fmt"
	"strings"

	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/slice"
)

func dumpTree(n *Node, data []byte, depth int, b *strings.Builder) {
	var s []byte
	for _, e := range n.Entities {
		s = append(s, data[e])
	}
	fmt.Fprintf(b, "%s%s (inst %d)\n", strings.Repeat("  ", depth), s, n.Inst)
	for _, c := range n.Children {
		dumpTree(c, data, depth+1, b)
	}
}

func lineOf(tracePath string) func(int64) string {
	tr, _ := schema.Open(tracePath)
	defer tr.Close()
	run, _ := slice.Load(tr, slice.LoadOptions{})
	return func(i int64) string {
		if i < 0 {
			return "-"
		}
		st := run.StaticOf(uint32(i))
		in := run.Tables.Instructions[st.PC]
		if in == nil {
			return fmt.Sprintf("pc %#x", st.PC)
		}
		return fmt.Sprintf("line %d", in.Line)
	}
}

func dumpTree2(n *Node, data []byte, depth int, b *strings.Builder, where func(int64) string) {
	var s []byte
	for _, e := range n.Entities {
		s = append(s, data[e])
	}
	fmt.Fprintf(b, "%s%s (inst %d %s)\n", strings.Repeat("  ", depth), s, n.Inst, where(n.Inst))
	for _, c := range n.Children {
		dumpTree2(c, data, depth+1, b, where)
	}
}

func dumpPath(g *DepGraph, e int, where func(int64) string) string {
	// BFS parents
	parent := map[int64]int64{}
	seen := map[int64]bool{}
	q := append([]int64(nil), g.Roots...)
	for _, r := range q {
		seen[r] = true
	}
	for len(q) > 0 {
		u := q[0]
		q = q[1:]
		for _, x := range g.Reads[u] {
			if x == e {
				var out []string
				for v := u; ; v = parent[v] {
					out = append(out, fmt.Sprintf("%d(%s)", v, where(v)))
					if _, ok := parent[v]; !ok {
						break
					}
				}
				return strings.Join(out, " <- ")
			}
		}
		for _, d := range g.Deps[u] {
			if !seen[d] {
				seen[d] = true
				parent[d] = u
				q = append(q, d)
			}
		}
	}
	return "unreached"
}
