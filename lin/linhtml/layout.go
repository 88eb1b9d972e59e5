package linhtml

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mgtrace/mgtrace/lin"
)

// The geometry of a timeline, in pixels. Labels are set in a 12px
// monospace font, about charW wide per character.
const (
	labelW   = 92 // the client names' column
	padL     = 14 // between it and the first position
	padR     = 20
	axisH    = 36 // position labels above the rows
	rowH     = 42
	barH     = 20
	barTop   = 14 // from a row's top to its bars
	charW    = 7.3
	minStep  = 48 // rank spacing when labels are short
	maxStep  = 160
	maxWidth = 16000 // wider timelines get narrower steps, down to 4px
	minBarW  = 6
	markerR  = 9
)

// drawOp is an operation to draw, as the page describes it.
type drawOp struct {
	op    lin.Op // pending (Return Never) when running at the cut
	desc  string
	title string
	class string
}

// timeline is an SVG drawing of operations against their positions.
type timeline struct {
	Width, Height int
	Caption       string
	Note          string
	Rows          []rowView
	Ticks         []tickView
	Band          *boxView // the failing operation's interval, all rows
	Cut           *tickView
	Bars          []barView
	Overlays      []overlayView

	positions []int64     // the distinct positions, ascending
	step      int         // pixels between neighbouring positions
	barOf     map[int]int // op ID -> index in Bars
}

type rowView struct {
	Y, TextY int
	Label    string
	Alt      bool
}

type tickView struct {
	X, Y1, Y2, TextY int
	Label            string
}

type boxView struct{ X, Y, W, H int }

type barView struct {
	ID           int
	Class, Title string
	X, Y, W, H   int
	Text         string
	TextX, TextY int
	Fail         bool // the operation that could not be placed: tagged
	TagY         int
}

// overlayView is one partial linearization drawn on the bars.
type overlayView struct {
	Index   int
	Points  string // the polyline through the markers, in order
	Markers []markerView
	Blocked *markerView
}

type markerView struct {
	X, Y, TextY int
	Label       string
	Title       string
}

// x returns the horizontal pixel of rank r.
func (t *timeline) x(r int) int { return labelW + padL + r*t.step }

// rank returns the index of position pos among the timeline's positions
// (the first at or after it).
func (t *timeline) rank(pos int64) int {
	return sort.Search(len(t.positions), func(i int) bool { return t.positions[i] >= pos })
}

// right is where bars that never returned end.
func (t *timeline) right() int { return t.x(len(t.positions)-1) + t.step }

// layout places ops on a timeline: one row per client, and the distinct
// call and return positions (and the cut) spaced evenly by rank, so that
// operations far apart in time take no more room than neighbours.
func layout(ops []drawOp, fail *lin.Op, cut int64) *timeline {
	t := &timeline{barOf: make(map[int]int, len(ops))}
	var clients []int
	seen := make(map[int]bool)
	pos := []int64{cut}
	for i := range ops {
		o := &ops[i].op
		pos = append(pos, o.Call)
		if o.Return != lin.Never {
			pos = append(pos, o.Return)
		}
		if !seen[o.Client] {
			seen[o.Client] = true
			clients = append(clients, o.Client)
		}
	}
	sort.Slice(pos, func(a, b int) bool { return pos[a] < pos[b] })
	for i, p := range pos {
		if i == 0 || p != pos[i-1] {
			t.positions = append(t.positions, p)
		}
	}
	sort.Ints(clients)
	row := make(map[int]int, len(clients))
	for i, c := range clients {
		row[c] = i
	}

	// A step wide enough for the widest label over its bar's ranks.
	need := float64(minStep)
	for i := range ops {
		o := &ops[i].op
		if o.Return == lin.Never {
			continue
		}
		span := max(t.rank(o.Return)-t.rank(o.Call), 1)
		w := float64(utf8.RuneCountInString(ops[i].desc))*charW + 12
		need = math.Max(need, w/float64(span))
	}
	t.step = min(int(math.Ceil(need)), maxStep)
	if n := len(t.positions); n*t.step > maxWidth {
		t.step = max(4, maxWidth/n)
	}
	t.Width = t.right() + padR
	t.Height = axisH + len(clients)*rowH + 6

	for i, c := range clients {
		y := axisH + i*rowH
		t.Rows = append(t.Rows, rowView{Y: y, TextY: y + barTop + barH/2 + 4, Label: "client " + strconv.Itoa(c), Alt: i%2 == 1})
	}
	t.ticks()
	if fail != nil && fail.Return != lin.Never {
		x0, x1 := t.x(t.rank(fail.Call)), t.x(t.rank(fail.Return))
		t.Band = &boxView{X: x0, Y: axisH, W: max(x1-x0, minBarW), H: len(clients) * rowH}
	}
	xc := t.x(t.rank(cut))
	t.Cut = &tickView{X: xc, Y1: axisH - 4, Y2: t.Height - 2, TextY: axisH - 22, Label: "cut"}

	for i := range ops {
		d := &ops[i]
		o := &d.op
		x0 := t.x(t.rank(o.Call))
		x1 := t.right()
		if o.Return != lin.Never {
			x1 = t.x(t.rank(o.Return))
		}
		if x1-x0 < minBarW {
			x0 -= (minBarW - (x1 - x0)) / 2
			x1 = x0 + minBarW
		}
		y := axisH + row[o.Client]*rowH + barTop
		b := barView{ID: o.ID, Class: d.class, Title: d.title, X: x0, Y: y, W: x1 - x0, H: barH,
			TextX: x0 + 5, TextY: y + barH/2 + 4, TagY: y - 3,
			Fail: fail != nil && o.ID == fail.ID}
		b.Text = fit(d.desc, b.W-10)
		t.barOf[o.ID] = len(t.Bars)
		t.Bars = append(t.Bars, b)
	}
	return t
}

// ticks labels the positions along the top, as many as fit.
func (t *timeline) ticks() {
	widest := 1
	for _, p := range t.positions {
		widest = max(widest, len(strconv.FormatInt(p, 10)))
	}
	every := max(1, int(math.Ceil((float64(widest)*6.2+10)/float64(t.step))))
	for r, p := range t.positions {
		if r%every != 0 {
			continue
		}
		x := t.x(r)
		t.Ticks = append(t.Ticks, tickView{X: x, Y1: axisH - 4, Y2: t.Height - 2, TextY: axisH - 8, Label: strconv.FormatInt(p, 10)})
	}
}

// fit shortens s to about w pixels of the label font, with an ellipsis;
// "" when not even a few characters fit.
func fit(s string, w int) string {
	n := int(float64(w) / charW)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n < 4 {
		return ""
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// overlay draws partial linearization k on the bars: a numbered marker
// per operation, in order, each on its bar and to the right of the one
// before (the linearization points), and a cross on the operation that
// could not be placed next. Operations not drawn (left out by MaxOps) get
// no marker.
func (t *timeline) overlay(k int, pt lin.Partial, describe func(int) string) overlayView {
	ov := overlayView{Index: k}
	prev := math.MinInt
	place := func(b *barView) (int, int) {
		lo, hi := b.X+markerR, b.X+b.W-markerR
		if hi < lo {
			lo = b.X + b.W/2
			hi = lo
		}
		x := lo
		if prev != math.MinInt {
			x = max(x, prev+2*markerR+2)
		}
		x = min(x, hi)
		prev = x
		return x, b.Y + b.H/2
	}
	var pts []string
	for j, id := range pt.Ops {
		bi, ok := t.barOf[id]
		if !ok {
			continue
		}
		x, y := place(&t.Bars[bi])
		state := ""
		if j < len(pt.States) {
			state = pt.States[j]
		}
		ov.Markers = append(ov.Markers, markerView{X: x, Y: y, TextY: y + 4, Label: strconv.Itoa(j + 1),
			Title: fmt.Sprintf("linearization point %d: %s\nstate after it: %s", j+1, describe(id), state)})
		pts = append(pts, fmt.Sprintf("%d,%d", x, y))
	}
	if bi, ok := t.barOf[pt.Blocked]; ok && pt.Blocked >= 0 {
		x, y := place(&t.Bars[bi])
		where := "first, in the initial state"
		if n := len(pt.Ops); n > 0 && n == len(pt.States) {
			where = fmt.Sprintf("after linearization point %d, in state %s", n, pt.States[n-1])
		} else if n > 0 {
			where = fmt.Sprintf("after linearization point %d", n)
		}
		ov.Blocked = &markerView{X: x, Y: y, TextY: y + 4, Label: "✕",
			Title: fmt.Sprintf("%s could not be placed %s: every way of placing it next failed", describe(pt.Blocked), where)}
		pts = append(pts, fmt.Sprintf("%d,%d", x, y))
	}
	ov.Points = strings.Join(pts, " ")
	return ov
}
