package mgbuild

// SnapshotSpace estimates what keeping a memory graph snapshot after every
// change would cost, as the paper's Table II does: for each change, the
// nodes live after it, at bytesPerNode bytes each (the paper assumes 8).
func (g *Graph) SnapshotSpace(bytesPerNode uint64) uint64 {
	last := uint64(g.Last())
	var sum uint64
	for i := range g.Nodes {
		n := &g.Nodes[i]
		end := last + 1
		if n.Ended != 0 {
			end = uint64(n.Ended)
		}
		sum += end - uint64(n.Created)
	}
	return sum * bytesPerNode
}
