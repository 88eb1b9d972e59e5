package inputs

import (
	"github.com/mgtrace/mgtrace/schema/tracepb"
	"github.com/mgtrace/mgtrace/slice"
	"github.com/mgtrace/mgtrace/slice/insn"
)

// regFile is one thread's registers' shadow. A register holds one triple
// (whole) until a copy puts bytes of different origins in it (memcpy's
// eight-byte loads, a vector move of sixteen input bytes); then it holds
// one per byte (split), so that the copy's stores give each byte its own
// sets back. A byte's value may be an entity code (entityBit), as in
// memory.
type regFile struct {
	whole [64]uint32
	split [64]bool
	bytes [64][32]uint32
}

// regBytes is the number of bytes of register r the shadow follows.
func regBytes(r tracepb.Register) int {
	if r >= tracepb.Register_XMM0 && r <= tracepb.Register_XMM15 {
		return 32
	}
	return 8
}

// get returns register r's triple: the union of its bytes.
func (a *analyzer) get(rf *regFile, r tracepb.Register) uint32 {
	if !rf.split[r] {
		return a.mat(rf.whole[r])
	}
	var v uint32
	prev := ^uint32(0)
	for _, x := range rf.bytes[r][:regBytes(r)] {
		if x != prev {
			prev = x
			v = a.t.TUnion(v, a.mat(x))
		}
	}
	return v
}

// byteOf returns byte k of register r (perhaps an entity code).
func (rf *regFile) byteOf(r tracepb.Register, k int) uint32 {
	if !rf.split[r] {
		return rf.whole[r]
	}
	return rf.bytes[r][k%regBytes(r)]
}

// setWhole gives all of register r the triple v.
func (rf *regFile) setWhole(r tracepb.Register, v uint32) {
	rf.whole[r], rf.split[r] = v, false
}

// setByte gives byte k of register r the value v.
func (rf *regFile) setByte(r tracepb.Register, k int, v uint32) {
	if !rf.split[r] {
		w := rf.whole[r]
		b := &rf.bytes[r]
		for j := range b {
			b[j] = w
		}
		rf.split[r] = true
	}
	rf.bytes[r][k] = v
}

// mat turns a shadow value into a triple: an entity code becomes the
// entity's triple ({e=}, {}, {}).
func (a *analyzer) mat(v uint32) uint32 {
	if v&entityBit == 0 {
		return v
	}
	return a.t.tripleOf(triple{der: a.t.single(uint64(v &^ entityBit))})
}

// copyBytes carries out a copy (FlowMove) byte by byte: each byte of the
// destination gets its source byte's sets, with rest (the copy's address
// and control contributions) added. ok is false for a copy it does not
// handle (a source or destination it cannot place), which the caller
// then treats as a whole value; value is the union of what was written.
func (a *analyzer) copyBytes(ts *threadShadow, info *insn.Info, accs []slice.Access, rest uint32) (value uint32, ok bool) {
	if info.Flow != insn.FlowMove {
		return 0, false
	}
	var rd, wr *slice.Access
	for k := range accs {
		if accs[k].Write && wr == nil {
			wr = &accs[k]
		} else if !accs[k].Write && rd == nil {
			rd = &accs[k]
		}
	}
	rf := &ts.regs
	// The source.
	var srcN int
	var src func(k int) uint32
	switch {
	case info.SrcMem && rd != nil && rd.Size > 0 && rd.Size <= 1<<20:
		srcN = int(rd.Size)
		src = func(k int) uint32 { return a.byteAt(rd.Addr + uint64(min(k, srcN-1))) }
	case !info.SrcMem && tracked(info.Src):
		srcN = max(int(info.Width), 1)
		src = func(k int) uint32 { return rf.byteOf(info.Src, min(k, srcN-1)) }
	default:
		return 0, false
	}
	// One byte's value: the source's with rest added, the last result
	// kept for runs of equal bytes.
	lastIn, lastOut := ^uint32(0), uint32(0)
	out := func(x uint32) uint32 {
		if x != lastIn {
			lastIn = x
			lastOut = x
			if rest != 0 {
				lastOut = a.t.TUnion(a.mat(x), rest)
			}
			value = a.t.TUnion(value, a.mat(lastOut))
		}
		return lastOut
	}
	switch {
	case info.DstMem && wr != nil && wr.Size > 0 && wr.Size <= 1<<20:
		for k := 0; k < int(wr.Size); k++ {
			a.setMem(wr.Addr+uint64(k), 1, out(src(k%srcN)))
		}
	case !info.DstMem && tracked(info.Dst):
		w := int(info.Width)
		n := regBytes(info.Dst)
		if w <= 0 || w > n {
			return 0, false
		}
		// Read the source's bytes before any is written (mov rax, rax).
		var tmp [32]uint32
		for k := 0; k < w; k++ {
			tmp[k] = out(src(k))
		}
		for k := 0; k < w; k++ {
			rf.setByte(info.Dst, k, tmp[k])
		}
		if w >= 4 {
			// A 32-bit or wider write zeroes the rest of the register.
			for k := w; k < n; k++ {
				rf.setByte(info.Dst, k, rest)
			}
		}
		if rf.split[info.Dst] {
			// Back to one triple when every byte is the same.
			b := &rf.bytes[info.Dst]
			same := true
			for k := 1; k < n && same; k++ {
				same = b[k] == b[0]
			}
			if same {
				rf.setWhole(info.Dst, b[0])
			}
		}
	default:
		return 0, false
	}
	return value, true
}
