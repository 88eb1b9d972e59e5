package lin

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// WriteText writes a report of res for people: the verdict, and for a
// history that is not linearizable the operation that could not be
// placed, the counterexample as a timeline and a table, and the longest
// partial linearizations.
func WriteText(w io.Writer, m Model, res *Result) error {
	var b strings.Builder
	src := ""
	if res.Source != "" {
		src = " of " + res.Source
	}
	parts := ""
	if res.Partitions > 1 {
		parts = fmt.Sprintf(", %d partitions", res.Partitions)
	}
	opt := ""
	if res.Optional > 0 {
		opt = fmt.Sprintf(" (%d may not have taken effect)", res.Optional)
	}
	fmt.Fprintf(&b, "%s: %d operations%s%s, model %s%s; %s\n", res.Verdict, res.Operations, opt, src, res.Model, parts, round(res.Stats.Elapsed))
	switch res.Verdict {
	case Undecided:
		fmt.Fprintf(&b, "The search did not finish in time: %d of %d partitions decided", res.Decided, res.Partitions)
		if len(res.UndecidedKeys) > 0 && res.Partitions > 1 {
			fmt.Fprintf(&b, "; undecided: %s", strings.Join(quoteAll(res.UndecidedKeys), ", "))
		}
		b.WriteString(". Give it more time with --timeout.\n")
	case NotLinearizable:
		if cx := res.Counterexample; cx != nil {
			writeCounterexample(&b, m, cx)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func quoteAll(keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = fmt.Sprintf("%q", k)
	}
	return out
}

func round(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}

func writeCounterexample(b *strings.Builder, m Model, cx *Counterexample) {
	byID := make(map[int]*Op, len(cx.Operations))
	for i := range cx.Operations {
		byID[cx.Operations[i].ID] = &cx.Operations[i]
	}
	f := byID[cx.Failing]
	if f == nil {
		return
	}
	b.WriteString("\nThe operation that could not be placed:\n")
	fmt.Fprintf(b, "  %s  (client %d%s)\n", DescribeOp(m, f), f.Client, at(f))
	overlap, earlier := 0, 0
	for i := range cx.Operations {
		o := &cx.Operations[i]
		switch {
		case o.ID == f.ID:
		case o.Precedes(f):
			earlier++
		default:
			overlap++
		}
	}
	key := ""
	if cx.Partition != "" {
		key = fmt.Sprintf(" on key %s", cx.Partition)
	}
	from := "the initial state " + cx.Init
	switch {
	case cx.Before > 0 && len(cx.Start) == 1:
		from = fmt.Sprintf("the state %s, which the %s before them leave", cx.Start[0], plural(cx.Before, "operation"))
	case cx.Before > 0:
		from = fmt.Sprintf("any of the states %s, which the %s before them can leave", strings.Join(cx.Start, ", "), plural(cx.Before, "operation"))
	}
	fmt.Fprintf(b, "No order of the operations up to its response%s explains its output from %s.\n", key, from)
	what := "Counterexample"
	if !cx.Minimal {
		what = "Counterexample (not minimised: time ran out)"
	}
	fmt.Fprintf(b, "\n%s: %s: the one above, %d that overlap it, %d earlier ones it needs\n", what, plural(len(cx.Operations), "operation"), overlap, earlier)
	b.WriteString("(operations still running when it returned are shown pending):\n\n")
	writeTimeline(b, m, cx.Operations, f.ID)
	b.WriteString("\n")
	for i := range cx.Operations {
		o := &cx.Operations[i]
		mark := ""
		if o.ID == f.ID {
			mark = "   <- could not be placed"
		}
		fmt.Fprintf(b, "  #%-4d client %-3d %-12s %s%s%s\n", o.ID, o.Client, interval(o), DescribeOp(m, o), at(o), mark)
	}
	if len(cx.Longest) > 0 {
		fmt.Fprintf(b, "\nLongest partial linearizations (orders the model accepts, after which nothing fits):\n")
		for k, p := range cx.Longest {
			fmt.Fprintf(b, "  %d. ", k+1)
			if len(cx.Start) > 1 {
				fmt.Fprintf(b, "from %s: ", p.Start)
			}
			if len(p.Ops) == 0 {
				fmt.Fprintf(b, "(none: not even a first operation fits)")
			}
			for i, id := range p.Ops {
				if i > 0 {
					b.WriteString("; ")
				}
				if o := byID[id]; o != nil {
					fmt.Fprintf(b, "%s => %s", DescribeOp(m, o), p.States[i])
				}
			}
			if o := byID[p.Blocked]; o != nil {
				fmt.Fprintf(b, "; then %s cannot be placed", DescribeOp(m, o))
			}
			b.WriteString("\n")
		}
	}
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func at(o *Op) string {
	if o.Source == "" {
		return ""
	}
	return ", " + o.Source
}

func interval(o *Op) string {
	if o.Return == Never {
		return fmt.Sprintf("[%d, -)", o.Call)
	}
	return fmt.Sprintf("[%d, %d]", o.Call, o.Return)
}

// writeTimeline draws the operations as bars, one row per client, on a
// scale of their distinct positions (so that far-apart positions do not
// squeeze the rest). Large counterexamples get no drawing.
func writeTimeline(b *strings.Builder, m Model, ops []Op, failing int) {
	if len(ops) > 24 {
		return
	}
	var pos []int64
	for i := range ops {
		pos = append(pos, ops[i].Call)
		if ops[i].Return != Never {
			pos = append(pos, ops[i].Return)
		}
	}
	sort.Slice(pos, func(a, b int) bool { return pos[a] < pos[b] })
	rank := make(map[int64]int)
	for _, p := range pos {
		if _, ok := rank[p]; !ok {
			rank[p] = len(rank)
		}
	}
	const step = 4
	width := (len(rank)+1)*step + 2
	var clients []int
	rows := make(map[int][]*Op)
	for i := range ops {
		o := &ops[i]
		if rows[o.Client] == nil {
			clients = append(clients, o.Client)
		}
		rows[o.Client] = append(rows[o.Client], o)
	}
	sort.Ints(clients)
	for _, c := range clients {
		line := []byte(strings.Repeat(" ", width))
		var labels []string
		for _, o := range rows[c] {
			x0 := rank[o.Call] * step
			x1 := width - 1
			if o.Return != Never {
				x1 = rank[o.Return] * step
			}
			for x := x0; x <= x1 && x < width; x++ {
				line[x] = '-'
			}
			line[x0] = '|'
			if o.Return != Never {
				line[x1] = '|'
			} else {
				line[x1] = '>'
			}
			if o.ID == failing {
				for x := x0 + 1; x < x1; x++ {
					line[x] = '='
				}
			}
			labels = append(labels, fmt.Sprintf("#%d %s", o.ID, DescribeOp(m, o)))
		}
		fmt.Fprintf(b, "  client %-3d %s  %s\n", c, line, strings.Join(labels, ", "))
	}
}
