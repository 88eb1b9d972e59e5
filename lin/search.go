package lin

import (
	"cmp"
	"context"
	"slices"
	"time"
)

// This file is the search of one partition: the backtracking of Wing and
// Gong ("Testing and verifying concurrent objects", JPDC 1993) over the
// history's call and return events, with the memoisation of Lowe
// ("Testing for linearizability", CCPE 2017) of the configurations already
// explored, and three reductions of our own that keep it complete:
//
//   - a read-only operation (ReadOnlyModel) that is legal and minimal is
//     placed at once, with no other order tried: moving it to the front of
//     any linearization that places it later keeps that linearization
//     valid, since it changes no state and nothing had to precede it;
//   - of identical operations (same name, key, input, output and status)
//     that are all minimal, only the one that returns first is tried
//     first: swapping two identical operations in a linearization keeps it
//     valid when the earlier-returning one takes the earlier place;
//   - operations that may not have taken effect (Info, Pending) never have
//     to be placed, so a configuration is dominated by one with the same
//     state, the same required operations placed and a subset of the
//     optional ones: if that one failed, this one fails too.
//
// The reductions depend only on the configuration (not on the path to
// it), so the configurations remembered as failed stay failed.

// searchOp is an operation as the search sees it.
type searchOp struct {
	op       *Op
	act      Action
	call     int64
	ret      int64 // Never for optional operations
	optional bool
	readOnly bool
	class    int32 // operations with the same class are identical
}

// event is a call or return entry of the doubly linked event list.
type event struct {
	op         int32 // index into search.ops
	ret        bool
	prev, next int32
}

// memoEntry is a configuration the search has explored.
type memoEntry struct {
	state  State
	words  int32 // offset of its bitset in search.memoWords
	next   int32 // next entry with the same key, -1 at the end
	failed bool  // its search is over (and found nothing)
}

// partialRecord is a partial linearization found by the search.
type partialRecord struct {
	ops     []int32
	blocked int32
}

// search is the state of one partition's search.
type search struct {
	m    Model
	ops  []searchOp
	evs  []event // events[len(ops)*2] is the head sentinel
	head int32
	// callEv and retEv give each operation's events (retEv -1 when
	// optional).
	callEv, retEv []int32

	nw   int      // words per bitset
	bits []uint64 // operations placed
	zob  []uint64 // a random number per operation (Zobrist hashing)
	hash uint64   // xor of zob over placed operations
	// optPlaced lists the optional operations placed on the current path,
	// in order.
	optPlaced []int32
	reqLeft   int // required operations not placed yet

	memo      table
	memoEnts  []memoEntry
	memoWords []uint64

	stats    Stats
	deadline time.Time
	ctx      context.Context

	// start is the state the search starts from (nil: the model's
	// Init).
	start State
	// collect makes the search find every state a complete linearization
	// can end in, into finals (at most maxFinals), instead of stopping at
	// the first.
	collect   bool
	finals    []State
	maxFinals int

	// longest partial linearizations
	keep    int
	longest []partialRecord
	best    int

	// the depth-first search, kept between resume calls
	started bool
	stack   []frame
	bufs    [][]int32
	iter    uint64

	// scratch for the choices of a node
	classSeen []int32 // per class: generation stamp
	classAt   []int32 // per class: index of its chosen op in the choice list
	gen       int32
}

// errTimeout says the search ran out of time or was cancelled.
type errTimeout struct{}

func (errTimeout) Error() string { return "search stopped before it finished" }

// newSearch prepares the search of ops (their actions already made).
func newSearch(ctx context.Context, m Model, ops []searchOp, keep int, deadline time.Time) *search {
	n := len(ops)
	s := &search{m: m, ops: ops, ctx: ctx, deadline: deadline, keep: keep}
	s.nw = (n + 63) / 64
	s.bits = make([]uint64, s.nw)
	s.zob = make([]uint64, n)
	x := uint64(0x6d67747261636521)
	for i := range ops {
		x += 0x9e3779b97f4a7c15 // splitmix64
		s.zob[i] = mix(x)
		if !ops[i].optional {
			s.reqLeft++
		}
	}
	// The event list: calls and returns by position, a call before a
	// return at the same position (intervals are closed: equal positions
	// overlap).
	s.evs = make([]event, 0, 2*n+1)
	for i := range ops {
		s.evs = append(s.evs, event{op: int32(i)})
		if !ops[i].optional {
			s.evs = append(s.evs, event{op: int32(i), ret: true})
		}
	}
	pos := func(e event) int64 {
		if e.ret {
			return ops[e.op].ret
		}
		return ops[e.op].call
	}
	slices.SortFunc(s.evs, func(ea, eb event) int {
		pa, pb := pos(ea), pos(eb)
		switch {
		case pa != pb:
			return cmp.Compare(pa, pb)
		case ea.ret != eb.ret:
			if ea.ret {
				return 1
			}
			return -1
		}
		return cmp.Compare(ea.op, eb.op)
	})
	s.callEv = make([]int32, n)
	s.retEv = make([]int32, n)
	for i := range s.retEv {
		s.retEv[i] = -1
	}
	for i, e := range s.evs {
		if e.ret {
			s.retEv[e.op] = int32(i)
		} else {
			s.callEv[e.op] = int32(i)
		}
	}
	s.head = int32(len(s.evs))
	s.evs = append(s.evs, event{op: -1})
	for i := range s.evs {
		s.evs[i].prev = int32(i) - 1
		s.evs[i].next = int32(i) + 1
	}
	s.evs[s.head].next = 0
	s.evs[s.head].prev = s.head - 1
	if s.head == 0 {
		s.evs[s.head].next = s.head
		s.evs[s.head].prev = s.head
	} else {
		s.evs[0].prev = s.head
		s.evs[s.head-1].next = s.head
	}
	var classes int32
	for i := range ops {
		if ops[i].class+1 > classes {
			classes = ops[i].class + 1
		}
	}
	s.classSeen = make([]int32, classes)
	s.classAt = make([]int32, classes)
	s.memo.init(64)
	return s
}

// unlink removes event i from the list; relink puts it back (in the
// reverse order of the unlinks).
func (s *search) unlink(i int32) {
	e := &s.evs[i]
	s.evs[e.prev].next = e.next
	s.evs[e.next].prev = e.prev
}

func (s *search) relink(i int32) {
	e := &s.evs[i]
	s.evs[e.prev].next = i
	s.evs[e.next].prev = i
}

// place marks op as linearized.
func (s *search) place(op int32) {
	s.unlink(s.callEv[op])
	if r := s.retEv[op]; r >= 0 {
		s.unlink(r)
		s.reqLeft--
	} else {
		s.optPlaced = append(s.optPlaced, op)
	}
	s.hash ^= s.zob[op]
	s.bits[op/64] |= 1 << (op % 64)
}

// unplace undoes place(op).
func (s *search) unplace(op int32) {
	s.bits[op/64] &^= 1 << (op % 64)
	s.hash ^= s.zob[op]
	if r := s.retEv[op]; r >= 0 {
		s.relink(r)
		s.reqLeft++
	} else {
		s.optPlaced = s.optPlaced[:len(s.optPlaced)-1]
	}
	s.relink(s.callEv[op])
}

// mix spreads a state hash before it is combined with the bitset's.
func mix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// seen reports whether the configuration (current bits, st) was explored
// already, or is dominated by one that failed; if not, it is remembered
// and its index returned (to mark it failed when its search is done).
//
// Dominance is checked against the configurations with one of the placed
// optional operations taken out: each is one hash lookup, where testing
// every subset would scan every configuration that differs from this one
// in optional operations only.
func (s *search) seen(st State) (bool, int32) {
	sh := mix(s.m.Hash(st))
	key := s.hash ^ sh
	if s.lookup(key, st, false) {
		return true, -1
	}
	for _, o := range s.optPlaced {
		bit := uint64(1) << (o % 64)
		s.bits[o/64] &^= bit
		found := s.lookup(key^s.zob[o], st, true)
		s.bits[o/64] |= bit
		if found {
			s.stats.Dominated++
			return true, -1
		}
	}
	slot := s.memo.slot(key)
	off := int32(len(s.memoWords))
	s.memoWords = append(s.memoWords, s.bits...)
	s.memoEnts = append(s.memoEnts, memoEntry{state: st, words: off, next: s.memo.vals[slot] - 1})
	s.memo.set(slot, key, int32(len(s.memoEnts)))
	s.stats.Configurations++
	return false, int32(len(s.memoEnts) - 1)
}

// lookup reports whether a configuration with the current bits and state
// st is remembered under key (and has failed, when failed is true).
func (s *search) lookup(key uint64, st State, failed bool) bool {
	first := s.memo.vals[s.memo.slot(key)] - 1
	for i := first; i >= 0; i = s.memoEnts[i].next {
		e := &s.memoEnts[i]
		if failed && !e.failed {
			continue
		}
		if equalWords(s.memoWords[e.words:int(e.words)+s.nw], s.bits) && s.m.Equal(e.state, st) {
			return true
		}
	}
	return false
}

func equalWords(a, b []uint64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// choices lists the operations to try in state st: every minimal
// operation (called before the earliest pending return), with the
// reductions described above. It appends to buf.
//
// prev is the state before the last operation placed when that one was
// optional (nil otherwise): an optional operation x whose effect from
// prev is the same as from st is not tried, since that last optional
// operation made no difference to x and need not have happened. The
// configuration without it, reached by placing x at the parent, covers
// this one.
func (s *search) choices(st, prev State, buf []int32) []int32 {
	buf = buf[:0]
	s.gen++
	for i := s.evs[s.head].next; i != s.head; i = s.evs[i].next {
		e := &s.evs[i]
		if e.ret {
			break
		}
		o := &s.ops[e.op]
		if o.readOnly && o.optional {
			continue // changes nothing and need not happen: never needed
		}
		if o.optional && prev != nil && s.absorbs(prev, st, o.act) {
			s.stats.Absorbed++
			continue
		}
		if o.readOnly {
			s.stats.Steps++
			if ok, _ := s.m.Step(st, o.act); ok {
				s.stats.Forced++
				return append(buf[:0], e.op)
			}
			continue
		}
		c := o.class
		if s.classSeen[c] == s.gen {
			// An identical operation is a choice already: keep the one
			// that returns first.
			s.stats.Symmetric++
			j := s.classAt[c]
			if prev := &s.ops[buf[j]]; o.ret < prev.ret {
				buf[j] = e.op
			}
			continue
		}
		s.classSeen[c] = s.gen
		s.classAt[c] = int32(len(buf))
		buf = append(buf, e.op)
	}
	// Required operations first: optional ones are tried last.
	if len(buf) > 1 {
		k := 0
		for i, op := range buf {
			if !s.ops[op].optional {
				buf[k], buf[i] = buf[i], buf[k]
				k++
			}
		}
	}
	return buf
}

// absorbs reports whether action a leads to the same state from prev as
// from st, legally from both.
func (s *search) absorbs(prev, st State, a Action) bool {
	s.stats.Steps += 2
	ok1, s1 := s.m.Step(prev, a)
	if !ok1 {
		return false
	}
	ok2, s2 := s.m.Step(st, a)
	return ok2 && s.m.Equal(s1, s2)
}

// frame is one node of the depth-first search.
type frame struct {
	state State
	op    int32 // the operation placed to get here (-1 at the root)
	memo  int32 // its configuration's memo entry
	cands []int32
	next  int
}

// run searches for a linearization to the end. It returns true when one
// exists, false when none does, or errTimeout.
func (s *search) run() (bool, error) {
	_, ok, err := s.resume(0)
	return ok, err
}

// resume goes on with the search for at most budget more steps (0: no
// limit) and reports whether it is done and, if so, whether a
// linearization exists. A search can be resumed until it is done.
func (s *search) resume(budget uint64) (done, ok bool, err error) {
	if !s.started {
		s.started = true
		init := s.start
		if init == nil {
			init = s.m.Init()
		}
		if s.reqLeft == 0 {
			if s.collect {
				s.finals = append(s.finals, init)
			}
			return true, true, nil
		}
		s.stack = make([]frame, 0, len(s.ops)+1)
		c := s.choices(init, nil, s.buf(0))
		s.bufs[0] = c
		_, root := s.seen(init)
		s.stack = append(s.stack, frame{state: init, op: -1, memo: root, cands: c})
		s.best = -1
		s.noteDepth(s.stack)
	}
	limit := s.stats.Steps + budget
	for len(s.stack) > 0 {
		s.iter++
		if s.iter&1023 == 0 {
			if err := s.ctx.Err(); err != nil {
				return true, false, errTimeout{}
			}
			if !s.deadline.IsZero() && time.Now().After(s.deadline) {
				return true, false, errTimeout{}
			}
		}
		if budget > 0 && s.stats.Steps >= limit {
			return false, false, nil
		}
		f := &s.stack[len(s.stack)-1]
		if f.next == len(f.cands) {
			s.memoEnts[f.memo].failed = true
			if f.op >= 0 {
				s.unplace(f.op)
			}
			s.stack = s.stack[:len(s.stack)-1]
			continue
		}
		op := f.cands[f.next]
		f.next++
		o := &s.ops[op]
		s.stats.Steps++
		ok, next := s.m.Step(f.state, o.act)
		if !ok {
			continue
		}
		s.place(op)
		if s.reqLeft == 0 {
			if !s.collect {
				s.stack = s.stack[:0]
				return true, true, nil
			}
			if err := s.addFinal(next); err != nil {
				return true, false, err
			}
			s.unplace(op)
			continue
		}
		dup, idx := s.seen(next)
		if dup {
			s.unplace(op)
			continue
		}
		depth := len(s.stack)
		var prev State
		if o.optional {
			prev = f.state
		}
		c := s.choices(next, prev, s.buf(depth))
		s.bufs[depth] = c
		s.stack = append(s.stack, frame{state: next, op: op, memo: idx, cands: c})
		s.noteDepth(s.stack)
	}
	return true, false, nil
}

// buf returns the choice buffer of depth, to be reused.
func (s *search) buf(depth int) []int32 {
	for len(s.bufs) <= depth {
		s.bufs = append(s.bufs, nil)
	}
	return s.bufs[depth]
}

// errTooManyStates says a collecting search found more final states than
// it may keep.
type errTooManyStates struct{}

func (errTooManyStates) Error() string { return "too many states" }

// addFinal adds st to the final states, unless it is there already.
func (s *search) addFinal(st State) error {
	for _, f := range s.finals {
		if s.m.Equal(f, st) {
			return nil
		}
	}
	if len(s.finals) >= s.maxFinals {
		return errTooManyStates{}
	}
	s.finals = append(s.finals, st)
	return nil
}

// noteDepth remembers the current path when it is among the longest.
func (s *search) noteDepth(stack []frame) {
	if s.keep == 0 {
		return
	}
	depth := len(stack) - 1
	if depth < s.best {
		return
	}
	if depth > s.best {
		s.best = depth
		s.longest = s.longest[:0]
	}
	if len(s.longest) >= s.keep {
		return
	}
	last := stack[len(stack)-1].op
	for _, p := range s.longest {
		if len(p.ops) > 0 && p.ops[len(p.ops)-1] == last {
			return
		}
	}
	ops := make([]int32, depth)
	for i := 1; i < len(stack); i++ {
		ops[i-1] = stack[i].op
	}
	s.longest = append(s.longest, partialRecord{ops: ops, blocked: s.firstReturn()})
}

// firstReturn is the operation whose response comes first among those not
// placed (-1 when none).
func (s *search) firstReturn() int32 {
	for i := s.evs[s.head].next; i != s.head; i = s.evs[i].next {
		if s.evs[i].ret {
			return s.evs[i].op
		}
	}
	return -1
}

// table maps configuration keys to the first memo entry of their chain
// (plus one; 0 is an empty slot): open addressing with linear probing,
// which costs about half of a Go map's lookup here.
type table struct {
	keys []uint64
	vals []int32
	n    int
}

func (t *table) init(size int) {
	t.keys = make([]uint64, size)
	t.vals = make([]int32, size)
	t.n = 0
}

// slot returns the slot of key: where it is, or the empty one where it
// would go.
func (t *table) slot(key uint64) int {
	mask := len(t.keys) - 1
	for i := int(key) & mask; ; i = (i + 1) & mask {
		if t.vals[i] == 0 || t.keys[i] == key {
			return i
		}
	}
}

// set stores val (non-zero) for key at slot (from slot), growing the
// table past half full.
func (t *table) set(slot int, key uint64, val int32) {
	if t.vals[slot] == 0 {
		t.n++
	}
	t.keys[slot], t.vals[slot] = key, val
	if 2*t.n > len(t.keys) {
		old := *t
		t.init(2 * len(old.keys))
		for i, v := range old.vals {
			if v != 0 {
				j := t.slot(old.keys[i])
				t.keys[j], t.vals[j] = old.keys[i], v
				t.n++
			}
		}
	}
}
