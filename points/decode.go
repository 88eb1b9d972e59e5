package points

import "github.com/mgtrace/mgtrace/slice/insn"

// insnLen is the length of the instruction at the start of code, or 0.
func insnLen(pc uint64, code []byte) int {
	info, err := insn.Decode(pc, code)
	if err != nil || info.Len <= 0 {
		return 0
	}
	return info.Len
}

// isRet reports whether code is a return instruction.
func isRet(pc uint64, code []byte) bool {
	info, err := insn.Decode(pc, code)
	return err == nil && info.Class == insn.Return
}
