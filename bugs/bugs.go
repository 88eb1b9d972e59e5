// Package bugs finds memory bugs in one recorded run by rules, and
// locates each one's root cause by value propagation chains: the method
// of Yan Wang, *Dynamic Analysis Techniques for Effective and Efficient
// Debugging*, PhD dissertation, UC Riverside, 2014, chapter 3.
//
// A rule (package bugs/rules) is a detection point, a condition over the
// run so far and the state, and the values whose chains to report. The
// engine replays the trace's instruction instances (package walk) over a
// state model: heap blocks with ids never reused, the provenance of every
// pointer (the block it was derived from, carried through register
// moves, memory copies and pointer arithmetic as the decoder classifies
// them), the undefined bytes of fresh allocations, and for every value
// the node of its last copy. At each detection point the rules bound to
// it are evaluated on the state just before the instruction; a chain is
// read back from a value's node to where the value was generated.
package bugs

import (
	_ "embed"
	"fmt"
	"sort"
	"strings"

	"github.com/mgtrace/mgtrace/alloc"
	"github.com/mgtrace/mgtrace/bugs/rules"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/slice/insn"
	"github.com/mgtrace/mgtrace/walk"
)

// BuiltinRules is the rule file analyze bugs runs by default.
//
//go:embed builtin.rules
var BuiltinRules string

// BuiltinName is the built-in rule file's name in error positions.
const BuiltinName = "builtin.rules"

// Options tune an analysis.
type Options struct {
	// Files are rule files; nil means the built-in rules.
	Files []*rules.File
	// Only keeps the rules with these names (nil: all but the ones off
	// by default, still_reachable).
	Only []string
	// All runs the rules that are off by default too (rule files given
	// in Files always run whole).
	All bool
	// Transaction is the function of the leak-in-transaction rule
	// ($transaction in a rule).
	Transaction string
	// Allocators are user allocation functions (size in the first
	// argument, the block returned); Deallocators release the block
	// in their first argument.
	Allocators, Deallocators []string
	// MaxFindings bounds the report (0: 1000).
	MaxFindings int
	// Progress, when set, is called now and then with the event read.
	Progress func(seq uint64)
}

func (o *Options) userAlloc(name string) (alloc.Fn, bool) {
	for _, a := range o.Allocators {
		if a == name {
			return alloc.Malloc, true
		}
	}
	for _, a := range o.Deallocators {
		if a == name {
			return alloc.Free, true
		}
	}
	return 0, false
}

// ParseBuiltin parses the built-in rules.
func ParseBuiltin() (*rules.File, error) {
	return rules.ParseAndCheck(BuiltinName, []byte(BuiltinRules))
}

// Analyze runs the rules over the trace.
func Analyze(tr *schema.Reader, opt Options) (*Report, error) {
	files := opt.Files
	if files == nil {
		f, err := ParseBuiltin()
		if err != nil {
			return nil, fmt.Errorf("built-in rules: %w", err)
		}
		files = []*rules.File{f}
	}
	merged := &rules.File{}
	for _, f := range files {
		merged.Defines = append(merged.Defines, f.Defines...)
		merged.Rules = append(merged.Rules, f.Rules...)
	}
	var only map[string]bool
	if opt.Only != nil {
		only = make(map[string]bool)
		for _, n := range opt.Only {
			only[n] = true
		}
	}
	rs, err := compile(merged, only, opt.All || opt.Files != nil, map[string]string{"transaction": opt.Transaction})
	if err != nil {
		return nil, err
	}
	if opt.MaxFindings == 0 {
		opt.MaxFindings = 1000
	}
	rep := &Report{Trace: tr.Name(), Rules: rs.names, Findings: []Finding{}}
	e := newEngine(tr.Tables(), rs, opt, rep)
	if lvl, err := schema.HeaderLevel(tr.Header()); err == nil && lvl == schema.LevelHeap {
		e.noStack = true
	}
	e.compileRules(map[string]string{"transaction": opt.Transaction})
	e.outside = walk.HasRegions(tr.Footer())
	e.regions = e.outside
	st, err := walk.WalkWith(tr, e.dec, e, walk.Options{Progress: opt.Progress})
	if err != nil {
		return nil, err
	}
	e.end()
	rep.StackRoots = e.stackRoots
	rep.Truncated, rep.Reason = st.Truncated, st.Reason
	rep.Stats.Events, rep.Stats.Instances = st.Events, st.Instances
	rep.Stats.Unplaced, rep.Stats.Undecoded = st.Unplaced, st.Undecoded
	rep.Stats.Regions = st.Regions
	rep.Stats.Nodes = len(e.nodes.n) - 1
	sort.SliceStable(rep.Findings, func(i, j int) bool { return rep.Findings[i].Seq < rep.Findings[j].Seq })
	return rep, nil
}

// site describes pc.
func (e *engine) site(pc uint64) Site {
	l := e.tables.Locate(pc)
	return Site{PC: Hex(pc), Function: baseFunc(l.Function), File: l.File, Line: l.Line, Module: l.Module}
}

func (e *engine) sites(pcs []uint64) []Site {
	out := make([]Site, 0, len(pcs))
	for _, pc := range pcs {
		out = append(out, e.site(pc))
	}
	return out
}

// baseFunc strips a symbol version and a PLT suffix.
func baseFunc(name string) string {
	name = strings.TrimSuffix(name, "@plt")
	if i := strings.IndexByte(name, '@'); i > 0 {
		name = name[:i]
	}
	return name
}

// userSite is the innermost site of the stack that has a source line
// (the program's statement, not libc's).
func userSite(stack []Site) Site {
	for _, s := range stack {
		if s.Line != 0 {
			return s
		}
	}
	if len(stack) > 0 {
		return stack[0]
	}
	return Site{}
}

func (e *engine) blockInfo(id uint32) *BlockInfo {
	if id == 0 || int(id) >= len(e.blocks) {
		return nil
	}
	b := &e.blocks[id]
	st := e.sites(b.allocStack)
	bi := &BlockInfo{ID: id, Base: Hex(b.base), Size: b.size, Family: b.fam.String(), AllocSeq: b.allocSeq,
		Alloc: userSite(st), AllocStack: st, Freed: b.freed}
	if b.fam == familyUser {
		bi.Family = "user"
	}
	if b.freed {
		fs := e.sites(b.freeStack)
		s := userSite(fs)
		bi.FreeSeq, bi.Free, bi.FreeStack = b.freeSeq, &s, fs
	}
	return bi
}

// foundOne records a finding (or counts it again at the same statement).
func (e *engine) foundOne(c *crule, fr *scope, v Value, in *walk.Instance, th *thread, stack []uint64) {
	st := e.sites(stack)
	where := userSite(st)
	key := findKey{c.r.Name, uint64(where.PC)}
	if i, ok := e.seen[key]; ok {
		e.report.Findings[i].Count++
		return
	}
	if len(e.report.Findings) >= e.opt.MaxFindings {
		e.report.Dropped++
		return
	}
	f := Finding{Rule: c.r.Name, Seq: in.Seq, Instr: in.N, Thread: uint32(th.id), Where: where, Stack: st, Count: 1}
	if v.seq != 0 {
		f.Seq = v.seq // the instruction's own event: analyze slice --criterion seq:N starts from it
	}
	if v.isBlock {
		f.Address, f.Size = Hex(v.V), uint32(min(e.blocks[v.block].size, 1<<31))
		f.Block = e.blockInfo(v.block)
	} else {
		f.Address, f.Size = Hex(v.V), v.width
		f.Block = e.blockInfo(v.sh.prov)
		f.ByAddress = v.guessed && f.Block != nil
		if f.Block == nil && v.sh.ub != 0 {
			f.Block = e.blockInfo(v.sh.ub)
		}
	}
	for i, ref := range c.r.VPC {
		if c.vpc[i] < 0 {
			continue
		}
		s := fr.slots[c.vpc[i]]
		if !s.bound || s.isNum {
			continue
		}
		f.Chains = append(f.Chains, e.chain(ref.Var, s.v))
	}
	f.Message = e.message(c.r.Name, &f, v)
	e.seen[key] = len(e.report.Findings)
	e.report.Findings = append(e.report.Findings, f)
}

// maxChain bounds a chain's length.
const maxChain = 200

// chain reads a value's propagation chain back from its node.
func (e *engine) chain(name string, v Value) Chain {
	ch := Chain{Var: name, Value: Hex(v.V)}
	if v.isBlock {
		b := &e.blocks[v.block]
		s := Step{Kind: StepAlloc, Seq: b.allocSeq, Note: fmt.Sprintf("block #%d, %d bytes (%s)", v.block, b.size, b.fam)}
		st := e.sites(b.allocStack)
		s.Site = userSite(st)
		ch.Steps, ch.Instructions = []Step{s}, 1
		return ch
	}
	id := v.sh.node
	for id != 0 && len(ch.Steps) < maxChain {
		if isGen(id) {
			st := e.dec.ByID(id &^ genFlag)
			s := Step{Kind: StepCompute, Site: e.site(st.PC), Note: "computed"}
			if st.Info.Flow == insn.FlowConst {
				s.Kind, s.Note = StepConst, fmt.Sprintf("the constant %#x", uint64(st.Info.Imm))
			}
			ch.Steps = append(ch.Steps, s)
			ch.Instructions++
			break
		}
		nd := e.nodes.n[id]
		s := Step{Kind: nodeKinds[nd.kind], Seq: nd.seq, Site: e.site(nd.pc)}
		switch nd.kind {
		case nStore, nLoad:
			s.Address = Hex(nd.addr)
		case nAlloc:
			b := &e.blocks[nd.addr]
			s.Note = fmt.Sprintf("returned by %s: block #%d, %d bytes", b.fam, nd.addr, b.size)
			s.Site = userSite(e.sites(b.allocStack))
		case nKernel:
			s.Note = fmt.Sprintf("written by system call %d", nd.addr)
		}
		ch.Instructions++
		// Register moves inside code without source lines (the C
		// library's) are squashed: the copies through memory remain.
		if nd.kind != nMove || s.Line != 0 {
			ch.Steps = append(ch.Steps, s)
		}
		id = nd.parent
	}
	if n := len(ch.Steps); n == 0 || (ch.Steps[n-1].Kind == StepLoad || ch.Steps[n-1].Kind == StepMove || ch.Steps[n-1].Kind == StepStore) {
		note := "the value came from before the trace could follow it (initial memory, or code the model does not follow)"
		if n > 0 && ch.Steps[n-1].Kind == StepLoad {
			if ub := v.sh.ub; ub != 0 && v.und != 0 {
				b := &e.blocks[ub]
				note = fmt.Sprintf("uninitialized bytes of block #%d (%d bytes, %s)", ub, b.size, b.fam)
				st := Step{Kind: StepAlloc, Seq: b.allocSeq, Site: userSite(e.sites(b.allocStack)), Note: note}
				ch.Steps = append(ch.Steps, st)
				ch.Instructions++
				return ch
			}
		}
		ch.Steps = append(ch.Steps, Step{Kind: StepUnknown, Note: note})
	}
	return ch
}

// message is a finding's one line.
func (e *engine) message(rule string, f *Finding, v Value) string {
	blk := func() string {
		if f.Block == nil {
			return ""
		}
		b := f.Block
		s := fmt.Sprintf("block #%d (%d bytes, %s at %s)", b.ID, b.Size, b.Family, short(b.Alloc))
		if b.Freed && b.Free != nil {
			s += fmt.Sprintf(", freed at %s", short(*b.Free))
		}
		return s
	}
	rw := "read"
	if e.cur != nil && anyWrite(e.cur) && v.access {
		rw = "write"
	}
	switch rule {
	case "double_free":
		return "double free of " + blk()
	case "unmatched_free":
		if f.Block != nil {
			return fmt.Sprintf("free of %#x, %d bytes into %s", v.V, v.V-uint64(f.Block.Base), blk())
		}
		return fmt.Sprintf("free of %#x, which no allocator returned", v.V)
	case "mismatched_free":
		if f.Block != nil {
			fam := alloc.Family(e.blocks[f.Block.ID].fam)
			return fmt.Sprintf("%s releases %s, allocated by %s", familyRelease(v.fam), blk(), fam)
		}
	case "dangling_pointer_deref":
		return fmt.Sprintf("%s of %d bytes at %#x in freed %s", rw, v.width, v.V, blk())
	case "null_pointer_deref":
		return fmt.Sprintf("%s through a NULL pointer (address %#x)", rw, v.V)
	case "heap_buffer_overflow":
		if f.Block != nil {
			b := f.Block
			where := fmt.Sprintf("offset %d of", v.V-uint64(b.Base))
			if v.V < uint64(b.Base) {
				where = fmt.Sprintf("%d bytes before", uint64(b.Base)-v.V)
			}
			s := fmt.Sprintf("%s of %d bytes at %#x, %s %s", rw, v.width, v.V, where, blk())
			if other := e.live.Find(v.V); other != 0 && other != b.ID {
				s += fmt.Sprintf(", inside live block #%d", other)
			}
			return s
		}
	case "uninitialized_read":
		what := "a conditional branch depends on"
		if v.syscall != 0 {
			what = fmt.Sprintf("system call %d reads", v.syscall)
		} else if v.V != 0 {
			what = "an address is formed from"
		}
		if f.Block != nil {
			return fmt.Sprintf("%s uninitialized bytes of %s", what, blk())
		}
		return what + " uninitialized bytes"
	case "definite_leak":
		return fmt.Sprintf("%s is never freed and nothing points to it at the end", blk())
	case "possible_leak":
		return fmt.Sprintf("%s is never freed and only pointers into its middle reach it at the end", blk())
	case "still_reachable":
		return fmt.Sprintf("%s is still allocated at the end (reachable)", blk())
	case "leak_in_transaction":
		return fmt.Sprintf("%s, allocated during %s, is still allocated when it returns", blk(), e.opt.Transaction)
	}
	s := fmt.Sprintf("rule %s holds at %s", rule, short(f.Where))
	if b := blk(); b != "" {
		s += ": " + b
	}
	return s
}

func familyRelease(f alloc.Family) string {
	if f == familyUser {
		return "the user deallocator"
	}
	return f.Release()
}

// short is "file:line" or the function.
func short(s Site) string {
	if s.File != "" && s.Line != 0 {
		file := s.File
		if i := strings.LastIndexByte(file, '/'); i >= 0 {
			file = file[i+1:]
		}
		return fmt.Sprintf("%s:%d", file, s.Line)
	}
	if s.Function != "" {
		return s.Function
	}
	return fmt.Sprintf("%#x", s.PC)
}
