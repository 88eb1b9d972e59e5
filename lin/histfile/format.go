package histfile

import (
	"bytes"
	"fmt"
)

// Format names a history file format.
type Format string

// The formats Parse reads.
const (
	// JSON is the package's own format: {"model": ..., "init": ...,
	// "ops": [...]}, one object per operation with explicit positions.
	JSON Format = "json"
	// EDN is Jepsen's EDN history: one map per event
	// ({:process 0, :type :invoke, :f :read, :value nil}), one per line
	// or all in one vector or list.
	EDN Format = "edn"
	// EtcdLog is the Jepsen etcd logs of porcupine's tests, one event per
	// line: "INFO  jepsen.util - 3\t:invoke\t:cas\t[1 4]".
	EtcdLog Format = "etcd-log"
)

// Formats lists the formats Parse reads.
func Formats() []Format { return []Format{JSON, EDN, EtcdLog} }

// ParseFormat returns the format named s ("json", "edn", "etcd-log").
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats() {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("unknown history format %q (want json, edn or etcd-log)", s)
}

// The messages of Detect's errors.
const (
	unknownFormat = "cannot tell the format: expected JSON, Jepsen EDN or an etcd log"
	emptyFormat   = "cannot tell the format of an empty file: expected JSON, Jepsen EDN or an etcd log"
)

// formatError returns Detect's error for data.
func formatError(name string, data []byte) *Error {
	if len(bytes.TrimSpace(bytes.TrimPrefix(data, bom))) == 0 {
		return &Error{Name: name, Msg: emptyFormat}
	}
	return &Error{Name: name, Msg: unknownFormat}
}

// Detect says which format data is in, from its content (not its name):
// JSON when it opens with an object whose first key is a string (or an
// empty object), or an array whose first element is such an object; EDN
// when it opens with a map whose first key is a keyword, or a vector or
// list of such maps; EtcdLog when a line holds "jepsen.util". Blank lines
// and EDN comment lines (;) before the first form are skipped. The error
// is an *Error with no name (Parse adds it).
func Detect(data []byte) (Format, error) {
	if f := detect(data); f != "" {
		return f, nil
	}
	return "", formatError("", data)
}

// detect returns the format of data, or "" when it cannot tell.
func detect(data []byte) Format {
	data = bytes.TrimPrefix(data, bom)
	i := skipBlank(data, 0, true)
	if i < len(data) {
		switch data[i] {
		case '{':
			switch peek(data, i+1) {
			case '"', '}':
				return JSON
			case ':':
				return EDN
			}
		case '[', '(':
			if j := skipBlank(data, i+1, false); peek(data, j) == '{' {
				switch peek(data, j+1) {
				case ':':
					return EDN
				case '"':
					if data[i] == '[' {
						return JSON
					}
				}
			} else if data[i] == '[' && peek(data, j) == ']' || data[i] == '(' && peek(data, j) == ')' {
				return EDN // an empty vector or list
			}
		case '#':
			// A tagged record: #jepsen.history.Op{:index 0, ...}.
			j := i + 1
			for j < len(data) && isTokenChar(data[j]) {
				j++
			}
			if j > i+1 && peek(data, j) == '{' && peek(data, j+1) == ':' {
				return EDN
			}
		}
	}
	if bytes.Contains(data, []byte("jepsen.util")) {
		return EtcdLog
	}
	return ""
}

// bom is the UTF-8 byte order mark some editors put first.
var bom = []byte{0xEF, 0xBB, 0xBF}

// skipBlank returns the offset of the first byte at or after i that is
// not white space (EDN's commas included) and, when comments is set, not
// in a ;-comment.
func skipBlank(data []byte, i int, comments bool) int {
	for i < len(data) {
		switch c := data[i]; {
		case isSpace(c):
			i++
		case c == ';' && comments:
			for i < len(data) && data[i] != '\n' {
				i++
			}
		default:
			return i
		}
	}
	return i
}

// peek returns the first byte at or after i that is not white space, or
// 0 at the end of data.
func peek(data []byte, i int) byte {
	i = skipBlank(data, i, false)
	if i < len(data) {
		return data[i]
	}
	return 0
}

// isSpace reports whether c is white space in EDN (where commas are) and
// in JSON.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' || c == '\f' || c == '\v'
}
