package bugs

import (
	"github.com/mgtrace/mgtrace/schema/tracepb"
	"github.com/mgtrace/mgtrace/slice/insn"
	"github.com/mgtrace/mgtrace/walk"
	"math/bits"
)

// propagate applies one instruction's effect on the shadows: what its
// destination now holds (provenance, origin node, undefined bytes), from
// the value flow the decoder found (insn.Flow).
//
// The rules, after Wang's calculus (chapter 3): a copy keeps the value's
// provenance and adds a node whose parent is the source's; a constant, an
// allocator's return and any arithmetic generate a value (a node with no
// parent), pointer arithmetic keeping the pointer's provenance.
// Undefined bytes follow copies byte for byte; a computation is wholly
// undefined when any of its general-register or memory inputs is, and
// vector computations (compares, masks) count as defined, as memcheck
// counts the string functions it replaces.
func (e *engine) propagate(th *thread, in *walk.Instance, info *insn.Info) {
	switch info.Flow {
	case insn.FlowMove:
		e.move(th, in, info)
	case insn.FlowConst:
		node := gen(in)
		sh := shadow{node: node}
		if info.DstMem {
			e.storeAll(in, sh, 0)
		} else {
			e.setReg(th, int(info.Dst), sh, 0, info.Width)
		}
	case insn.FlowAdd:
		e.add(th, in, info)
	case insn.FlowSwap:
		d, s := int(info.Dst), int(info.Src)
		if info.DstMem || info.SrcMem {
			r := d
			if info.DstMem {
				r = s
			}
			var ld *walk.Access
			for i := range in.Acc {
				if !in.Acc[i].Write {
					ld = &in.Acc[i]
					break
				}
			}
			old, oldU := th.regs[r][0], th.und[r]
			if ld != nil {
				sh := e.mem.load(ld.Addr)
				sh.node = e.nodeFrom(nLoad, in, ld.Addr, sh.node)
				th.regs[r][0], th.und[r] = sh, e.mem.undefined(ld.Addr, ld.Size)
			}
			old.node = e.nodeFrom(nStore, in, 0, old.node)
			e.storeAll(in, old, oldU)
			return
		}
		if d < maxRegs && s < maxRegs {
			th.regs[d], th.regs[s] = th.regs[s], th.regs[d]
			th.und[d], th.und[s] = th.und[s], th.und[d]
		}
	default:
		e.compute(th, in, info)
	}
}

// gen is the reference of a value the instruction generates (a constant,
// a computation): the instruction itself, no node.
func gen(in *walk.Instance) uint32 { return genFlag | in.Static.ID }

// nodeFrom adds a copy node whose parent is the source's node.
func (e *engine) nodeFrom(kind uint8, in *walk.Instance, addr uint64, parent uint32) uint32 {
	return e.nodes.add(onode{parent: parent, kind: kind, pc: in.Static.PC, seq: in.Seq, addr: addr})
}

// widthMask is the undefined-byte mask of a value of w bytes.
func widthMask(w uint8) uint32 {
	if w >= 32 || w == 0 {
		return ^uint32(0)
	}
	return 1<<w - 1
}

// setReg writes a register's lane 0 (and clears its other lanes).
func (e *engine) setReg(th *thread, r int, sh shadow, und uint32, width uint8) {
	if r <= 0 || r >= maxRegs {
		return
	}
	if width != 0 && width < 8 {
		sh.prov = 0 // a narrow value is not a pointer
	}
	th.regs[r] = [4]shadow{sh}
	th.und[r] = und & widthMask(width)
}

// storeAll writes sh to every word the instruction stored, and the
// undefined mask (repeated per 8 bytes) to their bytes.
func (e *engine) storeAll(in *walk.Instance, sh shadow, und uint32) {
	for i := range in.Acc {
		a := &in.Acc[i]
		if !a.Write {
			continue
		}
		e.storeWord(a.Addr, a.Size, a.Value, sh, und)
	}
}

// storeWord records a stored value's shadow: a whole aligned word keeps
// its provenance; a narrower or misaligned store leaves no pointer.
func (e *engine) storeWord(addr uint64, size uint32, val uint64, sh shadow, und uint32) {
	if size != 8 || addr&7 != 0 {
		sh.prov = 0
	}
	if sh.prov != 0 {
		sh.off = 0
		if val != e.blocks[sh.prov].base {
			sh.off = 1
		}
	}
	for a := addr &^ 7; a < addr+uint64(size); a += 8 {
		e.mem.store(a, sh)
	}
	if size <= 32 {
		e.mem.define(addr, size, und&widthMask(uint8(size)))
	}
}

// move is a copy: register to register, memory to register, register to
// memory, or memory to memory (string moves).
func (e *engine) move(th *thread, in *walk.Instance, info *insn.Info) {
	switch {
	case info.SrcMem && info.DstMem:
		// Loads and stores alternate: each store copies the load before it.
		var ld *walk.Access
		for i := range in.Acc {
			a := &in.Acc[i]
			if !a.Write {
				ld = a
				continue
			}
			if ld == nil {
				continue
			}
			n := min(a.Size, ld.Size)
			for o := uint32(0); o < n; o += 8 {
				k := min(8, n-o)
				sh := e.mem.load(ld.Addr + uint64(o))
				if sh.node != 0 || sh.prov != 0 {
					sh.node = e.nodeFrom(nStore, in, a.Addr+uint64(o), sh.node)
				}
				if k != 8 || (a.Addr+uint64(o))&7 != 0 || (ld.Addr+uint64(o))&7 != 0 {
					sh.prov = 0
				}
				e.mem.store((a.Addr+uint64(o))&^7, sh)
				e.mem.define(a.Addr+uint64(o), k, e.mem.undefined(ld.Addr+uint64(o), k))
			}
		}
	case info.SrcMem:
		var ld *walk.Access
		for i := range in.Acc {
			if !in.Acc[i].Write {
				ld = &in.Acc[i]
				break
			}
		}
		d := int(info.Dst)
		if d <= 0 || d >= maxRegs {
			return
		}
		if ld == nil {
			if e.noStack {
				// A heap-level trace left out this stack load: the
				// register holds a defined value of unknown origin, not
				// what it held before.
				th.regs[d], th.und[d] = [4]shadow{}, 0
			}
			return
		}
		und := uint32(0)
		if ld.Size <= 32 {
			und = e.mem.undefined(ld.Addr, ld.Size)
			if ld.Size <= 8 && und != widthMask(uint8(ld.Size)) {
				// Partly undefined (a struct's padding, a bit field):
				// without bit-level tracking it counts as defined.
				und = 0
			}
		}
		var lanes [4]shadow
		for l := 0; l < 4 && uint32(l*8) < ld.Size; l++ {
			a := ld.Addr + uint64(l*8)
			sh := e.mem.load(a)
			if a&7 != 0 || ld.Size-uint32(l*8) < 8 {
				sh.prov = 0
			}
			if und>>(l*8)&0xff != 0 && sh.ub == 0 {
				sh.ub = e.live.Find(a)
			}
			if info.Restore == 0 {
				// A register's restore, like its save, is no step of the
				// value's history: the pair is transparent.
				sh.node = e.nodeFrom(nLoad, in, a, sh.node)
			}
			lanes[l] = sh
		}
		th.regs[d] = lanes
		th.und[d] = und
	case info.DstMem:
		s := int(info.Src)
		var sh [4]shadow
		und := uint32(0)
		if s > 0 && s < maxRegs {
			sh, und = th.regs[s], th.und[s]
		}
		for i := range in.Acc {
			a := &in.Acc[i]
			if !a.Write {
				continue
			}
			for l := 0; l < 4 && uint32(l*8) < a.Size; l++ {
				w := sh[l]
				if info.Save == 0 {
					w.node = e.nodeFrom(nStore, in, a.Addr+uint64(l*8), w.node)
				}
				k := min(8, a.Size-uint32(l*8))
				val := a.Value
				if l > 0 && len(a.Data) >= l*8+8 {
					val = le64(a.Data[l*8:])
				}
				e.storeWord(a.Addr+uint64(l*8), k, val, w, und>>(l*8))
			}
		}
	default:
		d, s := int(info.Dst), int(info.Src)
		if d <= 0 || d >= maxRegs || s <= 0 || s >= maxRegs {
			return
		}
		lanes := th.regs[s]
		for l := range lanes {
			if l == 0 || lanes[l] != (shadow{}) {
				lanes[l].node = e.nodeFrom(nMove, in, 0, lanes[l].node)
			}
		}
		if info.Width != 0 && info.Width < 8 {
			lanes[0].prov = 0
		}
		th.regs[d] = lanes
		th.und[d] = th.und[s] & widthMask(info.Width)
	}
}

// add is pointer arithmetic: the result keeps the provenance of the one
// pointer among its inputs, and is a new value (a node with no parent).
func (e *engine) add(th *thread, in *walk.Instance, info *insn.Info) {
	var a, b shadow
	var und uint32
	if s := int(info.Src); s > 0 && s < maxRegs {
		a, und = th.regs[s][0], th.und[s]
	}
	if s := int(info.Src2); s > 0 && s < maxRegs {
		b = th.regs[s][0]
		und |= th.und[s]
	}
	var ld *walk.Access
	for i := range in.Acc {
		if !in.Acc[i].Write {
			ld = &in.Acc[i]
			break
		}
	}
	if ld != nil {
		m := e.mem.load(ld.Addr)
		if ld.Size <= 32 {
			und |= e.mem.undefined(ld.Addr, ld.Size)
		}
		if info.DstMem {
			a = m
		} else {
			b = m
		}
	}
	sh := shadow{}
	switch {
	case info.Sub && a.prov != 0 && b.prov != 0:
		// p - q: a distance, not a pointer.
	case a.prov != 0 && b.prov == 0:
		sh.prov, sh.off = a.prov, 1
	case b.prov != 0 && a.prov == 0 && !info.Sub:
		sh.prov, sh.off = b.prov, 1
	}
	if und != 0 {
		// An undefined result keeps the history of its undefined input.
		sh.node, sh.ub = a.node, a.ub
		if sh.ub == 0 {
			sh.ub = b.ub
		}
		und = widthMask(info.Width)
	} else {
		sh.node = gen(in)
	}
	if info.DstMem {
		e.storeAll(in, sh, und)
	} else {
		e.setReg(th, int(info.Dst), sh, und, info.Width)
	}
	if info.Defs.Has(flagsReg) {
		th.regs[rFlags][0], th.und[rFlags] = shadow{node: sh.node, ub: sh.ub}, boolMask(und != 0)
	}
}

// flagsReg is RFLAGS as a register of insn's sets.
const flagsReg = tracepb.Register_RFLAGS

func boolMask(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// compute is any other instruction: its general-register and flag
// destinations, and the memory it stores, hold a generated value,
// undefined when an input is.
func (e *engine) compute(th *thread, in *walk.Instance, info *insn.Info) {
	if info.Defs == 0 && !anyWrite(in) {
		return
	}
	var und uint32
	var from shadow
	for uses := uint64(info.Uses) &^ 1; uses != 0; uses &= uses - 1 {
		r := bits.TrailingZeros64(uses)
		if r == rRSP || r == rRIP || (r >= rXMM0 && r <= rXMM15) {
			continue
		}
		if th.und[r] != 0 {
			und |= th.und[r]
			if from.node == 0 && from.ub == 0 {
				from = th.regs[r][0]
			}
		}
	}
	for i := range in.Acc {
		a := &in.Acc[i]
		if a.Write || a.Size > 32 {
			continue
		}
		// A vector load's bytes feed a vector computation (defined); a
		// partly undefined scalar counts as defined.
		if u := e.mem.undefined(a.Addr, a.Size); u != 0 && a.Size <= 8 && u == widthMask(uint8(a.Size)) {
			und |= u
			if from.node == 0 && from.ub == 0 {
				from = e.mem.load(a.Addr)
				if from.ub == 0 {
					from.ub = e.live.Find(a.Addr)
				}
				from.node = e.nodeFrom(nLoad, in, a.Addr, from.node)
			}
		}
	}
	if info.BitOp != insn.BitNone {
		und = e.bitOp(th, in, info)
	}
	sh := shadow{}
	if und != 0 {
		sh.node, sh.ub = from.node, from.ub
	}
	for defs := uint64(info.Defs) &^ 1; defs != 0; defs &= defs - 1 {
		r := bits.TrailingZeros64(defs)
		switch {
		case r == rFlags:
			th.regs[r][0], th.und[r] = shadow{node: sh.node, ub: sh.ub}, boolMask(und != 0)
		case r >= rXMM0 && r <= rXMM15, r == rRSP, r > rFlags:
			th.regs[r], th.und[r] = [4]shadow{}, 0
		default:
			s := sh
			if und == 0 {
				if s.node == 0 {
					s.node = gen(in)
					sh.node = s.node
				}
				th.regs[r], th.und[r] = [4]shadow{s}, 0
			} else {
				th.regs[r], th.und[r] = [4]shadow{s}, 0xff
			}
		}
	}
	if anyWrite(in) {
		if sh.node == 0 && und == 0 {
			sh.node = gen(in)
		}
		m := uint32(0)
		if und != 0 {
			m = ^uint32(0)
		}
		for i := range in.Acc {
			a := &in.Acc[i]
			if a.Write {
				e.storeWord(a.Addr, a.Size, a.Value, sh, m)
			}
		}
	}
}

func anyWrite(in *walk.Instance) bool {
	for i := range in.Acc {
		if in.Acc[i].Write {
			return true
		}
	}
	return false
}

func le64(b []byte) uint64 {
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// bitOp gives the undefined bytes of a bitwise operation with a constant
// mask (a bit field set, cleared or tested), byte by byte, where a
// computation would make the whole result undefined: `test` and `bt` read
// only the bytes the mask covers; `or` defines the bytes it sets bits in
// and `and` those it clears bits in (memcheck tracks the bits one by one;
// here a byte with some bits forced counts as defined); the bytes the
// mask leaves alone keep their marks. The result is the mask of
// undefined bytes, or 0.
func (e *engine) bitOp(th *thread, in *walk.Instance, info *insn.Info) uint32 {
	var u uint32
	n := uint32(8)
	found := false
	for i := range in.Acc {
		if a := &in.Acc[i]; !a.Write && a.Size <= 8 {
			u, n, found = e.mem.undefined(a.Addr, a.Size), a.Size, true
			break
		}
	}
	if !found {
		for uses := uint64(info.Uses) &^ (1 << rFlags); uses != 0; uses &= uses - 1 {
			if r := bits.TrailingZeros64(uses); r > 0 && r < rXMM0 && r != rRSP {
				u, found = th.und[r]&0xff, true
				if info.Width != 0 && info.Width < 8 {
					n = uint32(info.Width)
				}
				break
			}
		}
	}
	if !found || u == 0 {
		return 0
	}
	mask := uint64(info.Mask)
	var relevant, defined uint32
	for i := uint32(0); i < n; i++ {
		mb := byte(mask >> (8 * i))
		if i >= 8 {
			mb = byte(mask >> 56)
		}
		switch info.BitOp {
		case insn.BitTest:
			if mb != 0 {
				relevant |= 1 << i
			}
		case insn.BitAnd:
			if mb != 0 {
				relevant |= 1 << i
			}
			if mb != 0xff {
				defined |= 1 << i
			}
		case insn.BitOr:
			if mb != 0xff {
				relevant |= 1 << i
			}
			if mb != 0 {
				defined |= 1 << i
			}
		case insn.BitXor, insn.BitBTC:
			relevant |= 1 << i
		}
	}
	switch info.BitOp {
	case insn.BitBT, insn.BitBTS, insn.BitBTR, insn.BitBTC:
		b := uint32(mask) % (8 * n) / 8
		relevant = 1 << b
		if info.BitOp != insn.BitBTC {
			defined = 1 << b
		}
	}
	return u & relevant &^ defined
}
