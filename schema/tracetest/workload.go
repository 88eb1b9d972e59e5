package tracetest

import (
	"math/rand/v2"

	"github.com/mgtrace/mgtrace/schema"
)

// Workload generates the events of a program that builds and repeatedly
// walks linked structures on the heap: basic blocks, loads and stores of
// node fields through a base register, address derivations, calls into an
// allocator with returns, and occasional system calls. The mix is about 30%
// blocks, 40% loads, 20% stores, 5% derivations, 4% calls and returns and a
// few syscalls, with two threads switching now and then.
type Workload struct {
	rng     *rand.Rand
	queue   []schema.Event // events of the current iteration
	next    int            // next event of queue to hand out
	nodes   []uint64       // heap addresses of list nodes
	cur     int
	thread  schema.ThreadID
	created bool // thread 2 exists
	sp      uint64
	brk     uint64
	emitted uint64
}

// NewWorkload returns a workload seeded with seed.
func NewWorkload(seed uint64) *Workload {
	w := &Workload{rng: rand.New(rand.NewPCG(seed, 99)), thread: 1, sp: 0x7ffc_1234_5670, brk: 0x5555_5559_0000}
	for i := 0; i < 4096; i++ {
		w.nodes = append(w.nodes, 0x5555_5556_0000+uint64(i)*48+uint64(w.rng.IntN(3))*16)
	}
	w.rng.Shuffle(len(w.nodes), func(i, j int) { w.nodes[i], w.nodes[j] = w.nodes[j], w.nodes[i] })
	return w
}

// Next sets ev to the next event.
func (w *Workload) Next(ev *schema.Event) {
	if w.next == len(w.queue) {
		w.refill()
	}
	*ev = w.queue[w.next]
	w.next++
	w.emitted++
}

func (w *Workload) push(ev schema.Event) {
	ev.Thread = w.thread
	w.queue = append(w.queue, ev)
}

// refill queues one loop iteration's events (and sometimes a call or a
// syscall or a thread switch).
func (w *Workload) refill() {
	w.queue, w.next = w.queue[:0], 0
	node := w.nodes[w.cur]
	next := w.nodes[(w.cur+1)%len(w.nodes)]
	w.cur = (w.cur + 1) % len(w.nodes)
	const loop = 0x40_1230
	w.push(schema.Event{Kind: schema.KindBlock, PC: loop, Count: 6})
	w.push(schema.Event{Kind: schema.KindLoad, PC: loop + 4, Addr: node, Size: 4, Value: uint64(w.cur & 0xff), BaseReg: 4, Base: node})
	w.push(schema.Event{Kind: schema.KindLoad, PC: loop + 7, Addr: node + 8, Size: 8, Value: next, BaseReg: 4, Base: node})
	if w.rng.IntN(2) == 0 {
		w.push(schema.Event{Kind: schema.KindStore, PC: loop + 11, Addr: node, Size: 4, Value: uint64(w.cur&0xff) + 1, BaseReg: 4, Base: node})
	}
	w.push(schema.Event{Kind: schema.KindBlock, PC: loop + 14, Count: 3})
	w.push(schema.Event{Kind: schema.KindLoad, PC: loop + 18, Addr: w.sp - 24, Size: 8, Value: uint64(w.emitted), BaseReg: 6, Base: w.sp})
	w.push(schema.Event{Kind: schema.KindStore, PC: loop + 22, Addr: w.sp - 24, Size: 8, Value: uint64(w.emitted + 1), BaseReg: 6, Base: w.sp})
	if w.rng.IntN(8) == 0 {
		w.push(schema.Event{Kind: schema.KindDerive, PC: loop + 26, Addr: next + 16, Reg: 1, BaseReg: 4, Base: next})
	}
	if w.rng.IntN(16) == 0 {
		w.call(node)
	}
	if w.rng.IntN(20000) == 0 {
		w.brk += 0x21000
		w.push(schema.Event{Kind: schema.KindSyscall, PC: 0x7f00_0012_3456, Num: 12, Args: [6]uint64{w.brk}, Value: w.brk})
	}
	if w.rng.IntN(5000) == 0 {
		if !w.created {
			w.push(schema.Event{Kind: schema.KindThreadCreate, TID: 2})
			w.created = true
		}
		if w.thread == 1 {
			w.thread = 2
		} else {
			w.thread = 1
		}
		w.push(schema.Event{Kind: schema.KindThreadSwitch, TID: w.thread})
	}
}

// call queues a call into an allocator-like function and its return.
func (w *Workload) call(arg uint64) {
	const fn = 0x7f00_0040_1000
	w.push(schema.Event{Kind: schema.KindCall, PC: 0x40_1260, Addr: fn, SP: w.sp - 8, Args: [6]uint64{48, arg, 0, 0, 0, 0}})
	w.push(schema.Event{Kind: schema.KindBlock, PC: fn, Count: 12})
	chunk := w.nodes[w.rng.IntN(len(w.nodes))]
	w.push(schema.Event{Kind: schema.KindLoad, PC: fn + 20, Addr: chunk - 8, Size: 8, Value: 0x31, BaseReg: 1, Base: chunk - 16})
	w.push(schema.Event{Kind: schema.KindStore, PC: fn + 27, Addr: chunk - 8, Size: 8, Value: 0x30, BaseReg: 1, Base: chunk - 16})
	w.push(schema.Event{Kind: schema.KindBlock, PC: fn + 31, Count: 4})
	w.push(schema.Event{Kind: schema.KindReturn, PC: fn + 40, Addr: 0x40_1265, SP: w.sp, Value: chunk})
}
