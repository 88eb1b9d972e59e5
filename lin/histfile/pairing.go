package histfile

import (
	"bytes"

	"github.com/mgtrace/mgtrace/lin"
)

// pairing turns a stream of invocation and completion events (Jepsen's
// :invoke, :ok, :fail and :info) into operations: a process's completion
// completes its open invocation.
type pairing struct {
	name string
	h    *lin.History
	open map[int64]*openOp // process -> its open invocation
}

// openOp is an invocation not yet completed.
type openOp struct {
	op   lin.Op
	line int // the invocation's line
}

// newPairing returns a pairing for the file name, whose data is used
// only to guess how many operations it holds (its ":invoke"s).
func newPairing(name string, data []byte) *pairing {
	n := bytes.Count(data, []byte(":invoke"))
	return &pairing{name: name, h: &lin.History{Ops: make([]lin.Op, 0, n)}, open: make(map[int64]*openOp)}
}

// invoke opens an operation by process proc at position pos, line line.
func (p *pairing) invoke(proc int64, f string, key, input lin.Value, pos int64, line int) error {
	if o, ok := p.open[proc]; ok {
		return errorf(p.name, line, 0, "process %d invokes %s while its %s (line %d) is still open", proc, f, o.op.Name, o.line)
	}
	if int64(int(proc)) != proc {
		return errorf(p.name, line, 0, "process %d does not fit an int", proc)
	}
	p.open[proc] = &openOp{
		op: lin.Op{
			Client: int(proc),
			Name:   f,
			Key:    key,
			Input:  input,
			Status: lin.Pending,
			Call:   pos,
			Return: lin.Never,
			Source: source(p.name, line),
		},
		line: line,
	}
	return nil
}

// complete closes process proc's open invocation, which must be of f,
// and returns it for the caller to fill in and keep (or drop). how is
// the completion's type (":ok") for errors.
func (p *pairing) complete(proc int64, how, f string, line int) (*lin.Op, error) {
	o, ok := p.open[proc]
	if !ok {
		return nil, errorf(p.name, line, 0, "process %d completes %s (%s) but has no open invocation", proc, f, how)
	}
	if o.op.Name != f {
		return nil, errorf(p.name, line, 0, "process %d completes %s (%s) but its open invocation (line %d) is %s", proc, f, how, o.line, o.op.Name)
	}
	delete(p.open, proc)
	return &o.op, nil
}

// keep adds a completed operation to the history.
func (p *pairing) keep(op *lin.Op) { p.h.Ops = append(p.h.Ops, *op) }

// drop counts an operation known not to have taken effect.
func (p *pairing) drop() { p.h.Dropped++ }

// finish adds the invocations never completed (Pending) and returns the
// history, not yet sorted.
func (p *pairing) finish() *lin.History {
	for _, o := range p.open {
		p.h.Ops = append(p.h.Ops, o.op)
	}
	p.open = nil
	return p.h
}
