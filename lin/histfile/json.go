package histfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/mgtrace/mgtrace/lin"
)

// jsonParser reads the JSON format token by token, so that every error
// can name its line and column.
type jsonParser struct {
	name  string
	data  []byte
	dec   *json.Decoder
	lines *lineCounter
}

// parseJSON reads a history in the JSON format: {"model": ..., "init":
// ..., "ops": [...]}, or the array of operations alone.
func parseJSON(name string, data []byte) (*lin.History, error) {
	p := &jsonParser{name: name, data: data, dec: json.NewDecoder(bytes.NewReader(data)), lines: newLineCounter(data)}
	p.dec.UseNumber()
	// Each operation has a "call": guess their number from it.
	h := &lin.History{Ops: make([]lin.Op, 0, bytes.Count(data, []byte(`"call"`)))}
	start := p.next()
	tok, err := p.token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		err = p.history(h, start)
	case json.Delim('['):
		err = p.ops(h)
	default:
		err = p.errAt(start, "a history is a JSON object, {\"ops\": [...]}, not %s", describeJSON(tok))
	}
	if err != nil {
		return nil, err
	}
	end := skipJSONSpace(data, int(p.dec.InputOffset()))
	if end < len(data) {
		return nil, p.errAt(end, "unexpected data after the history")
	}
	return h, nil
}

// history reads the fields of the history object, whose '{' is at start.
func (p *jsonParser) history(h *lin.History, start int) error {
	seen := make(map[string]bool)
	for p.dec.More() {
		key, koff, err := p.key(seen)
		if err != nil {
			return err
		}
		switch key {
		case "model":
			x, off, err := p.value()
			if err != nil {
				return err
			}
			s, ok := x.(string)
			if !ok {
				return p.errAt(off, "\"model\" must be a string, not %s", describeJSON(x))
			}
			h.Model = s
		case "init":
			x, off, err := p.value()
			if err != nil {
				return err
			}
			if h.Init, err = toValue(x); err != nil {
				return p.errAt(off, "\"init\": %v", err)
			}
		case "ops":
			off := p.next()
			tok, err := p.token()
			if err != nil {
				return err
			}
			if tok != json.Delim('[') {
				return p.errAt(off, "\"ops\" must be an array of operations, not %s", describeJSON(tok))
			}
			if err := p.ops(h); err != nil {
				return err
			}
		default:
			return p.errAt(koff, "unknown field %q (want \"model\", \"init\" or \"ops\")", key)
		}
	}
	if _, err := p.token(); err != nil { // the closing '}'
		return err
	}
	if !seen["ops"] {
		return p.errAt(start, "the history has no \"ops\"")
	}
	return nil
}

// ops reads the operations of the array whose '[' was the last token.
func (p *jsonParser) ops(h *lin.History) error {
	for p.dec.More() {
		op, err := p.op()
		if err != nil {
			return err
		}
		h.Ops = append(h.Ops, op)
	}
	_, err := p.token() // the closing ']'
	return err
}

// op reads one operation object.
func (p *jsonParser) op() (lin.Op, error) {
	start := p.next()
	op := lin.Op{Return: lin.Never}
	tok, err := p.token()
	if err != nil {
		return op, err
	}
	if tok != json.Delim('{') {
		return op, p.errAt(start, "an operation must be a JSON object, not %s", describeJSON(tok))
	}
	op.Source = source(p.name, p.lines.lineAt(start))
	seen := make(map[string]bool)
	returnAt := 0
	for p.dec.More() {
		key, koff, err := p.key(seen)
		if err != nil {
			return op, err
		}
		x, off, err := p.value()
		if err != nil {
			return op, err
		}
		switch key {
		case "client":
			n, err := jsonInt(x)
			if err == nil && int64(int(n)) != n {
				err = fmt.Errorf("%d does not fit an int", n)
			}
			if err != nil {
				return op, p.errAt(off, "\"client\": %v", err)
			}
			op.Client = int(n)
		case "f":
			s, ok := x.(string)
			if !ok {
				return op, p.errAt(off, "\"f\" must be a string, not %s", describeJSON(x))
			}
			if s == "" {
				return op, p.errAt(off, "\"f\" is empty: an operation needs a name")
			}
			op.Name = s
		case "key", "input", "output":
			v, err := toValue(x)
			if err != nil {
				return op, p.errAt(off, "%q: %v", key, err)
			}
			switch key {
			case "key":
				op.Key = v
			case "input":
				op.Input = v
			default:
				op.Output = v
			}
		case "status":
			s, ok := x.(string)
			if !ok {
				return op, p.errAt(off, "\"status\" must be a string, not %s", describeJSON(x))
			}
			if err := op.Status.UnmarshalText([]byte(s)); err != nil {
				return op, p.errAt(off, "%v", err)
			}
		case "call", "return":
			n, err := jsonInt(x)
			if err == nil && (n < 0 || n == lin.Never) {
				err = fmt.Errorf("%d is not a position (want 0 to %d)", n, lin.Never-1)
			}
			if err != nil {
				return op, p.errAt(off, "%q: %v", key, err)
			}
			if key == "call" {
				op.Call = n
			} else {
				op.Return, returnAt = n, koff
			}
		default:
			return op, p.errAt(koff, "unknown field %q (want \"client\", \"f\", \"key\", \"input\", \"output\", \"status\", \"call\" or \"return\")", key)
		}
	}
	if _, err := p.token(); err != nil { // the closing '}'
		return op, err
	}
	for _, k := range []string{"client", "f", "call"} {
		if !seen[k] {
			return op, p.errAt(start, "the operation has no %q", k)
		}
	}
	if op.Status.Optional() && seen["return"] {
		return op, p.errAt(returnAt, "an operation whose status is %s has no \"return\" (its response was never seen)", op.Status)
	}
	if !op.Status.Optional() && !seen["return"] {
		return op, p.errAt(start, "the operation has no \"return\" (needed unless its status is info or pending)")
	}
	return op, nil
}

// key reads an object's key, which must not be in seen, and adds it.
func (p *jsonParser) key(seen map[string]bool) (string, int, error) {
	off := p.next()
	tok, err := p.token()
	if err != nil {
		return "", off, err
	}
	key, ok := tok.(string)
	if !ok { // encoding/json reports this itself; be safe
		return "", off, p.errAt(off, "expected a field name, found %s", describeJSON(tok))
	}
	if seen[key] {
		return "", off, p.errAt(off, "duplicate field %q", key)
	}
	seen[key] = true
	return key, off, nil
}

// token reads the next token.
func (p *jsonParser) token() (json.Token, error) {
	tok, err := p.dec.Token()
	if err != nil {
		return nil, p.syntax(err)
	}
	return tok, nil
}

// value decodes the next value and returns it with its offset.
func (p *jsonParser) value() (any, int, error) {
	off := p.next()
	var x any
	if err := p.dec.Decode(&x); err != nil {
		return nil, off, p.syntax(err)
	}
	return x, off, nil
}

// next returns the offset of the next token: past white space and the
// separators the decoder has not consumed yet.
func (p *jsonParser) next() int {
	i := int(p.dec.InputOffset())
	for i < len(p.data) {
		switch p.data[i] {
		case ' ', '\t', '\r', '\n', ',', ':':
			i++
		default:
			return i
		}
	}
	return i
}

// syntax turns an error of the decoder into an *Error. The decoder's
// offsets in syntax errors do not always count from the start of the
// input, so the position comes from checking the whole input instead.
func (p *jsonParser) syntax(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return p.errAt(len(p.data), "unexpected end of input")
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		var raw json.RawMessage
		var whole *json.SyntaxError
		if errors.As(json.Unmarshal(p.data, &raw), &whole) {
			if int(whole.Offset) >= len(p.data) {
				return p.errAt(len(p.data), "unexpected end of input")
			}
			return p.errAt(int(whole.Offset)-1, "%s", whole.Error())
		}
	}
	return p.errAt(int(p.dec.InputOffset()), "%v", err)
}

// errAt returns an error at byte offset off.
func (p *jsonParser) errAt(off int, format string, args ...any) *Error {
	line, col := position(p.data, off)
	return errorf(p.name, line, col, format, args...)
}

// skipJSONSpace returns the offset of the first byte at or after i that
// is not JSON white space.
func skipJSONSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n') {
		i++
	}
	return i
}

// jsonInt returns the integer a decoded JSON value holds.
func jsonInt(x any) (int64, error) {
	n, ok := x.(json.Number)
	if !ok {
		return 0, fmt.Errorf("want an integer, not %s", describeJSON(x))
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		if isRangeErr(err) {
			return 0, fmt.Errorf("%s does not fit 64 bits", n)
		}
		return 0, fmt.Errorf("want an integer, not %s", n)
	}
	return i, nil
}

// toValue converts a decoded JSON value to a lin.Value.
func toValue(x any) (lin.Value, error) {
	switch x := x.(type) {
	case nil:
		return lin.Value{}, nil
	case bool:
		return lin.BoolValue(x), nil
	case string:
		return lin.StringValue(x), nil
	case json.Number:
		i, err := jsonInt(x)
		if err != nil {
			return lin.Value{}, err
		}
		return lin.IntValue(i), nil
	case []any:
		l := make([]lin.Value, len(x))
		for i, e := range x {
			v, err := toValue(e)
			if err != nil {
				return lin.Value{}, err
			}
			l[i] = v
		}
		return lin.ListValue(l...), nil
	}
	return lin.Value{}, fmt.Errorf("a value is an integer, a string, a boolean, null or an array, not %s", describeJSON(x))
}

// describeJSON names a decoded JSON value or token for a message.
func describeJSON(x any) string {
	switch x := x.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case json.Number:
		return "the number " + string(x)
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	case json.Delim:
		if x == '[' {
			return "an array"
		}
		if x == '{' {
			return "an object"
		}
		return strconv.Quote(x.String())
	}
	return fmt.Sprintf("%T", x)
}
