package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mgtrace/mgtrace/points"
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
		prog = program // the program's resolution says what is wrong with it
	}
	elf := &lazyProgram{path: prog}
	defer elf.close()
	regions := make([]recorder.Region, len(from))
	for i, f := range from {
		if base, ok := strings.CutSuffix(f, "#all"); ok {
			if i >= len(to) {
				return nil, fmt.Errorf("--from %s: a repeating region needs its --to", f)
			}
			if i != len(from)-1 {
				return nil, fmt.Errorf("--from %s: a repeating region must be the last", f)
			}
			regions[i].Repeat = true
			f = base
		}
		if regions[i].From, err = parsePoint(elf, f); err != nil {
			return nil, fmt.Errorf("--from %s: %w", from[i], err)
		}
		if i < len(to) {
			if regions[i].To, err = parsePoint(elf, to[i]); err != nil {
				return nil, fmt.Errorf("--to %s: %w", to[i], err)
			}
		}
	}
	return regions, nil
}

// parsePoint reads one POINT: an instruction count, mark:NAME, FUNC,
// FUNC:exit or FILE:LINE, each but the count with an optional #K.
func parsePoint(prog *lazyProgram, s string) (recorder.Trigger, error) {
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

// codePoint resolves FUNC, FUNC:exit or FILE:LINE in the program to the
// instructions whose executions a trigger counts: a function's entry, its
// return instructions, or the instructions where control enters the line
// (the first of each run of the line's instructions).
func codePoint(prog *lazyProgram, s string) ([]recorder.CodeLoc, error) {
	p, err := prog.open()
	if err != nil {
		return nil, err
	}
	var ins []points.Insn
	if i := strings.LastIndexByte(s, ':'); i > 0 {
		if line, err := strconv.Atoi(s[i+1:]); err == nil {
			file, err := p.ResolveFile(s[:i])
			if err != nil {
				return nil, err
			}
			all, err := p.Line(file, line)
			if err != nil {
				return nil, err
			}
			for j, in := range all {
				if j == 0 || all[j-1].Addr+uint64(len(all[j-1].Code)) != in.Addr {
					ins = append(ins, in)
				}
			}
		} else if fn, ok := strings.CutSuffix(s, ":exit"); ok {
			_, rets, err := p.Function(fn)
			if err != nil {
				return nil, err
			}
			if len(rets) == 0 {
				return nil, fmt.Errorf("function %s has no return instruction", fn)
			}
			ins = rets
		} else {
			return nil, fmt.Errorf("want FUNC, FUNC:exit, FILE:LINE, mark:NAME or an instruction count")
		}
	} else {
		entry, _, err := p.Function(s)
		if err != nil {
			return nil, fmt.Errorf("%w (for a marker, write mark:%s)", err, s)
		}
		ins = []points.Insn{entry}
	}
	locs := make([]recorder.CodeLoc, len(ins))
	for i, in := range ins {
		locs[i] = recorder.CodeLoc{Path: in.Loc.Path, Offset: in.Loc.Offset}
	}
	return locs, nil
}

// lazyProgram reads the program's ELF file and line table the first time
// a point needs them, once for all the points.
type lazyProgram struct {
	path string
	p    *points.Program
	err  error
}

func (l *lazyProgram) open() (*points.Program, error) {
	if l.p == nil && l.err == nil {
		real, err := filepath.EvalSymlinks(l.path)
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			l.err = fmt.Errorf("%s: %w", l.path, err)
			return nil, l.err
		}
		l.p, l.err = points.Open(real)
	}
	return l.p, l.err
}

func (l *lazyProgram) close() {
	if l.p != nil {
		l.p.Close()
	}
}
