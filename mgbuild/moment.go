package mgbuild

import (
	"fmt"
	"strconv"
	"strings"
)

// At resolves a moment of the run to a timestamp:
//
//	end        the final graph
//	N          timestamp N (the graph after change N)
//	seq:N      the graph once trace event N had run
//	cpoint:N   the graph at the N-th C-point (from 1) the program reported
//	mark:NAME  the graph at the first marker called NAME
func (g *Graph) At(spec string) (TS, error) {
	kind, arg, hasArg := strings.Cut(spec, ":")
	switch {
	case spec == "end" || spec == "":
		return g.Last(), nil
	case !hasArg:
		n, err := strconv.ParseUint(spec, 10, 32)
		if err != nil {
			return 0, fmt.Errorf("moment %q: want end, a timestamp, seq:N, cpoint:N or mark:NAME", spec)
		}
		if n > uint64(g.Last()) {
			return 0, fmt.Errorf("moment %q: the graph has %d changes", spec, g.Last())
		}
		return TS(n), nil
	case kind == "seq":
		n, err := strconv.ParseUint(arg, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("moment %q: bad sequence number", spec)
		}
		if n > g.Stats.LastSeq {
			return 0, fmt.Errorf("moment %q: the trace's last event is %d", spec, g.Stats.LastSeq)
		}
		return g.AtSeq(n), nil
	case kind == "cpoint":
		n, err := strconv.Atoi(arg)
		if err != nil || n < 1 {
			return 0, fmt.Errorf("moment %q: C-points are numbered from 1", spec)
		}
		k := 0
		for _, p := range g.Points {
			if !p.Mark {
				k++
				if k == n {
					return p.TS, nil
				}
			}
		}
		return 0, fmt.Errorf("moment %q: the trace has %d C-points", spec, k)
	case kind == "mark":
		for _, p := range g.Points {
			if p.Mark && p.Name == arg {
				return p.TS, nil
			}
		}
		return 0, fmt.Errorf("moment %q: no marker called %q", spec, arg)
	}
	return 0, fmt.Errorf("moment %q: want end, a timestamp, seq:N, cpoint:N or mark:NAME", spec)
}
