package execslice

import (
	"encoding/binary"

	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
	"github.com/mgtrace/mgtrace/slice/insn"
	"github.com/mgtrace/mgtrace/walk"
)

// thread is what the writer keeps per thread.
type thread struct {
	kept   uint32 // kept instances so far
	run    *openRun
	parent int64 // the control-dependence parent the last CONTROL gave, -1: none
	// regs are the general registers' values where the trace says them
	// (known), by Register number.
	regs  [numGPR]uint64
	known uint32
	// after are the SYSCALL_PATH and INPUT events that follow the
	// thread's pending system call's SYSCALL event: the walk hands them
	// over before the instance.
	after []schema.Event
}

// registers takes in a region's REGISTERS event: the thread's values.
func (ts *thread) registers(ev *schema.Event) {
	var buf [8]byte
	data := ev.Data
	if ev.Size <= 8 {
		binary.LittleEndian.PutUint64(buf[:], ev.Value)
		data = buf[:ev.Size]
	}
	for k := 0; k+8 <= len(data); k += 8 {
		if r := ev.Num + uint64(k/8); r > 0 && r < numGPR {
			ts.regs[r], ts.known = binary.LittleEndian.Uint64(data[k:]), ts.known|1<<r
		}
	}
}

// numGPR bounds the registers whose values are followed: RAX..R15 (1..16).
const numGPR = 17

// track follows the general registers' values through instance in, as
// far as the trace says them: an access's base register holds its base
// value; a call's argument registers their values and rsp its sp; a
// return leaves rax and rsp, a system call rax; a plain 4- or 8-byte load
// or constant into a register leaves that value (4 bytes zero-extended),
// a register copy the source's. Any other write makes a register unknown.
func (ts *thread) track(in *walk.Instance) {
	set := func(r tracepb.Register, v uint64) {
		if r > 0 && int(r) < numGPR {
			ts.regs[r], ts.known = v, ts.known|1<<r
		}
	}
	has := func(r tracepb.Register) bool { return r > 0 && int(r) < numGPR && ts.known&(1<<r) != 0 }
	for k := range in.Acc {
		if b := tracepb.Register(in.Acc[k].BaseReg); b != tracepb.Register_RIP {
			set(b, in.Acc[k].Base)
		}
	}
	info := &in.Static.Info
	src, srcOK := uint64(0), false
	if info.Flow == insn.FlowMove && !info.SrcMem && has(info.Src) {
		src, srcOK = ts.regs[info.Src], true
	}
	ts.known &^= uint32(info.Defs)
	if in.Fault != nil {
		return // it did not complete
	}
	mask := func(w uint8, v uint64) (uint64, bool) {
		switch w {
		case 8:
			return v, true
		case 4:
			return uint64(uint32(v)), true
		}
		return 0, false
	}
	if !info.DstMem && info.Dst > 0 && int(info.Dst) < numGPR {
		switch info.Flow {
		case insn.FlowConst:
			if v, ok := mask(info.Width, uint64(info.Imm)); ok {
				set(info.Dst, v)
			}
		case insn.FlowMove:
			if info.SrcMem {
				var loads []*walk.Access
				for k := range in.Acc {
					if !in.Acc[k].Write {
						loads = append(loads, &in.Acc[k])
					}
				}
				if len(loads) == 1 && loads[0].Size == uint32(info.Width) {
					if v, ok := mask(info.Width, loads[0].Value); ok {
						set(info.Dst, v)
					}
				}
			} else if srcOK {
				if v, ok := mask(info.Width, src); ok {
					set(info.Dst, v)
				}
			}
		}
	}
	if ev := in.Event; ev != nil {
		switch ev.Kind {
		case schema.KindCall:
			for k, r := range []tracepb.Register{tracepb.Register_RDI, tracepb.Register_RSI, tracepb.Register_RDX,
				tracepb.Register_RCX, tracepb.Register_R8, tracepb.Register_R9} {
				set(r, ev.Args[k])
			}
			set(tracepb.Register_RSP, ev.SP)
		case schema.KindReturn:
			set(tracepb.Register_RAX, ev.Value)
			set(tracepb.Register_RSP, ev.SP)
		case schema.KindSyscall:
			set(tracepb.Register_RAX, ev.Value)
		}
	}
}
