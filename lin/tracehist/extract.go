package tracehist

import (
	"errors"
	"fmt"
	"io"
	"path"
	"sort"

	"github.com/mgtrace/mgtrace/lin"
	"github.com/mgtrace/mgtrace/schema"
)

// DefaultMaxWarnings is how many warnings Extract keeps when
// Options.MaxWarnings is 0.
const DefaultMaxWarnings = 1000

// Options tune Extract.
type Options struct {
	// MaxString is the longest string, in bytes, a char * value reads
	// before its NUL (0: DefaultMaxString).
	MaxString int
	// MaxWarnings bounds Extraction.Warnings (0: DefaultMaxWarnings); a
	// last line counts the ones left out.
	MaxWarnings int
}

// Extraction is what Extract found in a trace.
type Extraction struct {
	// Histories has one history per object, in the order of the objects'
	// first operations; one in all when the operations file has no object
	// line. Each is sorted and valid; its Model and Init are the file's,
	// its Source "TRACE object 0x..." (or the trace's name alone).
	Histories []*lin.History
	// Model and Init are the operations file's model and initial value.
	Model string
	Init  lin.Value
	// Warnings are the problems that did not stop the extraction: an op
	// function that never ran as a call, an operation whose input or
	// output could not be evaluated, a trace cut short.
	Warnings []string
	// Calls counts the CALL events of each op function, nested calls
	// included.
	Calls map[string]int
}

// compiledOp is an op line with its expressions compiled.
type compiledOp struct {
	def         *OpDef
	in, out     []*node
	key         *node
	empty, fail *node
}

// opRec is an operation being extracted.
type opRec struct {
	def      *compiledOp
	op       lin.Op
	object   lin.Value
	dropped  bool  // fail if held
	callErr  error // in, key or object could not be evaluated: the operation is left out
	warnings []string
}

// frame is a thread's outermost op call in progress.
type frame struct {
	sp   uint64 // after the call pushed its return address
	rec  *opRec
	args [schema.NumArgs]uint64
}

// extractor is the state of one Extract.
type extractor struct {
	r    *schema.Reader
	f    *OpsFile
	opt  Options
	mem  *shadow
	cops []*compiledOp // by op line, once compiled
	obj  *node
	// Entry addresses of the op functions, from the tables.
	entries  map[uint64]*compiledOp
	funcSeen map[uint32]bool
	nextFunc uint32
	known    map[string]bool // op functions found in the tables
	threads  map[schema.ThreadID]*frame
	recs     []*opRec
	calls    map[string]int
	compiled bool
	// Evaluations waiting for memory the trace has not shown yet.
	waiting   map[uint64][]*job
	waitPages map[uint64]int
	// Memory that system calls wrote, which the trace does not show, in
	// trace order.
	clobbered []span
}

// span is a range of addresses.
type span struct{ addr, n uint64 }

// Extract reads the trace from r's current position to its end and
// returns the histories that ops describes. It fails when ops does not fit
// the trace (a function the trace does not have, a struct type or member
// it does not know: an ErrorList at the operations file's positions) or
// when the trace is corrupt; problems of single operations are warnings.
func Extract(r *schema.Reader, ops *OpsFile, opt Options) (*Extraction, error) {
	x := &extractor{
		r: r, f: ops, opt: opt,
		mem:       newShadow(),
		entries:   make(map[uint64]*compiledOp),
		funcSeen:  make(map[uint32]bool),
		nextFunc:  1,
		known:     make(map[string]bool),
		threads:   make(map[schema.ThreadID]*frame),
		calls:     make(map[string]int),
		waiting:   make(map[uint64][]*job),
		waitPages: make(map[uint64]int),
	}
	for _, o := range ops.Ops {
		x.calls[o.Function] = 0
		x.cops = append(x.cops, &compiledOp{def: o})
	}
	if err := x.run(); err != nil {
		return nil, err
	}
	return x.finish()
}

// run streams the events.
func (x *extractor) run() error {
	nfuncs := -1
	var buf [8]byte
	for {
		ev, err := x.r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("read trace: %w", err)
		}
		if t := x.r.Tables(); t != nil && len(t.Functions) != nfuncs {
			nfuncs = len(t.Functions)
			x.scanFunctions(t)
		}
		switch ev.Kind {
		case schema.KindLoad, schema.KindStore:
			b := accessBytes(&buf, ev.Size, ev.Value, ev.Data)
			if len(x.waiting) > 0 {
				x.observe(ev.Addr, b, ev.Kind == schema.KindLoad)
			}
			var store uint64
			if ev.Kind == schema.KindStore {
				store = ev.Seq + 1
			}
			x.mem.write(ev.Addr, b, store)
		case schema.KindSyscall:
			x.syscall(ev)
		case schema.KindCall:
			if err := x.call(ev); err != nil {
				return err
			}
		case schema.KindReturn:
			x.ret(ev)
		case schema.KindThreadExit:
			if f := x.threads[ev.Thread]; f != nil {
				x.pending(f)
				delete(x.threads, ev.Thread)
			}
		}
	}
	// Calls that never returned.
	tids := make([]schema.ThreadID, 0, len(x.threads))
	for t := range x.threads {
		tids = append(tids, t)
	}
	sort.Slice(tids, func(i, j int) bool { return tids[i] < tids[j] })
	for _, t := range tids {
		x.pending(x.threads[t])
		delete(x.threads, t)
	}
	return nil
}

// scanFunctions maps the entry addresses of the op functions the tables
// define that it has not seen yet.
func (x *extractor) scanFunctions(t *schema.Tables) {
	byName := make(map[string]*compiledOp, len(x.cops))
	for _, c := range x.cops {
		byName[c.def.Function] = c
	}
	add := func(id uint32) {
		fn := t.Functions[id]
		x.funcSeen[id] = true
		if c := byName[fn.Name]; c != nil {
			x.entries[fn.Low] = c
			x.known[fn.Name] = true
		}
	}
	// Ids are usually dense from 1: look at the new ones alone.
	for t.Functions[x.nextFunc] != nil && !x.funcSeen[x.nextFunc] {
		add(x.nextFunc)
		x.nextFunc++
	}
	if len(x.funcSeen) == len(t.Functions) {
		return
	}
	for id := range t.Functions {
		if !x.funcSeen[id] {
			add(id)
		}
	}
}

// compileAll compiles the object expression and every op line against the
// tables read so far.
func (x *extractor) compileAll() error {
	x.compiled = true
	c := &compiler{f: x.f, tt: schemaTypes{x.r.Tables()}}
	var errs ErrorList
	add := func(err error) {
		var e *Error
		if errors.As(err, &e) {
			errs = append(errs, e)
			return
		}
		errs = append(errs, x.f.errorAt(Pos{1, 1}, "%v", err))
	}
	if x.f.Object != nil {
		n, err := c.value(x.f.Object)
		if err != nil {
			add(err)
		}
		x.obj = n
	}
	for _, co := range x.cops {
		for _, cl := range co.def.Clauses {
			nodes := make([]*node, 0, len(cl.Exprs))
			for _, e := range cl.Exprs {
				n, err := c.value(e)
				if err != nil {
					add(err)
					continue
				}
				nodes = append(nodes, n)
			}
			if len(nodes) != len(cl.Exprs) {
				continue
			}
			switch cl.Kind {
			case ClauseIn:
				co.in = nodes
			case ClauseOut:
				co.out = nodes
			case ClauseKey:
				co.key = nodes[0]
			case ClauseEmpty:
				co.empty = nodes[0]
			case ClauseFail:
				co.fail = nodes[0]
			}
		}
	}
	if len(errs) > 0 {
		sortErrors(errs)
		return errs
	}
	return nil
}

// call handles a CALL event.
func (x *extractor) call(ev *schema.Event) error {
	f := x.threads[ev.Thread]
	if f != nil && ev.SP >= f.sp {
		// A call at or above the op's frame: the op was left without a
		// return (longjmp).
		x.abandon(f, ev.Seq)
		delete(x.threads, ev.Thread)
		f = nil
	}
	co := x.entries[ev.Addr]
	if co == nil {
		return nil
	}
	x.calls[co.def.Function]++
	if f != nil {
		return nil // nested: part of the outer operation
	}
	if !x.compiled {
		if err := x.compileAll(); err != nil {
			return err
		}
	}
	rec := &opRec{def: co, op: lin.Op{
		Client: int(ev.Thread),
		Name:   co.def.Name,
		Call:   int64(ev.Seq),
		Return: lin.Never,
		Status: lin.Pending,
		Source: x.source(ev.PC),
	}}
	x.recs = append(x.recs, rec)
	nf := &frame{sp: ev.SP, rec: rec, args: ev.Args}
	x.threads[ev.Thread] = nf
	x.evaluate(rec, nf.args, 0, ev.Seq, false)
	return nil
}

// source formats a call site: "file.c:LINE (caller)".
func (x *extractor) source(pc uint64) string {
	loc := x.r.Tables().Locate(pc)
	if loc.File != "" {
		loc.File = path.Base(loc.File)
	}
	return loc.String()
}

// ret handles a RETURN event.
func (x *extractor) ret(ev *schema.Event) {
	f := x.threads[ev.Thread]
	if f == nil || f.sp+8 > ev.SP {
		return // a return inside the op, or outside any
	}
	delete(x.threads, ev.Thread)
	if f.sp+8 < ev.SP {
		x.abandon(f, ev.Seq)
		return
	}
	rec := f.rec
	rec.op.Return = int64(ev.Seq)
	rec.op.Status = lin.OK
	x.evaluate(rec, f.args, ev.Value, ev.Seq, true)
}

// abandon ends an operation whose function was left without a return: it
// took effect, with an unknown output, before event seq.
func (x *extractor) abandon(f *frame, seq uint64) {
	rec := f.rec
	rec.op.Return = max(int64(seq)-1, rec.op.Call)
	rec.op.Status = lin.Unknown
	rec.warn(x, "left %s without a return before event %d (longjmp?); its output is unknown", rec.def.def.Function, seq)
}

// pending ends an operation whose call never returned.
func (x *extractor) pending(f *frame) {
	f.rec.op.Status = lin.Pending
	f.rec.op.Return = lin.Never
}

// warn adds a warning about the operation.
func (rec *opRec) warn(x *extractor, format string, args ...any) {
	rec.warnings = append(rec.warnings, fmt.Sprintf("%s: %s by thread %d (event %d): %s",
		rec.op.Source, rec.op.Name, rec.op.Client, rec.op.Call, fmt.Sprintf(format, args...)))
}

// evaluate starts the evaluation of rec's call-time (in, key, object) or
// return-time (fail if, empty if, out) clauses at event seq.
func (x *extractor) evaluate(rec *opRec, args [schema.NumArgs]uint64, ret uint64, seq uint64, atReturn bool) {
	co := rec.def
	if !atReturn && co.in == nil && co.key == nil && x.obj == nil {
		return
	}
	if atReturn && co.out == nil && co.empty == nil && co.fail == nil {
		return
	}
	j := &job{x: x, rec: rec, atReturn: atReturn, seq: seq, live: true,
		captured: make(map[uint64]byte), clobbers: len(x.clobbered)}
	j.env = env{args: args, ret: ret, mem: j, maxString: x.opt.MaxString}
	x.runJob(j)
}

// clauseErr wraps an evaluation error with the expression and its place.
func (x *extractor) clauseErr(what string, n *node, err error) error {
	return fmt.Errorf("%s %s (%s:%s): %w", what, n.src, x.f.Name, n.src.Pos(), err)
}

// evalCall evaluates the call-time clauses and stores them in rec.
func (x *extractor) evalCall(j *job) error {
	co, v := j.rec.def, &j.env
	var obj, in, key lin.Value
	var err error
	if x.obj != nil {
		if obj, err = valueOf(x.obj, v); err != nil {
			return x.clauseErr("object", x.obj, err)
		}
	}
	if in, err = x.values("in", co.in, v); err != nil {
		return err
	}
	if co.key != nil {
		if key, err = valueOf(co.key, v); err != nil {
			return x.clauseErr("key", co.key, err)
		}
	}
	j.rec.object, j.rec.op.Input, j.rec.op.Key = obj, in, key
	return nil
}

// evalReturn evaluates the return-time clauses and stores them in rec.
func (x *extractor) evalReturn(j *job) error {
	co, v := j.rec.def, &j.env
	if co.fail != nil {
		failed, err := truth(co.fail, v)
		if err != nil {
			return x.clauseErr("fail if", co.fail, err)
		}
		if failed {
			j.rec.dropped = true
			return nil
		}
	}
	if co.empty != nil {
		empty, err := truth(co.empty, v)
		if err != nil {
			return x.clauseErr("empty if", co.empty, err)
		}
		if empty {
			j.rec.op.Output = lin.Value{}
			return nil
		}
	}
	out, err := x.values("out", co.out, v)
	if err != nil {
		return err
	}
	j.rec.op.Output = out
	return nil
}

// values evaluates an in or out list: nil for none, the value of one
// expression, or the list of several.
func (x *extractor) values(what string, ns []*node, v *env) (lin.Value, error) {
	if len(ns) == 0 {
		return lin.Value{}, nil
	}
	vals := make([]lin.Value, len(ns))
	for i, n := range ns {
		val, err := valueOf(n, v)
		if err != nil {
			return lin.Value{}, x.clauseErr(what, n, err)
		}
		vals[i] = val
	}
	if len(vals) == 1 {
		return vals[0], nil
	}
	return lin.ListValue(vals...), nil
}

// syscall forgets the memory a system call wrote (the trace does not show
// the kernel's stores): read, pread64, recvfrom and getrandom buffers.
func (x *extractor) syscall(ev *schema.Event) {
	switch ev.Num {
	case 0, 17, 45, 318: // read, pread64, recvfrom, getrandom
	default:
		return
	}
	n := int64(ev.Value)
	if n <= 0 {
		return
	}
	addr := ev.Args[1]
	if ev.Num == 318 {
		addr = ev.Args[0]
	}
	if len(x.waiting) > 0 {
		x.clobber(addr, uint64(n))
	}
	x.mem.forget(addr, uint64(n), ev.Seq)
	x.clobbered = append(x.clobbered, span{addr, uint64(n)})
}

// finish builds the histories once the trace has been read.
func (x *extractor) finish() (*Extraction, error) {
	var errs ErrorList
	for _, co := range x.cops {
		if !x.known[co.def.Function] {
			errs = append(errs, x.f.errorAt(co.def.FunctionPos, "%s is not in the trace: the run never called it, or the compiler inlined it (mark it noinline)", co.def.Function))
		}
	}
	if len(errs) > 0 {
		sortErrors(errs)
		return nil, errs
	}
	if !x.compiled {
		// No op function was called: still check the expressions.
		if err := x.compileAll(); err != nil {
			return nil, err
		}
	}
	// Evaluations still waiting: the memory they need never showed up.
	x.expireJobs()
	ex := &Extraction{Model: x.f.Model, Init: x.f.Init, Calls: x.calls}
	for _, co := range x.cops {
		if x.calls[co.def.Function] == 0 {
			ex.Warnings = append(ex.Warnings, fmt.Sprintf("%s:%s: %s is in the trace but was never called (a tail call or a jump into it?): no %s operations from it",
				x.f.Name, co.def.FunctionPos, co.def.Function, co.def.Name))
		}
	}
	if end := x.r.End(); !end.Whole {
		ex.Warnings = append(ex.Warnings, fmt.Sprintf("%s: the trace was cut short at byte %d (%s): calls running then are pending", x.r.Name(), end.TruncatedAt, end.Reason))
	}
	name := x.r.Name()
	var order []*lin.History
	byObject := make(map[string]*lin.History)
	history := func(obj lin.Value) *lin.History {
		k := string(obj.AppendKey(nil))
		h := byObject[k]
		if h == nil {
			h = &lin.History{Model: x.f.Model, Init: x.f.Init, Source: name}
			if x.f.Object != nil {
				h.Source = name + " object " + describeObject(obj)
			}
			byObject[k] = h
			order = append(order, h)
		}
		return h
	}
	if x.f.Object == nil {
		history(lin.Value{})
	}
	for _, rec := range x.recs {
		ex.Warnings = append(ex.Warnings, rec.warnings...)
		if rec.callErr != nil {
			continue
		}
		h := history(rec.object)
		if rec.dropped {
			h.Dropped++
			continue
		}
		h.Ops = append(h.Ops, rec.op)
	}
	for _, h := range order {
		h.Sort()
		if err := h.Validate(); err != nil {
			return nil, fmt.Errorf("%s: extracted history is not valid: %w", h.Source, err)
		}
	}
	ex.Histories = order
	limit := x.opt.MaxWarnings
	if limit <= 0 {
		limit = DefaultMaxWarnings
	}
	if len(ex.Warnings) > limit {
		n := len(ex.Warnings) - limit
		ex.Warnings = append(ex.Warnings[:limit:limit], fmt.Sprintf("... and %d more warnings", n))
	}
	return ex, nil
}

// describeObject formats an object's value for a history's source: an
// address in hex.
func describeObject(v lin.Value) string {
	if v.Kind == lin.Int {
		return fmt.Sprintf("%#x", uint64(v.I))
	}
	return v.String()
}
