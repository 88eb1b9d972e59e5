package inputs

import (
	"context"
	"fmt"
	"math/bits"
	"path/filepath"
	"slices"
	"sort"

	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
	"github.com/mgtrace/mgtrace/slice"
	"github.com/mgtrace/mgtrace/slice/insn"
)

// Options are the choices of relevant input analysis.
type Options struct {
	// Sources are the kinds of sources whose bytes count as entities;
	// nil means every kind but SourceModule (the dynamic loader's and the
	// C library's own reads). The bytes of a left-out source are values
	// like any the kernel writes: they carry no entity.
	Sources []SourceKind
	// Progress, when set, is called now and then with the instances done
	// and the instances the pass will take.
	Progress func(done, total int64)
	// Context cancels a long pass.
	Context context.Context

	// gcLimit replaces the package's gcLimit (tests).
	gcLimit int
}

// Link is one step of a mapping chain: constant Value was assigned to
// Location by the instruction at PC (Statement, FILE:LINE) because an
// equality test held.
type Link struct {
	Value     int64  `json:"value"`
	Location  string `json:"location"`
	Statement string `json:"statement"`
	PC        uint64 `json:"pc"`
}

// Element is one member of a relevant input set: an input entity, whether
// the value depends on its exact value (Strong, the dissertation's r=), and
// the mapping chain through which it does (empty for none).
type Element struct {
	Entity uint64 `json:"entity"`
	Strong bool   `json:"strong"`
	Chain  []Link `json:"chain,omitempty"`
}

// Set names one of the three relevant input sets.
type Set string

// The sets.
const (
	SetDer  Set = "der"  // DERIVED: value dependences only
	SetCinf Set = "cinf" // CINFLUENCED: a control dependence on the way
	SetAinf Set = "ainf" // AINFLUENCED: an address dependence on the way
)

// Sets are the three sets in order.
var Sets = []Set{SetDer, SetCinf, SetAinf}

// EntityRange is a run of consecutive entities of one set, all from one
// source at consecutive offsets, of one strength.
type EntityRange struct {
	Set    Set    `json:"set"`
	Source int    `json:"source"`
	First  uint64 `json:"first"`
	Len    uint64 `json:"len"`
	Offset uint64 `json:"offset"` // of First in the source
	Strong bool   `json:"strong"`
}

// Relevance is the relevant input analysis of one value of a run.
type Relevance struct {
	// Criterion is the criterion as resolved; Instance the instance
	// whose value (or the location's value just after it) was analysed.
	Criterion string `json:"criterion"`
	Instance  uint32 `json:"instance"`
	// Value says which value that is, in words.
	Value string `json:"value"`
	// Der, Cinf and Ainf are the sets, by entity (an entity with several
	// chains appears once per chain).
	Der  []Element `json:"der"`
	Cinf []Element `json:"cinf"`
	Ainf []Element `json:"ainf"`
	// Ranges are the sets as runs of entities per source, in set, then
	// entity order; Sources are the run's sources they index.
	Ranges  []EntityRange `json:"ranges"`
	Sources []Source      `json:"sources"`
	// Stats describe the pass.
	Stats Stats `json:"stats"`
}

// Stats describe one pass of the analysis.
type Stats struct {
	Instances int64 `json:"instances"` // instances propagated
	Entities  int64 `json:"entities"`  // entities the pass defined
	Sets      int   `json:"sets"`      // distinct sets made
	Chains    int   `json:"chains"`    // distinct chain links made
	Triples   int   `json:"triples"`   // distinct (DER, CINF, AINF) triples made
	Pages     int   `json:"pages"`     // 4 KiB pages of shadow memory
	// Collections counts the times the tables were collected (the dead
	// sets dropped).
	Collections int `json:"collections"`
}

// Elements returns the set named s.
func (rel *Relevance) Elements(s Set) []Element {
	switch s {
	case SetDer:
		return rel.Der
	case SetCinf:
		return rel.Cinf
	}
	return rel.Ainf
}

// shadow page size: one triple number per byte of memory.
const pageBits = 12

type page [1 << pageBits]uint32

// threadShadow is one thread's registers and its pending branch.
type threadShadow struct {
	regs regFile
	// flagsCompare says RFLAGS were last set by a compare (insn.Info's
	// Compare).
	flagsCompare bool
	pending      pendingBranch
}

// pendingBranch is a conditional jump whose outcome the thread's next
// instance tells.
type pendingBranch struct {
	set     bool
	inst    uint32
	value   uint32 // the flags' triple, strength kept
	rest    uint32 // the address and control contributions
	compare bool
	cond    insn.Cond
	target  uint64
}

// pred is a control-dependence parent's value, and whether it was an
// equality test that held (the case that maps constants).
type pred struct {
	value uint32
	equal bool
}

// analyzer is the state of one forward pass.
type analyzer struct {
	run     *slice.Run
	t       *setTable
	threads []threadShadow
	pages   map[uint64]*page
	lastPN  uint64
	lastPg  *page
	// entities: per syscall instance, the ranges it brought in.
	entAt map[uint32][]Range
	// preds are the values of the parents children still need;
	// lastChild[p] is p's last child (0 for an instance no one depends
	// on).
	preds     map[uint32]pred
	lastChild []uint32
	// want: the criterion's instances, and their values once computed.
	want   map[uint32]bool
	values map[uint32]uint32
	stats  Stats
	// gcAt is the table size that triggers the next collection.
	gcAt int
}

// Analyze computes the relevant input sets (DERIVED, CINFLUENCED,
// AINFLUENCED, with strength and mapping chains) of the value that p names
// in run, after figure 4.4 of Yan Wang's dissertation ("Dynamic Analysis
// Techniques for Effective and Efficient Debugging", UC Riverside, 2014),
// by one forward pass over the run's instances up to p. ents are the run's
// input entities (Read).
//
// The value is: with a location (p.HasLoc), that register or memory's
// value just after p's last instance; for the faulting instance of a run
// that a bad memory access killed (SIGSEGV, SIGBUS), the registers that
// formed its address (the wrong pointer), and for one killed otherwise
// (SIGFPE) the operands it read; otherwise what p's last instance that computes something
// computes (its registers and memory written, a conditional branch's
// outcome). docs/inputs.md gives the rules.
func Analyze(run *slice.Run, ents *Entities, p slice.Point, opt Options) (*Relevance, error) {
	n := run.Instances()
	if p.Last < 0 || p.Last >= int64(n) {
		return nil, fmt.Errorf("criterion %s: no such instance", p.Label)
	}
	if opt.Context == nil {
		opt.Context = context.Background()
	}
	if ents == nil {
		ents = &Entities{}
	}
	a := &analyzer{
		run:     run,
		t:       newSetTable(ents.Total),
		threads: make([]threadShadow, len(run.Threads)),
		pages:   make(map[uint64]*page),
		entAt:   make(map[uint32][]Range),
		preds:   make(map[uint32]pred),
		want:    make(map[uint32]bool),
		values:  make(map[uint32]uint32),
		lastPN:  ^uint64(0),
	}
	a.gcAt = gcLimit
	if opt.gcLimit > 0 {
		a.gcAt = opt.gcLimit
	}
	keep := sourceFilter(opt.Sources)
	for _, r := range ents.Ranges {
		if r.Source < 0 || r.Source >= len(ents.Sources) || !keep[ents.Sources[r.Source].Kind] {
			continue
		}
		if i, ok := run.SyscallInstance(r.Seq); ok {
			a.entAt[i] = append(a.entAt[i], r)
		}
	}
	last := uint32(p.Last)
	a.lastChild = make([]uint32, last+1)
	for i := uint32(1); i <= last; i++ {
		if c := run.ControlParent(i); c >= 0 {
			a.lastChild[c] = i
		}
	}
	crash := !p.HasLoc && run.Crash == p.Last
	for _, i := range p.Insts {
		a.want[i] = true
	}
	rel := &Relevance{Criterion: p.Label, Instance: last, Sources: ents.Sources}
	var value uint32
	cur := run.Cursor()
	var accs []slice.Access
	for i := uint32(0); i <= last; i++ {
		if i&0xffff == 0 {
			if err := opt.Context.Err(); err != nil {
				return nil, fmt.Errorf("relevant input analysis stopped at instance %d of %d: %w", i, last+1, err)
			}
			if opt.Progress != nil {
				opt.Progress(int64(i), int64(last)+1)
			}
		}
		if i&0xfff == 0 && a.t.size() > a.gcAt {
			a.collect()
			if opt.gcLimit > 0 {
				a.gcAt = opt.gcLimit
			}
		}
		accs = cur.Next(i, accs[:0])
		if crash && i == last {
			if ts := &a.threads[run.ThreadIndex(i)]; ts.pending.set {
				a.finish(run.ThreadIndex(i), run.StaticOf(i).PC)
			}
			if run.CrashSignal == sigSEGV || run.CrashSignal == sigBUS {
				if v, ok := a.pointer(i); ok {
					value, rel.Value = v, "the faulting access's address (its base and index registers)"
					break
				}
			} else {
				value, rel.Value = a.operands(i, accs), "the operands of the faulting instruction"
				break
			}
		}
		a.step(i, accs)
	}
	a.stats.Instances = int64(last) + 1
	switch {
	case p.HasLoc && p.Reg != 0:
		value = a.get(&a.threads[run.ThreadIndex(last)].regs, p.Reg)
		rel.Value = fmt.Sprintf("register %s just after the instance", schema.Reg(p.Reg))
	case p.HasLoc:
		value = a.memValue(p.Addr, p.Size)
		rel.Value = fmt.Sprintf("memory %#x:%d just after the instance", p.Addr, p.Size)
	case rel.Value != "":
		// the crash's pointer
	default:
		// A branch of the criterion still waiting for its outcome.
		if t := run.ThreadIndex(last); a.threads[t].pending.set {
			a.finish(t, a.nextPC(last))
		}
		var which uint32
		value, which = a.criterionValue(p.Insts)
		rel.Instance = which
		rel.Value = "the value the instance computes"
		if run.StaticOf(which).Info.Class == insn.CondJump {
			rel.Value = "the branch's outcome"
		}
	}
	tr := a.t.triples[value]
	rel.Der = a.elements(tr.der)
	rel.Cinf = a.elements(tr.cinf)
	rel.Ainf = a.elements(tr.ainf)
	for _, s := range []struct {
		set Set
		id  uint32
	}{{SetDer, tr.der}, {SetCinf, tr.cinf}, {SetAinf, tr.ainf}} {
		rel.Ranges = append(rel.Ranges, a.ranges(s.set, s.id, ents)...)
	}
	a.stats.Sets, a.stats.Chains, a.stats.Triples, a.stats.Pages = len(a.t.sets), len(a.t.chains)-1, len(a.t.triples), len(a.pages)
	rel.Stats = a.stats
	return rel, nil
}

// sourceFilter returns the kinds of sources analysed.
func sourceFilter(kinds []SourceKind) map[SourceKind]bool {
	m := make(map[SourceKind]bool)
	if kinds == nil {
		for _, k := range []SourceKind{SourceFile, SourceStdin, SourceSocket, SourcePipe, SourceOther} {
			m[k] = true
		}
		return m
	}
	for _, k := range kinds {
		m[k] = true
	}
	return m
}

// tracked says whether a register's value is followed: not the stack
// pointer or the instruction pointer, as in the slicer.
func tracked(r tracepb.Register) bool {
	return r != 0 && r != tracepb.Register_RSP && r != tracepb.Register_RIP && r < 64
}

// step propagates instance i.
func (a *analyzer) step(i uint32, accs []slice.Access) {
	run, t := a.run, a.t
	ti := run.ThreadIndex(i)
	ts := &a.threads[ti]
	st := run.StaticOf(i)
	if ts.pending.set {
		a.finish(ti, st.PC)
	}
	info := &st.Info
	if a.stackAddress(ts, info) {
		// An address in the stack (the frame pointer set up, a local's
		// address taken) is no value of the program's: it carries no
		// input, and no control influence either.
		a.define(i, ti, st, accs, 0)
		return
	}
	copyLike := info.Flow == insn.FlowMove || info.Flow == insn.FlowSwap || info.Compare
	constant := info.Flow == insn.FlowConst

	// Value dependences: the registers and memory it reads as operands.
	// A string move's rsi, rdi and rcx select its memory and count it:
	// address operands.
	uses := info.Uses
	strMove := stringMove(info)
	if strMove {
		uses = 0
		if info.Src != 0 {
			uses = insn.Of(info.Src)
		}
	}
	var value uint32
	if !constant {
		for u := uses; u != 0; u &= u - 1 {
			r := tracepb.Register(trailing(uint64(u)))
			if tracked(r) {
				value = t.TUnion(value, a.get(&ts.regs, r))
			}
		}
		for _, ac := range accs {
			if !ac.Write {
				value = t.TUnion(value, a.memValue(ac.Addr, ac.Size))
			}
		}
	}
	// Address dependences: the registers that select the memory operand.
	var rest uint32
	var addr uint32
	if tracked(info.Base) {
		addr = a.get(&ts.regs, info.Base)
	}
	if tracked(info.Index) {
		addr = t.TUnion(addr, a.get(&ts.regs, info.Index))
	}
	if strMove {
		for _, r := range []tracepb.Register{tracepb.Register_RSI, tracepb.Register_RDI, tracepb.Register_RCX} {
			if info.Uses.Has(r) {
				addr = t.TUnion(addr, a.get(&ts.regs, r))
			}
		}
	}
	if addr != 0 {
		via := viaAddrWeak
		if copyLike || constant {
			via = viaAddrKeep
		}
		rest = t.Contrib(addr, via)
	}
	// Control dependence.
	branch := info.Class == insn.CondJump
	if pc := run.ControlParent(i); pc >= 0 {
		pr := a.preds[uint32(pc)]
		if pr.value != 0 {
			via := viaCtrlWeak
			if copyLike || constant || branch {
				via = viaCtrlKeep
			}
			rest = t.TUnion(rest, t.Contrib(pr.value, via))
			if constant && pr.equal {
				rest = t.TUnion(rest, t.chainContrib(pr.value, a.link(i, st, accs)))
			}
		}
		if a.lastChild[pc] == i {
			delete(a.preds, uint32(pc))
		}
	}
	if branch && info.Cond != insn.CondNone {
		ts.pending = pendingBranch{set: true, inst: i, value: value, rest: rest,
			compare: ts.flagsCompare, cond: info.Cond, target: info.Target}
		return
	}
	if info.Flow == insn.FlowMove {
		// A copy keeps each byte's own sets.
		if v, ok := a.copyBytes(ts, info, accs, rest); ok {
			a.defineOthers(i, ti, st, accs, v)
			return
		}
	}
	if !copyLike {
		value = t.Contrib(value, viaValueWeak)
	}
	result := t.TUnion(value, rest)
	a.define(i, ti, st, accs, result)
}

// defineOthers finishes a copy that copyBytes carried out: the registers
// it writes besides its destination (none but the stack pointer, as a
// rule) get its value, and it is noted for its dependents.
func (a *analyzer) defineOthers(i, ti uint32, st *slice.Static, accs []slice.Access, value uint32) {
	ts := &a.threads[ti]
	info := &st.Info
	defs := info.Defs &^ insn.Of(tracepb.Register_RSI, tracepb.Register_RDI, tracepb.Register_RCX)
	if !info.DstMem {
		defs &^= insn.Of(info.Dst)
	}
	for d := defs; d != 0; d &= d - 1 {
		if r := tracepb.Register(trailing(uint64(d))); tracked(r) {
			ts.regs.setWhole(r, value)
		}
	}
	a.note(i, value, false)
}

// stringMove says whether the instruction is a string move (movs, stos,
// lods, with or without rep): a copy whose memory operands rsi and rdi
// select, rcx counting it.
func stringMove(info *insn.Info) bool {
	return info.Flow == insn.FlowMove && (info.DstMem || info.SrcMem) && info.Base == 0 && info.Index == 0 &&
		(info.Uses.Has(tracepb.Register_RSI) || info.Uses.Has(tracepb.Register_RDI))
}

// stackAddress says whether the instruction computes a register's value
// from the stack pointer, or from a frame pointer that holds no input: mov
// rbp, rsp; lea rax, [rbp-0x20].
func (a *analyzer) stackAddress(ts *threadShadow, info *insn.Info) bool {
	if (info.Flow != insn.FlowMove && info.Flow != insn.FlowAdd) || info.DstMem || info.SrcMem || info.Src2 != 0 {
		return false
	}
	return info.Src == tracepb.Register_RSP || (info.Src == tracepb.Register_RBP && a.get(&ts.regs, tracepb.Register_RBP) == 0)
}

// finish gives thread ti's pending conditional jump its value, now that
// the thread's next instruction (at nextPC) shows which way it went.
func (a *analyzer) finish(ti uint32, nextPC uint64) {
	ts := &a.threads[ti]
	pb := ts.pending
	ts.pending = pendingBranch{}
	taken := nextPC == pb.target
	equal := pb.compare && ((pb.cond == insn.CondE && taken) || (pb.cond == insn.CondNE && !taken))
	value := pb.value
	if !equal {
		value = a.t.Contrib(value, viaValueWeak)
	}
	result := a.t.TUnion(value, pb.rest)
	a.note(pb.inst, result, equal)
}

// note keeps instance i's value when a child or the criterion needs it.
func (a *analyzer) note(i, value uint32, equal bool) {
	if int(i) < len(a.lastChild) && a.lastChild[i] > i {
		a.preds[i] = pred{value, equal}
	}
	if a.want[i] {
		a.values[i] = value
	}
}

// define writes instance i's value to what it writes: its registers, the
// memory it stores to, and for a system call that brought input in, the
// entities at their addresses.
func (a *analyzer) define(i, ti uint32, st *slice.Static, accs []slice.Access, value uint32) {
	ts := &a.threads[ti]
	info := &st.Info
	defs := info.Defs
	if stringMove(info) {
		// rsi, rdi and rcx step on: they keep their sets.
		defs &^= insn.Of(tracepb.Register_RSI, tracepb.Register_RDI, tracepb.Register_RCX)
	}
	for d := defs; d != 0; d &= d - 1 {
		r := tracepb.Register(trailing(uint64(d)))
		if tracked(r) {
			ts.regs.setWhole(r, value)
		}
	}
	if info.Defs.Has(tracepb.Register_RFLAGS) {
		ts.flagsCompare = info.Compare
	}
	for _, ac := range accs {
		if ac.Write {
			a.setMem(ac.Addr, ac.Size, value)
		}
	}
	if rs, ok := a.entAt[i]; ok {
		for _, r := range rs {
			for k := uint64(0); k < r.Len; k++ {
				a.setMem(r.Addr+k, 1, a.entityValue(r.First+k))
			}
			a.stats.Entities += int64(r.Len)
		}
	}
	a.note(i, value, false)
}

// Signals of a bad memory access.
const (
	sigBUS  = 7
	sigSEGV = 11
)

// pointer returns the value of the faulting instance i's address
// registers, before it runs; ok is false when it has none that is
// followed (the stack pointer, or a frame pointer that holds no input, do
// not count).
func (a *analyzer) pointer(i uint32) (uint32, bool) {
	info := &a.run.StaticOf(i).Info
	ts := &a.threads[a.run.ThreadIndex(i)]
	var v uint32
	ok := false
	for _, r := range []tracepb.Register{info.Base, info.Index} {
		if rv := a.get(&ts.regs, r); tracked(r) && (r != tracepb.Register_RBP || rv != 0) {
			v = a.t.TUnion(v, rv)
			ok = true
		}
	}
	return v, ok
}

// operands returns the union of the values instance i reads (its
// registers and memory operands), before it runs: the wrong operand of an
// instruction that faulted other than by its address (a division by
// zero).
func (a *analyzer) operands(i uint32, accs []slice.Access) uint32 {
	info := &a.run.StaticOf(i).Info
	ts := &a.threads[a.run.ThreadIndex(i)]
	var v uint32
	for u := info.Uses; u != 0; u &= u - 1 {
		if r := tracepb.Register(trailing(uint64(u))); tracked(r) {
			v = a.t.TUnion(v, a.get(&ts.regs, r))
		}
	}
	for _, ac := range accs {
		if !ac.Write {
			v = a.t.TUnion(v, a.memValue(ac.Addr, ac.Size))
		}
	}
	return v
}

// nextPC returns the pc of the next instance of i's thread, 0 when there
// is none.
func (a *analyzer) nextPC(i uint32) uint64 {
	ti := a.run.ThreadIndex(i)
	for j := i + 1; int(j) < a.run.Instances(); j++ {
		if a.run.ThreadIndex(j) == ti {
			return a.run.StaticOf(j).PC
		}
	}
	return 0
}

// criterionValue returns the value of the last of insts that computes
// something (a conditional branch, or an instruction other than a call or
// return that writes a followed register or memory), or of the last of
// them when none does.
func (a *analyzer) criterionValue(insts []uint32) (uint32, uint32) {
	for k := len(insts) - 1; k >= 0; k-- {
		i := insts[k]
		info := &a.run.StaticOf(i).Info
		if info.Class == insn.Call || info.Class == insn.IndirectCall || info.Class == insn.Return {
			continue
		}
		computes := info.Class == insn.CondJump
		for d := info.Defs; d != 0 && !computes; d &= d - 1 {
			r := tracepb.Register(trailing(uint64(d)))
			computes = tracked(r) && r != tracepb.Register_RFLAGS
		}
		if !computes {
			for _, ac := range a.run.Accesses(i, nil) {
				if ac.Write {
					computes = true
				}
			}
		}
		if computes {
			return a.values[i], i
		}
	}
	i := insts[len(insts)-1]
	return a.values[i], i
}

// A byte of shadow memory holds a triple's number, or with entityBit set
// the number of the entity it holds as read: its triple ({e=}, {}, {}) is
// made only when the byte is read, as most bytes a file brings in (a
// mapped file's above all) are never read.
const entityBit = 1 << 31

// entityValue returns the shadow value of a byte that holds entity e.
func (a *analyzer) entityValue(e uint64) uint32 {
	if e < entityBit {
		return entityBit | uint32(e)
	}
	return a.t.tripleOf(triple{der: a.t.single(e)})
}

// memValue returns the union of the triples of memory [addr, addr+size).
func (a *analyzer) memValue(addr, size uint64) uint32 {
	var v uint32
	prev := ^uint32(0)
	for k := uint64(0); k < size; k++ {
		x := a.byteAt(addr + k)
		if x != prev {
			prev = x
			if x&entityBit != 0 {
				x = a.t.tripleOf(triple{der: a.t.single(uint64(x &^ entityBit))})
			}
			v = a.t.TUnion(v, x)
		}
	}
	return v
}

func (a *analyzer) byteAt(b uint64) uint32 {
	pn := b >> pageBits
	if pn == a.lastPN {
		return a.lastPg[b&(1<<pageBits-1)]
	}
	pg := a.pages[pn]
	if pg == nil {
		return 0
	}
	a.lastPN, a.lastPg = pn, pg
	return pg[b&(1<<pageBits-1)]
}

// setMem gives memory [addr, addr+size) the triple v.
func (a *analyzer) setMem(addr, size uint64, v uint32) {
	for k := uint64(0); k < size; {
		b := addr + k
		pn := b >> pageBits
		pg := a.lastPg
		if pn != a.lastPN {
			pg = a.pages[pn]
			if pg == nil {
				if v == 0 {
					// Skip to the next page: it is all 0 already.
					k += 1<<pageBits - b&(1<<pageBits-1)
					continue
				}
				pg = new(page)
				a.pages[pn] = pg
			}
			a.lastPN, a.lastPg = pn, pg
		}
		off := b & (1<<pageBits - 1)
		n := min(size-k, 1<<pageBits-off)
		seg := pg[off : off+n]
		for j := range seg {
			seg[j] = v
		}
		k += n
	}
}

// link describes the constant assignment instance i makes, for a chain.
func (a *analyzer) link(i uint32, st *slice.Static, accs []slice.Access) linkKey {
	l := linkKey{value: st.Info.Imm, pc: st.PC}
	if st.Info.DstMem {
		for _, ac := range accs {
			if ac.Write {
				l.loc = ac.Addr | locMem
				break
			}
		}
	} else {
		l.loc = uint64(st.Info.Dst)
	}
	return l
}

// elements lists set id as elements, by entity.
func (a *analyzer) elements(id uint32) []Element {
	d := a.t.data(id)
	out := []Element{}
	ci := 0
	for _, r := range d.runs {
		for e := r.lo; e < r.hi; e++ {
			for ci < len(d.chains) && d.chains[ci].ent < e {
				ci++
			}
			if r.strong && ci < len(d.chains) && d.chains[ci].ent == e {
				for ; ci < len(d.chains) && d.chains[ci].ent == e; ci++ {
					out = append(out, Element{Entity: e, Strong: true, Chain: a.chainLinks(d.chains[ci].chain)})
				}
				continue
			}
			out = append(out, Element{Entity: e, Strong: r.strong})
		}
	}
	return out
}

// chainLinks turns an interned chain into Links.
func (a *analyzer) chainLinks(c uint32) []Link {
	var out []Link
	for _, l := range a.t.links(c) {
		out = append(out, Link{Value: l.value, Location: locName(l.loc), Statement: statement(a.run.Tables, l.pc), PC: l.pc})
	}
	return out
}

// locName names a chain link's location.
func locName(loc uint64) string {
	if loc&locMem != 0 {
		return fmt.Sprintf("[%#x]", loc&^uint64(locMem))
	}
	return schema.Reg(tracepb.Register(loc)).String()
}

// statement returns pc's source position as FILE:LINE (the file's base
// name), or what the tables know of pc.
func statement(t *schema.Tables, pc uint64) string {
	loc := t.Locate(pc)
	if loc.File != "" && loc.Line != 0 {
		return fmt.Sprintf("%s:%d", filepath.Base(loc.File), loc.Line)
	}
	return loc.String()
}

// ranges splits set id into runs of entities per source.
func (a *analyzer) ranges(s Set, id uint32, ents *Entities) []EntityRange {
	var out []EntityRange
	for _, r := range a.t.tr.runs(a.t.sets[id].tree) {
		for e := r.lo; e < r.hi; {
			k := sort.Search(len(ents.Ranges), func(k int) bool { return ents.Ranges[k].First+ents.Ranges[k].Len > e })
			if k == len(ents.Ranges) || ents.Ranges[k].First > e {
				// Not an entity of ents (cannot happen for a set made
				// from them): one range on its own.
				out = append(out, EntityRange{Set: s, Source: -1, First: e, Len: r.hi - e, Strong: r.strong})
				break
			}
			er := ents.Ranges[k]
			n := min(r.hi, er.First+er.Len) - e
			off := er.Offset + (e - er.First)
			if m := len(out); m > 0 {
				p := &out[m-1]
				if p.Set == s && p.Source == er.Source && p.Strong == r.strong && p.First+p.Len == e && p.Offset+p.Len == off {
					p.Len += n
					e += n
					continue
				}
			}
			out = append(out, EntityRange{Set: s, Source: er.Source, First: e, Len: n, Offset: off, Strong: r.strong})
			e += n
		}
	}
	return slices.Clip(out)
}

func trailing(x uint64) int { return bits.TrailingZeros64(x) }
