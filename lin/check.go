package lin

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"time"
)

// Options control a check.
type Options struct {
	// Timeout bounds the whole check, minimisation included; 0 means no
	// limit. A search cut off by it gives Undecided, never Linearizable.
	Timeout time.Duration
	// Longest is how many longest partial linearizations a counterexample
	// keeps (default 3; negative keeps none).
	Longest int
	// NoMinimize skips minimising the counterexample: it is then the whole
	// prefix of the failing partition up to the first unexplained
	// response.
	NoMinimize bool
	// Workers is how many partitions are searched at once (default
	// GOMAXPROCS). The partitions take turns, so that one that fails
	// quickly stops the others early whatever its place in key order.
	Workers int
	// NoCounterexample gives the verdict only: a history that is not
	// linearizable gets no Counterexample (which costs more searches).
	NoCounterexample bool
}

// ActionError is an operation the model cannot run.
type ActionError struct {
	Op     int
	Source string
	Err    error
}

// Error names the operation and says why.
func (e *ActionError) Error() string {
	if e.Source != "" {
		return fmt.Sprintf("%s: %v", e.Source, e.Err)
	}
	return fmt.Sprintf("operation %d: %v", e.Op, e.Err)
}

// Unwrap returns the model's error.
func (e *ActionError) Unwrap() error { return e.Err }

// partition is the operations of one key.
type partition struct {
	key string
	ids []int // indexes into History.Ops, in order
}

// Check decides whether h is linearizable with respect to m. It returns
// an error for a history that is not well formed or that holds an
// operation m cannot run; the verdict is in the Result.
func Check(ctx context.Context, m Model, h *History, opt Options) (*Result, error) {
	start := time.Now()
	if err := h.Validate(); err != nil {
		return nil, err
	}
	if opt.Longest == 0 {
		opt.Longest = 3
	}
	if opt.Longest < 0 {
		opt.Longest = 0
	}
	var deadline time.Time
	if opt.Timeout > 0 {
		deadline = start.Add(opt.Timeout)
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	acts := make([]Action, len(h.Ops))
	res := &Result{Model: m.Name(), Source: h.Source, Operations: len(h.Ops)}
	for i := range h.Ops {
		a, err := m.Action(&h.Ops[i])
		if err != nil {
			return nil, &ActionError{Op: i, Source: h.Ops[i].Source, Err: err}
		}
		acts[i] = a
		if h.Ops[i].Status.Optional() {
			res.Optional++
		}
	}
	parts := partitionOps(m, h, acts)
	res.Partitions = len(parts)

	type outcome struct {
		ran   bool
		ok    bool
		err   error
		stats Stats
	}
	outs := make([]outcome, len(parts))
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	runPartitions(sctx, cancel, m, h, parts, acts, deadline, opt.Workers, func(p int, ok bool, err error, st Stats) {
		outs[p] = outcome{ran: true, ok: ok, err: err, stats: st}
	})

	failing := -1
	for p, o := range outs {
		res.Stats.add(o.stats)
		switch {
		case !o.ran || o.err != nil:
		case o.ok:
			res.Decided++
		default:
			res.Decided++
			if failing < 0 {
				failing = p
			}
		}
	}
	switch {
	case failing >= 0 && opt.NoCounterexample:
		res.Verdict = NotLinearizable
	case failing >= 0:
		res.Verdict = NotLinearizable
		cx, st := counterexample(ctx, m, h, parts[failing], deadline, opt)
		res.Counterexample = cx
		res.Stats.add(st)
		res.Stats.MinimizeChecks = st.MinimizeChecks
	case res.Decided == len(parts):
		res.Verdict = Linearizable
	default:
		res.Verdict = Undecided
		for p, o := range outs {
			if !o.ran || o.err != nil {
				res.UndecidedKeys = append(res.UndecidedKeys, parts[p].key)
			}
		}
	}
	res.Stats.Elapsed = time.Since(start)
	return res, nil
}

// sliceSteps is how many steps a partition's search runs before another
// partition gets its turn.
const sliceSteps = 20000

// runPartitions searches the partitions on workers goroutines (default:
// GOMAXPROCS) in turns of sliceSteps steps, round robin, so that a
// partition that fails quickly is found early whatever its place in key
// order and however long the others would take; a failure cancels the
// rest. done is called once for each partition whose search ended
// (never concurrently).
func runPartitions(ctx context.Context, cancel context.CancelFunc, m Model, h *History, parts []partition, acts []Action,
	deadline time.Time, workers int, done func(p int, ok bool, err error, st Stats)) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	type task struct {
		p int
		s *search
	}
	queue := make(chan task, len(parts))
	for p := range parts {
		queue <- task{p: p}
	}
	var mu sync.Mutex
	left := len(parts)
	var wg sync.WaitGroup
	for w := 0; w < workers && w < len(parts); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if left == 0 || ctx.Err() != nil {
					mu.Unlock()
					return
				}
				mu.Unlock()
				var t task
				select {
				case t = <-queue:
				default:
					// Every remaining partition is held by another
					// worker: nothing to do.
					return
				}
				if t.s == nil {
					t.s = newSearch(ctx, m, searchOps(m, h, parts[t.p].ids, acts), 0, deadline)
				}
				fin, ok, err := t.s.resume(sliceSteps)
				if !fin {
					queue <- t
					continue
				}
				mu.Lock()
				left--
				done(t.p, ok, err, t.s.stats)
				mu.Unlock()
				if err == nil && !ok {
					cancel() // one failing partition decides the history
				}
			}
		}()
	}
	wg.Wait()
	// Searches stopped between turns (time ran out, or another partition
	// failed) still count their work.
	close(queue)
	for t := range queue {
		if t.s != nil {
			done(t.p, false, errTimeout{}, t.s.stats)
		}
	}
}

// add sums counters.
func (s *Stats) add(t Stats) {
	s.Steps += t.Steps
	s.Configurations += t.Configurations
	s.Forced += t.Forced
	s.Symmetric += t.Symmetric
	s.Dominated += t.Dominated
	s.Absorbed += t.Absorbed
}

// partitionOps splits h by the model's partition keys, or returns one
// partition when the model has none or an action touches every key.
func partitionOps(m Model, h *History, acts []Action) []partition {
	all := func() []partition {
		ids := make([]int, len(h.Ops))
		for i := range ids {
			ids[i] = i
		}
		return []partition{{ids: ids}}
	}
	pm, ok := m.(Partitioner)
	if !ok {
		return all()
	}
	byKey := make(map[string]int)
	var parts []partition
	for i, a := range acts {
		k, ok := pm.PartitionKey(a)
		if !ok {
			return all()
		}
		p, seen := byKey[k]
		if !seen {
			p = len(parts)
			byKey[k] = p
			parts = append(parts, partition{key: k})
		}
		parts[p].ids = append(parts[p].ids, i)
	}
	sort.SliceStable(parts, func(a, b int) bool { return parts[a].key < parts[b].key })
	if len(parts) == 0 {
		return all()
	}
	return parts
}

// searchOps prepares the operations ids of h for a search.
func searchOps(m Model, h *History, ids []int, acts []Action) []searchOp {
	ops := make([]searchOp, len(ids))
	classes := make(map[string]int32)
	var key []byte
	for i, id := range ids {
		o := &h.Ops[id]
		key = classKey(key[:0], o)
		c, ok := classes[string(key)]
		if !ok {
			c = int32(len(classes))
			classes[string(key)] = c
		}
		ops[i] = searchOp{op: o, act: acts[id], call: o.Call, ret: o.Return,
			optional: o.Status.Optional(), class: c}
	}
	markReadOnly(m, ops)
	return ops
}

// markReadOnly fills in searchOp.readOnly from the model.
func markReadOnly(m Model, ops []searchOp) {
	ro, ok := m.(ReadOnlyModel)
	if !ok {
		return
	}
	for i := range ops {
		ops[i].readOnly = ro.ReadOnly(ops[i].act)
	}
}

// classKey encodes what makes two operations identical for the model.
func classKey(b []byte, o *Op) []byte {
	b = append(b, o.Name...)
	b = append(b, 0)
	b = append(b, byte(o.Status))
	b = o.Key.AppendKey(b)
	b = o.Input.AppendKey(b)
	if o.Status == OK {
		b = o.Output.AppendKey(b)
	}
	return b
}
