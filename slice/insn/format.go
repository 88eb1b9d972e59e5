package insn

import (
	"fmt"
	"strings"

	"github.com/mgtrace/mgtrace/schema/tracepb"
)

// String lists the registers of the set by name, lowest number first.
func (s Regs) String() string {
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i < 64; i++ {
		if s&(1<<uint(i)) == 0 {
			continue
		}
		if b.Len() > 1 {
			b.WriteByte(' ')
		}
		b.WriteString(tracepb.Register(i).String())
	}
	b.WriteByte('}')
	return b.String()
}

var classStrings = [...]string{"plain", "condjump", "jump", "indirectjump", "call", "indirectcall", "return", "syscall", "halt"}

// String names the class.
func (c Class) String() string {
	if int(c) < len(classStrings) {
		return classStrings[c]
	}
	return fmt.Sprintf("Class(%d)", c)
}

var flowStrings = [...]string{"other", "move", "const", "add", "swap", "condmove"}

// String names the flow.
func (f Flow) String() string {
	if int(f) < len(flowStrings) {
		return flowStrings[f]
	}
	return fmt.Sprintf("Flow(%d)", f)
}

// String formats the Info for tests and debugging. The value-flow fields
// follow flow= unless they are all zero.
func (in Info) String() string {
	s := fmt.Sprintf("len=%d class=%v target=%#x uses=%v defs=%v base=%v index=%v save=%v restore=%v",
		in.Len, in.Class, in.Target, in.Uses, in.Defs, in.Base, in.Index, in.Save, in.Restore)
	if in.Flow == FlowOther && in.flowFields() == (Info{}) {
		return s + " flow=other"
	}
	s += fmt.Sprintf(" flow=%v dst=%s src=%s", in.Flow, flowOperandString(in.Dst, in.DstMem), flowOperandString(in.Src, in.SrcMem))
	if in.Src2 != 0 || in.Scale != 0 {
		s += fmt.Sprintf(" src2=%v*%d", in.Src2, in.Scale)
	}
	if in.Sub {
		s += " sub"
	}
	return s + fmt.Sprintf(" imm=%#x width=%d", in.Imm, in.Width)
}

// flowOperandString formats Dst or Src: "mem", the register, "-" if none,
// or both if (wrongly) both are set.
func flowOperandString(r tracepb.Register, mem bool) string {
	switch {
	case mem && r != 0:
		return "mem+" + r.String()
	case mem:
		return "mem"
	case r != 0:
		return r.String()
	}
	return "-"
}
