package mgbuild

import "sort"

// Summary describes a snapshot for people: counts, allocation sites and
// the largest structures.
type Summary struct {
	TS           TS
	Seq          uint64 // the event that made change TS (0 at TS 0)
	Nodes        int    // live nodes
	Clusters     int    // live cluster nodes
	PointerEdges int    // current pointer edges between live nodes
	Dangling     int    // current pointer edges whose target is no live node
	DataEdges    int    // current data edges
	Sites        []SiteCount
	Structures   []Structure // the largest first
}

// SiteCount is how many live nodes one allocation site made.
type SiteCount struct {
	Site  uint64 // 0 = unknown
	Nodes int
	Bytes uint64
}

// Structure is a set of live nodes connected by pointer edges (in either
// direction).
type Structure struct {
	Nodes int
	Edges int
	Root  NodeID // a node no other node of the structure points to (the lowest id among them), else the lowest id
	Site  uint64 // the most common allocation site among its nodes
}

// Summarize computes the summary of a snapshot.
func (s *Snapshot) Summarize() Summary {
	g := s.g
	sum := Summary{TS: s.TS, Seq: g.SeqOf(s.TS), Nodes: len(s.Nodes)}
	index := make(map[NodeID]int, len(s.Nodes))
	sites := make(map[uint64]*SiteCount)
	for i, sn := range s.Nodes {
		index[sn.ID] = i
		n := g.Node(sn.ID)
		if n.Kind == NodeCluster {
			sum.Clusters++
		}
		sc := sites[n.Site]
		if sc == nil {
			sc = &SiteCount{Site: n.Site}
			sites[n.Site] = sc
		}
		sc.Nodes++
		sc.Bytes += sn.Hi - sn.Lo
	}
	for _, sc := range sites {
		sum.Sites = append(sum.Sites, *sc)
	}
	sort.Slice(sum.Sites, func(i, j int) bool {
		a, b := sum.Sites[i], sum.Sites[j]
		if a.Nodes != b.Nodes {
			return a.Nodes > b.Nodes
		}
		return a.Site < b.Site
	})

	// Structures: union-find over pointer edges.
	parent := make([]int, len(s.Nodes))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	pointedTo := make([]bool, len(s.Nodes))
	edges := make([]int, len(s.Nodes))
	for _, e := range s.Edges {
		ge := &g.Edges[e.ID]
		switch {
		case !ge.Pointer:
			sum.DataEdges++
			continue
		case e.To == 0:
			sum.Dangling++
			continue
		}
		sum.PointerEdges++
		a, b := index[e.From], index[e.To]
		if e.To != e.From {
			pointedTo[b] = true
		}
		ra, rb := find(a), find(b)
		if ra != rb {
			parent[ra] = rb
		}
		edges[a]++
	}
	groups := make(map[int]*Structure)
	siteVotes := make(map[int]map[uint64]int)
	for i, sn := range s.Nodes {
		r := find(i)
		st := groups[r]
		if st == nil {
			st = &Structure{}
			groups[r] = st
			siteVotes[r] = make(map[uint64]int)
		}
		st.Nodes++
		st.Edges += edges[i]
		if !pointedTo[i] && (st.Root == 0 || sn.ID < st.Root) {
			st.Root = sn.ID
		}
		siteVotes[r][g.Node(sn.ID).Site]++
	}
	for i, sn := range s.Nodes { // a cycle with no entry: its lowest id
		if st := groups[find(i)]; st.Root == 0 || pointedTo[index[st.Root]] && sn.ID < st.Root {
			st.Root = sn.ID
		}
	}
	for r, st := range groups {
		best := -1
		for site, n := range siteVotes[r] {
			if n > best || n == best && site < st.Site {
				st.Site, best = site, n
			}
		}
		sum.Structures = append(sum.Structures, *st)
	}
	sort.Slice(sum.Structures, func(i, j int) bool {
		a, b := sum.Structures[i], sum.Structures[j]
		if a.Nodes != b.Nodes {
			return a.Nodes > b.Nodes
		}
		return a.Root < b.Root
	})
	return sum
}
