package lin

import (
	"context"
	"sort"
	"time"
)

// subHistory checks sub-histories of one partition of a history.
type subHistory struct {
	ctx      context.Context
	m        Model
	h        *History
	deadline time.Time
	stats    Stats
}

// prefix returns the operations among ids called at or before cut, with
// those still running at cut made pending.
func (sh *subHistory) prefix(ids []int, cut int64) []Op {
	var ops []Op
	for _, id := range ids {
		o := sh.h.Ops[id]
		if o.Call > cut {
			continue
		}
		if o.Return > cut {
			o.Status, o.Return, o.Output = Pending, Never, Value{}
		}
		ops = append(ops, o)
	}
	return ops
}

// prepare makes the search operations of ops (copies of history
// operations, IDs kept).
func (sh *subHistory) prepare(ops []Op) ([]searchOp, error) {
	sops := make([]searchOp, len(ops))
	classes := make(map[string]int32)
	var key []byte
	for i := range ops {
		o := &ops[i]
		a, err := sh.m.Action(o)
		if err != nil {
			return nil, &ActionError{Op: o.ID, Source: o.Source, Err: err}
		}
		key = classKey(key[:0], o)
		c, ok := classes[string(key)]
		if !ok {
			c = int32(len(classes))
			classes[string(key)] = c
		}
		sops[i] = searchOp{op: o, act: a, call: o.Call, ret: o.Return, optional: o.Status.Optional(), class: c}
	}
	markReadOnly(sh.m, sops)
	return sops, nil
}

// check searches ops from the state start (nil: the model's initial
// state) and says whether they are linearizable; keep > 0 collects that
// many longest partial linearizations.
func (sh *subHistory) check(ops []Op, start State, keep int) (bool, []partialRecord, []searchOp, error) {
	sops, err := sh.prepare(ops)
	if err != nil {
		return false, nil, nil, err
	}
	s := newSearch(sh.ctx, sh.m, sops, keep, sh.deadline)
	s.start = start
	ok, err := s.run()
	sh.stats.add(s.stats)
	sh.stats.MinimizeChecks++
	return ok, s.longest, sops, err
}

// fails reports whether ops are not linearizable from any of the states
// starts; an error means a check did not finish.
func (sh *subHistory) fails(ops []Op, starts []State) (bool, error) {
	for _, st := range starts {
		ok, _, _, err := sh.check(ops, st, 0)
		if err != nil || ok {
			return false, err
		}
	}
	return true, nil
}

// finals returns every state a linearization of ops (all complete) can
// end in, or an error when there are more than limit or time ran out.
func (sh *subHistory) finals(ops []Op, limit int) ([]State, error) {
	sops, err := sh.prepare(ops)
	if err != nil {
		return nil, err
	}
	s := newSearch(sh.ctx, sh.m, sops, 0, sh.deadline)
	s.collect, s.maxFinals = true, limit
	_, err = s.run()
	sh.stats.add(s.stats)
	if err != nil {
		return nil, err
	}
	return s.finals, nil
}

// quiescent splits ops (sorted by call) at the latest point before any
// operation overlapping failing is called where no operation is running:
// ops[:i] all returned before any of ops[i:] was called, and none of
// ops[:i] may be missing its effect (info, pending). It returns i.
func quiescent(ops []Op, failing *Op) int {
	first := len(ops) // index of the first operation that overlaps failing
	for i := range ops {
		if !ops[i].Precedes(failing) {
			first = i
			break
		}
	}
	best := 0
	var maxRet int64 = -1 << 62
	for i := 0; i < first; i++ {
		if ops[i].Status.Optional() {
			break
		}
		maxRet = max(maxRet, ops[i].Return)
		if i+1 < len(ops) && maxRet < ops[i+1].Call {
			best = i + 1
		}
	}
	return best
}

// maxStarts bounds the states a counterexample may start from.
const maxStarts = 16

// counterexample explains why partition p of h is not linearizable.
func counterexample(ctx context.Context, m Model, h *History, p partition, deadline time.Time, opt Options) (*Counterexample, Stats) {
	sh := &subHistory{ctx: ctx, m: m, h: h, deadline: deadline}
	var rets []int64
	for _, id := range p.ids {
		if r := h.Ops[id].Return; r != Never {
			rets = append(rets, r)
		}
	}
	sort.Slice(rets, func(a, b int) bool { return rets[a] < rets[b] })
	rets = dedup(rets)
	cx := &Counterexample{Partition: p.key, Init: m.DescribeState(m.Init()), Minimal: !opt.NoMinimize}
	init := []State{m.Init()}

	// The earliest response after which the prefix is not linearizable
	// (the last one is: the whole partition failed).
	lo, hi := 0, len(rets)-1
	complete := true
	for lo < hi {
		mid := (lo + hi) / 2
		f, err := sh.fails(sh.prefix(p.ids, rets[mid]), init)
		if err != nil {
			complete = false
			break
		}
		if f {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	cut := rets[hi]
	cx.Cut = cut
	cx.Failing = -1
	for _, id := range p.ids {
		if h.Ops[id].Return == cut {
			cx.Failing = id
			break
		}
	}
	failing := &h.Ops[cx.Failing]
	ops := sh.prefix(p.ids, cut)
	starts := init
	if complete && !opt.NoMinimize {
		// The operations before the latest quiescent point are replaced
		// by the states they can leave the object in.
		if q := quiescent(ops, failing); q > 0 {
			if finals, err := sh.finals(ops[:q], maxStarts); err == nil && len(finals) > 0 {
				if f, err := sh.fails(ops[q:], finals); err == nil && f {
					starts, ops, cx.Before = finals, ops[q:], q
				}
			}
		}
		ops, complete = sh.minimize(ops, failing, starts)
	}
	cx.Minimal = complete && !opt.NoMinimize
	for _, st := range starts {
		cx.Start = append(cx.Start, m.DescribeState(st))
	}
	for _, o := range ops {
		cx.Ops = append(cx.Ops, o.ID)
	}
	cx.Operations = ops
	// The longest partial linearizations, from whichever start states
	// give the longest.
	best := -1
	for _, st := range starts {
		_, longest, sops, _ := sh.check(ops, st, opt.Longest)
		for _, pr := range longest {
			if len(pr.ops) > best {
				best = len(pr.ops)
				cx.Longest = cx.Longest[:0]
			}
			if len(pr.ops) == best && len(cx.Longest) < opt.Longest {
				cx.Longest = append(cx.Longest, describePartial(m, st, sops, pr))
			}
		}
	}
	return cx, sh.stats
}

// minimize removes operations that precede failing (returned before its
// call) while the rest stays a counterexample of the same failure: not
// linearizable, and linearizable with the failing operation pending (so
// that a removal never leaves a history that fails for another reason,
// such as a dequeue of an element whose enqueue was removed; operations
// that return at the same position as it are made pending with it). Zeller and
// Hildebrandt's ddmin over them; the failing operation and those
// overlapping it are kept. It reports false when it ran out of time.
func (sh *subHistory) minimize(ops []Op, failing *Op, starts []State) ([]Op, bool) {
	var keep, rest []Op
	for _, o := range ops {
		if o.Return < failing.Call {
			rest = append(rest, o)
		} else {
			keep = append(keep, o)
		}
	}
	with := func(sub []Op) []Op {
		all := make([]Op, 0, len(keep)+len(sub))
		all = append(all, keep...)
		all = append(all, sub...)
		sort.SliceStable(all, func(a, b int) bool { return all[a].ID < all[b].ID })
		return all
	}
	// test reports whether sub (with keep) is a counterexample of the
	// failure, and whether it could tell in time.
	test := func(sub []Op) (bool, bool) {
		all := with(sub)
		f, err := sh.fails(all, starts)
		if err != nil || !f {
			return false, err == nil
		}
		for i := range all {
			if all[i].Return == failing.Return {
				all[i].Status, all[i].Return, all[i].Output = Pending, Never, Value{}
			}
		}
		f, err = sh.fails(all, starts)
		return !f, err == nil
	}
	if f, ok := test(nil); !ok {
		return ops, false
	} else if f {
		return with(nil), true
	}
	n := 2
	for len(rest) >= 2 {
		chunks := split(rest, n)
		reduced := false
		for _, c := range chunks {
			f, ok := test(c)
			if !ok {
				return with(rest), false
			}
			if f {
				rest, n, reduced = c, 2, true
				break
			}
		}
		if !reduced && n > 2 {
			for i := range chunks {
				comp := complement(chunks, i)
				f, ok := test(comp)
				if !ok {
					return with(rest), false
				}
				if f {
					rest, n, reduced = comp, max(n-1, 2), true
					break
				}
			}
		}
		if !reduced {
			if n >= len(rest) {
				break
			}
			n = min(2*n, len(rest))
		}
	}
	if len(rest) == 1 {
		// ddmin stops at one operation; it may not be needed either.
		if f, ok := test(nil); ok && f {
			rest = nil
		}
	}
	return with(rest), true
}

// split cuts ops into n nearly equal chunks.
func split(ops []Op, n int) [][]Op {
	var out [][]Op
	for i := 0; i < n; i++ {
		lo, hi := i*len(ops)/n, (i+1)*len(ops)/n
		if hi > lo {
			out = append(out, ops[lo:hi])
		}
	}
	return out
}

// complement joins every chunk but the i-th.
func complement(chunks [][]Op, i int) []Op {
	var out []Op
	for j, c := range chunks {
		if j != i {
			out = append(out, c...)
		}
	}
	return out
}

func dedup(xs []int64) []int64 {
	out := xs[:0]
	for i, x := range xs {
		if i == 0 || x != xs[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// describePartial turns a search's partial linearization into IDs and
// the states after each operation.
func describePartial(m Model, st State, sops []searchOp, pr partialRecord) Partial {
	p := Partial{Blocked: -1, Ops: []int{}, States: []string{}, Start: m.DescribeState(st)}
	for _, i := range pr.ops {
		o := &sops[i]
		p.Ops = append(p.Ops, o.op.ID)
		_, st = m.Step(st, o.act)
		p.States = append(p.States, m.DescribeState(st))
	}
	if pr.blocked >= 0 {
		p.Blocked = sops[pr.blocked].op.ID
	}
	return p
}
