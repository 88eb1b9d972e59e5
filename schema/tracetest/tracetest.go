// Package tracetest makes event streams and traces for tests and
// benchmarks: random streams that use every event kind and field, and a
// workload that looks like a pointer-chasing program.
package tracetest

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
)

// RandomStream returns n valid events of every kind with random fields, in
// an order a Writer accepts and a validator passes: thread switches only to
// created threads, every event on the running thread, and an EXIT event
// only as the last one (when the random draw puts one there). Seq is set as
// a Reader would.
func RandomStream(rng *rand.Rand, n int) []schema.Event {
	evs := make([]schema.Event, 0, n)
	threads := []schema.ThreadID{1}
	cur := schema.ThreadID(1)
	names := []string{"qdtree", "list", "phase-1", "", "a name with spaces", "ünïcode"}
	for i := 0; i < n; i++ {
		k := schema.Kind(1 + rng.IntN(int(schema.NumKinds-1)))
		if k == schema.KindExit && i != n-1 {
			k = schema.KindBlock
		}
		ev := schema.Event{Seq: uint64(i), Kind: k, Thread: cur}
		switch k {
		case schema.KindThreadSwitch:
			cur = threads[rng.IntN(len(threads))]
			ev.Thread, ev.TID = cur, cur
		case schema.KindThreadCreate:
			t := schema.ThreadID(len(threads) + 1)
			threads = append(threads, t)
			ev.TID = t
		}
		fill(rng, &ev, names)
		evs = append(evs, ev)
	}
	return evs
}

// randValue returns a value with a random magnitude: small integers,
// pointer-like values, and full 64-bit patterns.
func randValue(rng *rand.Rand) uint64 {
	switch rng.IntN(4) {
	case 0:
		return uint64(rng.IntN(256))
	case 1:
		return 0x5555_5555_0000 + uint64(rng.IntN(1<<20))
	case 2:
		return 0x7ffc_0000_0000 + uint64(rng.IntN(1<<20))
	}
	return rng.Uint64()
}

// fill sets the fields kind ev.Kind uses to random values.
func fill(rng *rand.Rand, ev *schema.Event, names []string) {
	pc := func() uint64 { return 0x40_0000 + uint64(rng.IntN(1<<16)) }
	switch ev.Kind {
	case schema.KindBlock:
		ev.PC, ev.Count = pc(), uint32(1+rng.IntN(40))
	case schema.KindLoad, schema.KindStore:
		ev.PC, ev.Addr = pc(), randValue(rng)
		sizes := []uint32{1, 2, 4, 8, 16, 32, 64, 10}
		ev.Size = sizes[rng.IntN(len(sizes))]
		if ev.Size > 8 {
			ev.Data = make([]byte, ev.Size)
			for i := range ev.Data {
				ev.Data[i] = byte(rng.Uint32())
			}
			ev.Value = leUint64(ev.Data)
		} else {
			ev.Value = randValue(rng) & (1<<(8*ev.Size) - 1)
			if ev.Size == 8 {
				ev.Value = randValue(rng)
			}
		}
		if rng.IntN(3) > 0 {
			ev.BaseReg = schema.Reg(1 + rng.IntN(16))
			ev.Base = ev.Addr - uint64(rng.IntN(4096)) + 2048
		}
	case schema.KindDerive:
		ev.PC, ev.Addr = pc(), randValue(rng)
		ev.Reg = schema.Reg(1 + rng.IntN(16))
		if rng.IntN(4) > 0 {
			ev.BaseReg = schema.Reg(1 + rng.IntN(63))
			ev.Base = randValue(rng)
		}
	case schema.KindCall:
		ev.PC, ev.Addr, ev.SP = pc(), pc(), randValue(rng)
		randArgs(rng, ev)
	case schema.KindReturn:
		ev.PC, ev.Addr, ev.SP, ev.Value = pc(), pc(), randValue(rng), randValue(rng)
	case schema.KindSyscall:
		ev.PC, ev.Num, ev.Value = pc(), uint64(rng.IntN(450)), randValue(rng)
		randArgs(rng, ev)
	case schema.KindSignal:
		ev.PC, ev.Num, ev.Count, ev.Addr = pc(), uint64(1+rng.IntN(64)), uint32(rng.IntN(5)), randValue(rng)
	case schema.KindClientRequest:
		ev.PC, ev.Num = pc(), uint64(1+rng.IntN(2))
		ev.Name = names[rng.IntN(len(names))]
		randArgs(rng, ev)
	case schema.KindExit:
		ev.Value, ev.Num = uint64(rng.IntN(256)), uint64(rng.IntN(3))*11
	case schema.KindAlter:
		ev.PC, ev.Num, ev.Count, ev.Addr = pc(), uint64(1+rng.IntN(2)), uint32(1+rng.IntN(100)), pc()
	case schema.KindRegion:
		ev.Num, ev.Count = uint64(1+rng.IntN(2)), uint32(1+rng.IntN(4))
	case schema.KindMemory:
		ev.Addr = randValue(rng)
		randBytes(rng, ev, []uint32{8, 64, 64, 24, 3})
	case schema.KindRegisters:
		ev.Count = uint32(1 + rng.IntN(4))
		ev.Num = uint64(1 + rng.IntN(20))
		randBytes(rng, ev, []uint32{8, 64, 32, 16})
	case schema.KindSyscallPath:
		ev.Name = []string{"/etc/passwd", "input.txt", "", "/tmp/ünïcode file"}[rng.IntN(4)]
	case schema.KindInput:
		ev.Addr = randValue(rng)
		if rng.IntN(4) == 0 {
			ev.Size = uint32(1 + rng.IntN(schema.MaxInputSize)) // bytes not recorded
			break
		}
		ev.Num = schema.InputRecorded
		sizes := []uint32{1, 5, 8, 9, 100, 4096}
		if rng.IntN(40) == 0 {
			sizes = []uint32{schema.MaxInputSize} // the largest, now and then
		}
		randBytes(rng, ev, sizes)
	}
}

// randBytes gives ev one of sizes and random data of that size.
func randBytes(rng *rand.Rand, ev *schema.Event, sizes []uint32) {
	ev.Size = sizes[rng.IntN(len(sizes))]
	b := make([]byte, max(ev.Size, 8))
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	if ev.Size > 8 {
		ev.Data = b
		ev.Value = leUint64(b)
	} else {
		ev.Value = leUint64(b) & (1<<(8*ev.Size) - 1)
		if ev.Size == 8 {
			ev.Value = leUint64(b)
		}
	}
}

func randArgs(rng *rand.Rand, ev *schema.Event) {
	for i := range ev.Args {
		ev.Args[i] = randValue(rng)
	}
}

func leUint64(b []byte) uint64 {
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// RandomTables returns tables with one module, file, function and struct
// type, and `instructions` instructions at random pcs in the module (which
// lies at 0x400000 + base<<20, so tables made with different bases do not
// collide). Ids are base, so several can be added to one trace.
func RandomTables(rng *rand.Rand, base uint32, instructions int) *tracepb.Tables {
	lo := 0x40_0000 + uint64(base)<<20
	hi := lo + 1<<16
	t := &tracepb.Tables{
		Modules: []*tracepb.Module{{Id: base, Path: fmt.Sprintf("/usr/lib/lib%d.so", base),
			Start: lo, End: hi, BuildId: []byte{1, 2, 3, byte(base)}, HasDebugInfo: true}},
		Files:     []*tracepb.SourceFile{{Id: base, Path: fmt.Sprintf("src/file%d.c", base)}},
		Functions: []*tracepb.Function{{Id: base, Name: fmt.Sprintf("fn%d", base), ModuleId: base, Low: lo, High: hi, FileId: base, Line: 10}},
		Types: []*tracepb.StructType{{Name: fmt.Sprintf("node%d", base), Size: 16, Kind: "struct", Members: []*tracepb.Member{
			{Name: "val", Offset: 0, Size: 4, TypeName: "int"},
			{Name: "next", Offset: 8, Size: 8, Pointer: true, TypeName: "struct node *", Pointee: "node"},
		}}},
	}
	seen := map[uint64]bool{}
	for len(t.Instructions) < instructions {
		pc := lo + uint64(rng.IntN(1<<16))
		if seen[pc] {
			continue
		}
		seen[pc] = true
		t.Instructions = append(t.Instructions, &tracepb.Instruction{Pc: pc, Code: []byte{0x48, 0x8b, 0x07},
			FunctionId: base, FileId: base, Line: uint32(1 + rng.IntN(500)), Uses: rng.Uint64() & 0xffff, Defs: 1})
	}
	return t
}

// Header returns a plausible header for synthetic traces.
func Header(program string) *tracepb.Header {
	return &tracepb.Header{
		Recorder: "tracetest", Program: program, ProgramPath: "/tmp/" + program,
		Args: []string{program}, Cwd: "/tmp", Arch: "x86_64", Os: "linux", Pid: 4242,
		StartTimeUnixNanos: 1_700_000_000_000_000_000,
	}
}

// WriteTrace writes evs (and tables before them, if any) as a whole trace
// and returns its bytes.
func WriteTrace(evs []schema.Event, tables *tracepb.Tables, opts schema.WriterOptions, exit *tracepb.ExitStatus) ([]byte, error) {
	var buf bytes.Buffer
	w, err := schema.NewWriter(&buf, Header("synthetic"), opts)
	if err != nil {
		return nil, err
	}
	if tables != nil {
		if err := w.AddTables(tables); err != nil {
			return nil, err
		}
	}
	for i := range evs {
		if err := w.Write(&evs[i]); err != nil {
			return nil, err
		}
	}
	if err := w.Close(exit); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ReadAll reads every event of the trace at path, each copied (Data too),
// and returns them with the trace's tables.
func ReadAll(path string) ([]schema.Event, *schema.Tables, error) {
	r, err := schema.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	var evs []schema.Event
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return evs, r.Tables(), nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("read %s after %d events: %w", path, len(evs), err)
		}
		e := *ev
		e.Data = append([]byte(nil), ev.Data...)
		evs = append(evs, e)
	}
}
