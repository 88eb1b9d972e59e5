package points

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/walk"
)

// TraceLine returns the instructions of the main program that ran and that
// a trace's tables attribute to the source line FILE:LINE (FILE matched by
// suffix, as Program.ResolveFile does), by run-time address. Instructions
// that never ran are not in a trace's tables, so a rule built from them
// (RuleFor) can differ from the one record used only when the line's
// lowest-address store never ran.
func TraceLine(t *schema.Tables, file string, line int) ([]Insn, error) {
	var main []*modRange
	for _, m := range t.Modules {
		if m.Main {
			main = append(main, &modRange{m.Start, m.End})
		}
	}
	inMain := func(pc uint64) bool {
		if len(main) == 0 {
			return true // a trace that marks no module main: every module
		}
		for _, r := range main {
			if pc >= r.lo && pc < r.hi {
				return true
			}
		}
		return false
	}
	paths := map[string]bool{}
	var out []Insn
	lines := map[int]bool{}
	for pc, in := range t.Instructions {
		f := t.Files[in.FileId]
		if f == nil || !inMain(pc) || !schema.MatchFile(f.Path, file) {
			continue
		}
		paths[f.Path] = true
		lines[int(in.Line)] = true
		if int(in.Line) == line {
			out = append(out, Insn{Addr: pc, Code: in.Code})
		}
	}
	switch {
	case len(paths) == 0:
		return nil, fmt.Errorf("no source file %s among the main program's executed code", file)
	case len(paths) > 1:
		var ps []string
		for p := range paths {
			ps = append(ps, p)
		}
		sort.Strings(ps)
		return nil, fmt.Errorf("%s is ambiguous: %s", file, strings.Join(ps, ", "))
	case len(out) == 0:
		return nil, fmt.Errorf("no executed code on that line%s", near(lines, line))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Addr < out[j].Addr })
	return out, nil
}

type modRange struct{ lo, hi uint64 }

// TraceRule is RuleFor over the instructions TraceLine finds.
func TraceRule(t *schema.Tables, kind Kind, file string, line int) (*Rule, error) {
	ins, err := TraceLine(t, file, line)
	if err != nil {
		return nil, err
	}
	return RuleFor(kind, ins)
}

// Counter numbers a rule's instances as they happen: feed it every
// executed instruction in run order (all threads: a trace's global order).
type Counter struct {
	rule *Rule
	n    uint64
}

// NewCounter returns a counter at zero.
func NewCounter(r *Rule) *Counter { return &Counter{rule: r} }

// Next takes the next executed instruction and returns its instance number
// (from 1) when it is one of the rule's instances.
func (c *Counter) Next(pc uint64) (uint64, bool) {
	if !c.rule.Counts(pc) {
		return 0, false
	}
	c.n++
	return c.n, true
}

// Count returns how many instances were seen.
func (c *Counter) Count() uint64 { return c.n }

// errFound stops a walk early.
var errFound = errors.New("found")

// InstanceOf walks the trace tr (which must be at its start) and returns
// the instance number, under rule r, of the executed instruction whose
// walk instance number (walk.Instance.N) is n. It fails when that
// instruction is not one of r's instances or the trace has no instance n.
func InstanceOf(tr *schema.Reader, r *Rule, n uint64) (uint64, error) {
	v := &instanceVisitor{c: NewCounter(r), want: n}
	_, err := walk.Walk(tr, v, walk.Options{})
	if errors.Is(err, errFound) {
		if !v.counted {
			return 0, fmt.Errorf("instance %d (at %#x) is not an execution the rule counts", n, v.pc)
		}
		return v.got, nil
	}
	if err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("the trace has no instruction instance %d", n)
}

type instanceVisitor struct {
	c       *Counter
	want    uint64
	got     uint64
	pc      uint64
	counted bool
}

func (v *instanceVisitor) Instance(in *walk.Instance) error {
	k, ok := v.c.Next(in.Static.PC)
	if in.N == v.want {
		v.got, v.counted, v.pc = k, ok, in.Static.PC
		return errFound
	}
	return nil
}

func (v *instanceVisitor) Event(*schema.Event) error { return nil }
