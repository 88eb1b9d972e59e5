package histfile

import (
	"github.com/mgtrace/mgtrace/lin"
)

// parseEDN reads a Jepsen EDN history: maps, one per event, either at the
// top level or all inside one vector or list. The position of an event is
// its index among the file's maps.
func parseEDN(name string, data []byte) (*lin.History, error) {
	r := newEDNReader(name, data)
	p := newPairing(name, data)
	if err := r.skipSpace(); err != nil {
		return nil, err
	}
	var pos int64
	event := func(v *ednValue) error {
		err := readEvent(r, p, v, pos)
		pos++
		r.release() // readEvent keeps nothing of v
		return err
	}
	if !r.atEnd() && (r.data[r.pos] == '[' || r.data[r.pos] == '(') {
		// One vector (or list) of maps: read them one by one rather than
		// building the whole vector first.
		open := ednValue{kind: ednVector, line: r.line, col: r.col()}
		closing := byte(']')
		if r.data[r.pos] == '(' {
			open.kind, closing = ednList, ')'
		}
		r.pos++
		for {
			if err := r.skipSpace(); err != nil {
				return nil, err
			}
			if r.atEnd() {
				return nil, r.errHere("unexpected end of input: the %s opened at line %d, column %d is not closed", open.kind, open.line, open.col)
			}
			if r.data[r.pos] == closing {
				r.pos++
				break
			}
			v, err := r.read()
			if err != nil {
				return nil, err
			}
			if err := event(&v); err != nil {
				return nil, err
			}
		}
		if err := r.skipSpace(); err != nil {
			return nil, err
		}
		if !r.atEnd() {
			return nil, r.errHere("unexpected %s after the history's closing %q", quoteRune(r.data[r.pos:]), closing)
		}
		return p.finish(), nil
	}
	for !r.atEnd() {
		v, err := r.read()
		if err != nil {
			return nil, err
		}
		if err := event(&v); err != nil {
			return nil, err
		}
		if err := r.skipSpace(); err != nil {
			return nil, err
		}
	}
	return p.finish(), nil
}

// ednEvent is the fields of an event map that histfile reads.
type ednEvent struct {
	process, typ, f, value, key *ednValue
}

// readEvent reads the event map v at position pos into p.
func readEvent(r *ednReader, p *pairing, v *ednValue, pos int64) error {
	if v.kind != ednMap {
		return errorf(r.name, v.line, v.col, "expected a map (an event), found %s", v.kind.article())
	}
	var e ednEvent
	for i := 0; i < len(v.items); i += 2 {
		k := &v.items[i]
		if k.kind != ednKeyword {
			continue
		}
		var field **ednValue
		switch k.s {
		case "process":
			field = &e.process
		case "type":
			field = &e.typ
		case "f":
			field = &e.f
		case "value":
			field = &e.value
		case "key":
			field = &e.key
		default:
			continue // :index, :time, :error, ...
		}
		if *field != nil {
			return errorf(r.name, k.line, k.col, "duplicate key :%s", k.s)
		}
		*field = &v.items[i+1]
	}
	missing := func(key string) error {
		return errorf(r.name, v.line, v.col, "the event has no %s", key)
	}
	if e.process == nil {
		return missing(":process")
	}
	if e.process.kind != ednInt {
		return nil // the nemesis, or another process that is not a client
	}
	proc := e.process.i
	if e.typ == nil {
		return missing(":type")
	}
	if e.f == nil {
		return missing(":f")
	}
	var f string
	switch e.f.kind {
	case ednKeyword, ednString, ednSymbol:
		f = e.f.s
	}
	if f == "" {
		return errorf(r.name, e.f.line, e.f.col, ":f must be a keyword or a non-empty string, not %s", describeEDN(e.f))
	}
	var key, value lin.Value
	var err error
	if e.key != nil {
		if key, err = r.linValue(e.key, ":key"); err != nil {
			return err
		}
	}
	if e.value != nil {
		if value, err = r.linValue(e.value, ":value"); err != nil {
			return err
		}
	}
	typ := ""
	if e.typ.kind == ednKeyword {
		typ = e.typ.s
	}
	line := v.line
	switch typ {
	case "invoke":
		return p.invoke(proc, f, key, value, pos, line)
	case "ok", "fail", "info":
		op, err := p.complete(proc, ":"+typ, f, line)
		if err != nil {
			return err
		}
		if !key.IsNil() {
			if op.Key.IsNil() {
				op.Key = key
			} else if !op.Key.Equal(key) {
				return errorf(r.name, e.key.line, e.key.col, "the completion's :key %s differs from its invocation's, %s", key, op.Key)
			}
		}
		switch typ {
		case "ok":
			op.Status, op.Return, op.Output = lin.OK, pos, value
		case "fail":
			p.drop() // it did not take effect
			return nil
		case "info":
			op.Status = lin.Info
		}
		p.keep(op)
		return nil
	}
	return errorf(r.name, e.typ.line, e.typ.col, "unknown :type %s (want :invoke, :ok, :fail or :info)", describeEDN(e.typ))
}

// describeEDN formats a scalar form for a message: ":foo", "a string".
func describeEDN(v *ednValue) string {
	switch v.kind {
	case ednKeyword:
		return ":" + v.s
	case ednSymbol, ednNumber:
		return v.s
	case ednNil:
		return "nil"
	case ednInt:
		return lin.IntValue(v.i).String()
	case ednBool:
		return lin.BoolValue(v.i != 0).String()
	case ednString:
		return lin.StringValue(v.s).String()
	}
	return v.kind.article()
}
