package schema

import (
	"fmt"

	"github.com/mgtrace/mgtrace/schema/tracepb"
)

// Level is a trace's level of detail (record --level): what the probe
// left out while recording. The levels are ordered: a higher one keeps
// less.
type Level int

const (
	// LevelFull keeps every event the probe can record.
	LevelFull Level = iota
	// LevelHeap leaves out the loads and stores whose address has rsp or
	// rbp as its base register (the stack, mostly).
	LevelHeap
	// LevelFlow leaves out every load, store and derivation: control
	// flow, calls, returns, system calls, C-points, threads and signals
	// remain.
	LevelFlow
)

// LevelSetting is the header setting (Header.settings key) that holds a
// trace's level; a trace without it is LevelFull.
const LevelSetting = "level"

var levelNames = [...]string{LevelFull: "full", LevelHeap: "heap", LevelFlow: "flow"}

// String returns the level's name as record --level takes it.
func (l Level) String() string {
	if l < 0 || int(l) >= len(levelNames) {
		return fmt.Sprintf("level(%d)", int(l))
	}
	return levelNames[l]
}

// ParseLevel returns the level named s (full, heap or flow).
func ParseLevel(s string) (Level, error) {
	for l, name := range levelNames {
		if s == name {
			return Level(l), nil
		}
	}
	return 0, fmt.Errorf("level must be full, heap or flow, not %q", s)
}

// HeaderLevel returns the level a trace's header records (LevelFull when
// it records none, as in traces written before levels existed).
func HeaderLevel(h *tracepb.Header) (Level, error) {
	for _, kv := range h.GetSettings() {
		if kv.GetKey() == LevelSetting {
			l, err := ParseLevel(kv.GetValue())
			if err != nil {
				return 0, fmt.Errorf("header setting %s: %w", LevelSetting, err)
			}
			return l, nil
		}
	}
	return LevelFull, nil
}

// LevelNeed is what an analysis needs of a trace's level.
type LevelNeed struct {
	// Analysis names the analysis in messages ("slice").
	Analysis string
	// Min is the coarsest level at which the analysis means anything: a
	// coarser trace is an error.
	Min Level
	// Partial, when set, is what a trace coarser than LevelFull (but not
	// than Min) lacks for this analysis, e.g. "stack dependences are
	// missing": the analysis runs and warns with it.
	Partial string
}

// CheckLevel checks a trace's header against what an analysis needs. It
// returns an error when the trace's level is coarser than need.Min (or the
// header's level is not one), else a one-line warning ("" when none) for a
// result that is partial. path names the trace in the messages.
func CheckLevel(h *tracepb.Header, path string, need LevelNeed) (warning string, err error) {
	l, err := HeaderLevel(h)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	if l > need.Min {
		want := "full"
		if need.Min == LevelHeap {
			want = "heap or full"
		}
		return "", fmt.Errorf("%s needs memory accesses, and %s was recorded with --level %s: record it with --level %s", need.Analysis, path, l, want)
	}
	if l > LevelFull && need.Partial != "" {
		return fmt.Sprintf("%s was recorded with --level %s: %s", path, l, need.Partial), nil
	}
	return "", nil
}
