package schema

import "github.com/mgtrace/mgtrace/schema/tracepb"

// SettingExecutionSlice is the Header.settings key that marks an execution
// slice (a trace `analyze slice --reduced-trace` wrote: the slice's
// instruction instances, and EXCLUDED, INJECT, CLOBBER and CONTROL events
// in place of the rest); its value names the trace it was cut from. The
// other settings of an execution slice start with "xslice." too
// (docs/trace-format.md section 5.6).
const SettingExecutionSlice = "xslice.of"

// IsExecutionSlice reports whether a trace with header h is an execution
// slice. In one, every BLOCK event holds one instruction, and every event
// after a BLOCK's own memory, call, return and system-call events comes
// after its instruction ran.
func IsExecutionSlice(h *tracepb.Header) bool {
	for _, kv := range h.GetSettings() {
		if kv.GetKey() == SettingExecutionSlice {
			return true
		}
	}
	return false
}
