package main

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"

	"github.com/mgtrace/mgtrace/record/internal/recorder"
)

// parseRegions turns the --from and --to points into regions: the i-th
// --to ends the region of the i-th --from.
func parseRegions(program string, from, to []string) ([]recorder.Region, error) {
	if len(to) > len(from) {
		return nil, fmt.Errorf("--to %s has no --from to end", to[len(from)])
	}
	if len(from) == 0 {
		return nil, nil
	}
	prog, err := exec.LookPath(program)
	if err != nil {
		prog = program // the recorder says what is wrong with it
	}
	regions := make([]recorder.Region, len(from))
	for i, f := range from {
		if regions[i].From, err = parsePoint(prog, f, false); err != nil {
			return nil, fmt.Errorf("--from %s: %w", f, err)
		}
		if i < len(to) {
			if regions[i].To, err = parsePoint(prog, to[i], true); err != nil {
				return nil, fmt.Errorf("--to %s: %w", to[i], err)
			}
		}
	}
	return regions, nil
}

// parsePoint reads one POINT: an instruction count, mark:NAME, FUNC,
// FUNC:exit or FILE:LINE, each but the count with an optional #K.
func parsePoint(prog, s string, end bool) (recorder.Trigger, error) {
	if s == "" {
		return recorder.Trigger{}, fmt.Errorf("an empty point")
	}
	if n, err := strconv.ParseUint(s, 10, 64); err == nil {
		if n == 0 {
			return recorder.Trigger{}, fmt.Errorf("an instruction count must be at least 1")
		}
		return recorder.Trigger{Kind: recorder.TriggerInstructions, K: n}, nil
	}
	body, k := s, uint64(1)
	if i := strings.LastIndexByte(s, '#'); i >= 0 {
		n, err := strconv.ParseUint(s[i+1:], 10, 64)
		if err != nil || n == 0 {
			return recorder.Trigger{}, fmt.Errorf("#%s: want #K with K a count from 1", s[i+1:])
		}
		body, k = s[:i], n
	}
	if name, ok := strings.CutPrefix(body, "mark:"); ok {
		if name == "" {
			return recorder.Trigger{}, fmt.Errorf("mark: needs a marker name")
		}
		return recorder.Trigger{Kind: recorder.TriggerMark, K: k, Name: name}, nil
	}
	locs, err := codePoint(prog, body)
	if err != nil {
		return recorder.Trigger{}, err
	}
	return recorder.Trigger{Kind: recorder.TriggerCode, K: k, Locs: locs}, nil
}

// codePoint resolves FUNC, FUNC:exit or FILE:LINE to instructions.
func codePoint(prog, s string) ([]recorder.CodeLoc, error) {
	return nil, fmt.Errorf("code points are not resolved yet")
}
