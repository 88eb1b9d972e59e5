package bugs

import (
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
)

// leakScan is the reachability of the live blocks when the program ends,
// from the pointers the run left in memory (the paper's P): the values
// the program stored into memory outside the heap (globals, the live part
// of each stack) and the pointers the registers hold are the roots, a
// value stored in a live block that points into another is an edge. A pointer to a block's first
// byte is a start pointer, any other into it an interior one.
type leakScan struct {
	reachable      []bool // through any pointers
	startReachable []bool // through start pointers only
	lostRoot       []bool // unreachable, and no other unreachable block points to it (one per unreachable cycle)
}

type leakEdge struct {
	to       uint32
	interior bool
}

// scanLeaks computes the reachability of the live blocks.
func (e *engine) scanLeaks() *leakScan {
	n := len(e.blocks)
	ls := &leakScan{reachable: make([]bool, n), startReachable: make([]bool, n), lostRoot: make([]bool, n)}
	edges := make(map[uint32][]leakEdge)
	var roots []leakEdge
	live := func(id uint32) bool { return id != 0 && int(id) < n && !e.blocks[id].freed }
	deadStack := func(a uint64) bool {
		for _, th := range e.threads {
			if th.stackHi == 0 || a+64<<10 < th.stackLo || a > th.stackHi+4<<10 {
				continue
			}
			if th.exited && !e.fatal {
				return a <= th.stackHi // the stack, not the thread's control block above it
			}
			return a < th.lastSP // the scan is made at a return or a call: no red zone is live
		}
		return false
	}
	// Every word's value that points into a live block is a pointer to
	// it, whatever the model knows of its provenance (a conservative
	// scan, as memcheck's).
	e.mem.values(func(a, v uint64) {
		to := e.live.Find(v)
		if to == 0 {
			return
		}
		ed := leakEdge{to: to, interior: v != e.blocks[to].base}
		if from := e.live.Find(a); from != 0 {
			edges[from] = append(edges[from], ed)
			return
		}
		if e.freed.Find(a) != 0 || deadStack(a) {
			return
		}
		roots = append(roots, ed)
	})
	for _, th := range e.threads {
		if th.exited && !e.fatal {
			continue
		}
		for _, r := range calleeSaved {
			for _, s := range th.regs[r] {
				if live(s.prov) {
					roots = append(roots, leakEdge{to: s.prov, interior: s.off != 0})
				}
			}
		}
	}
	var walk func(seen []bool, from []leakEdge, startOnly bool)
	walk = func(seen []bool, from []leakEdge, startOnly bool) {
		stack := append([]leakEdge(nil), from...)
		for len(stack) > 0 {
			ed := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[ed.to] || (startOnly && ed.interior) {
				continue
			}
			seen[ed.to] = true
			stack = append(stack, edges[ed.to]...)
		}
	}
	walk(ls.reachable, roots, false)
	walk(ls.startReachable, roots, true)
	// Unreachable blocks that another unreachable block points to are
	// lost through it (memcheck's "indirectly lost").
	pointed := make([]bool, n)
	for from, es := range edges {
		if ls.reachable[from] {
			continue
		}
		for _, ed := range es {
			if ed.to != from {
				pointed[ed.to] = true
			}
		}
	}
	covered := make([]bool, n)
	mark := func(id uint32) {
		ls.lostRoot[id] = true
		walk(covered, []leakEdge{{to: id}}, false)
	}
	for id := uint32(1); int(id) < n; id++ {
		if live(id) && !ls.reachable[id] && !pointed[id] {
			mark(id)
		}
	}
	// What is left unreachable and uncovered is a cycle: one root each.
	for id := uint32(1); int(id) < n; id++ {
		if live(id) && !ls.reachable[id] && !covered[id] {
			mark(id)
		}
	}
	return ls
}

// calleeSaved are the registers whose pointers count as roots when main
// returns or exit is called; the others are scratch, which the C
// library's exit code overwrites before memcheck would look.
var calleeSaved = [...]int{int(tracepb.Register_RBX), int(tracepb.Register_RBP), int(tracepb.Register_R12),
	int(tracepb.Register_R13), int(tracepb.Register_R14), int(tracepb.Register_R15)}

// noteExit scans for leaks when main returns or exit is called: the
// pointers the program held then decide what it leaked. Exit handlers
// and the C library's own clean-up may drop pointers to blocks they do
// not free (glibc's stdio buffers); memcheck does not count those, since
// it has the C library free them first.
func (e *engine) noteExit(name string) {
	if e.scan == nil && len(e.rules.end) > 0 && (name == "main" || name == "exit") {
		e.scan = e.scanLeaks()
	}
}

// atEnd runs the rules bound to ret main, once the run is over, on the
// blocks still allocated then, with the reachability noteExit found (or,
// when the run ended otherwise, found now).
func (e *engine) atEnd() {
	if len(e.rules.end) == 0 {
		return
	}
	if e.regions {
		if e.outside && e.ranOutside {
			// The run ended outside a region (it ran on after the last
			// one ended): what its memory held then is not known, so
			// nothing is said about its leaks.
			e.report.Stats.EndSkipped = true
			return
		}
		// Blocks allocated outside the regions were stored where the
		// trace does not see.
		e.endOnly = true
	}
	if e.scan == nil {
		e.scan = e.scanLeaks()
	}
	in := e.cur
	th := e.curT
	if in == nil || th == nil {
		return
	}
	for _, c := range e.rules.end {
		e.report.Stats.Points++
		e.run(c, Value{}, in, th)
	}
}

// threadEvent notes thread exits (their stacks are no longer roots) and
// a run killed by a signal (its threads' stacks stay what they were when
// it died: the thread exits the recorder reports then are no returns).
func (e *engine) threadEvent(ev *schema.Event) {
	switch ev.Kind {
	case schema.KindThreadExit:
		e.thread(ev.Thread).exited = true
	case schema.KindExit:
		e.fatal = ev.Num != 0
	}
}
