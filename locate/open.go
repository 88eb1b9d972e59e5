package locate

import (
	"fmt"

	"github.com/mgtrace/mgtrace/locate/spec"
	"github.com/mgtrace/mgtrace/schema"
)

// Open reads the trace at path for a parsed spec and prepares a session:
// Load, spec.Check against the trace's struct layouts, New. It is the
// whole pipeline for callers that need no progress report (tests,
// benchmarks); a bad spec's Check errors come back as the spec's
// ErrorList, wrapped.
func Open(path string, s *spec.Spec) (*Run, *Session, error) {
	r, err := schema.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	run, err := Load(r, s, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("load %s: %w", path, err)
	}
	if err := spec.Check(s, run.Layout); err != nil {
		return nil, nil, fmt.Errorf("check spec: %w", err)
	}
	ses, err := New(run, s)
	if err != nil {
		return nil, nil, fmt.Errorf("session: %w", err)
	}
	return run, ses, nil
}
