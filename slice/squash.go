package slice

import (
	"github.com/mgtrace/mgtrace/slice/insn"
)

// Values of CallSites besides a call instance.
const (
	// Own marks an instance in the program's own code: an instruction
	// of the main executable with a source line. It is not squashed.
	Own int64 = -1
	// NoCaller marks an instance outside the program's code with no
	// call from the program's code on its thread's call stack: the
	// dynamic loader and the C library's start-up before main, the exit
	// handlers after it.
	NoCaller int64 = -2
)

// CallSites returns, for each of insts (instances in increasing order), where
// the squashed view of a slice shows it (the DrDebug/Qzdb dissertation's
// rule, Yan Wang, "Dynamic analysis for debugging concurrent and sequential
// programs", chapter 2): Own for an instance in the program's own code
// (IsProgram); otherwise the instance of the call instruction that led into
// it, the innermost on its thread's call stack that lies in the program's
// code, or NoCaller when there is none.
//
// The call stacks come from one pass over the run's instances: a call
// instruction pushes a frame, a return pops one, a delivered signal's
// handler starts a frame of its own (its callers are those of the code it
// interrupted), and a region of a region trace starts every thread with
// an empty stack (its calls before the region are not in the trace).
func (r *Run) CallSites(insts []uint32) []int64 {
	out := make([]int64, len(insts))
	if len(insts) == 0 {
		return out
	}
	prog := r.programStatics()
	// The statics' call/return class, looked up once per static.
	const (
		plain = iota
		call
		ret
	)
	class := make([]uint8, len(r.Statics))
	for k, st := range r.Statics {
		switch st.Info.Class {
		case insn.Call, insn.IndirectCall:
			class[k] = call
		case insn.Return:
			class[k] = ret
		}
	}
	// Per thread, a stack of frames; each frame holds the innermost
	// program call at or below it, as instance+1 (0: none).
	stacks := make([][]uint32, len(r.Threads))
	for t := range stacks {
		stacks[t] = []uint32{0}
	}
	sig, reg, k := 0, 0, 0
	last := insts[len(insts)-1]
	for i := uint32(0); int(i) < len(r.sid) && i <= last; i++ {
		for reg < len(r.Regions) && r.Regions[reg].Inst <= i {
			for t := range stacks {
				stacks[t] = append(stacks[t][:0], 0)
			}
			reg++
		}
		for sig < len(r.signals) && r.signals[sig].inst <= i {
			st := r.signals[sig].thread
			stacks[st] = append(stacks[st], stacks[st][len(stacks[st])-1])
			sig++
		}
		t := r.thread[i]
		frames := stacks[t]
		top := frames[len(frames)-1]
		s := r.sid[i]
		for k < len(insts) && insts[k] == i {
			switch {
			case prog[s]:
				out[k] = Own
			case top == 0:
				out[k] = NoCaller
			default:
				out[k] = int64(top - 1)
			}
			k++
		}
		switch class[s] {
		case call:
			if len(frames) < 1<<16 {
				v := top
				if prog[s] {
					v = i + 1
				}
				stacks[t] = append(frames, v)
			}
		case ret:
			if len(frames) > 1 {
				stacks[t] = frames[:len(frames)-1]
			} else {
				frames[0] = 0
			}
		}
	}
	return out
}

// programStatics says, per static instruction, whether it is in the
// program's own code (IsProgram).
func (r *Run) programStatics() []bool {
	prog := make([]bool, len(r.Statics))
	for s, st := range r.Statics {
		prog[s] = r.IsProgram(st.PC)
	}
	return prog
}

// IsProgram reports whether the instruction at pc is the program's own
// code: it lies in the main executable (the module the trace marks main;
// when no module is marked, any module) and the debug information gives it
// a source line. Everything else (the dynamic loader, the C library, PLT
// stubs, start-up code without line information) is squashed into the
// program's call sites in the text view of a slice.
func (r *Run) IsProgram(pc uint64) bool {
	in := r.Tables.Instructions[pc]
	if in == nil || in.Line == 0 || r.Tables.Files[in.FileId] == nil {
		return false
	}
	anyMain := false
	for _, m := range r.Tables.Modules {
		if !m.Main {
			continue
		}
		anyMain = true
		if m.Start <= pc && pc < m.End {
			return true
		}
	}
	return !anyMain
}
