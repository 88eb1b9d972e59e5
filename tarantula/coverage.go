// Package tarantula is the spectrum-based fault localization baseline:
// the statement coverage of recorded runs (ReadCoverage), ranked by the
// Tarantula and Ochiai suspiciousness of each statement over failing and
// passing runs (Rank), and the cost of finding a given statement in that
// ranking (Examined).
//
// A statement is a source line: (file path, line). A run covers it when it
// executed at least one instruction the trace's instruction table maps to
// that line; code without line information (libc and other libraries built
// without debug info) covers nothing.
//
// With F failing and P passing runs, of which f failing and p passing runs
// cover a statement:
//
//	Tarantula = (f/F) / ((f/F) + (p/P))   0 when f = 0; p/P is 0 when P = 0
//	Ochiai    = f / sqrt(F * (f + p))     0 when f = 0
//
// (Jones and Harrold, "Empirical evaluation of the Tarantula automatic
// fault-localization technique", ASE 2005; Abreu, Zoeteweij and van
// Gemund, "On the accuracy of spectrum-based fault localization", 2007.)
package tarantula

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
)

// Statement identifies a source statement: a line of a source file, the
// file as the trace's tables name it.
type Statement struct {
	File string
	Line int
}

// String formats the statement as "file:line".
func (s Statement) String() string { return fmt.Sprintf("%s:%d", s.File, s.Line) }

// Covered is one statement a run executed.
type Covered struct {
	Statement
	// Function is the function of the statement's lowest-addressed
	// executed instruction ("" when the tables do not say).
	Function string
	// Instructions is the number of distinct instructions of the
	// statement the run executed.
	Instructions int
}

// Coverage is the set of source statements one run executed.
type Coverage struct {
	// Trace is the trace's name, as the reader was opened with.
	Trace string
	// Statements are the statements executed, sorted by file, then line.
	Statements []Covered
	// Events is the number of events read; Blocks the number of BLOCK
	// events among them.
	Events, Blocks uint64
	// Instructions is the number of distinct instructions executed that
	// have a source line; NoLine the number of those without one (code
	// without debug info).
	Instructions, NoLine int
	// Unknown is the number of distinct BLOCK start pcs the instruction
	// table does not describe, and Short the number of BLOCK runs that go
	// past the last instruction of the table. Both are 0 for a trace the
	// recorder wrote; their instructions are not counted.
	Unknown, Short int
	// End says whether the trace was whole or cut short; a trace cut
	// short gives the coverage of the events before the cut.
	End schema.End

	index map[Statement]int // into Statements
}

// Options tune ReadCoverage.
type Options struct {
	// Progress, when set, is called every 65,536 events with the
	// sequence number of the event just read.
	Progress func(seq uint64)
}

// progressEvery is the number of events between Progress calls.
const progressEvery = 1 << 16

// ReadCoverage reads every event of the trace r and returns the statements
// the run executed. A BLOCK event at pc with count n covers the n
// instructions of the trace's instruction table that start at pc, in
// address order; each counts for the statement (file, line) the table
// gives it, and not at all when it has no line. A trace cut short gives
// the coverage of the events before the cut (Coverage.End says so); a
// corrupt one gives an error.
//
// The instruction at the pc of a SIGSEGV, SIGBUS, SIGILL or SIGFPE counts
// as executed too: it is the one that faulted, which the run reached but
// did not complete (so no BLOCK covers it). The faulting statement of a
// crash is thus covered by the crashing run.
func ReadCoverage(r *schema.Reader, opt Options) (*Coverage, error) {
	c := &Coverage{Trace: r.Name()}
	// The longest run seen from each start pc: shorter runs from the same
	// pc are prefixes of it.
	runs := make(map[uint64]uint32)
	var faults []uint64 // pcs of faulting instructions
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read coverage: %w", err) // err names the trace
		}
		c.Events++
		if opt.Progress != nil && c.Events%progressEvery == 0 {
			opt.Progress(ev.Seq)
		}
		switch ev.Kind {
		case schema.KindBlock:
			c.Blocks++
			if n, ok := runs[ev.PC]; !ok || ev.Count > n {
				runs[ev.PC] = ev.Count
			}
		case schema.KindSignal:
			// The instruction a fault stopped does not complete, so no
			// BLOCK counts it, but the run reached it.
			if faultSignal(ev.Num) {
				faults = append(faults, ev.PC)
			}
		}
	}
	c.End = r.End()
	c.collect(r.Tables(), runs, faults)
	return c, nil
}

// faultSignal reports whether signal number sig is raised by the
// instruction at the signal's pc: SIGILL, SIGBUS, SIGFPE or SIGSEGV (by
// their Linux numbers, which traces hold).
func faultSignal(sig uint64) bool {
	switch sig {
	case 4, 7, 8, 11:
		return true
	}
	return false
}

// collect expands the runs through the instruction table (complete once
// the trace is read), adds the faulting instructions the table describes,
// and gathers the statements of the instructions.
func (c *Coverage) collect(t *schema.Tables, runs map[uint64]uint32, faults []uint64) {
	ins := make([]*tracepb.Instruction, 0, len(t.Instructions))
	for _, in := range t.Instructions {
		ins = append(ins, in)
	}
	slices.SortFunc(ins, func(a, b *tracepb.Instruction) int { return cmp.Compare(a.Pc, b.Pc) })
	find := func(pc uint64) (int, bool) {
		return slices.BinarySearchFunc(ins, pc, func(in *tracepb.Instruction, pc uint64) int { return cmp.Compare(in.Pc, pc) })
	}
	executed := make([]bool, len(ins))
	for _, pc := range faults {
		if i, found := find(pc); found {
			executed[i] = true
		}
	}
	for pc, n := range runs {
		i, found := find(pc)
		if !found {
			c.Unknown++
			continue
		}
		end := i + int(n)
		if end > len(ins) {
			c.Short++
			end = len(ins)
		}
		for ; i < end; i++ {
			executed[i] = true
		}
	}
	c.index = make(map[Statement]int)
	for i, in := range ins {
		if !executed[i] {
			continue
		}
		f := t.Files[in.FileId]
		if f == nil || f.Path == "" || in.Line == 0 {
			c.NoLine++
			continue
		}
		c.Instructions++
		s := Statement{File: f.Path, Line: int(in.Line)}
		if k, ok := c.index[s]; ok {
			c.Statements[k].Instructions++
			continue
		}
		// Instructions ascend: this is the statement's lowest executed one.
		c.index[s] = len(c.Statements)
		c.Statements = append(c.Statements, Covered{Statement: s, Function: t.Locate(in.Pc).Function, Instructions: 1})
	}
	slices.SortFunc(c.Statements, func(a, b Covered) int { return compareStatements(a.Statement, b.Statement) })
	for k, s := range c.Statements {
		c.index[s.Statement] = k
	}
}

// compareStatements orders statements by file, then line.
func compareStatements(a, b Statement) int {
	if a.File != b.File {
		return strings.Compare(a.File, b.File)
	}
	return cmp.Compare(a.Line, b.Line)
}

// Lookup returns the covered statement s, exactly as the trace names its
// file, and whether the run executed it.
func (c *Coverage) Lookup(s Statement) (Covered, bool) {
	k, ok := c.index[s]
	if !ok {
		return Covered{}, false
	}
	return c.Statements[k], true
}

// Covers reports whether the run executed line of a file that file
// matches (see schema.MatchFile).
func (c *Coverage) Covers(file string, line int) bool {
	for _, s := range c.Statements {
		if s.Line == line && schema.MatchFile(s.File, file) {
			return true
		}
	}
	return false
}

// ErrNotCovered is returned (wrapped) by Examined when no run executed
// the statement asked for.
var ErrNotCovered = errors.New("not executed by any run")
