package critical

import (
	"fmt"
	"slices"

	"github.com/mgtrace/mgtrace/points"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/slice"
	"github.com/mgtrace/mgtrace/slice/insn"
)

// role is what an instruction of the program's code is to record's
// instance rules (see instanceRules).
type role uint8

const (
	roleNone   role = iota
	rolePred        // a conditional branch: record --switch counts it
	roleCall        // a call on a line with calls: --suppress counts and skips it
	roleAnchor      // the lowest-address store of a line without calls: --suppress counts it
	roleStore       // another store of a line without calls: skipped with its anchor
)

// lineRef is a source line of the program's code.
type lineRef struct {
	file string
	line uint32
}

// statics classifies the run's instructions once.
type statics struct {
	line []int32 // by static ID: index into lines, -1 outside the program's code
	role []role
	// lines are the source lines that ran.
	lines []lineRef
}

// classify finds each executed instruction's line and its role under the
// instance rules of record --switch and --suppress (instanceRules). An
// instruction is in the program's code when it lies in the main module
// (every module, for a trace that marks none) and the debug information
// gives it a source file and line.
func classify(run *slice.Run) *statics {
	st := &statics{line: make([]int32, len(run.Statics)), role: make([]role, len(run.Statics))}
	var main [][2]uint64
	for _, m := range run.Tables.Modules {
		if m.Main {
			main = append(main, [2]uint64{m.Start, m.End})
		}
	}
	inMain := func(pc uint64) bool {
		if len(main) == 0 {
			return true
		}
		for _, r := range main {
			if pc >= r[0] && pc < r[1] {
				return true
			}
		}
		return false
	}
	type key struct {
		file string
		line uint32
	}
	index := make(map[key]int32)
	var byLine [][]lineInsn
	for id, s := range run.Statics {
		st.line[id] = -1
		if s == nil || !inMain(s.PC) {
			continue
		}
		loc := run.Tables.Locate(s.PC)
		if loc.File == "" || loc.Line == 0 {
			continue
		}
		k, ok := index[key{loc.File, loc.Line}]
		if !ok {
			k = int32(len(st.lines))
			index[key{loc.File, loc.Line}] = k
			st.lines = append(st.lines, lineRef{file: loc.File, line: loc.Line})
			byLine = append(byLine, nil)
		}
		st.line[id] = k
		byLine[k] = append(byLine[k], lineInsn{id: id, s: s})
	}
	for _, ins := range byLine {
		for _, r := range instanceRules(run.Tables, ins) {
			st.role[r.id] = r.role
		}
	}
	return st
}

// lineInsn is one executed instruction of a source line.
type lineInsn struct {
	id int
	s  *slice.Static
}

// roled is an instruction's role on its line.
type roled struct {
	id   int
	role role
}

// instanceRules gives the roles of a line's executed instructions under
// record's instance rules (package points): a switch counts the line's
// conditional branches; a suppression counts the line's calls when it has
// any, else the executions of its lowest-address store (the anchor), and
// skips with an anchor's execution the line's other stores.
func instanceRules(t *schema.Tables, ins []lineInsn) []roled {
	line := make([]points.Insn, 0, len(ins))
	byPC := make(map[uint64]int, len(ins))
	for _, in := range ins {
		var code []byte
		if ti := t.Instructions[in.s.PC]; ti != nil {
			code = ti.Code
		}
		line = append(line, points.Insn{Addr: in.s.PC, Code: code})
		byPC[in.s.PC] = in.id
	}
	var out []roled
	if r, err := points.RuleFor(points.Switch, line); err == nil {
		for _, c := range r.Counted {
			out = append(out, roled{byPC[c.Addr], rolePred})
		}
	}
	if r, err := points.RuleFor(points.Suppress, line); err == nil {
		counted := make(map[uint64]bool)
		for _, c := range r.Counted {
			counted[c.Addr] = true
			role := roleAnchor
			if r.Call {
				role = roleCall
			}
			out = append(out, roled{byPC[c.Addr], role})
		}
		for _, e := range r.Effect {
			if !counted[e.Addr] {
				out = append(out, roled{byPC[e.Addr], roleStore})
			}
		}
	}
	return out
}

// found is a candidate instance with its line and number.
type found struct {
	inst uint32
	line int32
	n    int
	kind CandidateKind
	// inSlice says the instance itself is in the slice (not a call
	// leading to it, not a predicate beyond it).
	inSlice bool
	// potential says the predicate is a potential dependence of the
	// slice, not in it.
	potential bool
	// exact says inst is the instance record alters (not a store that
	// its line's anchor execution skips).
	exact bool
}

// callFrame is a call on a thread's stack during the numbering pass.
type callFrame struct {
	inst   uint32
	line   int32 // -1: not a program call
	n      int
	marked bool
}

// candidates returns the predicate and statement instances that the slice
// (members, ascending) makes candidates, each numbered as record --switch
// and --suppress count them, nearest the failure (latest) first.
//
// Predicates are the members that are conditional branches of the
// program's code. Statements are the members that are stores of the
// program's code (a store's instance is its line's anchor execution that
// skips it), and the calls of the program's code that are members or were
// on the stack of a member (the call led to something the failure depends
// on: skipping it skips all that). Excluded instances (the criterion's
// own) are no candidates as predicates or stores: skipping the failing
// access itself would trivially remove the failure; a call stays one.
//
// Others are the program's conditional-branch instances outside the
// slice that ran before the failure (at or before instance limit), for the
// search beyond the slice.
//
// Potential are predicate instances outside the slice that its uses
// potentially depend on (see potential): they are predicates too, in
// their place by distance.
func candidates(run *slice.Run, st *statics, members []uint32, exclude, potential map[uint32]bool, limit uint32) (preds, others, stmts []found) {
	isMember := make(map[uint32]bool, len(members))
	for _, m := range members {
		isMember[m] = true
	}
	predCount := make([]int, len(st.lines))
	stmtCount := make([]int, len(st.lines))
	stacks := make(map[schema.ThreadID][]callFrame)
	type threadLine struct {
		t    schema.ThreadID
		line int32
	}
	anchor := make(map[threadLine]int) // the thread's last execution of the line's anchor
	seenStmt := make(map[[2]int]bool)  // (line, n) already a candidate
	addStmt := func(inst uint32, line int32, n int, exact bool) {
		if seenStmt[[2]int{int(line), n}] {
			return
		}
		seenStmt[[2]int{int(line), n}] = true
		stmts = append(stmts, found{inst: inst, line: line, n: n, kind: Statement, inSlice: isMember[inst], exact: exact})
	}
	n := run.Instances()
	for i := 0; i < n; i++ {
		ii := uint32(i)
		s := run.StaticOf(ii)
		k := st.line[s.ID]
		r := st.role[s.ID]
		member := isMember[ii]
		num := 0
		switch r {
		case rolePred:
			predCount[k]++
			num = predCount[k]
			if (member || potential[ii]) && !exclude[ii] {
				preds = append(preds, found{inst: ii, line: k, n: num, kind: Predicate, inSlice: member, potential: !member, exact: true})
			} else if !member && ii <= limit {
				others = append(others, found{inst: ii, line: k, n: num, kind: Predicate, exact: true})
			}
		case roleCall:
			stmtCount[k]++
			num = stmtCount[k]
		case roleAnchor:
			stmtCount[k]++
			num = stmtCount[k]
			anchor[threadLine{run.ThreadOf(ii), k}] = num
			if member && !exclude[ii] {
				addStmt(ii, k, num, true)
			}
		case roleStore:
			if a, ok := anchor[threadLine{run.ThreadOf(ii), k}]; ok && member && !exclude[ii] {
				addStmt(ii, k, a, false)
			}
		}
		cls := s.Info.Class
		if !member && cls != insn.Call && cls != insn.IndirectCall && cls != insn.Return {
			continue
		}
		t := run.ThreadOf(ii)
		stack := stacks[t]
		if member {
			for j := len(stack) - 1; j >= 0 && !stack[j].marked; j-- {
				stack[j].marked = true
				if f := stack[j]; f.line >= 0 {
					addStmt(f.inst, f.line, f.n, true)
				}
			}
		}
		switch cls {
		case insn.Call, insn.IndirectCall:
			f := callFrame{inst: ii, line: -1}
			if r == roleCall {
				f.line, f.n = k, num
				if member {
					f.marked = true
					addStmt(ii, k, num, true)
				}
			}
			stack = append(stack, f)
		case insn.Return:
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		}
		stacks[t] = stack
	}
	latestFirst := func(a, b found) int {
		switch {
		case a.inst > b.inst:
			return -1
		case a.inst < b.inst:
			return 1
		}
		return 0
	}
	slices.SortFunc(preds, latestFirst)
	slices.SortFunc(others, latestFirst)
	slices.SortFunc(stmts, latestFirst)
	return preds, others, stmts
}

// candidate turns a found instance into a report's candidate.
func (st *statics) candidate(run *slice.Run, f found) Candidate {
	l := st.lines[f.line]
	pc := run.StaticOf(f.inst).PC
	return Candidate{
		Kind: f.kind, Point: fmt.Sprintf("%s:%d#%d", l.file, l.line, f.n),
		File: l.file, Line: l.line, N: f.n,
		Instance: f.inst, Thread: uint32(run.ThreadOf(f.inst)), InSlice: f.inSlice, Potential: f.potential, exact: f.exact,
		PC: Hex(pc), Function: run.Tables.Locate(pc).Function,
	}
}
