package schema

import (
	"testing"

	"github.com/mgtrace/mgtrace/schema/tracepb"
)

func TestCheckLevel(t *testing.T) {
	header := func(level string) *tracepb.Header {
		h := &tracepb.Header{}
		if level != "" {
			h.Settings = []*tracepb.KeyValue{{Key: "input-cap", Value: "0"}, {Key: LevelSetting, Value: level}}
		}
		return h
	}
	for _, tc := range []struct {
		level   string
		need    LevelNeed
		warning string
		err     string
	}{
		{"", LevelNeed{"mg", LevelHeap, ""}, "", ""},
		{"full", LevelNeed{"slice", LevelHeap, "stack dependences are missing"}, "", ""},
		{"heap", LevelNeed{"mg", LevelHeap, ""}, "", ""},
		{"heap", LevelNeed{"slice", LevelHeap, "stack dependences are missing"}, "t.trace was recorded with --level heap: stack dependences are missing", ""},
		{"flow", LevelNeed{"slice", LevelHeap, "stack dependences are missing"}, "", "slice needs memory accesses, and t.trace was recorded with --level flow: record it with --level heap or full"},
		{"heap", LevelNeed{"x", LevelFull, ""}, "", "x needs memory accesses, and t.trace was recorded with --level heap: record it with --level full"},
		{"flow", LevelNeed{"tarantula", LevelFlow, ""}, "", ""},
		{"flow", LevelNeed{"critical", LevelFlow, "partial"}, "t.trace was recorded with --level flow: partial", ""},
		{"most", LevelNeed{"mg", LevelHeap, ""}, "", `t.trace: header setting level: level must be full, heap or flow, not "most"`},
	} {
		w, err := CheckLevel(header(tc.level), "t.trace", tc.need)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if w != tc.warning || got != tc.err {
			t.Errorf("level %q, %+v: warning %q, error %q; want %q, %q", tc.level, tc.need, w, got, tc.warning, tc.err)
		}
	}
}

func TestParseLevel(t *testing.T) {
	for _, l := range []Level{LevelFull, LevelHeap, LevelFlow} {
		if got, err := ParseLevel(l.String()); err != nil || got != l {
			t.Errorf("ParseLevel(%q) = %v, %v", l.String(), got, err)
		}
	}
	if _, err := ParseLevel("Full"); err == nil {
		t.Error("ParseLevel(\"Full\"): no error")
	}
}
