package bugs

import (
	"testing"

	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
	"github.com/mgtrace/mgtrace/walk"
)

// fuzzCode are the instructions a fuzzed run executes: copies, constants,
// pointer arithmetic, computations, stack operations, branches, a call, a
// return, a conditional move, a vector move, a string move.
var fuzzCode = [][]byte{
	{0x48, 0x8b, 0x07},             // mov rax, [rdi]
	{0x48, 0x89, 0x07},             // mov [rdi], rax
	{0x48, 0x89, 0xc7},             // mov rdi, rax
	{0x31, 0xc0},                   // xor eax, eax
	{0x48, 0x83, 0xc7, 0x08},       // add rdi, 8
	{0x48, 0x8d, 0x47, 0x10},       // lea rax, [rdi+16]
	{0x48, 0x39, 0xc7},             // cmp rdi, rax
	{0x74, 0x00},                   // je +0
	{0x50},                         // push rax
	{0x58},                         // pop rax
	{0xe8, 0x00, 0x00, 0x00, 0x00}, // call +0
	{0xc3},                         // ret
	{0x48, 0x0f, 0x44, 0xc7},       // cmove rax, rdi
	{0xf3, 0x0f, 0x6f, 0x07},       // movdqu xmm0, [rdi]
	{0xf3, 0x48, 0xa5},             // rep movsq
	{0x0f, 0x05},                   // syscall
}

// FuzzEngine replays random instruction instances, allocator calls and
// returns, system calls, faults and thread switches through the engine
// with the built-in rules, and reads every finding's chains: whatever the
// trace says, the analysis must not panic.
func FuzzEngine(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21})
	f.Add([]byte{10, 0, 32, 11, 64, 0, 1, 20, 10, 1, 0, 11, 0, 0, 10, 1, 0, 11, 0, 0, 0, 3, 8})
	f.Add([]byte{10, 0, 16, 11, 1, 8, 1, 9, 0, 12, 16, 2, 10, 1, 1, 11, 0, 0, 0, 0, 0, 0, 200})
	f.Fuzz(func(t *testing.T, data []byte) {
		const heap, code = 0x4000_0000, 0x40_0000
		tabs := &tracepb.Tables{
			Modules: []*tracepb.Module{{Id: 1, Path: "/prog", Start: code, End: code + 0x10000}},
			Functions: []*tracepb.Function{
				{Id: 1, Name: "main", ModuleId: 1, Low: code, High: code + 0x1000},
				{Id: 2, Name: "malloc", ModuleId: 1, Low: code + 0x1000, High: code + 0x1100},
				{Id: 3, Name: "free", ModuleId: 1, Low: code + 0x1100, High: code + 0x1200},
				{Id: 4, Name: "realloc", ModuleId: 1, Low: code + 0x1200, High: code + 0x1300},
			},
		}
		for i, c := range fuzzCode {
			tabs.Instructions = append(tabs.Instructions, &tracepb.Instruction{Pc: code + uint64(16*i), Code: c, FunctionId: 1, Line: uint32(i + 1)})
		}
		tables := schema.NewTables()
		if err := tables.Add(tabs); err != nil {
			t.Fatal(err)
		}
		file, err := ParseBuiltin()
		if err != nil {
			t.Fatal(err)
		}
		rs, err := compile(file, nil, true, map[string]string{"transaction": "main"})
		if err != nil {
			t.Fatal(err)
		}
		e := newEngine(tables, rs, Options{MaxFindings: 50, Transaction: "main"}, &Report{})
		e.compileRules(map[string]string{"transaction": "main"})
		sp := uint64(0x7ff0_0000)
		var n uint64
		for i := 0; i+3 <= len(data); i += 3 {
			op, x, y := data[i], data[i+1], data[i+2]
			k := int(op) % len(fuzzCode)
			st, err := e.dec.Static(code + uint64(16*k))
			if err != nil {
				t.Fatal(err)
			}
			in := &walk.Instance{N: n, Thread: schema.ThreadID(1 + y%2), Static: st, Seq: n}
			n++
			addr := heap + uint64(x)*8
			switch {
			case k <= 1 || k == 8 || k == 9 || k == 13 || k == 14:
				in.Acc = append(in.Acc, walk.Access{Addr: addr, Size: uint32(1 << (y % 5)), Write: k == 1 || k == 8, Value: heap + uint64(y)*8, BaseReg: schema.Reg(tracepb.Register_RDI), Base: addr})
				if k == 14 {
					in.Acc = append(in.Acc, walk.Access{Addr: addr + 64, Size: 8, Write: true, Value: uint64(y)})
				}
			case k == 10:
				sp -= 8
				target := code + 0x1000 + uint64(y%4)*0x100
				in.Event = &schema.Event{Kind: schema.KindCall, Addr: target, SP: sp, Args: [schema.NumArgs]uint64{uint64(x) * 8, uint64(y), heap + uint64(y)*8}}
				if y%4 == 2 {
					in.Event.Args[0] = heap + uint64(x)*8
				}
			case k == 11:
				in.Event = &schema.Event{Kind: schema.KindReturn, SP: sp + 8, Value: heap + uint64(x)*64}
				sp += 8
			case k == 15:
				in.Event = &schema.Event{Kind: schema.KindSyscall, Num: uint64(y % 4), Value: uint64(x), Args: [schema.NumArgs]uint64{3, addr, uint64(x)}}
			}
			if y == 200 {
				in.Fault = &schema.Event{Kind: schema.KindSignal, Num: 11, Addr: uint64(x)}
			}
			if err := e.Instance(in); err != nil {
				t.Fatal(err)
			}
			if y == 255 {
				e.collect()
			}
		}
		_ = e.Event(&schema.Event{Kind: schema.KindThreadExit, Thread: 2})
		e.end()
		for _, fd := range e.report.Findings {
			if fd.Rule == "" || fd.Message == "" {
				t.Fatalf("finding without a rule or a message: %+v", fd)
			}
		}
	})
}
