package histfile

import (
	"bytes"
	"strconv"

	"github.com/mgtrace/mgtrace/lin"
)

// etcdMarker is what the event lines of an etcd log hold.
var etcdMarker = []byte("jepsen.util")

// parseEtcdLog reads a Jepsen etcd log as porcupine's tests do: the lines
// holding "jepsen.util" are events ("INFO  jepsen.util - 3\t:invoke\t:read\tnil"),
// the others are skipped. The position of an event is its line's index
// (from 0).
func parseEtcdLog(name string, data []byte) (*lin.History, error) {
	p := newPairing(name, data)
	for start, lineNo := 0, 1; start < len(data); lineNo++ {
		end := bytes.IndexByte(data[start:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += start
		}
		if i := bytes.Index(data[start:end], etcdMarker); i >= 0 {
			r := &ednReader{name: name, data: data[:end], pos: start + i + len(etcdMarker), line: lineNo, lineStart: start}
			if err := readEtcdEvent(r, p, int64(lineNo-1)); err != nil {
				return nil, err
			}
		}
		start = end + 1
	}
	return p.finish(), nil
}

// readEtcdEvent reads the rest of an event line after "jepsen.util":
// " - PROCESS TYPE F VALUE".
func readEtcdEvent(r *ednReader, p *pairing, pos int64) error {
	skipBlanks := func() {
		for r.pos < len(r.data) && (r.data[r.pos] == ' ' || r.data[r.pos] == '\t' || r.data[r.pos] == '\r') {
			r.pos++
		}
	}
	skipBlanks()
	if r.atEnd() || r.data[r.pos] != '-' {
		return r.errHere("expected \" - PROCESS\" after jepsen.util, found %s", quoteRune(r.data[r.pos:]))
	}
	r.pos++
	skipBlanks()
	procCol := r.col()
	tok := r.token()
	if tok == "" {
		return r.errHere("expected a process after \"jepsen.util - \", found %s", quoteRune(r.data[r.pos:]))
	}
	if tok[0] == ':' {
		return nil // the nemesis, or another process that is not a client
	}
	proc, err := strconv.ParseInt(tok, 10, 64)
	if err != nil {
		return errorf(r.name, r.line, procCol, "invalid process %q", tok)
	}
	typ, err := r.readForm("the event's type (:invoke, :ok, :fail or :info)")
	if err != nil {
		return err
	}
	f, err := r.readForm("the operation (:read, :write or :cas)")
	if err != nil {
		return err
	}
	v, err := r.readForm("the event's value")
	if err != nil {
		return err
	}
	if err := r.skipSpace(); err != nil {
		return err
	}
	if !r.atEnd() {
		return r.errHere("unexpected %s after the event's value", quoteRune(r.data[r.pos:]))
	}
	if typ.kind != ednKeyword {
		return errorf(r.name, typ.line, typ.col, "expected the event's type (:invoke, :ok, :fail or :info), found %s", describeEDN(&typ))
	}
	if f.kind != ednKeyword || f.s != "read" && f.s != "write" && f.s != "cas" {
		return errorf(r.name, f.line, f.col, "unknown operation %s (want :read, :write or :cas)", describeEDN(&f))
	}
	value, err := r.linValue(&v, "the value")
	if err != nil {
		return err
	}
	line := r.line
	if typ.s == "invoke" {
		input, err := etcdInput(r, f.s, &v, value)
		if err != nil {
			return err
		}
		return p.invoke(proc, f.s, lin.Value{}, input, pos, line)
	}
	if typ.s != "ok" && typ.s != "fail" && typ.s != "info" {
		return errorf(r.name, typ.line, typ.col, "unknown event type %s (want :invoke, :ok, :fail or :info)", describeEDN(&typ))
	}
	op, err := p.complete(proc, ":"+typ.s, f.s, line)
	if err != nil {
		return err
	}
	switch typ.s + " " + f.s {
	case "ok read":
		if !value.IsNil() && value.Kind != lin.Int {
			return errorf(r.name, v.line, v.col, "a read returns an integer or nil, not %s", describeValue(&v, value))
		}
		op.Status, op.Return, op.Output = lin.OK, pos, value
	case "ok write":
		op.Status, op.Return = lin.OK, pos
	case "ok cas", "fail cas":
		// A compare-and-set that failed returned false: it completed.
		op.Status, op.Return, op.Output = lin.OK, pos, lin.BoolValue(typ.s == "ok")
	case "fail read":
		// A read that timed out completed, but its output is unknown.
		op.Status, op.Return = lin.Unknown, pos
	case "fail write":
		p.drop() // it did not take effect
		return nil
	default: // info
		op.Status = lin.Info
	}
	p.keep(op)
	return nil
}

// etcdInput checks the value of an invocation of f and returns its input:
// nil for a read, an integer for a write, a vector of two integers for a
// compare-and-set.
func etcdInput(r *ednReader, f string, v *ednValue, value lin.Value) (lin.Value, error) {
	switch f {
	case "read":
		if value.IsNil() {
			return value, nil
		}
		return value, errorf(r.name, v.line, v.col, "a read is invoked with nil, not %s", describeValue(v, value))
	case "write":
		if value.Kind == lin.Int {
			return value, nil
		}
		return value, errorf(r.name, v.line, v.col, "a write is invoked with an integer, not %s", describeValue(v, value))
	}
	if value.Kind == lin.List && len(value.L) == 2 && value.L[0].Kind == lin.Int && value.L[1].Kind == lin.Int {
		return value, nil
	}
	return value, errorf(r.name, v.line, v.col, "a cas is invoked with [OLD NEW], two integers, not %s", describeValue(v, value))
}

// describeValue formats the form v, converted to value, for a message:
// a keyword as itself, anything else as value.String() does.
func describeValue(v *ednValue, value lin.Value) string {
	if v.kind == ednKeyword {
		return ":" + v.s
	}
	return value.String()
}
