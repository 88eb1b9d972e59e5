package critical

import (
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
	"github.com/mgtrace/mgtrace/slice"
	"github.com/mgtrace/mgtrace/slice/insn"
)

// Bounds of the potential-dependence search.
const (
	// potentialWalk is how many instances back from a use the search for
	// its register's definition goes.
	potentialWalk = 5000
	// potentialPath is how many instructions of a branch's other side
	// are explored for a definition.
	potentialPath = 64
)

// callerSaved are the registers a call may change (the System V ABI).
var callerSaved = insn.Of(tracepb.Register_RAX, tracepb.Register_RCX, tracepb.Register_RDX,
	tracepb.Register_RSI, tracepb.Register_RDI, tracepb.Register_R8, tracepb.Register_R9,
	tracepb.Register_R10, tracepb.Register_R11, tracepb.Register_RFLAGS)

// potential finds the branch instances of the program's code that the
// slice's register uses potentially depend on (relevant slicing's
// potential dependence): a branch that ran between a use and the
// definition of the register it read, in the same invocation, whose other
// side would have redefined the register before the use. Such a branch
// decided the value by what it kept from running (a walk that stopped
// one node too early), which no dynamic dependence records. Only the
// program's own instructions' register uses are followed; memory is not.
// The result holds no member.
func potential(run *slice.Run, st *statics, members []uint32) map[uint32]bool {
	isMember := make(map[uint32]bool, len(members))
	for _, m := range members {
		isMember[m] = true
	}
	found := make(map[uint32]bool)
	code := newCodeCache(run.Tables)
	for _, u := range members {
		s := run.StaticOf(u)
		if st.line[s.ID] < 0 {
			continue
		}
		uses := s.Info.Uses
		for _, r := range []tracepb.Register{s.Info.Base, s.Info.Index} {
			if r != 0 {
				uses |= insn.Of(r)
			}
		}
		for r := tracepb.Register_RAX; r <= tracepb.Register_RFLAGS; r++ {
			if r == tracepb.Register_RSP || r == tracepb.Register_RIP || !uses.Has(r) {
				continue
			}
			for _, b := range branchesBefore(run, u, r) {
				if found[b.inst] || isMember[b.inst] || st.role[run.StaticOf(b.inst).ID] != rolePred {
					continue
				}
				if code.definesOnOtherSide(run.StaticOf(b.inst), b.next, run.StaticOf(u).PC, r) {
					found[b.inst] = true
				}
			}
		}
	}
	return found
}

// branchRun is a conditional branch instance and where it went (the pc of
// its thread's next instruction in the same invocation).
type branchRun struct {
	inst uint32
	next uint64
}

// branchesBefore walks back from instance u over its thread's instances of
// the same invocation, up to the definition of register r, and returns
// the conditional branches met on the way.
func branchesBefore(run *slice.Run, u uint32, r tracepb.Register) []branchRun {
	t := run.ThreadOf(u)
	var out []branchRun
	depth := 0 // callees entered going backwards
	next := run.StaticOf(u).PC
	steps := 0
	for i := int64(u) - 1; i >= 0 && steps < potentialWalk; i-- {
		ii := uint32(i)
		if run.ThreadOf(ii) != t {
			continue
		}
		steps++
		s := run.StaticOf(ii)
		switch s.Info.Class {
		case insn.Return:
			depth++
			continue
		case insn.Call, insn.IndirectCall:
			if depth == 0 {
				return out // the invocation's start
			}
			depth--
			if depth == 0 {
				if callerSaved.Has(r) {
					return out // the call defined it
				}
				next = s.PC
			}
			continue
		}
		if depth > 0 {
			continue
		}
		if s.Info.Defs.Has(r) {
			return out
		}
		if s.Info.Class == insn.CondJump {
			out = append(out, branchRun{inst: ii, next: next})
		}
		next = s.PC
	}
	return out
}

// codeCache decodes the instructions of the functions' recorded code.
type codeCache struct {
	t    *schema.Tables
	info map[uint64]*insn.Info // by pc; nil: not decodable
}

func newCodeCache(t *schema.Tables) *codeCache {
	return &codeCache{t: t, info: make(map[uint64]*insn.Info)}
}

// at decodes the instruction at pc of function fn, or returns nil.
func (c *codeCache) at(fn uint32, pc uint64) *insn.Info {
	if in, ok := c.info[pc]; ok {
		return in
	}
	var res *insn.Info
	if f := c.t.Functions[fn]; f != nil && pc >= f.Low && pc < f.Low+uint64(len(f.Code)) {
		if in, err := insn.Decode(pc, f.Code[pc-f.Low:]); err == nil && in.Len > 0 {
			res = &in
		}
	}
	c.info[pc] = res
	return res
}

// definesOnOtherSide says whether branch b's side it did not take (it went
// to next) reaches, within its function and potentialPath instructions, an
// instruction that defines r before the use at usePC.
func (c *codeCache) definesOnOtherSide(b *slice.Static, next, usePC uint64, r tracepb.Register) bool {
	fall := b.PC + uint64(b.Info.Len)
	other := b.Info.Target
	if next == b.Info.Target {
		other = fall
	}
	fn := b.Function
	seen := make(map[uint64]bool)
	work := []uint64{other}
	for n := 0; len(work) > 0 && n < potentialPath; n++ {
		pc := work[len(work)-1]
		work = work[:len(work)-1]
		if seen[pc] || pc == usePC {
			continue
		}
		seen[pc] = true
		in := c.at(fn, pc)
		if in == nil {
			continue
		}
		switch in.Class {
		case insn.Return, insn.IndirectJump, insn.Halt:
			continue
		case insn.Call, insn.IndirectCall:
			if callerSaved.Has(r) {
				return true
			}
		}
		if in.Defs.Has(r) {
			return true
		}
		switch in.Class {
		case insn.Jump:
			work = append(work, in.Target)
		case insn.CondJump:
			work = append(work, pc+uint64(in.Len), in.Target)
		default:
			work = append(work, pc+uint64(in.Len))
		}
	}
	return false
}
