package lin

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// ValueKind says what a Value holds.
type ValueKind uint8

// The kinds of Value. The zero Value is Nil.
const (
	Nil    ValueKind = iota // no value: a read of an absent key, an empty queue's dequeue, Jepsen's nil
	Int                     // a 64-bit signed integer
	String                  // a string (Jepsen keywords keep their colon: ":ok")
	Bool                    // true or false
	List                    // a tuple or vector: cas's [old new], a snapshot's cells
)

// Value is one input or output datum of an operation. Histories from logs
// and from traces carry integers, strings, booleans, nil and lists of
// those; a model reads what it needs (see Model.Action).
type Value struct {
	Kind ValueKind `json:"-"`
	I    int64     `json:"-"` // Int's value; Bool's as 0 or 1
	S    string    `json:"-"` // String's value
	L    []Value   `json:"-"` // List's elements
}

// IntValue returns the integer v.
func IntValue(v int64) Value { return Value{Kind: Int, I: v} }

// StringValue returns the string s.
func StringValue(s string) Value { return Value{Kind: String, S: s} }

// BoolValue returns the boolean b.
func BoolValue(b bool) Value {
	if b {
		return Value{Kind: Bool, I: 1}
	}
	return Value{Kind: Bool}
}

// ListValue returns the list of vs.
func ListValue(vs ...Value) Value { return Value{Kind: List, L: vs} }

// IsNil reports whether v is Nil.
func (v Value) IsNil() bool { return v.Kind == Nil }

// Equal reports whether v and w are the same value (an Int is never equal
// to a String or a Bool).
func (v Value) Equal(w Value) bool {
	if v.Kind != w.Kind {
		return false
	}
	switch v.Kind {
	case Nil:
		return true
	case Int, Bool:
		return v.I == w.I
	case String:
		return v.S == w.S
	case List:
		if len(v.L) != len(w.L) {
			return false
		}
		for i := range v.L {
			if !v.L[i].Equal(w.L[i]) {
				return false
			}
		}
		return true
	}
	return false
}

// String formats v as in Jepsen's histories: 3, "x", true, nil, [1 2].
func (v Value) String() string {
	var b strings.Builder
	v.write(&b)
	return b.String()
}

func (v Value) write(b *strings.Builder) {
	switch v.Kind {
	case Nil:
		b.WriteString("nil")
	case Int:
		b.WriteString(strconv.FormatInt(v.I, 10))
	case Bool:
		b.WriteString(strconv.FormatBool(v.I != 0))
	case String:
		b.WriteString(strconv.Quote(v.S))
	case List:
		b.WriteByte('[')
		for i, e := range v.L {
			if i > 0 {
				b.WriteByte(' ')
			}
			e.write(b)
		}
		b.WriteByte(']')
	default:
		fmt.Fprintf(b, "value(kind %d)", v.Kind)
	}
}

// AppendKey appends an encoding of v that is equal for equal values and
// different for different ones (a map key for values).
func (v Value) AppendKey(b []byte) []byte {
	b = append(b, byte('0'+v.Kind))
	switch v.Kind {
	case Int, Bool:
		b = strconv.AppendInt(b, v.I, 10)
		b = append(b, ';')
	case String:
		b = strconv.AppendInt(b, int64(len(v.S)), 10)
		b = append(b, ':')
		b = append(b, v.S...)
	case List:
		b = strconv.AppendInt(b, int64(len(v.L)), 10)
		b = append(b, '(')
		for _, e := range v.L {
			b = e.AppendKey(b)
		}
		b = append(b, ')')
	}
	return b
}

// MarshalJSON writes v as plain JSON: a number, a string, a boolean, null
// or an array.
func (v Value) MarshalJSON() ([]byte, error) {
	switch v.Kind {
	case Nil:
		return []byte("null"), nil
	case Int:
		return strconv.AppendInt(nil, v.I, 10), nil
	case Bool:
		return strconv.AppendBool(nil, v.I != 0), nil
	case String:
		return json.Marshal(v.S)
	case List:
		if v.L == nil {
			return []byte("[]"), nil
		}
		return json.Marshal(v.L)
	}
	return nil, fmt.Errorf("value of unknown kind %d", v.Kind)
}

// UnmarshalJSON reads what MarshalJSON writes. A number must be an
// integer that fits 64 bits.
func (v *Value) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return err
	}
	w, err := FromJSON(x)
	if err != nil {
		return err
	}
	*v = w
	return nil
}

// FromJSON converts a value decoded by encoding/json with UseNumber
// (json.Number, string, bool, nil, []any) to a Value.
func FromJSON(x any) (Value, error) {
	switch x := x.(type) {
	case nil:
		return Value{}, nil
	case bool:
		return BoolValue(x), nil
	case string:
		return StringValue(x), nil
	case json.Number:
		i, err := strconv.ParseInt(string(x), 10, 64)
		if err != nil {
			return Value{}, fmt.Errorf("number %s is not a 64-bit integer", x)
		}
		return IntValue(i), nil
	case float64:
		if x != float64(int64(x)) {
			return Value{}, fmt.Errorf("number %v is not an integer", x)
		}
		return IntValue(int64(x)), nil
	case []any:
		l := make([]Value, len(x))
		for i, e := range x {
			v, err := FromJSON(e)
			if err != nil {
				return Value{}, err
			}
			l[i] = v
		}
		return ListValue(l...), nil
	}
	return Value{}, fmt.Errorf("a value must be a number, string, boolean, null or array, not %T", x)
}

// ParseValue reads a value literal as the command line and the
// operations file write them: an integer (3, -1, 0x1f), a string in
// double quotes with Go escapes, nil, true, false, or a list of values in
// brackets separated by spaces or commas ([1 2], [[0 1] "x"]).
func ParseValue(s string) (Value, error) {
	p := &valueParser{s: s}
	v, err := p.value()
	if err != nil {
		return Value{}, err
	}
	p.space()
	if p.i != len(p.s) {
		return Value{}, fmt.Errorf("value %q: unexpected %q at column %d", s, p.s[p.i:], p.i+1)
	}
	return v, nil
}

type valueParser struct {
	s     string
	i     int
	depth int
}

func (p *valueParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == ',') {
		p.i++
	}
}

func (p *valueParser) value() (Value, error) {
	p.space()
	if p.i >= len(p.s) {
		return Value{}, fmt.Errorf("value %q: a value is missing at column %d", p.s, p.i+1)
	}
	switch c := p.s[p.i]; {
	case c == '[':
		p.i++
		if p.depth++; p.depth > 64 {
			return Value{}, fmt.Errorf("value %q: lists nest deeper than 64", p.s)
		}
		defer func() { p.depth-- }()
		var l []Value
		for {
			p.space()
			if p.i < len(p.s) && p.s[p.i] == ']' {
				p.i++
				return ListValue(l...), nil
			}
			if p.i >= len(p.s) {
				return Value{}, fmt.Errorf("value %q: a list is not closed with ]", p.s)
			}
			if len(l) >= 1<<16 {
				return Value{}, fmt.Errorf("value %q: a list is too long", p.s)
			}
			v, err := p.value()
			if err != nil {
				return Value{}, err
			}
			l = append(l, v)
		}
	case c == '"':
		j := p.i + 1
		for j < len(p.s) && p.s[j] != '"' {
			if p.s[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(p.s) {
			return Value{}, fmt.Errorf("value %q: a string is not closed", p.s)
		}
		str, err := strconv.Unquote(p.s[p.i : j+1])
		if err != nil {
			return Value{}, fmt.Errorf("value %q: bad string %s", p.s, p.s[p.i:j+1])
		}
		p.i = j + 1
		return StringValue(str), nil
	default:
		j := p.i
		for j < len(p.s) && !strings.ContainsRune(" \t,[]\"", rune(p.s[j])) {
			j++
		}
		word := p.s[p.i:j]
		p.i = j
		switch word {
		case "nil", "null":
			return Value{}, nil
		case "true":
			return BoolValue(true), nil
		case "false":
			return BoolValue(false), nil
		}
		n, err := strconv.ParseInt(word, 0, 64)
		if err != nil {
			return Value{}, fmt.Errorf("value %q: %q is not an integer, string, nil, true, false or list", p.s, word)
		}
		return IntValue(n), nil
	}
}
