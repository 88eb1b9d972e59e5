package slice

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"

	"github.com/mgtrace/mgtrace/schema/tracepb"
	"github.com/mgtrace/mgtrace/slice/insn"
)

// Algorithm chooses how the backward traversal tests each instance.
type Algorithm uint8

// The algorithms of Singh's dissertation, chapter 5.
const (
	// Improved is Algorithm 5: a cheap filter (coalesced memory ranges,
	// register bits, wanted branch instances) in front of the full test,
	// and a dependency list indexed by location.
	Improved Algorithm = iota
	// Baseline is Algorithm 4 as in DrDebug: every instance is tested
	// against the whole dependency list, which is scanned.
	Baseline
)

func (a Algorithm) String() string {
	if a == Baseline {
		return "baseline"
	}
	return "improved"
}

// DepKind says how one instance depends on another.
type DepKind uint8

// The kinds of dependence.
const (
	DepRegister DepKind = iota + 1
	DepMemory
	DepControl
)

func (k DepKind) String() string {
	switch k {
	case DepRegister:
		return "register"
	case DepMemory:
		return "memory"
	case DepControl:
		return "control"
	}
	return "?"
}

// Edge is one dependence in a slice: instance User read what instance Def
// wrote (register Reg, or memory [Addr, Addr+Size)), or User is control
// dependent on branch instance Def. User is -1 for the criterion's location
// (--addr, --reg).
type Edge struct {
	User, Def int64
	Kind      DepKind
	Reg       tracepb.Register
	Addr      uint64
	Size      uint64
}

// Options are the slicing choices and filters.
type Options struct {
	Algorithm Algorithm
	// DataOnly follows data dependences only.
	DataOnly bool
	// PruneSaveRestore bypasses verified callee save/restore pairs
	// (Wang's dissertation section 5.4.2).
	PruneSaveRestore bool
	// MaxDepth keeps only instances at most this many dependences from
	// the criterion (0: no limit).
	MaxDepth int
	// NoAddress leaves out the dependence of a load or store on the
	// registers that form its address.
	NoAddress bool
	// From is the first instance the traversal may reach (the start of a
	// region); the slice stops there.
	From uint32
	// NoEdges leaves Result.Edges empty, for callers that need the
	// members only (the text summary): on large slices the edges are most
	// of the time and memory.
	NoEdges bool
	// Context cancels a long traversal.
	Context context.Context
}

// Result is a computed slice.
type Result struct {
	Run       *Run
	Criterion Point
	Algorithm Algorithm
	// Members are the slice's instances, in global order.
	Members []uint32
	// Edges are the dependences between members (and from the criterion's
	// location), sorted by user then definition.
	Edges []Edge
	Stats Stats
	// Region is the region of a region trace the slice stops at the start
	// of (Run.Regions[Region]), -1 for a whole trace: what ran before it
	// is not in the trace, and the values its uses read there came from
	// the region's MEMORY and REGISTERS events.
	Region int
}

// Stats describe the work of one traversal.
type Stats struct {
	Visited   int // instances walked over
	Processed int // instances given the full test
	MaxList   int // largest dependency list
	Bypassed  int // save/restore pairs bypassed
	// Excluded counts the uses whose value an execution slice's excluded
	// run defined (Run.ExecSlice): no instance of the trace defined it,
	// so the dependence ends there. Slicing an execution slice from its
	// own criterion never meets one.
	Excluded int
}

const noDepth = math.MaxInt32

// slicer is the state of one backward traversal.
type slicer struct {
	r      *Run
	opt    Options
	deps   depList
	filter bool
	// the improved algorithm's filters
	regFilter []insn.Regs
	mem       memFilter
	want      []uint64 // bitset over instances: a member is control dependent on it
	// the baseline's control list: the branch instances members depend on
	ctlList []int32
	depth   []int32 // when MaxDepth is set
	member  []uint64
	edges   []Edge
	// suspended register users, by the save instance that ends the bypass
	suspended map[uint32][]suspension
	forced    []uint32 // the criterion's instances, ascending
	fk        int      // forced[fk] is the next one the walk down meets
	stats     Stats
}

type suspension struct {
	t     uint32
	reg   uint8
	users []int64
}

// Slice computes the backward dynamic slice of the run from the criterion.
func Slice(r *Run, c Point, opt Options) (*Result, error) {
	if opt.Context == nil {
		opt.Context = context.Background()
	}
	n := len(r.sid)
	if c.Last < 0 || int(c.Last) >= n {
		return nil, fmt.Errorf("criterion %s: no such instance", c.Label)
	}
	if uint32(c.Last) < opt.From {
		return nil, fmt.Errorf("criterion %s lies before the region's start", c.Label)
	}
	region := r.regionAt(uint32(c.Last))
	if region >= 0 {
		opt.From = max(opt.From, r.Regions[region].Inst)
	}
	sl := &slicer{
		r:         r,
		opt:       opt,
		filter:    opt.Algorithm == Improved,
		member:    make([]uint64, (n+63)/64),
		suspended: make(map[uint32][]suspension),
		forced:    c.Insts,
		fk:        len(c.Insts) - 1,
		regFilter: make([]insn.Regs, len(r.Threads)),
	}
	if opt.Algorithm == Baseline {
		sl.deps = &listDeps{}
	} else {
		sl.deps = newIndexedDeps()
		sl.want = make([]uint64, (n+63)/64)
	}
	if opt.MaxDepth > 0 {
		sl.depth = make([]int32, n)
		for i := range sl.depth {
			sl.depth[i] = noDepth
		}
		for _, i := range c.Insts {
			sl.depth[i] = 0
		}
	}
	if c.HasLoc {
		t := r.thread[c.Last]
		if c.Reg != 0 {
			sl.deps.useReg(t, uint8(c.Reg), -1)
			sl.regFilter[t] |= 1 << uint(c.Reg)
		} else {
			sl.deps.useMem(c.Addr, c.Size, -1)
			sl.mem.add(c.Addr, c.Addr+c.Size)
		}
	}
	if err := sl.run(uint32(c.Last)); err != nil {
		return nil, err
	}
	res := &Result{Run: r, Criterion: c, Algorithm: opt.Algorithm, Stats: sl.stats, Region: region}
	for w, bitsw := range sl.member {
		for bitsw != 0 {
			b := uint(trailing(bitsw))
			res.Members = append(res.Members, uint32(w*64)+uint32(b))
			bitsw &^= 1 << b
		}
	}
	res.Edges = mergeEdges(sl.edges)
	return res, nil
}

func trailing(x uint64) int { return bits.TrailingZeros64(x) }

func (sl *slicer) isMember(i uint32) bool { return sl.member[i/64]&(1<<(i%64)) != 0 }

// tracked says whether a register's value is followed: the stack pointer
// and the instruction pointer are not (every call would otherwise depend
// on every earlier push).
func tracked(r int) bool {
	return r != 0 && r != int(tracepb.Register_RSP) && r != int(tracepb.Register_RIP)
}

// run walks the instances backwards from last to the region's start.
func (sl *slicer) run(last uint32) error {
	r := sl.r
	ai := sort.Search(len(r.acc), func(k int) bool { return r.acc[k].inst > last }) - 1
	ei := sort.Search(len(r.effects), func(k int) bool { return r.effects[k].at > last }) - 1
	for i := int64(last); i >= int64(sl.opt.From); i-- {
		ii := uint32(i)
		if ii&0xffff == 0 {
			if err := sl.opt.Context.Err(); err != nil {
				return fmt.Errorf("slicing stopped at instance %d of %d: %w", last-ii, last, err)
			}
		}
		sl.stats.Visited++
		// This instance's accesses: r.acc[lo:ai+1].
		hiA := ai
		for ai >= 0 && r.acc[ai].inst == ii {
			ai--
		}
		accs := r.acc[ai+1 : hiA+1]
		sl.visit(ii, accs)
		for ei >= 0 && r.effects[ei].at == ii {
			sl.excluded(&r.effects[ei])
			ei--
		}
		if sus, ok := sl.suspended[ii]; ok {
			for _, s := range sus {
				for _, u := range s.users {
					sl.deps.useReg(s.t, s.reg, u)
				}
			}
			delete(sl.suspended, ii)
		}
		if n := sl.deps.len(); n > sl.stats.MaxList {
			sl.stats.MaxList = n
		}
	}
	return nil
}

// visit tests one instance and, when it belongs to the slice, adds it.
func (sl *slicer) visit(i uint32, accs []access) {
	r := sl.r
	t := r.thread[i]
	st := r.Statics[r.sid[i]]
	defs := st.Info.Defs
	forced := sl.fk >= 0 && sl.forced[sl.fk] == i
	if forced {
		sl.fk--
	}
	if sl.filter && !forced {
		hit := sl.regFilter[t]&defs != 0 || (sl.want[i/64]&(1<<(i%64)) != 0)
		if !hit {
			for _, a := range accs {
				if a.write() && sl.mem.overlaps(a.addr, a.addr+a.bytes()) {
					hit = true
					break
				}
			}
		}
		if !hit {
			return
		}
	}
	sl.stats.Processed++
	member := forced
	depth := int32(noDepth)
	if sl.depth != nil && forced {
		depth = 0
	}
	note := func(user int64) {
		if sl.depth != nil {
			d := int32(0)
			if user >= 0 {
				d = sl.depth[user]
			}
			if d+1 < depth {
				depth = d + 1
			}
		}
	}
	// Save/restore bypass: a verified restore of a live register hands
	// its users over to the instance before the matching save.
	if sl.opt.PruneSaveRestore {
		if save, ok := r.pairs[i]; ok {
			reg := uint8(r.pairReg[i])
			if users := sl.deps.takeReg(t, reg); len(users) > 0 {
				sl.suspended[save] = append(sl.suspended[save], suspension{t: t, reg: reg, users: users})
				sl.stats.Bypassed++
			}
		}
	}
	for d := defs; d != 0; d &= d - 1 {
		reg := trailing(uint64(d))
		if !tracked(reg) {
			continue
		}
		if sl.deps.killReg(t, uint8(reg), func(u int64) {
			if !sl.opt.NoEdges {
				sl.edges = append(sl.edges, Edge{User: u, Def: int64(i), Kind: DepRegister, Reg: tracepb.Register(reg)})
			}
			note(u)
		}) {
			member = true
		}
	}
	for _, a := range accs {
		if !a.write() {
			continue
		}
		if sl.deps.killMem(a.addr, a.bytes(), func(u int64, addr, size uint64) {
			if !sl.opt.NoEdges {
				sl.edges = append(sl.edges, Edge{User: u, Def: int64(i), Kind: DepMemory, Addr: addr, Size: size})
			}
			note(u)
		}) {
			member = true
		}
	}
	if !sl.opt.DataOnly && sl.controlHit(i) {
		member = true
		if sl.depth != nil && sl.depth[i] < depth {
			depth = sl.depth[i]
		}
	}
	if !member {
		return
	}
	if sl.depth != nil {
		sl.depth[i] = depth
		if int(depth) > sl.opt.MaxDepth {
			return
		}
	}
	sl.member[i/64] |= 1 << (i % 64)
	sl.addUses(i, t, st, accs)
}

// excluded takes in an execution slice's excluded run: what it left
// changed is defined there, by no instance.
func (sl *slicer) excluded(e *effect) {
	for d := e.regs; d != 0; d &= d - 1 {
		reg := trailing(d)
		if tracked(reg) {
			sl.deps.killReg(e.thread, uint8(reg), func(int64) { sl.stats.Excluded++ })
		}
	}
	for _, m := range e.mem {
		sl.deps.killMem(m.lo, m.hi-m.lo, func(int64, uint64, uint64) { sl.stats.Excluded++ })
	}
}

// controlHit says whether some member is control dependent on instance i.
func (sl *slicer) controlHit(i uint32) bool {
	if sl.want != nil {
		return sl.want[i/64]&(1<<(i%64)) != 0
	}
	hit := false
	for k := 0; k < len(sl.ctlList); {
		if sl.ctlList[k] == int32(i) {
			hit = true
			sl.ctlList[k] = sl.ctlList[len(sl.ctlList)-1]
			sl.ctlList = sl.ctlList[:len(sl.ctlList)-1]
			continue
		}
		k++
	}
	return hit
}

// addUses puts what member i reads into the dependency list.
func (sl *slicer) addUses(i uint32, t uint32, st *Static, accs []access) {
	r := sl.r
	uses := st.Info.Uses
	if !sl.opt.NoAddress {
		if x := st.Info.Index; x != 0 {
			uses |= 1 << uint(x)
		}
		if b := st.Info.Base; b != 0 && b != tracepb.Register_RSP && b != tracepb.Register_RIP {
			onStack := false
			if b == tracepb.Register_RBP {
				for _, a := range accs {
					if r.stack[t].holds(a.addr) {
						onStack = true
					}
				}
			}
			if !onStack {
				uses |= 1 << uint(b)
			}
		}
	}
	for u := uses; u != 0; u &= u - 1 {
		reg := trailing(uint64(u))
		if !tracked(reg) {
			continue
		}
		sl.deps.useReg(t, uint8(reg), int64(i))
		sl.regFilter[t] |= 1 << uint(reg)
	}
	for _, a := range accs {
		if a.write() {
			continue
		}
		sl.deps.useMem(a.addr, a.bytes(), int64(i))
		if sl.filter {
			sl.mem.add(a.addr, a.addr+a.bytes())
		}
	}
	if sl.opt.DataOnly {
		return
	}
	if p := r.cd[i]; p >= 0 && uint32(p) >= sl.opt.From {
		if !sl.opt.NoEdges {
			sl.edges = append(sl.edges, Edge{User: int64(i), Def: int64(p), Kind: DepControl})
		}
		if sl.want != nil {
			sl.want[p/64] |= 1 << (uint(p) % 64)
		} else {
			sl.ctlList = append(sl.ctlList, p)
		}
		if sl.depth != nil {
			d := sl.depth[i] + 1
			if d < sl.depth[p] {
				sl.depth[p] = d
			}
		}
	}
}

// mergeEdges sorts edges and joins adjacent memory ranges of one pair.
func mergeEdges(es []Edge) []Edge {
	sortEdges(es)
	out := es[:0]
	for _, e := range es {
		if k := len(out); k > 0 {
			p := &out[k-1]
			if p.User == e.User && p.Def == e.Def && p.Kind == e.Kind && p.Reg == e.Reg {
				if e.Kind != DepMemory {
					continue
				}
				if e.Addr <= p.Addr+p.Size {
					if end := e.Addr + e.Size; end > p.Addr+p.Size {
						p.Size = end - p.Addr
					}
					continue
				}
			}
		}
		out = append(out, e)
	}
	return out
}

// compareEdges orders edges by user, definition, kind, register and
// address.
func compareEdges(x, y Edge) int {
	if c := cmp.Compare(x.User, y.User); c != 0 {
		return c
	}
	if c := cmp.Compare(x.Def, y.Def); c != 0 {
		return c
	}
	if c := cmp.Compare(x.Kind, y.Kind); c != 0 {
		return c
	}
	if c := cmp.Compare(x.Reg, y.Reg); c != 0 {
		return c
	}
	return cmp.Compare(x.Addr, y.Addr)
}

// sortEdges sorts edges by compareEdges. Users are instances (or -1), so
// a counting sort by user places every edge in its user's group in linear
// time, in place by following the permutation's cycles; then each group,
// a few edges, is sorted by the rest. The traversal emits a definition's
// edges when it reaches it, latest first, so taking the edges in reverse
// leaves most groups sorted already.
func sortEdges(es []Edge) {
	if len(es) < 2 {
		return
	}
	maxUser := int64(-1)
	for _, e := range es {
		if e.User < -1 {
			slices.SortFunc(es, compareEdges)
			return
		}
		maxUser = max(maxUser, e.User)
	}
	if len(es) >= math.MaxUint32 || maxUser >= math.MaxUint32-1 {
		slices.SortFunc(es, compareEdges)
		return
	}
	// start[u+1] is where the group of user u begins (u = -1 too).
	start := make([]uint32, maxUser+3)
	for _, e := range es {
		start[e.User+2]++
	}
	for u := 1; u < len(start); u++ {
		start[u] += start[u-1]
	}
	next := slices.Clone(start)
	dest := make([]uint32, len(es))
	for k := len(es) - 1; k >= 0; k-- {
		g := es[k].User + 1
		dest[k] = next[g]
		next[g]++
	}
	for k := range es {
		for dest[k] != uint32(k) {
			j := dest[k]
			es[k], es[j] = es[j], es[k]
			dest[k], dest[j] = dest[j], dest[k]
		}
	}
	for g := 0; g+1 < len(start); g++ {
		if grp := es[start[g]:start[g+1]]; len(grp) > 1 && !slices.IsSortedFunc(grp, compareEdges) {
			slices.SortFunc(grp, compareEdges)
		}
	}
}
