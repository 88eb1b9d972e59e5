package slice

import (
	"github.com/mgtrace/mgtrace/schema/tracepb"
	"github.com/mgtrace/mgtrace/slice/insn"
)

// functionCode returns a function's machine code when the trace has it.
func functionCode(fn *tracepb.Function) []byte { return fn.GetCode() }

// cdEntry is a branch instance whose region has not ended yet.
type cdEntry struct {
	inst  int32
	ipdom uint64
}

// cdFrame is one function invocation of a thread.
type cdFrame struct {
	entries []cdEntry
	inherit int32 // the control-dependence parent of the call
	fresh   bool  // no instruction of the invocation has run yet
}

// control computes every instance's dynamic control-dependence parent
// with the online algorithm of Xin and Zhang: each thread keeps a stack of
// branch instances per invocation; an instruction ends the regions whose
// immediate post-dominator it is, and depends on the innermost branch left.
// A callee's instructions depend on what its call instruction depends on,
// except the program's main function: what decided to call main is the
// C library's start-up, the same in every run, and following it would put
// the dynamic loader into every slice.
func (r *Run) control() {
	branch, ipdom := r.postDominators()
	roots := r.rootEntries()
	r.cd = make([]int32, len(r.sid))
	stacks := make([][]cdFrame, len(r.Threads))
	for t := range stacks {
		stacks[t] = []cdFrame{{inherit: -1}}
	}
	sig, reg := 0, 0
	for i := range r.sid {
		for reg < len(r.Regions) && int(r.Regions[reg].Inst) <= i {
			// A region starts: the branches before it are not in the
			// trace's flow; every thread starts afresh.
			for t := range stacks {
				stacks[t] = []cdFrame{{inherit: -1}}
			}
			reg++
		}
		t := r.thread[i]
		for sig < len(r.signals) && int(r.signals[sig].inst) <= i {
			// A signal handler starts: a new invocation, dependent on
			// nothing the program decided.
			st := r.signals[sig].thread
			stacks[st] = append(stacks[st], cdFrame{inherit: -1})
			sig++
		}
		frames := stacks[t]
		fr := &frames[len(frames)-1]
		s := r.sid[i]
		pc := r.Statics[s].PC
		if fr.fresh {
			fr.fresh = false
			if roots[pc] {
				fr.inherit = -1
			}
		}
		for len(fr.entries) > 0 && fr.entries[len(fr.entries)-1].ipdom == pc {
			fr.entries = fr.entries[:len(fr.entries)-1]
		}
		parent := fr.inherit
		if k := len(fr.entries); k > 0 {
			parent = fr.entries[k-1].inst
		}
		r.cd[i] = parent
		if branch[s] {
			ip := ipdom[s]
			if k := len(fr.entries); k > 0 && fr.entries[k-1].ipdom == ip {
				fr.entries[k-1].inst = int32(i)
			} else {
				fr.entries = append(fr.entries, cdEntry{inst: int32(i), ipdom: ip})
			}
		}
		switch r.Statics[s].Info.Class {
		case insn.Call, insn.IndirectCall:
			if len(frames) < 1<<16 {
				stacks[t] = append(frames, cdFrame{inherit: parent, fresh: true})
			}
		case insn.Return:
			if len(frames) > 1 {
				stacks[t] = frames[:len(frames)-1]
			} else {
				frames[0] = cdFrame{inherit: -1}
			}
		}
	}
}

// rootEntries returns the entry addresses of the functions whose
// invocations depend on no branch of their caller: main, in the program's
// own executable.
func (r *Run) rootEntries() map[uint64]bool {
	roots := make(map[uint64]bool)
	for _, fn := range r.Tables.Functions {
		if fn.Name != "main" {
			continue
		}
		if m := r.Tables.Modules[fn.ModuleId]; m == nil || m.Main {
			roots[fn.Low] = true
		}
	}
	return roots
}
