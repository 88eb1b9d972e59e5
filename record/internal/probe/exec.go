package probe

import (
	"encoding/binary"

	"github.com/mgtrace/mgtrace/schema"
)

// sbExec decodes one SB_EXEC record: the instructions that ran (as BLOCK
// events) and the events of its sites, in execution order.
func (d *Decoder) sbExec(h uint64) error {
	id := h >> 32
	flags := h >> 8 & 0xff
	aux := int(h >> 16 & 0xffff)
	if id < uint64(len(d.plans)) && d.plans[id].live && flags&execCut == 0 && d.fast != nil && d.started {
		ps := &d.plans[id]
		var p *plan
		switch {
		case flags&execExit == 0:
			p = &ps.full
		case aux < len(ps.exits):
			p = &ps.exits[aux]
		}
		if p != nil {
			if !p.made {
				exit := -1
				if p != &ps.full {
					exit = aux
				}
				d.plan(d.sbs[id], p, exit)
			}
			if p.seq != nil {
				return d.runPlan(p)
			}
		}
	}
	if id >= uint64(len(d.sbs)) || d.sbs[id] == nil {
		return d.bad("execution of undefined superblock %d", id)
	}
	sb := d.sbs[id]
	nsites := len(sb.sites)
	last := len(sb.insns) - 1 // last instruction that completed
	words := sb.wordsBefore[nsites]
	switch {
	case flags&execCut != 0:
		words = aux
		if words > sb.wordsBefore[nsites] {
			return d.bad("superblock %d cut after %d words, it writes at most %d", id, words, sb.wordsBefore[nsites])
		}
		// The sites whose words were all committed ran; the next one (if
		// any) is where the superblock stopped.
		nsites = 0
		for nsites < len(sb.sites) && sb.wordsBefore[nsites+1] <= words {
			nsites++
		}
		d.cut.ok, d.cut.havePending = true, false
		d.cut.pc, d.cut.access = 0, false
		if nsites < len(sb.sites) {
			s := &sb.sites[nsites]
			d.cut.pc = sb.insns[s.insn].pc
			d.cut.access = s.kind == siteLoad || s.kind == siteStore || s.kind == siteCAS
			last = int(s.insn) - 1
		}
	case flags&execExit != 0:
		if aux >= len(sb.exits) {
			return d.bad("superblock %d left through exit %d of %d", id, aux, len(sb.exits))
		}
		nsites = sb.exits[aux] + 1
		words = sb.wordsBefore[nsites]
		last = int(sb.sites[nsites-1].insn)
		d.cut.ok = false // a superblock ran: an earlier interruption was transparent
	default:
		d.cut.ok = false
	}
	if err := d.fill(8 * (1 + words)); err != nil {
		return err
	}
	d.word()
	d.stats.Executions++
	data := d.buf[d.r : d.r+8*words]
	d.r += 8 * words
	d.stats.Words += uint64(words)

	done := -1       // instructions up to here are covered by BLOCK events
	suppressed := -1 // the instruction whose stores an ALTER site suppressed
	for i := 0; i < nsites; i++ {
		s := &sb.sites[i]
		if int(s.insn) > done && int(s.insn) <= last {
			if err := d.blocks(sb, done+1, int(s.insn), last); err != nil {
				return err
			}
			done = min(sb.runEnd[s.insn], last)
		}
		w := data[8*sb.wordsBefore[i] : 8*sb.wordsBefore[i+1]]
		switch {
		case s.kind == siteAlter && le(w, 0) != 0 && s.size == alterSuppress:
			suppressed = int(s.insn)
		case s.kind == siteStore && int(s.insn) == suppressed:
			continue // the store went to the probe's scratch buffer
		}
		if err := d.site(sb, s, w); err != nil {
			return err
		}
	}
	if done < last {
		if err := d.blocks(sb, done+1, last, last); err != nil {
			return err
		}
	}
	return nil
}

// runPlan decodes an execution that follows plan p: its events go to the
// fast sink as one sequence.
func (d *Decoder) runPlan(p *plan) error {
	if err := d.fill(8 * (1 + p.words)); err != nil {
		return err
	}
	data := d.buf[d.r+8 : d.r+8+8*p.words]
	d.r += 8 + 8*p.words
	d.stats.Words += uint64(1 + p.words)
	d.stats.Executions++
	d.cut.ok = false // a superblock ran: an earlier interruption was transparent
	var skip uint64
	for i, w := range p.derives {
		if !d.heap.contains(le(data, w)) {
			skip |= 1 << i
			d.stats.Dropped++
		}
	}
	if p.blocks {
		d.lastPC = p.lastPC
	}
	return d.fast.Sequence(p.seq, data, skip)
}

// plan makes p, the plan of superblock sb running to its end (exit -1)
// or out of side exit exit: the events sbExec would emit, as a
// schema.Sequence. A superblock with a compare-and-swap (a STORE only when
// it succeeded), an ALTER site (whose events depend on whether that
// execution was altered) or a site schema.NewSequence refuses has a plan
// without a sequence.
func (d *Decoder) plan(sb *superblock, p *plan, exit int) {
	nsites, last := len(sb.sites), len(sb.insns)-1
	if exit >= 0 {
		nsites = sb.exits[exit] + 1
		last = int(sb.sites[nsites-1].insn)
	}
	*p = plan{words: sb.wordsBefore[nsites], made: true}
	var evs []schema.SeqEvent
	blocks := func(from, to int) {
		if to >= from {
			p.lastPC, p.blocks = sb.insns[min(sb.runEnd[to], last)].pc, true
		}
		for i := from; i <= to; {
			end := min(sb.runEnd[i], last)
			evs = append(evs, schema.SeqEvent{Kind: schema.KindBlock, PC: sb.insns[i].pc, Count: uint32(end - i + 1)})
			i = end + 1
		}
	}
	done := -1
	for i := 0; i < nsites; i++ {
		s := &sb.sites[i]
		if int(s.insn) > done && int(s.insn) <= last {
			blocks(done+1, int(s.insn))
			done = min(sb.runEnd[s.insn], last)
		}
		ev := schema.SeqEvent{PC: sb.insns[s.insn].pc, Word: sb.wordsBefore[i]}
		switch s.kind {
		case siteLoad, siteStore:
			ev.Kind, ev.Size = schema.KindLoad, uint32(s.size)
			if s.kind == siteStore {
				ev.Kind = schema.KindStore
			}
			if s.flags&(siteDisp|siteBase) != 0 && s.reg == 0 {
				return // a base value without a register: event by event
			}
			switch {
			case s.flags&siteDisp != 0:
				ev.BaseReg, ev.Disp = s.reg, s.disp
			case s.flags&siteBase != 0:
				ev.BaseReg, ev.BaseWord = s.reg, true
			}
		case siteDerive:
			ev.Kind, ev.Reg, ev.BaseReg = schema.KindDerive, s.dest, s.reg
			p.derives = append(p.derives, ev.Word)
		case siteCall:
			ev.Kind = schema.KindCall
		case siteRet:
			ev.Kind = schema.KindReturn
		case siteExit:
			continue
		default:
			return // a compare-and-swap
		}
		evs = append(evs, ev)
	}
	if done < last {
		blocks(done+1, last)
	}
	if seq, err := schema.NewSequence(evs); err == nil {
		p.seq = seq
	}
}

// blocks emits BLOCK events for the runs holding instructions from..to,
// each run ending at its own end or at last.
func (d *Decoder) blocks(sb *superblock, from, to, last int) error {
	if to >= from {
		d.lastPC = sb.insns[min(sb.runEnd[to], last)].pc
	}
	if d.fast != nil && d.started {
		for i := from; i <= to; {
			end := min(sb.runEnd[i], last)
			if err := d.fast.Block(sb.insns[i].pc, uint32(end-i+1)); err != nil {
				return err
			}
			i = end + 1
		}
		return nil
	}
	for i := from; i <= to; {
		end := min(sb.runEnd[i], last)
		ev := d.newEvent(schema.KindBlock)
		ev.PC = sb.insns[i].pc
		ev.Count = uint32(end - i + 1)
		if err := d.emit(ev); err != nil {
			return err
		}
		i = end + 1
	}
	return nil
}

func le(b []byte, i int) uint64 { return binary.LittleEndian.Uint64(b[8*i:]) }

// site emits the events of one site from its data words w.
func (d *Decoder) site(sb *superblock, s *site, w []byte) error {
	pc := sb.insns[s.insn].pc
	switch s.kind {
	case siteLoad, siteStore:
		k := schema.KindLoad
		if s.kind == siteStore {
			k = schema.KindStore
		}
		if d.fast != nil && d.started {
			addr := le(w, 0)
			var data []byte
			if s.size > 8 {
				data = w[8 : 8+int(s.size)]
			}
			var base uint64
			reg := schema.Reg(0)
			switch {
			case s.flags&siteDisp != 0:
				reg, base = s.reg, addr-s.disp
			case s.flags&siteBase != 0:
				reg, base = s.reg, le(w, int(s.nwords)-1)
			}
			return d.fast.Access(k, pc, addr, uint32(s.size), le(w, 1), data, reg, base)
		}
		ev := d.newEvent(k)
		ev.PC = pc
		ev.Addr = le(w, 0)
		ev.Size = uint32(s.size)
		ev.Value = le(w, 1)
		if s.size > 8 {
			ev.Data = append(ev.Data[:0], w[8:8+int(s.size)]...)
		}
		switch {
		case s.flags&siteDisp != 0:
			ev.BaseReg = s.reg
			ev.Base = ev.Addr - s.disp
		case s.flags&siteBase != 0:
			ev.BaseReg = s.reg
			ev.Base = le(w, int(s.nwords)-1)
		}
		return d.emit(ev)
	case siteCAS:
		addr, old, expd, nv := le(w, 0), le(w, 1), le(w, 2), le(w, 3)
		var reg schema.Reg
		var base uint64
		switch {
		case s.flags&siteBase != 0:
			reg, base = s.reg, le(w, 4)
		case s.reg != 0:
			reg, base = s.reg, addr-s.disp
		}
		ev := d.newEvent(schema.KindLoad)
		ev.PC, ev.Addr, ev.Size, ev.Value = pc, addr, uint32(s.size), old
		ev.BaseReg, ev.Base = reg, base
		if err := d.emit(ev); err != nil {
			return err
		}
		if old != expd {
			return nil
		}
		ev = d.newEvent(schema.KindStore)
		ev.PC, ev.Addr, ev.Size, ev.Value = pc, addr, uint32(s.size), nv
		ev.BaseReg, ev.Base = reg, base
		return d.emit(ev)
	case siteDerive:
		result, base := le(w, 0), le(w, 1)
		if !d.heap.contains(result) {
			d.stats.Dropped++
			return nil
		}
		ev := d.newEvent(schema.KindDerive)
		ev.PC, ev.Addr, ev.Reg, ev.BaseReg, ev.Base = pc, result, s.dest, s.reg, base
		return d.emit(ev)
	case siteCall:
		ev := d.newEvent(schema.KindCall)
		ev.PC, ev.Addr = pc, le(w, 0)
		for i := range ev.Args {
			ev.Args[i] = le(w, 1+i)
		}
		ev.SP = le(w, 7)
		return d.emit(ev)
	case siteRet:
		ev := d.newEvent(schema.KindReturn)
		ev.PC, ev.Addr, ev.Value, ev.SP = pc, le(w, 0), le(w, 1), le(w, 2)
		return d.emit(ev)
	case siteAlter:
		n := le(w, 0)
		if n == 0 {
			return nil // this execution was not altered
		}
		ev := d.newEvent(schema.KindAlter)
		ev.PC, ev.Num, ev.Count, ev.Addr = pc, uint64(s.size), uint32(n), le(w, 1)
		return d.emit(ev)
	}
	return nil // exits write nothing
}

// Finish emits what only the end of the process tells: a fatal signal seen
// by the probe (with its number, from Valgrind's exit status) and the EXIT
// event. signal is the terminating signal (0 if the process exited) and
// code its exit code.
func (d *Decoder) Finish(signal int, code int) error {
	if d.cur == 0 {
		return nil // no event was ever written
	}
	if signal != 0 {
		// A fatal signal is not delivered, so the probe does not report it:
		// it is where the last interrupted superblock stopped.
		ev := d.newEvent(schema.KindSignal)
		ev.Num = uint64(signal)
		d.applyCut(ev)
		if ev.PC == 0 {
			// Not a fault (SIGINT, SIGKILL...): where the program was, as
			// far as the trace knows.
			ev.PC = d.lastPC
		}
		if err := d.emit(ev); err != nil {
			return err
		}
	}
	for _, t := range d.heldExits {
		if err := d.threadExit(t); err != nil {
			return err
		}
	}
	d.heldExits = nil
	ev := d.newEvent(schema.KindExit)
	ev.Value = uint64(uint32(code))
	ev.Num = uint64(signal)
	return d.emit(ev)
}
