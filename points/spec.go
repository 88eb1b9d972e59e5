package points

import (
	"fmt"
	"strconv"
	"strings"
)

// Spec is a source line and which of its instances: FILE:LINE, FILE:LINE#N
// or FILE:LINE#all.
type Spec struct {
	File string // as the user gave it: matched by suffix
	Line int    // from 1
	// Instance is the instance number, from 1; 0 with All.
	Instance uint64
	// All selects every instance.
	All bool
}

// ParseSpec parses FILE:LINE[#N|#all]; N defaults to 1.
func ParseSpec(s string) (Spec, error) {
	body, inst, hasInst := strings.Cut(s, "#")
	i := strings.LastIndexByte(body, ':')
	if i <= 0 || i == len(body)-1 {
		return Spec{}, fmt.Errorf("%q: want FILE:LINE, FILE:LINE#N or FILE:LINE#all", s)
	}
	line, err := strconv.Atoi(body[i+1:])
	if err != nil || line <= 0 {
		return Spec{}, fmt.Errorf("%q: the line must be a number from 1, not %q", s, body[i+1:])
	}
	sp := Spec{File: body[:i], Line: line, Instance: 1}
	if hasInst {
		switch {
		case inst == "all":
			sp.All, sp.Instance = true, 0
		default:
			n, err := strconv.ParseUint(inst, 10, 64)
			if err != nil || n == 0 {
				return Spec{}, fmt.Errorf("%q: the instance after # must be a number from 1 or \"all\", not %q", s, inst)
			}
			sp.Instance = n
		}
	}
	return sp, nil
}

// String formats the spec as ParseSpec reads it, with the instance always
// written out.
func (s Spec) String() string {
	if s.All {
		return fmt.Sprintf("%s:%d#all", s.File, s.Line)
	}
	return fmt.Sprintf("%s:%d#%d", s.File, s.Line, s.Instance)
}

// Selects reports whether instance n (from 1) is one the spec names.
func (s Spec) Selects(n uint64) bool { return s.All || n == s.Instance }
