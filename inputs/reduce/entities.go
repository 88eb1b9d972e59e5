package reduce

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
)

// Split cuts data into the entities ddmin removes, by kind:
//
//   - "bytes": one entity per byte;
//   - "lines": one per line, with its newline;
//   - "tokens:REGEX": one per match of the regular expression, and one for
//     each run of text between matches (so that joining the entities
//     gives data back).
//
// Joining the entities in order always gives data.
func Split(data []byte, kind string) ([][]byte, error) {
	switch {
	case kind == "bytes":
		out := make([][]byte, len(data))
		for i := range data {
			out[i] = data[i : i+1]
		}
		return out, nil
	case kind == "lines":
		var out [][]byte
		for len(data) > 0 {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				i = len(data) - 1
			}
			out = append(out, data[:i+1])
			data = data[i+1:]
		}
		return out, nil
	case strings.HasPrefix(kind, "tokens:"):
		expr := strings.TrimPrefix(kind, "tokens:")
		if expr == "" {
			return nil, fmt.Errorf("entities %q: want tokens:REGEX with a regular expression", kind)
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			return nil, fmt.Errorf("entities %q: %w", kind, err)
		}
		var out [][]byte
		at := 0
		for _, m := range re.FindAllIndex(data, -1) {
			if m[0] == m[1] {
				continue // an empty match is no entity
			}
			if m[0] > at {
				out = append(out, data[at:m[0]])
			}
			out = append(out, data[m[0]:m[1]])
			at = m[1]
		}
		if at < len(data) {
			out = append(out, data[at:])
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown entities %q (want bytes, lines or tokens:REGEX)", kind)
}

// Join concatenates entities.
func Join(entities [][]byte) []byte {
	return bytes.Join(entities, nil)
}
