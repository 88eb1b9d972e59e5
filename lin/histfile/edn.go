package histfile

// This file is a reader for the subset of EDN that Jepsen writes: maps,
// vectors, lists, sets, keywords, symbols, strings, characters, integers,
// floats and ratios (kept as text: histfile rejects them only where it
// needs a value), nil, true, false, comments, commas, tagged literals
// (whose tag is dropped) and #_ discards.

// ednKind says what an ednValue is.
type ednKind uint8

const (
	ednNil     ednKind = iota
	ednBool            // i is 0 or 1
	ednInt             // i
	ednNumber          // a float, a ratio or an integer too large for int64: s is its text
	ednString          // s
	ednChar            // s: the character
	ednKeyword         // s: the name without the colon
	ednSymbol          // s
	ednVector          // items
	ednList            // items
	ednSet             // items
	ednMap             // items: key, value, key, value, ...
)

var ednKindNames = [...]string{
	ednNil: "nil", ednBool: "boolean", ednInt: "integer", ednNumber: "number",
	ednString: "string", ednChar: "character", ednKeyword: "keyword", ednSymbol: "symbol",
	ednVector: "vector", ednList: "list", ednSet: "set", ednMap: "map",
}

func (k ednKind) String() string { return ednKindNames[k] }

// article returns the kind's name after "a" or "an".
func (k ednKind) article() string {
	if k == ednInt {
		return "an " + k.String()
	}
	return "a " + k.String()
}

// ednValue is one EDN form and where it starts.
type ednValue struct {
	kind      ednKind
	i         int64
	s         string
	items     []ednValue
	line, col int
}

// maxDepth bounds the nesting of collections (and tags and discards), so
// that hostile input cannot exhaust the stack.
const maxDepth = 1000

// ednReader reads EDN forms from data, keeping track of lines.
type ednReader struct {
	name      string
	data      []byte
	pos       int
	line      int // line of pos, 1-based
	lineStart int // offset of that line's first byte
	depth     int
	stack     []ednValue // items of the collections being read
	// arena holds the items of the collections read since the last
	// release; when it grows, the items already read stay in the old
	// array.
	arena []ednValue
	names map[string]string // see token
}

// release lets the reader reuse the memory of the forms read so far,
// which the caller no longer uses.
func (r *ednReader) release() { r.arena = r.arena[:0] }

func newEDNReader(name string, data []byte) *ednReader {
	return &ednReader{name: name, data: data, line: 1}
}

// col returns the 1-based column of pos.
func (r *ednReader) col() int { return r.pos - r.lineStart + 1 }

// errHere returns an error at pos.
func (r *ednReader) errHere(format string, args ...any) *Error {
	return errorf(r.name, r.line, r.col(), format, args...)
}

// atEnd reports whether the reader has consumed all of data.
func (r *ednReader) atEnd() bool { return r.pos >= len(r.data) }

// newline notes that the byte at pos-1 was a line feed.
func (r *ednReader) newline() {
	r.line++
	r.lineStart = r.pos
}

// skipSpace skips white space, commas, comments and #_ discards.
func (r *ednReader) skipSpace() error {
	for r.pos < len(r.data) {
		c := r.data[r.pos]
		switch {
		case c == '\n':
			r.pos++
			r.newline()
		case isSpace(c):
			r.pos++
		case c == ';':
			for r.pos < len(r.data) && r.data[r.pos] != '\n' {
				r.pos++
			}
		case c == '#' && r.pos+1 < len(r.data) && r.data[r.pos+1] == '_':
			line, col := r.line, r.col()
			r.pos += 2
			if err := r.enter(); err != nil {
				return err
			}
			if err := r.skipSpace(); err != nil {
				return err
			}
			if r.atEnd() {
				return errorf(r.name, line, col, "#_ discards nothing: the input ends")
			}
			if _, err := r.read(); err != nil {
				return err
			}
			r.depth--
		default:
			return nil
		}
	}
	return nil
}

// enter counts one more level of nesting.
func (r *ednReader) enter() error {
	r.depth++
	if r.depth > maxDepth {
		return r.errHere("forms nested more than %d deep", maxDepth)
	}
	return nil
}

// readForm skips white space and reads one form; at the end of data it
// reports what (a description) was expected.
func (r *ednReader) readForm(what string) (ednValue, error) {
	if err := r.skipSpace(); err != nil {
		return ednValue{}, err
	}
	if r.atEnd() {
		return ednValue{}, r.errHere("unexpected end of input: expected %s", what)
	}
	return r.read()
}

// read reads the form at pos, which is not white space.
func (r *ednReader) read() (ednValue, error) {
	v := ednValue{line: r.line, col: r.col()}
	c := r.data[r.pos]
	var err error
	switch {
	case c == '{':
		r.pos++
		v.kind = ednMap
		v.items, err = r.readItems('}', v)
		if err == nil && len(v.items)%2 != 0 {
			err = errorf(r.name, v.line, v.col, "a map needs an even number of forms, not %d", len(v.items))
		}
	case c == '[':
		r.pos++
		v.kind = ednVector
		v.items, err = r.readItems(']', v)
	case c == '(':
		r.pos++
		v.kind = ednList
		v.items, err = r.readItems(')', v)
	case c == '#':
		return r.readDispatch(v)
	case c == '"':
		v.kind = ednString
		v.s, err = r.readString()
	case c == '\\':
		v.kind = ednChar
		v.s, err = r.readChar()
	case c == ':':
		r.pos++
		v.kind = ednKeyword
		v.s = r.token()
		if v.s == "" || v.s[0] == ':' {
			return v, errorf(r.name, v.line, v.col, "a keyword needs a name after the colon")
		}
	case c >= '0' && c <= '9' || (c == '+' || c == '-') && r.pos+1 < len(r.data) && isDigit(r.data[r.pos+1]):
		err = r.readNumber(&v)
	case isTokenChar(c):
		s := r.token()
		switch s {
		case "nil":
			v.kind = ednNil
		case "true":
			v.kind, v.i = ednBool, 1
		case "false":
			v.kind = ednBool
		default:
			v.kind, v.s = ednSymbol, s
		}
	case c == ')' || c == ']' || c == '}':
		return v, r.errHere("unexpected %q: nothing to close", c)
	default:
		return v, r.errHere("unexpected character %s", quoteRune(r.data[r.pos:]))
	}
	return v, err
}

// readItems reads forms up to the closing byte; pos is past the opening
// one, and open is the collection being read.
func (r *ednReader) readItems(closing byte, open ednValue) ([]ednValue, error) {
	if err := r.enter(); err != nil {
		return nil, err
	}
	// The items go on r.stack, shared by all collections, and are copied
	// out once their number is known.
	mark := len(r.stack)
	defer func() { r.stack = r.stack[:mark] }()
	for {
		if err := r.skipSpace(); err != nil {
			return nil, err
		}
		if r.atEnd() {
			return nil, r.errHere("unexpected end of input: the %s opened at line %d, column %d is not closed", open.kind, open.line, open.col)
		}
		if c := r.data[r.pos]; c == closing {
			r.pos++
			r.depth--
			if len(r.stack) == mark {
				return nil, nil
			}
			start := len(r.arena)
			r.arena = append(r.arena, r.stack[mark:]...)
			return r.arena[start:len(r.arena):len(r.arena)], nil
		} else if c == ')' || c == ']' || c == '}' {
			return nil, r.errHere("unexpected %q: the %s opened at line %d, column %d closes with %q", c, open.kind, open.line, open.col, closing)
		}
		v, err := r.read()
		if err != nil {
			return nil, err
		}
		r.stack = append(r.stack, v)
	}
}

// readDispatch reads a form that starts with '#': a set, a tagged literal
// (which reads as its value) or a symbolic number (##Inf). #_ is handled
// by skipSpace.
func (r *ednReader) readDispatch(v ednValue) (ednValue, error) {
	if r.pos+1 >= len(r.data) {
		return v, r.errHere("unexpected end of input after #")
	}
	switch c := r.data[r.pos+1]; {
	case c == '{':
		r.pos += 2
		items, err := r.readItems('}', ednValue{kind: ednSet, line: v.line, col: v.col})
		v.kind, v.items = ednSet, items
		return v, err
	case c == '_':
		if err := r.skipSpace(); err != nil {
			return v, err
		}
		if r.atEnd() {
			return v, r.errHere("unexpected end of input: expected a form")
		}
		return r.read()
	case c == '#':
		r.pos += 2
		s := r.token()
		if s != "Inf" && s != "-Inf" && s != "NaN" {
			return v, errorf(r.name, v.line, v.col, "unknown symbolic value ##%s", s)
		}
		v.kind, v.s = ednNumber, "##"+s
		return v, nil
	case isLetter(c):
		r.pos++
		tag := r.token()
		if err := r.enter(); err != nil {
			return v, err
		}
		inner, err := r.readForm("a form after the tag #" + tag)
		if err != nil {
			return v, err
		}
		r.depth--
		return inner, nil
	default:
		return v, r.errHere("unsupported dispatch #%s", quoteRune(r.data[r.pos+1:]))
	}
}
