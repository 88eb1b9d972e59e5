// Package linhtml writes the result of a linearizability check (package
// lin) as one self-contained HTML page: inline CSS and SVG, no script, no
// font, image or style sheet loaded from anywhere, so that the file can be
// mailed, attached to a bug report and opened from disk.
//
// For a history that is not linearizable the page shows the
// counterexample as a timeline (one row per client, one bar per operation
// from its call to its return), marks the operation that could not be
// placed and the operations that overlap it, and draws each of the
// longest partial linearizations the checker kept: the linearization
// points in order, the model's state after each, and the operation at
// which every order got stuck. For a linearizable or undecided history it
// is a short page with the verdict and the counts.
//
// Everything is rendered in Go with html/template: operation names,
// values and sources come from user logs and are escaped like any other
// text. The output depends only on the arguments, so it can be compared
// with a golden file.
package linhtml

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/mgtrace/mgtrace/lin"
)

// DefaultMaxOps is the number of operations drawn on one timeline when
// Options.MaxOps is not set.
const DefaultMaxOps = 2000

// Options control the page.
type Options struct {
	// WholeHistory adds a second timeline below the counterexample: every
	// operation of the failing partition called up to the cut, greyed,
	// with the counterexample's operations emphasised. It needs the model
	// and the history.
	WholeHistory bool
	// MaxOps caps the operations drawn on one timeline (default
	// DefaultMaxOps). When a timeline holds more, the operation that could
	// not be placed, those overlapping it and then those called last are
	// kept, and the page says how many were left out.
	MaxOps int
}

// Write writes the page for res, the result of checking h against m, to
// w. m formats the operations (lin.DescribeOp; nil: Op.Describe) and h
// supplies the return positions of operations that were still running at
// the cut; both may be nil unless opt.WholeHistory is set. The error says
// what was missing or what could not be written.
func Write(w io.Writer, m lin.Model, h *lin.History, res *lin.Result, opt Options) error {
	if res == nil {
		return errors.New("linhtml: no result to write")
	}
	if opt.MaxOps <= 0 {
		opt.MaxOps = DefaultMaxOps
	}
	p, err := build(m, h, res, opt)
	if err != nil {
		return fmt.Errorf("linhtml: %w", err)
	}
	t, err := pageTemplate()
	if err != nil {
		return fmt.Errorf("linhtml: parsing the page template: %w", err)
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, p); err != nil {
		return fmt.Errorf("linhtml: rendering the page: %w", err)
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("linhtml: writing the page: %w", err)
	}
	return nil
}

// page is what the template renders.
type page struct {
	Title   string
	Heading string
	Class   string // "bad", "good" or "undecided": the heading's colour
	Facts   []fact
	Notes   []string
	Failing *failView
	// CX is the counterexample's timeline; Partials its longest partial
	// linearizations; Whole the failing partition's history up to the cut.
	CX       *timeline
	Partials []partialView
	Whole    *timeline
	CSS      string // trusted: built from constants and integers only
}

// fact is one line of the summary.
type fact struct{ Label, Value string }

// failView is the operation that could not be placed.
type failView struct {
	Desc, Source, Where string
}

// partialView is one longest partial linearization, as a list.
type partialView struct {
	Index    int
	Tab      string
	Init     string
	Steps    []stepView
	Blocked  string // the operation that could not be placed next ("" if none)
	Unplaced []string
}

// stepView is one operation of a partial linearization.
type stepView struct {
	Desc, State string
}

// build turns the check's result into the page.
func build(m lin.Model, h *lin.History, res *lin.Result, opt Options) (*page, error) {
	source := res.Source
	if source == "" && h != nil {
		source = h.Source
	}
	if source == "" {
		source = "(unnamed history)"
	}
	p := &page{}
	p.Facts = append(p.Facts,
		fact{"Verdict", string(res.Verdict)},
		fact{"Model", res.Model},
		fact{"History", source},
		fact{"Operations", fmt.Sprintf("%d (%d info or pending)", res.Operations, res.Optional)},
		fact{"Partitions", fmt.Sprintf("%d checked, %d decided", res.Partitions, res.Decided)},
	)
	if h != nil && h.Dropped > 0 {
		p.Facts = append(p.Facts, fact{"Dropped", fmt.Sprintf("%s known not to have taken effect (:fail) %s not in the history", operations(h.Dropped), isAre(h.Dropped))})
	}
	cx := res.Counterexample
	switch {
	case res.Verdict == lin.Linearizable:
		p.Heading, p.Class = "Linearizable", "good"
		p.Notes = append(p.Notes, fmt.Sprintf("Some order of the %d operations, consistent with their real-time order (an operation that returned before another was called comes first), is a run of the %s model. There is no counterexample to show.", res.Operations, res.Model))
	case res.Verdict == lin.Undecided:
		p.Heading, p.Class = "Unknown", "undecided"
		p.Notes = append(p.Notes, fmt.Sprintf("The search ran out of time (or was cancelled) before deciding %d of the %d partitions. This is not a verdict of linearizable: no order was found, and none was ruled out.", res.Partitions-res.Decided, res.Partitions))
		if len(res.UndecidedKeys) > 0 {
			keys := res.UndecidedKeys
			more := ""
			if len(keys) > 50 {
				more = fmt.Sprintf(" and %d more", len(keys)-50)
				keys = keys[:50]
			}
			p.Facts = append(p.Facts, fact{"Undecided", quoteKeys(keys) + more})
		}
	case cx == nil:
		p.Heading, p.Class = "Not linearizable", "bad"
		p.Notes = append(p.Notes, "No order of the operations, consistent with their real-time order, is a run of the model. The check kept no counterexample (it ran with lin.Options.NoCounterexample), so there is nothing to draw.")
	default:
		p.Heading, p.Class = "Not linearizable", "bad"
		if err := buildCounterexample(p, m, h, res, opt); err != nil {
			return nil, err
		}
	}
	if p.Heading == "" {
		p.Heading, p.Class = "Verdict "+strconv.Quote(string(res.Verdict)), "undecided"
	}
	p.Title = fmt.Sprintf("%s: %s (%s)", p.Heading, source, res.Model)
	p.CSS = baseCSS + partialCSS(len(p.Partials))
	return p, nil
}

// operations says "1 operation" or "N operations".
func operations(n int) string {
	if n == 1 {
		return "1 operation"
	}
	return strconv.Itoa(n) + " operations"
}

// isAre is the verb for n things.
func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// quoteKeys formats partition keys.
func quoteKeys(keys []string) string {
	q := make([]string, len(keys))
	for i, k := range keys {
		q[i] = strconv.Quote(k)
	}
	return strings.Join(q, ", ")
}

// buildCounterexample fills in the counterexample's part of the page.
func buildCounterexample(p *page, m lin.Model, h *lin.History, res *lin.Result, opt Options) error {
	cx := res.Counterexample
	ops := cx.Operations
	if len(ops) == 0 && h != nil {
		// A result read back without its operations: take them from the
		// history, pending when still running at the cut.
		for _, id := range cx.Ops {
			if id < 0 || id >= len(h.Ops) {
				return fmt.Errorf("counterexample operation %d is not in the history (%d operations)", id, len(h.Ops))
			}
			ops = append(ops, atCut(h.Ops[id], cx.Cut))
		}
	}
	var fail *lin.Op
	for i := range ops {
		if ops[i].ID == cx.Failing {
			fail = &ops[i]
		}
	}
	if fail == nil && h != nil && cx.Failing >= 0 && cx.Failing < len(h.Ops) {
		fail = &h.Ops[cx.Failing]
	}
	if cx.Partition != "" {
		p.Facts = append(p.Facts, fact{"Partition", partitionName(cx, fail) + " (the sub-history that failed; each key was checked apart)"})
	}
	p.Facts = append(p.Facts, fact{"Initial state", cx.Init})
	switch {
	case cx.Before > 0 && len(cx.Start) == 1:
		p.Facts = append(p.Facts, fact{"Start", fmt.Sprintf("%s: the state the %s before the counterexample leave (they all returned before it began)", cx.Start[0], operations(cx.Before))})
	case cx.Before > 0:
		p.Facts = append(p.Facts, fact{"Start", fmt.Sprintf("any of %s: the states the %s before the counterexample can leave (they all returned before it began); it fails from each", strings.Join(cx.Start, ", "), operations(cx.Before))})
	}
	minimal := "minimal: without any one of its earlier operations it no longer shows this failure"
	if !cx.Minimal {
		minimal = "not minimised (minimisation was off or ran out of time): it may hold operations it does not need"
	}
	p.Facts = append(p.Facts,
		fact{"Counterexample", fmt.Sprintf("%s, %s", operations(len(ops)), minimal)},
		fact{"Cut", fmt.Sprintf("position %d, the response of the operation that could not be placed; operations still running then are pending", cx.Cut)},
	)
	if fail != nil {
		p.Failing = &failView{
			Desc:   lin.DescribeOp(m, fail),
			Source: sourceOf(fail),
			Where:  fmt.Sprintf("client %d, called at %d, returned at %d", fail.Client, fail.Call, fail.Return),
		}
	}

	var orig map[int]*lin.Op
	if h != nil {
		orig = make(map[int]*lin.Op, len(ops))
		for i := range ops {
			if id := ops[i].ID; id >= 0 && id < len(h.Ops) {
				orig[id] = &h.Ops[id]
			}
		}
	}
	in := make(map[int][]int)  // op ID -> partials that place it
	blk := make(map[int][]int) // op ID -> partials it blocks
	for k, pt := range cx.Longest {
		for _, id := range pt.Ops {
			in[id] = append(in[id], k)
		}
		if pt.Blocked >= 0 {
			blk[pt.Blocked] = append(blk[pt.Blocked], k)
		}
	}
	keep := capOps(ops, fail, nil, opt.MaxOps)
	draw := make([]drawOp, 0, len(keep))
	for _, i := range keep {
		o := ops[i]
		d := drawOp{op: o, desc: describe(m, &o, orig[o.ID])}
		d.class = opClasses(&o, orig[o.ID], fail)
		for _, k := range in[o.ID] {
			d.class += " in-" + strconv.Itoa(k)
		}
		for _, k := range blk[o.ID] {
			d.class += " blk-" + strconv.Itoa(k)
		}
		d.title = opTitle(&o, orig[o.ID], d.desc, fail, cx.Cut)
		draw = append(draw, d)
	}
	tl := layout(draw, fail, cx.Cut, len(cx.Longest) > 0)
	if len(keep) < len(ops) {
		tl.Note = fmt.Sprintf("Showing %d of the counterexample's %d operations (at most %d are drawn: the one that could not be placed, those overlapping it, then those called last). The lists of the linearizations are complete.", len(keep), len(ops), opt.MaxOps)
	}
	byID := make(map[int]*lin.Op, len(ops))
	for i := range ops {
		byID[ops[i].ID] = &ops[i]
	}
	describeID := func(id int) string {
		if o, ok := byID[id]; ok {
			return describe(m, o, orig[id])
		}
		if h != nil && id >= 0 && id < len(h.Ops) {
			return lin.DescribeOp(m, &h.Ops[id])
		}
		return fmt.Sprintf("operation %d", id)
	}
	for k, pt := range cx.Longest {
		pv := partialView{Index: k, Init: cx.Init}
		if pt.Start != "" {
			pv.Init = pt.Start
		}
		placed := make(map[int]bool, len(pt.Ops))
		for j, id := range pt.Ops {
			st := ""
			if j < len(pt.States) {
				st = pt.States[j]
			}
			pv.Steps = append(pv.Steps, stepView{Desc: describeID(id), State: st})
			placed[id] = true
		}
		if pt.Blocked >= 0 {
			pv.Blocked = describeID(pt.Blocked)
		}
		for i := range ops {
			if id := ops[i].ID; !placed[id] && id != pt.Blocked {
				pv.Unplaced = append(pv.Unplaced, describeID(id))
			}
		}
		pv.Tab = fmt.Sprintf("Linearization %d: %d of %s placed", k+1, len(pt.Ops), operations(len(ops)))
		p.Partials = append(p.Partials, pv)
		tl.Overlays = append(tl.Overlays, tl.overlay(k, pt, describeID))
	}
	p.CX = tl

	if opt.WholeHistory {
		whole, err := wholeTimeline(m, h, cx, ops, fail, opt)
		if err != nil {
			return err
		}
		p.Whole = whole
	}
	return nil
}

// partitionName names the failing partition: the models' partition keys
// are the values' own text (a kv key, a set element).
func partitionName(cx *lin.Counterexample, fail *lin.Op) string {
	if fail != nil && !fail.Key.IsNil() {
		return "key " + fail.Key.String()
	}
	return "partition " + cx.Partition
}

// atCut returns o as the history up to cut sees it: pending when it was
// still running then.
func atCut(o lin.Op, cut int64) lin.Op {
	if o.Return > cut {
		o.Status, o.Return, o.Output = lin.Pending, lin.Never, lin.Value{}
	}
	return o
}

// describe formats an operation as drawn (o, pending when it was running
// at the cut), or as the history has it (orig) when it is info there: the
// checker treats info and pending alike, but people read "info" in their
// logs.
func describe(m lin.Model, o, orig *lin.Op) string {
	if orig != nil && orig.Status == lin.Info {
		return lin.DescribeOp(m, orig)
	}
	return lin.DescribeOp(m, o)
}

// sourceOf names where an operation comes from.
func sourceOf(o *lin.Op) string {
	if o.Source != "" {
		return o.Source
	}
	return fmt.Sprintf("operation %d of the history", o.ID)
}

// opClasses returns the CSS classes of an operation's bar: its status
// (the history's info when orig is info, and "cutrun" when it returned
// after the cut), and whether it is the one that could not be placed or
// overlaps it.
func opClasses(o, orig *lin.Op, fail *lin.Op) string {
	st := o.Status
	if orig != nil && orig.Status == lin.Info {
		st = lin.Info
	}
	c := "op st-" + st.String()
	if o.Return == lin.Never && orig != nil && orig.Return != lin.Never {
		c += " cutrun"
	}
	switch {
	case fail != nil && o.ID == fail.ID:
		c += " fail"
	case fail != nil && o.Overlaps(fail):
		c += " ovl"
	}
	return c
}

// opTitle is an operation's tooltip. o is the operation as drawn (pending
// when it was running at the cut), orig the history's (nil if unknown).
func opTitle(o, orig *lin.Op, desc string, fail *lin.Op, cut int64) string {
	var b strings.Builder
	b.WriteString(desc)
	fmt.Fprintf(&b, "\nclient %d, called at %d, ", o.Client, o.Call)
	switch {
	case o.Status == lin.Info:
		b.WriteString("info: outcome unknown, it may or may not have taken effect")
	case o.Status == lin.Pending && orig != nil && orig.Return != lin.Never:
		fmt.Fprintf(&b, "still running at the cut (%d): it returned later, at %d, so here it is pending and may or may not have taken effect", cut, orig.Return)
	case o.Status == lin.Pending && orig != nil && orig.Status == lin.Info:
		b.WriteString("info: outcome unknown, it may or may not have taken effect")
	case o.Status == lin.Pending:
		b.WriteString("pending (never returned): it may or may not have taken effect")
	case o.Status == lin.Unknown:
		fmt.Fprintf(&b, "returned at %d, output unknown", o.Return)
	default:
		fmt.Fprintf(&b, "returned at %d", o.Return)
	}
	if o.Source != "" {
		b.WriteString("\nsource: " + o.Source)
	}
	switch {
	case fail != nil && o.ID == fail.ID:
		b.WriteString("\nthis operation could not be placed: no order of the operations before its response explains it")
	case fail != nil && o.Overlaps(fail):
		b.WriteString("\noverlaps the operation that could not be placed")
	}
	return b.String()
}

// capOps returns the indexes of the operations of ops to draw, at most
// max, in order: the failing operation, those overlapping it, those in
// emph, then the others, latest call first within each group.
func capOps(ops []lin.Op, fail *lin.Op, emph map[int]bool, max int) []int {
	idx := make([]int, len(ops))
	for i := range idx {
		idx[i] = i
	}
	if len(ops) <= max {
		return idx
	}
	tier := func(o *lin.Op) int {
		switch {
		case fail != nil && o.ID == fail.ID:
			return 0
		case fail != nil && o.Overlaps(fail):
			return 1
		case emph[o.ID]:
			return 2
		}
		return 3
	}
	sort.SliceStable(idx, func(a, b int) bool {
		x, y := &ops[idx[a]], &ops[idx[b]]
		if tx, ty := tier(x), tier(y); tx != ty {
			return tx < ty
		}
		return x.Call > y.Call
	})
	idx = idx[:max]
	sort.Ints(idx)
	return idx
}

// wholeTimeline draws the failing partition of h up to the cut.
func wholeTimeline(m lin.Model, h *lin.History, cx *lin.Counterexample, cxOps []lin.Op, fail *lin.Op, opt Options) (*timeline, error) {
	if m == nil || h == nil {
		return nil, errors.New("the whole-history view needs the model and the history")
	}
	ids, err := partitionIDs(m, h, cx.Partition)
	if err != nil {
		return nil, err
	}
	var ops []lin.Op
	for _, id := range ids {
		if h.Ops[id].Call <= cx.Cut {
			ops = append(ops, atCut(h.Ops[id], cx.Cut))
		}
	}
	inCX := make(map[int]bool, len(cxOps))
	for i := range cxOps {
		inCX[cxOps[i].ID] = true
	}
	keep := capOps(ops, fail, inCX, opt.MaxOps)
	draw := make([]drawOp, 0, len(keep))
	for _, i := range keep {
		o := ops[i]
		d := drawOp{op: o, desc: describe(m, &o, &h.Ops[o.ID])}
		d.class = opClasses(&o, &h.Ops[o.ID], fail)
		if inCX[o.ID] {
			d.class += " cxop"
		} else {
			d.class += " ctx"
		}
		d.title = opTitle(&o, &h.Ops[o.ID], d.desc, fail, cx.Cut)
		if !inCX[o.ID] {
			d.title += "\nnot in the counterexample"
		}
		draw = append(draw, d)
	}
	tl := layout(draw, fail, cx.Cut, false)
	if len(keep) < len(ops) {
		tl.Note = fmt.Sprintf("Showing %d of the %d operations called up to the cut (at most %d are drawn: the one that could not be placed, those overlapping it, the counterexample's, then those called last).", len(keep), len(ops), opt.MaxOps)
	}
	what := "the history"
	if cx.Partition != "" {
		what = partitionName(cx, fail)
	}
	tl.Caption = fmt.Sprintf("Every operation of %s called up to the cut (%d), greyed; the counterexample's %s %s emphasised.", what, cx.Cut, operations(len(cxOps)), isAre(len(cxOps)))
	return tl, nil
}

// partitionIDs returns the IDs of h's operations in the partition with
// the given key, as the checker splits them: all of them when the model
// does not partition or an operation touches every key.
func partitionIDs(m lin.Model, h *lin.History, key string) ([]int, error) {
	all := make([]int, len(h.Ops))
	for i := range all {
		all[i] = i
	}
	pm, ok := m.(lin.Partitioner)
	if !ok {
		return all, nil
	}
	var ids []int
	for i := range h.Ops {
		a, err := m.Action(&h.Ops[i])
		if err != nil {
			return nil, fmt.Errorf("finding the failing partition: %w", &lin.ActionError{Op: i, Source: h.Ops[i].Source, Err: err})
		}
		k, ok := pm.PartitionKey(a)
		if !ok {
			return all, nil
		}
		if k == key {
			ids = append(ids, i)
		}
	}
	return ids, nil
}
