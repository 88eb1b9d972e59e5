package tracehist

import (
	"fmt"
	"slices"

	"github.com/mgtrace/mgtrace/lin"
)

// job is one evaluation of an operation's clauses at one point of the
// trace (its call or its return). It reads memory as it was at that point:
// bytes the shadow knew then are captured as it reads them; a byte the
// trace had not shown yet makes the job wait for the first event that
// touches it. A LOAD gives the byte's value at the evaluation point
// (nothing wrote it in between, or the trace would show the store); a
// STORE, or a system call that fills a buffer, makes it unknowable. The
// job then runs again from the start, with the bytes it captured and
// learned. A byte it did not need before, it reads now: one the trace
// still has not shown, it waits for; one the trace shows now, it takes
// when nothing wrote its page since the evaluation point (the value is
// then the same), and gives up on otherwise.
type job struct {
	x        *extractor
	rec      *opRec
	atReturn bool
	seq      uint64 // the evaluation point
	env      env

	live     bool            // running at the evaluation point itself
	captured map[uint64]byte // bytes read at the evaluation point
	missing  map[uint64]bool // bytes waited for
	resolved map[uint64]byte // waited-for bytes, from the first LOAD after the point
	cur      *access         // the memory event being handled while rerunning
	lost     *lostError      // a waited-for byte became unknowable
	clobbers int             // len(x.clobbered) at the evaluation point
	done     bool
}

// access is a memory event: its bytes and whether it was a load.
type access struct {
	addr uint64
	b    []byte
	load bool
}

// lostError is a byte whose value at the evaluation point the trace does
// not give.
type lostError struct {
	addr uint64
	why  string
}

func (e *lostError) Error() string {
	return fmt.Sprintf("memory at %#x: its value at this point is not known (%s)", e.addr, e.why)
}

// read implements memReader for the job's evaluation.
func (j *job) read(addr uint64, p []byte) error {
	for i := range p {
		a := addr + uint64(i)
		if j.lost != nil && a == j.lost.addr {
			return j.lost
		}
		if b, ok := j.captured[a]; ok {
			p[i] = b
			continue
		}
		if b, ok := j.resolved[a]; ok {
			p[i] = b
			continue
		}
		if j.missing[a] {
			return &unseenError{addr: a}
		}
		b, known := j.x.mem.byteAt(a)
		if j.live {
			if !known {
				j.wait(a)
				return &unseenError{addr: a}
			}
			j.captured[a] = b
			p[i] = b
			continue
		}
		// Running again, later: a byte unknown now was unknown at the
		// evaluation point too.
		if c := j.cur; c != nil && !known && a-c.addr < uint64(len(c.b)) {
			if !c.load {
				return &lostError{addr: a, why: "the trace shows it first written, later"}
			}
			j.resolved[a] = c.b[a-c.addr]
			p[i] = c.b[a-c.addr]
			continue
		}
		if !known && j.clobberedSince(a) {
			return &lostError{addr: a, why: "a system call wrote it before the trace showed it"}
		}
		if !known {
			j.wait(a)
			return &unseenError{addr: a}
		}
		// Known now: it held the same value at the evaluation point if
		// nothing wrote its page since.
		if j.x.mem.unwrittenSince(a, j.seq) {
			j.captured[a] = b
			p[i] = b
			continue
		}
		return &lostError{addr: a, why: "the trace shows it written after this point, before it was read"}
	}
	return nil
}

// clobberedSince reports whether a system call wrote the byte at a after
// the evaluation point.
func (j *job) clobberedSince(a uint64) bool {
	for _, c := range j.x.clobbered[j.clobbers:] {
		if a-c.addr < c.n {
			return true
		}
	}
	return false
}

// wait registers the job as waiting for the byte at a.
func (j *job) wait(a uint64) {
	if j.missing == nil {
		j.missing = make(map[uint64]bool)
		j.resolved = make(map[uint64]byte)
	}
	j.missing[a] = true
	x := j.x
	x.waiting[a] = append(x.waiting[a], j)
	x.waitPages[a>>pageBits]++
}

// unwait removes the byte at a from the waiting index, returning the jobs
// that waited for it.
func (x *extractor) unwait(a uint64) []*job {
	js, ok := x.waiting[a]
	if !ok {
		return nil
	}
	delete(x.waiting, a)
	no := a >> pageBits
	if x.waitPages[no] -= len(js); x.waitPages[no] <= 0 {
		delete(x.waitPages, no)
	}
	return js
}

// runJob runs (or reruns) j and, when it completes or fails for good,
// stores its result.
func (x *extractor) runJob(j *job) {
	var err error
	if j.atReturn {
		err = x.evalReturn(j)
	} else {
		err = x.evalCall(j)
	}
	switch {
	case j.lost != nil && (err == nil || isUnseen(err)):
		// The rerun did not reach the lost byte (it always should).
		err = j.lost
	case err != nil && isUnseen(err) && len(j.missing) > 0:
		return // waiting for memory
	}
	x.settle(j, err)
}

// settle ends j with err (nil: its results are stored).
func (x *extractor) settle(j *job, err error) {
	j.done = true
	j.captured, j.resolved = nil, nil
	for a := range j.missing {
		x.dropWaiter(a, j)
	}
	j.missing = nil
	if err == nil {
		return
	}
	rec := j.rec
	if j.atReturn {
		rec.op.Status = lin.Unknown
		rec.warn(x, "%v; the output is unknown", err)
		return
	}
	rec.callErr = err
	rec.warn(x, "%v; the operation is left out", err)
}

// dropWaiter removes j from the jobs waiting for the byte at a.
func (x *extractor) dropWaiter(a uint64, j *job) {
	js := x.waiting[a]
	i := slices.Index(js, j)
	if i < 0 {
		return
	}
	js = slices.Delete(js, i, i+1)
	if len(js) == 0 {
		delete(x.waiting, a)
	} else {
		x.waiting[a] = js
	}
	no := a >> pageBits
	if x.waitPages[no]--; x.waitPages[no] <= 0 {
		delete(x.waitPages, no)
	}
}

// mayWait reports whether some job waits for a byte of [addr, addr+n).
func (x *extractor) mayWait(addr, n uint64) bool {
	if n == 0 {
		return false
	}
	first, last := addr>>pageBits, (addr+n-1)>>pageBits
	for no := first; ; no++ {
		if x.waitPages[no] > 0 {
			return true
		}
		if no == last {
			return false
		}
	}
}

// observe hands a LOAD or STORE event to the jobs waiting for its bytes,
// before the shadow takes them.
func (x *extractor) observe(addr uint64, b []byte, load bool) {
	if !x.mayWait(addr, uint64(len(b))) {
		return
	}
	var woken []*job
	for i := range b {
		a := addr + uint64(i)
		for _, j := range x.unwait(a) {
			if j.done {
				continue
			}
			delete(j.missing, a)
			if load {
				j.resolved[a] = b[i]
			} else if j.lost == nil {
				j.lost = &lostError{addr: a, why: "the trace shows it first written, later"}
			}
			if !slices.Contains(woken, j) {
				woken = append(woken, j)
			}
		}
	}
	acc := &access{addr: addr, b: b, load: load}
	for _, j := range woken {
		if j.done {
			continue
		}
		j.live = false
		j.cur = acc
		x.runJob(j)
		j.cur = nil
	}
}

// clobber tells the jobs waiting for bytes of [addr, addr+n) that
// something the trace does not show wrote them.
func (x *extractor) clobber(addr, n uint64) {
	if !x.mayWait(addr, n) {
		return
	}
	for i := uint64(0); i < n; i++ {
		a := addr + i
		for _, j := range x.unwait(a) {
			if j.done {
				continue
			}
			delete(j.missing, a)
			if j.lost == nil {
				j.lost = &lostError{addr: a, why: "a system call wrote it before the trace showed it"}
			}
			x.runJob(j)
		}
	}
}

// expireJobs ends the evaluations still waiting when the trace ends: the
// memory they need was never shown.
func (x *extractor) expireJobs() {
	var js []*job
	seen := make(map[*job]bool)
	for _, l := range x.waiting {
		for _, j := range l {
			if !j.done && !seen[j] {
				seen[j] = true
				js = append(js, j)
			}
		}
	}
	slices.SortFunc(js, func(a, b *job) int {
		switch {
		case a.seq < b.seq:
			return -1
		case a.seq > b.seq:
			return 1
		}
		return 0
	})
	for _, j := range js {
		first := uint64(0)
		have := false
		for a := range j.missing {
			if !have || a < first {
				first, have = a, true
			}
		}
		x.settle(j, x.jobErr(j, &unseenError{addr: first}))
	}
}

// jobErr reruns j to get the error its evaluation ends with, for the
// message; err is used when the rerun gives none.
func (x *extractor) jobErr(j *job, err error) error {
	j.live = false
	var got error
	if j.atReturn {
		got = x.evalReturn(j)
	} else {
		got = x.evalCall(j)
	}
	if got != nil {
		return got
	}
	return err
}
