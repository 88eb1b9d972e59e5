package slice

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
	"github.com/mgtrace/mgtrace/slice/insn"
)

// CriterionKind says what a criterion names.
type CriterionKind uint8

// The kinds of criteria.
const (
	ByLine  CriterionKind = iota + 1 // FILE:LINE[#K]
	BySeq                            // seq:N
	ByCrash                          // crash
)

// Criterion is a slicing criterion as the user wrote it.
type Criterion struct {
	Kind CriterionKind
	File string // ByLine
	Line uint32 // ByLine
	K    int    // ByLine: the K-th execution (from 1); 0 = the last
	Seq  uint64 // BySeq

	// Narrowing to one location: a register (Reg != 0) or memory bytes.
	Reg     tracepb.Register
	Addr    uint64
	Size    uint64
	HasAddr bool
}

// ParseCriterion parses FILE:LINE[#K], seq:N or crash.
func ParseCriterion(s string) (Criterion, error) {
	switch {
	case s == "crash":
		return Criterion{Kind: ByCrash}, nil
	case strings.HasPrefix(s, "seq:"):
		n, err := strconv.ParseUint(s[4:], 10, 64)
		if err != nil {
			return Criterion{}, fmt.Errorf("criterion %q: seq:N needs an event number", s)
		}
		return Criterion{Kind: BySeq, Seq: n}, nil
	}
	spec, k := s, 0
	if h := strings.LastIndexByte(s, '#'); h >= 0 {
		n, err := strconv.Atoi(s[h+1:])
		if err != nil || n < 1 {
			return Criterion{}, fmt.Errorf("criterion %q: #K needs a positive execution number", s)
		}
		spec, k = s[:h], n
	}
	c := strings.LastIndexByte(spec, ':')
	if c <= 0 {
		return Criterion{}, fmt.Errorf("criterion %q: want FILE:LINE[#K], seq:N or crash", s)
	}
	line, err := strconv.ParseUint(spec[c+1:], 10, 32)
	if err != nil || line == 0 {
		return Criterion{}, fmt.Errorf("criterion %q: %q is not a line number", s, spec[c+1:])
	}
	return Criterion{Kind: ByLine, File: spec[:c], Line: uint32(line), K: k}, nil
}

// ParseAddr parses --addr ADDR[:SIZE] (hex with 0x, or decimal; SIZE
// defaults to 8).
func ParseAddr(s string) (addr, size uint64, err error) {
	a, sz := s, "8"
	if c := strings.IndexByte(s, ':'); c >= 0 {
		a, sz = s[:c], s[c+1:]
	}
	addr, err = strconv.ParseUint(a, 0, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("--addr %q: %q is not an address", s, a)
	}
	size, err = strconv.ParseUint(sz, 0, 32)
	if err != nil || size == 0 || size > 1<<20 {
		return 0, 0, fmt.Errorf("--addr %q: size %q is not 1 to 1048576 bytes", s, sz)
	}
	return addr, size, nil
}

// ParseReg parses a register name: rax..r15 (and their 32-, 16- and 8-bit
// names), xmm0..xmm15, rflags.
func ParseReg(s string) (tracepb.Register, error) {
	name := strings.ToLower(strings.TrimPrefix(s, "%"))
	if r, ok := tracepb.Register_value[strings.ToUpper(name)]; ok && r != 0 && r != int32(tracepb.Register_REG_OTHER) {
		return tracepb.Register(r), nil
	}
	sub := map[string]string{
		"eax": "rax", "ax": "rax", "al": "rax", "ebx": "rbx", "bx": "rbx", "bl": "rbx",
		"ecx": "rcx", "cx": "rcx", "cl": "rcx", "edx": "rdx", "dx": "rdx", "dl": "rdx",
		"esi": "rsi", "si": "rsi", "sil": "rsi", "edi": "rdi", "di": "rdi", "dil": "rdi",
		"ebp": "rbp", "flags": "rflags", "eflags": "rflags",
	}
	if full, ok := sub[name]; ok {
		return ParseReg(full)
	}
	if strings.HasPrefix(name, "r") && (strings.HasSuffix(name, "d") || strings.HasSuffix(name, "w") || strings.HasSuffix(name, "b")) {
		return ParseReg(name[:len(name)-1])
	}
	if strings.HasPrefix(name, "ymm") {
		return ParseReg("xmm" + name[3:])
	}
	return 0, fmt.Errorf("--reg %q: not a register (rax..r15, their 32/16/8-bit names, xmm0..xmm15, rflags)", s)
}

// Point is a criterion resolved in a run: the instances it names and the
// location it narrows to.
type Point struct {
	Label string
	Insts []uint32 // the criterion's instances, ascending
	Last  int64    // where the backward traversal starts
	Reg   tracepb.Register
	Addr  uint64
	Size  uint64
	// HasLoc says the slice is of one location (Reg or memory) after
	// Last, not of everything Insts read.
	HasLoc bool
}

// Resolve finds a criterion's instances in the run.
func (r *Run) Resolve(c Criterion) (Point, error) {
	var p Point
	switch c.Kind {
	case ByCrash:
		if r.Crash < 0 {
			if r.CrashSignal == 0 {
				return p, fmt.Errorf("criterion crash: the run did not end by a signal")
			}
			return p, fmt.Errorf("criterion crash: the faulting instruction is not in the trace")
		}
		p.Label = fmt.Sprintf("crash (signal %d)", r.CrashSignal)
		p.Insts = []uint32{uint32(r.Crash)}
	case BySeq:
		i, ok := r.eventInst[c.Seq]
		if !ok {
			return p, fmt.Errorf("criterion seq:%d: event %d is not an instruction's (block, load, store, call, return, syscall or signal) or is not in the trace", c.Seq, c.Seq)
		}
		p.Label = fmt.Sprintf("seq:%d", c.Seq)
		p.Insts = []uint32{i}
	case ByLine:
		insts, n, err := r.lineExecution(c.File, c.Line, c.K)
		if err != nil {
			return p, err
		}
		k := c.K
		if k == 0 {
			k = n
		}
		p.Label = fmt.Sprintf("%s:%d#%d", c.File, c.Line, k)
		p.Insts = insts
	default:
		return p, fmt.Errorf("criterion: none given")
	}
	p.Last = int64(p.Insts[len(p.Insts)-1])
	switch {
	case c.Reg == tracepb.Register_RSP || c.Reg == tracepb.Register_RIP:
		return p, fmt.Errorf("--reg %s: the slicer does not follow the stack or instruction pointer", schema.Reg(c.Reg))
	case c.Reg != 0:
		p.HasLoc, p.Reg = true, c.Reg
		p.Label += " reg " + schema.Reg(c.Reg).String()
	case c.HasAddr:
		p.HasLoc, p.Addr, p.Size = true, c.Addr, c.Size
		p.Label += fmt.Sprintf(" addr %#x:%d", c.Addr, c.Size)
	}
	if p.HasLoc {
		p.Insts = nil
	}
	return p, nil
}

// lineExecution returns the instances of the k-th execution of file:line
// (the last when k is 0) and how many executions there were. An execution
// is a run of the line's instructions in one invocation: calls made from
// the line do not end it, and its instances are the line's own.
func (r *Run) lineExecution(file string, line uint32, k int) ([]uint32, int, error) {
	match := make([]bool, len(r.Statics))
	anyFile := false
	for s := range r.Statics {
		in := r.Tables.Instructions[r.Statics[s].PC]
		if in == nil {
			continue
		}
		f := r.Tables.Files[in.FileId]
		if f == nil || !schema.MatchFile(f.Path, file) {
			continue
		}
		anyFile = true
		match[s] = in.Line == line
	}
	if !anyFile {
		return nil, 0, fmt.Errorf("criterion %s:%d: no instruction of file %q ran", file, line, file)
	}
	type tstate struct {
		depth   int
		inRun   bool
		runAt   int // depth of the current run
		id      int // the current run's number
		current []uint32
	}
	states := make([]tstate, len(r.Threads))
	var chosen []uint32
	count := 0
	for i := range r.sid {
		ts := &states[r.thread[i]]
		s := r.sid[i]
		if ts.inRun && ts.depth > ts.runAt {
			// inside a call made from the line
		} else if match[s] {
			if !ts.inRun || ts.depth != ts.runAt {
				ts.inRun, ts.runAt = true, ts.depth
				ts.current = ts.current[:0]
				count++
				ts.id = count
			}
			ts.current = append(ts.current, uint32(i))
			if (k == 0 && ts.id == count) || ts.id == k {
				chosen = append(chosen[:0], ts.current...)
			}
		} else if ts.inRun && ts.depth <= ts.runAt {
			ts.inRun = false
		}
		switch r.Statics[s].Info.Class {
		case insn.Call, insn.IndirectCall:
			ts.depth++
		case insn.Return:
			if ts.depth > 0 {
				ts.depth--
			}
			if ts.inRun && ts.depth < ts.runAt {
				ts.inRun = false
			}
		}
		if k != 0 && count > k && len(chosen) > 0 {
			break
		}
	}
	if count == 0 {
		return nil, 0, fmt.Errorf("criterion %s:%d: the line never ran", file, line)
	}
	if k > count {
		return nil, count, fmt.Errorf("criterion %s:%d#%d: the line ran %s", file, line, k, plural(count, "time"))
	}
	return chosen, count, nil
}
