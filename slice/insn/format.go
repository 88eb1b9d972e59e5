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

// String formats the Info for tests and debugging.
func (in Info) String() string {
	return fmt.Sprintf("len=%d class=%v target=%#x uses=%v defs=%v base=%v index=%v save=%v restore=%v",
		in.Len, in.Class, in.Target, in.Uses, in.Defs, in.Base, in.Index, in.Save, in.Restore)
}
