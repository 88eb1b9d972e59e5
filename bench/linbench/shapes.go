package main

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/mgtrace/mgtrace/lin"
)

// This file generates the adversarial histories: shapes with many
// operations that overlap, so that a search over their orders meets very
// many configurations unless it can tell orders apart without trying
// them. Each shape is linearizable or not by construction, and the
// benchmark checks both tools' verdicts against that.

// shape is a family of generated histories, one per size.
type shape struct {
	name  string // "register-reads"
	model string // our model's name (models.New); porcupine's of the same name
	// linearizable is the verdict by construction.
	linearizable bool
	// about says what the history is, for the report.
	about string
	// gen makes a history of about n operations.
	gen func(n int, rng *rand.Rand) *lin.History
}

// shapes returns the adversarial shapes, in the order they are reported.
func shapes() []shape {
	return []shape{
		{name: "register-reads", model: "register", about: "write(1); then n-3 concurrent reads returning 1, " +
			"with a concurrent write(2) and a read returning 3, a value never written", gen: registerReads},
		{name: "register-burst", model: "register", linearizable: true, about: "a burst of 10 concurrent writes of distinct values " +
			"with n-10 concurrent reads, each returning one of them",
			gen: func(n int, rng *rand.Rand) *lin.History { return registerBurst(n, rng, 10, false) }},
		{name: "register-burst-stale", model: "register", about: "the same burst, and halfway through the reads' calls one " +
			"client's three sequential reads return a, b, a: write(a) happened once",
			gen: func(n int, rng *rand.Rand) *lin.History { return registerBurst(n, rng, 10, true) }},
		{name: "register-writes-stale", model: "register", about: "the same with n/10 concurrent writes (at least 3) " +
			"instead of 10: the number of writes whose order is open grows with n",
			gen: func(n int, rng *rand.Rand) *lin.History { return registerBurst(n, rng, max(n/10, 3), true) }},
		{name: "counter-inc", model: "counter", about: "n-1 concurrent increments and a read overlapping them all " +
			"that returns n, one more than possible", gen: counterOverflow},
		{name: "counter-inc-reads", model: "counter", linearizable: true, about: "n-m concurrent increments (m = n/10) " +
			"and one client's m reads during them, returning non-decreasing counts", gen: counterReads},
		{name: "cas-jepsen", model: "cas-register", linearizable: true, about: "as Jepsen tests etcd: 10 processes, " +
			"reads, writes and cas of 0..4 in equal parts, each taking 1 to 8 time units; a quarter of the writes " +
			"and cas time out (:info: half of them take effect, up to 16 units after the call) and their process " +
			"is replaced",
			gen: func(n int, rng *rand.Rand) *lin.History { return casJepsen(n, rng, false) }},
		{name: "cas-jepsen-lost", model: "cas-register", about: "the same, with the read nearest two thirds through " +
			"the history returning nil, after writes completed",
			gen: func(n int, rng *rand.Rand) *lin.History { return casJepsen(n, rng, true) }},
		{name: "queue", model: "queue", linearizable: true, about: "n/2 concurrent enqueues of distinct values, " +
			"then one client's n/2 dequeues returning them in a random order",
			gen: func(n int, rng *rand.Rand) *lin.History { return queueBurst(n, rng, false) }},
		{name: "queue-dup", model: "queue", about: "the same, with the last dequeue returning the value " +
			"the one before it returned, so that one value comes out twice",
			gen: func(n int, rng *rand.Rand) *lin.History { return queueBurst(n, rng, true) }},
		{name: "kv-info", model: "kv", linearizable: true, about: "20 clients, gets and appends of unique tokens " +
			"on n/50 keys (at least 4), timed as in cas-jepsen; 30% of the appends time out (:info, half take effect)",
			gen: func(n int, rng *rand.Rand) *lin.History { return kvInfo(n, rng, false) }},
		{name: "kv-info-lost", model: "kv", about: "the same, with the get nearest two thirds through the " +
			"history missing the token of an append that completed before it was called",
			gen: func(n int, rng *rand.Rand) *lin.History { return kvInfo(n, rng, true) }},
	}
}

// generate makes shape s's history of size n from seed: the same seed
// and size always give the same history.
func (s *shape) generate(n int, seed uint64) (*lin.History, error) {
	h := fnv.New64a()
	h.Write([]byte(s.name))
	rng := rand.New(rand.NewPCG(seed, h.Sum64()^uint64(n)))
	hist := s.gen(n, rng)
	hist.Model = s.model
	hist.Source = fmt.Sprintf("%s n=%d seed=%d", s.name, n, seed)
	hist.Sort()
	if err := hist.Validate(); err != nil {
		return nil, fmt.Errorf("generated history %s: %w", hist.Source, err)
	}
	return hist, nil
}

// builder collects operations.
type builder struct{ h lin.History }

func (b *builder) add(o lin.Op) { b.h.Ops = append(b.h.Ops, o) }

// returns gives k operations return positions from start on, in a random
// order.
func returns(rng *rand.Rand, k int, start int64) []int64 {
	r := make([]int64, k)
	for i, p := range rng.Perm(k) {
		r[i] = start + int64(p)
	}
	return r
}

// registerReads generates register-reads: see shapes.
func registerReads(n int, rng *rand.Rand) *lin.History {
	var b builder
	reads := max(n-3, 1)
	b.add(lin.Op{Client: 0, Name: "write", Input: lin.IntValue(1), Call: 0, Return: 1})
	ret := returns(rng, reads+2, int64(reads)+4)
	for i := 0; i < reads; i++ {
		b.add(lin.Op{Client: 1 + i, Name: "read", Output: lin.IntValue(1), Call: 2 + int64(i), Return: ret[i]})
	}
	b.add(lin.Op{Client: reads + 1, Name: "write", Input: lin.IntValue(2), Call: int64(reads) + 2, Return: ret[reads]})
	b.add(lin.Op{Client: reads + 2, Name: "read", Output: lin.IntValue(3), Call: int64(reads) + 3, Return: ret[reads+1]})
	return &b.h
}

// registerBurst makes w concurrent writes of 1..w and about n-w
// concurrent reads, each returning one of the values; with stale, one
// more client's sequential reads return a, c, a halfway through.
func registerBurst(n int, rng *rand.Rand, w int, stale bool) *lin.History {
	var b builder
	reads := max(n-w, 1)
	if stale {
		reads = max(reads-3, 1)
	}
	t := int64(0)
	for i := 0; i < w; i++ {
		b.add(lin.Op{Client: i, Name: "write", Input: lin.IntValue(int64(i + 1)), Call: t})
		t++
	}
	client := w
	var open []int // operations still to return, at the end
	for i := 0; i < w; i++ {
		open = append(open, i)
	}
	for i := 0; i < reads; i++ {
		if stale && i == reads/2 {
			// Halfway through the reads' calls, one client's three
			// sequential reads return a, c, a.
			a, c := int64(rng.IntN(w)+1), int64(rng.IntN(w-1)+1)
			if c >= a {
				c++
			}
			for _, v := range []int64{a, c, a} {
				b.add(lin.Op{Client: client, Name: "read", Output: lin.IntValue(v), Call: t, Return: t + 1})
				t += 2
			}
			client++
		}
		open = append(open, len(b.h.Ops))
		b.add(lin.Op{Client: client, Name: "read", Output: lin.IntValue(int64(rng.IntN(w) + 1)), Call: t})
		client++
		t++
	}
	ret := returns(rng, len(open), t)
	for i, o := range open {
		b.h.Ops[o].Return = ret[i]
	}
	return &b.h
}

// counterOverflow generates counter-inc: see shapes.
func counterOverflow(n int, rng *rand.Rand) *lin.History {
	var b builder
	incs := max(n-1, 1)
	ret := returns(rng, incs+1, int64(incs)+1)
	for i := 0; i < incs; i++ {
		b.add(lin.Op{Client: i, Name: "inc", Call: int64(i), Return: ret[i]})
	}
	b.add(lin.Op{Client: incs, Name: "read", Output: lin.IntValue(int64(incs) + 1), Call: int64(incs), Return: ret[incs]})
	return &b.h
}

// counterReads generates counter-inc-reads: see shapes.
func counterReads(n int, rng *rand.Rand) *lin.History {
	var b builder
	reads := max(n/10, 1)
	incs := max(n-reads, 1)
	for i := 0; i < incs; i++ {
		b.add(lin.Op{Client: i, Name: "inc", Call: int64(i)})
	}
	vals := make([]int64, reads)
	for i := range vals {
		vals[i] = rng.Int64N(int64(incs) + 1)
	}
	slices.Sort(vals)
	t := int64(incs)
	for _, v := range vals {
		b.add(lin.Op{Client: incs, Name: "read", Output: lin.IntValue(v), Call: t, Return: t + 1})
		t += 2
	}
	ret := returns(rng, incs, t)
	for i := 0; i < incs; i++ {
		b.h.Ops[i].Return = ret[i]
	}
	return &b.h
}

// queueBurst generates queue and queue-dup (dup): see shapes.
func queueBurst(n int, rng *rand.Rand, dup bool) *lin.History {
	var b builder
	m := max(n/2, 2)
	ret := returns(rng, m, int64(m))
	for i := 0; i < m; i++ {
		b.add(lin.Op{Client: i, Name: "enqueue", Input: lin.IntValue(int64(i + 1)), Call: int64(i), Return: ret[i]})
	}
	order := rng.Perm(m)
	if dup {
		order[m-1] = order[m-2]
	}
	t := int64(2 * m)
	for _, v := range order {
		b.add(lin.Op{Client: m, Name: "dequeue", Output: lin.IntValue(int64(v + 1)), Call: t, Return: t + 1})
		t += 2
	}
	return &b.h
}

// simOp is a generated operation with the moment it takes effect.
type simOp struct {
	op    lin.Op
	point int64 // when it takes effect; -1 for never
}

// simulate lays out n operations of `clients` clients, Jepsen style: each
// client calls an operation 1 to 3 units after its previous one returned,
// and it returns 1 to 8 units later, taking effect at a random moment in
// between. next says what the operation is and whether it may time out;
// one that does (with probability pInfo) is :info: it takes effect with
// probability 1/2, at a random moment up to 16 units after its call (so
// perhaps after the client moved on), and its client is replaced by a new
// one (Jepsen's new process), which starts 8 units after the call. The
// operations are then applied in the order of their effects with apply,
// which fills in outputs.
func simulate(rng *rand.Rand, n, clients int, pInfo float64, next func(op *lin.Op) (mayInfo bool), apply func(op *lin.Op)) []simOp {
	type slot struct {
		client int
		free   int64 // when it may call again
	}
	slots := make([]slot, clients)
	for i := range slots {
		slots[i] = slot{client: i, free: int64(rng.IntN(4))}
	}
	nextClient := clients
	ops := make([]simOp, 0, n)
	for len(ops) < n {
		// The slot free soonest calls next (ties: the lowest).
		s := 0
		for i := range slots {
			if slots[i].free < slots[s].free {
				s = i
			}
		}
		call := slots[s].free + 1 + int64(rng.IntN(3))
		o := lin.Op{Client: slots[s].client, Call: call}
		mayInfo := next(&o)
		if mayInfo && rng.Float64() < pInfo {
			o.Status, o.Return = lin.Info, lin.Never
			point := int64(-1)
			if rng.IntN(2) == 0 {
				point = call + int64(rng.IntN(17))
			}
			ops = append(ops, simOp{op: o, point: point})
			slots[s] = slot{client: nextClient, free: call + 8}
			nextClient++
			continue
		}
		o.Return = call + 1 + int64(rng.IntN(8))
		ops = append(ops, simOp{op: o, point: call + int64(rng.Int64N(o.Return-call+1))})
		slots[s].free = o.Return
	}
	order := make([]int, 0, len(ops))
	for i := range ops {
		if ops[i].point >= 0 {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return int(ops[a].point - ops[b].point) })
	for _, i := range order {
		apply(&ops[i].op)
	}
	return ops
}

// historyOf returns the operations of ops as a history.
func historyOf(ops []simOp) *lin.History {
	h := &lin.History{Ops: make([]lin.Op, len(ops))}
	for i := range ops {
		h.Ops[i] = ops[i].op
	}
	return h
}

// twoThirds returns the index of the operation, among those ok reports,
// whose call is nearest two thirds of the way through ops, or -1.
func twoThirds(ops []simOp, ok func(o *lin.Op) bool) int {
	var last int64
	for i := range ops {
		last = max(last, ops[i].op.Call)
	}
	target := last * 2 / 3
	best := -1
	for i := range ops {
		o := &ops[i].op
		if !ok(o) {
			continue
		}
		if best < 0 || abs(o.Call-target) < abs(ops[best].op.Call-target) {
			best = i
		}
	}
	return best
}

// fresh returns a client that ops do not use (it and the next ones are
// free) and a position after all of theirs.
func fresh(ops []simOp) (client int, at int64) {
	for i := range ops {
		o := &ops[i].op
		client = max(client, o.Client+1)
		at = max(at, o.Call+1)
		if o.Return != lin.Never {
			at = max(at, o.Return+1)
		}
	}
	return client, at
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// casJepsen generates cas-jepsen and cas-jepsen-lost (lost): see shapes.
func casJepsen(n int, rng *rand.Rand, lost bool) *lin.History {
	var state lin.Value // nil: absent
	ops := simulate(rng, n, 10, 0.25, func(o *lin.Op) bool {
		switch rng.IntN(3) {
		case 0:
			o.Name = "read"
			return false
		case 1:
			o.Name, o.Input = "write", lin.IntValue(rng.Int64N(5))
		default:
			o.Name, o.Input = "cas", lin.ListValue(lin.IntValue(rng.Int64N(5)), lin.IntValue(rng.Int64N(5)))
		}
		return true
	}, func(o *lin.Op) {
		switch o.Name {
		case "read":
			o.Output = state
		case "write":
			state = o.Input
		case "cas":
			ok := o.Input.L[0].Equal(state)
			if ok {
				state = o.Input.L[1]
			}
			if o.Status == lin.OK {
				o.Output = lin.BoolValue(ok)
			}
		}
	})
	if lost {
		// A read called after some write completed returns nil: the
		// register is never absent again.
		firstWrite := int64(lin.Never)
		for i := range ops {
			if o := &ops[i].op; o.Name == "write" && o.Status == lin.OK {
				firstWrite = min(firstWrite, o.Return)
			}
		}
		if i := twoThirds(ops, func(o *lin.Op) bool { return o.Name == "read" && o.Call > firstWrite }); i >= 0 {
			ops[i].op.Output = lin.Value{}
		} else {
			// Too short a history: a write, then a read of nil.
			c, t := fresh(ops)
			ops = append(ops, simOp{op: lin.Op{Client: c, Name: "write", Input: lin.IntValue(0), Call: t, Return: t + 1}},
				simOp{op: lin.Op{Client: c + 1, Name: "read", Call: t + 2, Return: t + 3}})
		}
	}
	return historyOf(ops)
}

// kvInfo generates kv-info and kv-info-lost (lost): see shapes.
func kvInfo(n int, rng *rand.Rand, lost bool) *lin.History {
	keys := max(n/50, 4)
	state := make(map[string]string)
	count := 0
	ops := simulate(rng, n, 20, 0.3, func(o *lin.Op) bool {
		o.Key = lin.StringValue(strconv.Itoa(rng.IntN(keys)))
		if rng.IntN(2) == 0 {
			o.Name = "get"
			return false
		}
		count++
		o.Name, o.Input = "append", lin.StringValue(fmt.Sprintf("<%d>", count))
		return true
	}, func(o *lin.Op) {
		switch o.Name {
		case "get":
			o.Output = lin.StringValue(state[o.Key.S])
		case "append":
			state[o.Key.S] += o.Input.S
		}
	})
	if lost {
		// Drop from a get's value the token of an append on its key that
		// returned before the get was called.
		appended := func(get *lin.Op) string {
			token := ""
			for j := range ops {
				p := &ops[j].op
				if p.Name == "append" && p.Status == lin.OK && p.Key.S == get.Key.S && p.Return < get.Call {
					token = p.Input.S
				}
			}
			return token
		}
		if i := twoThirds(ops, func(o *lin.Op) bool { return o.Name == "get" && appended(o) != "" }); i >= 0 {
			get := &ops[i].op
			get.Output = lin.StringValue(strings.Replace(get.Output.S, appended(get), "", 1))
		} else {
			// Too short a history: an append to a new key, then a get
			// that misses it.
			c, t := fresh(ops)
			key := lin.StringValue(strconv.Itoa(keys))
			ops = append(ops, simOp{op: lin.Op{Client: c, Name: "append", Key: key, Input: lin.StringValue("<0>"), Call: t, Return: t + 1}},
				simOp{op: lin.Op{Client: c + 1, Name: "get", Key: key, Output: lin.StringValue(""), Call: t + 2, Return: t + 3}})
		}
	}
	return historyOf(ops)
}
