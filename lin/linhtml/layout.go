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
	labelW  = 92 // the client names' column
	padL    = 14 // between it and the first position
	padR    = 20
	axisH   = 36 // position labels above the rows
	barTop  = 14 // from a row's top to its bars: room for the failing one's tag
	barH    = 20
	barGap  = 8  // below the bars of a row, when no markers are drawn
	laneH   = 24 // below the bars of a row: the lane of the linearization points
	charW   = 7.3
	tagW    = 118 // "could not be placed", 10px bold
	minStep = 48  // rank spacing when labels are short
	maxStep = 160
	// A timeline wider than fitWidth (it fits a window about 1280 pixels
	// wide) gets narrower steps, down to fitStep, and labels that no
	// longer fit are written after their bars or shortened. Only wider
	// ones scroll; those wider than maxWidth get narrower steps still,
	// down to 4 pixels.
	fitWidth = 1180
	fitStep  = 14
	maxWidth = 16000
	minBarW  = 6
	markerR  = 9
	// markerGap is the least distance from a linearization point's marker
	// to the one before, when they are in different rows.
	markerGap = 4
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
	rowH      int         // the height of a row
	lanes     bool        // whether rows have a lane for markers below their bars
	barOf     map[int]int // op ID -> index in Bars
}

type rowView struct {
	Y, H, TextY int
	Label       string
	Alt         bool
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
	// Under is the class of an opaque rectangle drawn below the bar (""
	// for none), so that a greyed bar still hides the lines behind it.
	Under        string
	Text         string
	TextX, TextY int
	Out          bool // the label is written after the bar, not on it
	Fail         bool // the operation that could not be placed: tagged
	TagX, TagY   int

	desc string
}

// overlayView is one partial linearization drawn on the timeline.
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

// textW is the width of s in the label font.
func textW(s string) int { return int(math.Ceil(float64(utf8.RuneCountInString(s)) * charW)) }

// layout places ops on a timeline: one row per client, and the distinct
// call and return positions (and the cut) spaced evenly by rank, so that
// operations far apart in time take no more room than neighbours. With
// lanes, each row has a lane below its bars for the markers of overlay.
func layout(ops []drawOp, fail *lin.Op, cut int64, lanes bool) *timeline {
	t := &timeline{barOf: make(map[int]int, len(ops)), lanes: lanes, rowH: barTop + barH + barGap}
	if lanes {
		t.rowH = barTop + barH + laneH
	}
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

	// A step wide enough for the widest label over its bar's ranks, but
	// no wider than fits the page when there are many positions.
	need := float64(minStep)
	for i := range ops {
		o := &ops[i].op
		if o.Return == lin.Never {
			continue
		}
		span := max(t.rank(o.Return)-t.rank(o.Call), 1)
		need = math.Max(need, float64(textW(ops[i].desc)+12)/float64(span))
	}
	n := len(t.positions)
	t.step = min(int(math.Ceil(need)), maxStep)
	if fixed := labelW + padL + padR; fixed+n*t.step > fitWidth {
		t.step = max(fitStep, (fitWidth-fixed)/n)
	}
	if n*t.step > maxWidth {
		t.step = max(4, maxWidth/n)
	}
	t.Width = t.right() + padR
	t.Height = axisH + len(clients)*t.rowH + 6

	for i, c := range clients {
		y := axisH + i*t.rowH
		t.Rows = append(t.Rows, rowView{Y: y, H: t.rowH, TextY: y + barTop + barH/2 + 4, Label: "client " + strconv.Itoa(c), Alt: i%2 == 1})
	}
	if fail != nil && fail.Return != lin.Never {
		x0, x1 := t.x(t.rank(fail.Call)), t.x(t.rank(fail.Return))
		t.Band = &boxView{X: x0, Y: axisH, W: max(x1-x0, minBarW), H: len(clients) * t.rowH}
	}

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
		y := axisH + row[o.Client]*t.rowH + barTop
		b := barView{ID: o.ID, Class: d.class, Title: d.title, X: x0, Y: y, W: x1 - x0, H: barH,
			TextY: y + barH/2 + 4, TagX: x0, TagY: y - 3, desc: d.desc,
			Fail: fail != nil && o.ID == fail.ID}
		if lanes {
			b.Under = "under"
			if o.Return == lin.Never && strings.Contains(" "+d.class+" ", " st-pending ") {
				b.Under = "under fade"
			}
		}
		t.barOf[o.ID] = len(t.Bars)
		t.Bars = append(t.Bars, b)
	}
	t.labels()
	for i := range t.Bars {
		if b := &t.Bars[i]; b.Fail {
			b.TagX = max(min(b.X, t.Width-4-tagW), 0)
		}
	}
	t.ticks()
	t.Cut = &tickView{X: t.x(t.rank(cut)), Y1: axisH - 4, Y2: t.Height - 2, TextY: axisH - 22, Label: "cut"}
	return t
}

// labels writes each bar's description on it when it fits; otherwise
// after it, when the room up to the next bar of its row holds it; and
// otherwise shortened with an ellipsis, where more of it shows. The last
// bar of a row may write its label past the right end of the positions,
// up to fitWidth, and the timeline widens to hold it. The tooltip always
// has the description in full.
func (t *timeline) labels() {
	byRow := make(map[int][]int)
	var ys []int
	for i := range t.Bars {
		y := t.Bars[i].Y
		if _, ok := byRow[y]; !ok {
			ys = append(ys, y)
		}
		byRow[y] = append(byRow[y], i)
	}
	sort.Ints(ys)
	width := t.Width
	for _, y := range ys {
		idx := byRow[y]
		sort.SliceStable(idx, func(a, b int) bool { return t.Bars[idx[a]].X < t.Bars[idx[b]].X })
		for j, bi := range idx {
			b := &t.Bars[bi]
			inside := b.W - 10
			outX := b.X + b.W + 4
			end := max(t.Width, fitWidth) - 6
			if j+1 < len(idx) {
				end = t.Bars[idx[j+1]].X - 6
			}
			outside := end - outX
			full := textW(b.desc)
			switch {
			case full <= inside:
				b.Text = b.desc
			case full <= outside:
				b.Text, b.Out = b.desc, true
			default:
				in, out := fit(b.desc, inside), fit(b.desc, outside)
				if utf8.RuneCountInString(out) > utf8.RuneCountInString(in) {
					b.Text, b.Out = out, true
				} else {
					b.Text = in
				}
			}
			b.TextX = b.X + 5
			if b.Out {
				b.TextX = outX
				width = max(width, outX+textW(b.Text)+6)
			}
		}
	}
	t.Width = width
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

// fit shortens s to at most w pixels of the label font, with an
// ellipsis; "" when not even a few characters fit.
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

// overlay draws partial linearization k on the timeline: a numbered
// marker per operation, in order, in the lane below its bar and to the
// right of the one before (the linearization points), and a cross below
// the operation that could not be placed next, joined by a path drawn
// behind the bars. Operations not drawn (left out by MaxOps) get no
// marker.
func (t *timeline) overlay(k int, pt lin.Partial, describe func(int) string) overlayView {
	ov := overlayView{Index: k}
	prev := math.MinInt       // the last marker's x
	last := make(map[int]int) // the last marker's x in each lane
	place := func(b *barView) (int, int) {
		lo, hi := b.X+markerR, b.X+b.W-markerR
		if hi < lo {
			lo = b.X + b.W/2
			hi = lo
		}
		// Right of the marker before; clear of the one before in the
		// same lane.
		x := lo
		if prev != math.MinInt {
			x = max(x, prev+markerGap)
		}
		if p, ok := last[b.Y]; ok {
			x = max(x, p+2*markerR+2)
		}
		x = min(x, hi)
		prev, last[b.Y] = x, x
		y := b.Y + b.H/2
		if t.lanes {
			y = b.Y + b.H + 3 + markerR
		}
		return x, y
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
