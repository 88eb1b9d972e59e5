package linhtml_test

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/lin"
	"github.com/mgtrace/mgtrace/lin/linhtml"
	"github.com/mgtrace/mgtrace/lin/models"
)

var (
	update = flag.Bool("update", false, "rewrite testdata/figure3.html.golden")
	shots  = flag.String("shots", "", "TestChromium also copies its pages and screenshots to this `directory`")
)

var (
	iv   = lin.IntValue
	sv   = lin.StringValue
	lv   = lin.ListValue
	none = lin.Value{}
)

// op builds an operation; src is its Source.
func op(client int, name string, in, out lin.Value, call, ret int64, src string) lin.Op {
	st := lin.OK
	if ret == lin.Never {
		st = lin.Pending
	}
	return lin.Op{Client: client, Name: name, Input: in, Output: out, Call: call, Return: ret, Status: st, Source: src}
}

// figure3 is the history of figure 3 of Chen, Zhang, Wu and Zhang,
// "Automatic Localization of Linearizability Faults": thread 1 writes
// (0,2), (1,2), (1,1), (0,1) in turn to a pair snapshot whose cells start
// at <1,1>, while thread 2 reads <1,2>, which no order explains.
func figure3() *lin.History {
	h := &lin.History{Source: "figure3.lin", Ops: []lin.Op{
		op(1, "write", lv(iv(0), iv(2)), none, 0, 2, "figure3.lin:1"),
		op(2, "read", none, lv(iv(1), iv(2)), 1, 8, "figure3.lin:2"),
		op(1, "write", lv(iv(1), iv(2)), none, 3, 4, "figure3.lin:3"),
		op(1, "write", lv(iv(1), iv(1)), none, 5, 6, "figure3.lin:4"),
		op(1, "write", lv(iv(0), iv(1)), none, 7, 9, "figure3.lin:5"),
	}}
	h.Sort()
	return h
}

// check runs the checker.
func check(t *testing.T, model string, init lin.Value, h *lin.History, opt lin.Options) (lin.Model, *lin.Result) {
	t.Helper()
	m, err := models.New(model, init)
	if err != nil {
		t.Fatal(err)
	}
	res, err := lin.Check(context.Background(), m, h, opt)
	if err != nil {
		t.Fatal(err)
	}
	return m, res
}

// render writes the page.
func render(t *testing.T, m lin.Model, h *lin.History, res *lin.Result, opt linhtml.Options) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := linhtml.Write(&b, m, h, res, opt); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func figure3Page(t *testing.T) (lin.Model, *lin.History, *lin.Result, []byte) {
	h := figure3()
	m, res := check(t, "snapshot", lv(iv(1), iv(1)), h, lin.Options{})
	if res.Verdict != lin.NotLinearizable || res.Counterexample == nil {
		t.Fatalf("figure 3: verdict %s, counterexample %v", res.Verdict, res.Counterexample)
	}
	return m, h, res, render(t, m, h, res, linhtml.Options{WholeHistory: true})
}

func TestGoldenFigure3(t *testing.T) {
	m, h, res, got := figure3Page(t)
	if again := render(t, m, h, res, linhtml.Options{WholeHistory: true}); !bytes.Equal(got, again) {
		t.Fatal("two renderings of the same result differ")
	}
	golden := filepath.Join("testdata", "figure3.html.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) || i < len(wl); i++ {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("page differs from %s at line %d:\n got: %s\nwant: %s\n(go test -update rewrites it)", golden, i+1, g, w)
			}
		}
	}
}

// node is an element of a page parsed by encoding/xml.
type node struct {
	name     string
	attr     map[string]string
	children []*node
	text     strings.Builder // all the text inside, children's included
	parent   *node
}

func (n *node) class(c string) bool {
	for _, f := range strings.Fields(n.attr["class"]) {
		if f == c {
			return true
		}
	}
	return false
}

// find returns the elements under n (n included) that match.
func (n *node) find(match func(*node) bool) []*node {
	var out []*node
	var walk func(*node)
	walk = func(x *node) {
		if match(x) {
			out = append(out, x)
		}
		for _, c := range x.children {
			walk(c)
		}
	}
	walk(n)
	return out
}

func (n *node) child(name string) *node {
	for _, c := range n.children {
		if c.name == name {
			return c
		}
	}
	return nil
}

// voids are the HTML elements written without a closing tag.
var voids = map[string]bool{"meta": true, "input": true, "br": true, "hr": true, "img": true, "link": true, "wbr": true}

// parse checks that page is well formed and returns its root, <html>.
// Well formed: strict XML (every element closed, attributes quoted,
// entities known), and also HTML that a browser reads the same way: only
// void elements and elements inside <svg> are self-closed (an HTML parser
// reads <div/> as an opening tag), void elements are never opened without
// closing, <style> holds no "</", and there is one doctype.
func parse(t *testing.T, page []byte) *node {
	t.Helper()
	if !bytes.HasPrefix(page, []byte("<!DOCTYPE html>\n")) {
		t.Fatalf("page does not start with <!DOCTYPE html>: %.40q", page)
	}
	d := xml.NewDecoder(bytes.NewReader(page))
	d.Strict = true
	root := &node{name: "#document"}
	cur := root
	svgDepth := 0
	for {
		off := d.InputOffset()
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("page is not well formed: %v", err)
		}
		end := d.InputOffset()
		switch tok := tok.(type) {
		case xml.StartElement:
			n := &node{name: tok.Name.Local, attr: make(map[string]string), parent: cur}
			if tok.Name.Space != "" {
				t.Errorf("element %s:%s: no namespaces in HTML", tok.Name.Space, tok.Name.Local)
			}
			for _, a := range tok.Attr {
				n.attr[a.Name.Local] = a.Value
			}
			selfClosed := bytes.HasSuffix(page[off:end], []byte("/>"))
			if n.name == "svg" {
				svgDepth++
			}
			if selfClosed && !voids[n.name] && svgDepth == 0 {
				t.Errorf("offset %d: <%s/> is self-closed, which HTML reads as an opening tag", off, n.name)
			}
			if voids[n.name] && !selfClosed {
				t.Errorf("offset %d: void element <%s> is not written <%s ... />", off, n.name, n.name)
			}
			cur.children = append(cur.children, n)
			cur = n
		case xml.EndElement:
			if cur.name == "svg" {
				svgDepth--
			}
			for p := cur.parent; p != nil; p = p.parent {
				p.text.WriteString(cur.text.String())
			}
			cur = cur.parent
		case xml.CharData:
			if cur.name == "style" && bytes.Contains(tok, []byte("</")) {
				t.Error("<style> holds </")
			}
			cur.text.Write(tok)
		case xml.Directive:
			if string(tok) != "DOCTYPE html" {
				t.Errorf("unexpected directive <!%s>", tok)
			}
		case xml.ProcInst:
			t.Errorf("unexpected processing instruction <?%s?>", tok.Target)
		}
	}
	if len(root.children) != 1 || root.children[0].name != "html" {
		t.Fatalf("page's root is not one <html> element")
	}
	html := root.children[0]
	head, body := html.child("head"), html.child("body")
	if head == nil || body == nil || len(html.children) != 2 {
		t.Fatal("<html> does not hold exactly <head> and <body>")
	}
	if len(head.find(func(n *node) bool { return n.name == "meta" && n.attr["charset"] == "utf-8" })) != 1 {
		t.Error("no <meta charset=\"utf-8\" />")
	}
	if head.child("title") == nil {
		t.Error("no <title>")
	}
	return html
}

// checkOffline checks that the page loads nothing: no src, href or other
// URL attribute pointing anywhere but into the page, no url() but
// url(#...), no @import, no script, and no http:// or https:// at all.
func checkOffline(t *testing.T, page []byte, html *node) {
	t.Helper()
	for _, s := range []string{"http://", "https://", "@import"} {
		if bytes.Contains(page, []byte(s)) {
			t.Errorf("page contains %q", s)
		}
	}
	for _, n := range html.find(func(*node) bool { return true }) {
		if n.name == "script" || n.name == "link" || n.name == "img" || n.name == "iframe" || n.name == "object" {
			t.Errorf("page has a <%s> element", n.name)
		}
		for k, v := range n.attr {
			switch k {
			case "src", "href", "action", "formaction", "poster", "data", "srcset", "background":
				if v != "" && !strings.HasPrefix(v, "#") {
					t.Errorf("<%s %s=%q> loads from elsewhere", n.name, k, v)
				}
			}
		}
	}
	s := string(page)
	for i := strings.Index(s, "url("); i >= 0; i = strings.Index(s, "url(") {
		if !strings.HasPrefix(s[i:], "url(#") {
			t.Errorf("page refers to %.40q", s[i:])
		}
		s = s[i+4:]
	}
}

// firstLine is the first line of an element's text (a tooltip's title).
func firstLine(n *node) string {
	tt := n.child("title")
	if tt == nil {
		return ""
	}
	s := tt.text.String()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// bars returns the operations' bars in the section with class sec, by the
// first line of their tooltip (the operation's description).
func bars(t *testing.T, html *node, sec string) map[string]*node {
	t.Helper()
	secs := html.find(func(n *node) bool { return n.name == "section" && n.class(sec) })
	if len(secs) != 1 {
		t.Fatalf("%d sections of class %s, want 1", len(secs), sec)
	}
	out := make(map[string]*node)
	for _, g := range secs[0].find(func(n *node) bool { return n.name == "g" && n.class("op") && n.parent.class("tl") }) {
		d := firstLine(g)
		if _, dup := out[d]; dup {
			t.Fatalf("two bars for %s", d)
		}
		out[d] = g
	}
	return out
}

func TestFigure3Page(t *testing.T) {
	m, h, res, page := figure3Page(t)
	html := parse(t, page)
	checkOffline(t, page, html)
	cx := res.Counterexample

	// Every operation of the counterexample is drawn; the read that could
	// not be placed is outlined and tagged, the writes overlapping it are
	// marked.
	bs := bars(t, html, "cx")
	if len(bs) != len(cx.Operations) {
		t.Errorf("%d bars, want the counterexample's %d operations", len(bs), len(cx.Operations))
	}
	fail := &h.Ops[cx.Failing]
	for i := range cx.Operations {
		o := &cx.Operations[i]
		d := lin.DescribeOp(m, o)
		g := bs[d]
		if g == nil {
			t.Errorf("no bar for %s", d)
			continue
		}
		switch {
		case o.ID == cx.Failing:
			if !g.class("fail") || !strings.Contains(g.text.String(), "could not be placed") {
				t.Errorf("failing operation %s: class %q, text %q", d, g.attr["class"], g.text.String())
			}
		case o.Overlaps(fail):
			if !g.class("ovl") {
				t.Errorf("%s overlaps the failing operation but is not marked: class %q", d, g.attr["class"])
			}
		}
		if o.Status == lin.Pending && !g.class("st-pending") {
			t.Errorf("%s is pending at the cut but drawn %q", d, g.attr["class"])
		}
	}
	if n := len(html.find(func(n *node) bool { return n.name == "g" && n.class("fail") && n.parent.class("tl") })); n != 2 {
		t.Errorf("%d bars marked as failing, want 1 in each timeline", n)
	}
	failing := html.find(func(n *node) bool { return n.name == "div" && n.class("failing") })
	if len(failing) != 1 {
		t.Fatalf("%d failing-operation boxes", len(failing))
	}
	for _, want := range []string{"read() -> [1 2]", "figure3.lin:2", "client 2, called at 1, returned at 8"} {
		if !strings.Contains(failing[0].text.String(), want) {
			t.Errorf("failing box %q lacks %q", failing[0].text.String(), want)
		}
	}
	title := html.child("head").child("title").text.String()
	if !strings.Contains(title, "Not linearizable") || !strings.Contains(title, "figure3.lin") {
		t.Errorf("title %q", title)
	}

	// Each longest partial linearization has a tab, numbered markers on
	// the bars, a cross on the blocked operation and a list.
	if len(cx.Longest) == 0 {
		t.Fatal("no partial linearization")
	}
	byID := make(map[int]*lin.Op)
	for i := range cx.Operations {
		byID[cx.Operations[i].ID] = &cx.Operations[i]
	}
	for k, pt := range cx.Longest {
		id := fmt.Sprintf("lp-%d", k)
		if len(html.find(func(n *node) bool { return n.name == "input" && n.attr["id"] == id })) != 1 {
			t.Errorf("no selector %s", id)
		}
		if len(html.find(func(n *node) bool { return n.name == "label" && n.attr["for"] == id })) != 1 {
			t.Errorf("no tab for %s", id)
		}
		ov := html.find(func(n *node) bool { return n.name == "g" && n.class(id) })
		if len(ov) != 1 {
			t.Fatalf("%d overlays %s", len(ov), id)
		}
		mks := ov[0].find(func(n *node) bool { return n.name == "g" && n.class("mk") && !n.class("blk") })
		if len(mks) != len(pt.Ops) {
			t.Errorf("%s: %d markers, want %d", id, len(mks), len(pt.Ops))
		}
		for j, mk := range mks {
			if j >= len(pt.Ops) {
				break
			}
			want := fmt.Sprintf("linearization point %d: %s", j+1, lin.DescribeOp(m, byID[pt.Ops[j]]))
			if got := firstLine(mk); got != want {
				t.Errorf("%s marker %d: %q, want %q", id, j+1, got, want)
			}
			if !strings.Contains(mk.child("title").text.String(), "state after it: "+pt.States[j]) {
				t.Errorf("%s marker %d does not give the state %s", id, j+1, pt.States[j])
			}
			if got := mk.child("text").text.String(); got != fmt.Sprint(j+1) {
				t.Errorf("%s marker %d is labelled %q", id, j+1, got)
			}
		}
		if blk := ov[0].find(func(n *node) bool { return n.class("blk") }); len(blk) != 1 {
			t.Errorf("%s: %d blocked markers", id, len(blk))
		}
		lists := html.find(func(n *node) bool { return n.name == "div" && n.class(id) })
		if len(lists) != 1 {
			t.Fatalf("%d lists for %s", len(lists), id)
		}
		items := lists[0].find(func(n *node) bool { return n.name == "li" })
		if len(items) != len(pt.Ops) {
			t.Fatalf("%s: %d list items, want %d", id, len(items), len(pt.Ops))
		}
		for j, li := range items {
			want := lin.DescribeOp(m, byID[pt.Ops[j]]) + " → state " + pt.States[j]
			if got := li.text.String(); got != want {
				t.Errorf("%s item %d: %q, want %q", id, j+1, got, want)
			}
		}
		if !strings.Contains(lists[0].text.String(), "Then "+lin.DescribeOp(m, byID[pt.Blocked])+" could not be placed") {
			t.Errorf("%s: the list does not name the blocked operation: %q", id, lists[0].text.String())
		}
		// The bars of the operations in the partial carry its class.
		for _, oid := range pt.Ops {
			if g := bs[lin.DescribeOp(m, byID[oid])]; g == nil || !g.class("in-"+fmt.Sprint(k)) {
				t.Errorf("%s: the bar of operation %d is not marked in it", id, oid)
			}
		}
	}
	// The first one is shown.
	if in := html.find(func(n *node) bool { return n.name == "input" && n.attr["id"] == "lp-0" }); len(in) == 1 && in[0].attr["checked"] != "checked" {
		t.Error("the first linearization is not selected")
	}

	// The whole history: all five operations, emphasised as in the
	// counterexample.
	whole := bars(t, html, "whole")
	if len(whole) != len(h.Ops) {
		t.Errorf("whole history: %d bars, want %d", len(whole), len(h.Ops))
	}
	for d, g := range whole {
		if !g.class("cxop") {
			t.Errorf("whole history: %s is in the counterexample but not emphasised", d)
		}
	}
}

// TestEscaping: values, sources and the history's name come from user
// logs; none may open an element.
func TestEscaping(t *testing.T) {
	evil := "</script><b>x"
	h := &lin.History{Source: `<img src=x onerror="alert(1)">.log`, Ops: []lin.Op{
		op(1, "write", sv(evil), none, 0, 1, "<i>log</i>:1"),
		op(2, "read", none, sv(evil+"</style>"), 2, 3, "log:2 </title>"),
		op(1, "write", sv("ok"), none, 4, lin.Never, "log:3"),
	}}
	h.Sort()
	m, res := check(t, "register", none, h, lin.Options{})
	if res.Verdict != lin.NotLinearizable {
		t.Fatalf("verdict %s", res.Verdict)
	}
	page := render(t, m, h, res, linhtml.Options{WholeHistory: true})
	html := parse(t, page)
	for _, bad := range []string{"<b>", "</script>", "<img", "<i>", "</style><", "log:2 </title>"} {
		if bytes.Contains(page, []byte(bad)) {
			t.Errorf("page holds %q unescaped", bad)
		}
	}
	if !bytes.Contains(page, []byte("&lt;/script&gt;&lt;b&gt;x")) {
		t.Error("the escaped value is not on the page")
	}
	// The text reads back as it was.
	bs := bars(t, html, "cx")
	want := `read() -> "</script><b>x</style>"`
	if g := bs[want]; g == nil || !g.class("fail") {
		t.Errorf("no failing bar for %s among %v", want, keys(bs))
	}
	if !strings.Contains(html.child("head").child("title").text.String(), `<img src=x onerror="alert(1)">.log`) {
		t.Error("the history's name does not read back from the title")
	}
}

func keys(m map[string]*node) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// TestShortPages: a linearizable, an undecided and a counterexample-less
// result give a short page with the verdict and the counts.
func TestShortPages(t *testing.T) {
	h := figure3()
	h.Ops[1].Output = lv(iv(2), iv(1))
	m, res := check(t, "snapshot", lv(iv(1), iv(1)), h, lin.Options{})
	if res.Verdict != lin.Linearizable {
		t.Fatalf("verdict %s", res.Verdict)
	}
	h2 := figure3()
	_, nocx := check(t, "snapshot", lv(iv(1), iv(1)), h2, lin.Options{NoCounterexample: true})
	undecided := &lin.Result{Verdict: lin.Undecided, Model: "kv", Source: "big.edn", Operations: 120, Optional: 3,
		Partitions: 4, Decided: 2, UndecidedKeys: []string{"a", "b"}}
	for _, tc := range []struct {
		res  *lin.Result
		want []string
	}{
		{res, []string{"<h1 class=\"good\">Linearizable</h1>", "5 (0 info or pending)", "1 checked, 1 decided"}},
		{nocx, []string{"<h1 class=\"bad\">Not linearizable</h1>", "NoCounterexample"}},
		{undecided, []string{"<h1 class=\"undecided\">Unknown</h1>", "120 (3 info or pending)", "4 checked, 2 decided", "2 of the 4 partitions", "&#34;a&#34;, &#34;b&#34;"}},
	} {
		page := render(t, m, nil, tc.res, linhtml.Options{WholeHistory: true})
		html := parse(t, page)
		checkOffline(t, page, html)
		for _, w := range tc.want {
			if !bytes.Contains(page, []byte(w)) {
				t.Errorf("%s page lacks %q", tc.res.Verdict, w)
			}
		}
		if bytes.Contains(page, []byte(`class="tl"`)) {
			t.Errorf("%s page has a timeline", tc.res.Verdict)
		}
	}
	if err := linhtml.Write(io.Discard, m, h, nil, linhtml.Options{}); err == nil {
		t.Error("Write accepted a nil result")
	}
}

// longHistory: client 1 writes 0, 1, ..., n-1 to a register one after
// the other while client 2 reads -1 across the last writes.
func longHistory(n int) *lin.History {
	h := &lin.History{Source: "long"}
	for k := 0; k < n; k++ {
		h.Ops = append(h.Ops, op(1, "write", iv(int64(k)), none, int64(2*k), int64(2*k+1), fmt.Sprintf("long:%d", k)))
	}
	h.Ops = append(h.Ops, op(2, "read", none, iv(-1), int64(2*n-5), int64(2*n+2), "long:read"))
	h.Sort()
	return h
}

// TestMaxOps: timelines hold at most MaxOps operations, keep the failing
// one and those overlapping it, and say what they left out.
func TestMaxOps(t *testing.T) {
	h := longHistory(60)
	m, res := check(t, "register", none, h, lin.Options{NoMinimize: true})
	cx := res.Counterexample
	if res.Verdict != lin.NotLinearizable || cx == nil || len(cx.Operations) < 50 {
		t.Fatalf("verdict %s, counterexample %+v", res.Verdict, cx)
	}
	page := render(t, m, h, res, linhtml.Options{WholeHistory: true, MaxOps: 10})
	html := parse(t, page)
	checkOffline(t, page, html)
	for _, sec := range []string{"cx", "whole"} {
		bs := bars(t, html, sec)
		if len(bs) != 10 {
			t.Errorf("%s: %d bars, want 10", sec, len(bs))
		}
		fail := &h.Ops[cx.Failing]
		if g := bs[lin.DescribeOp(m, fail)]; g == nil || !g.class("fail") {
			t.Errorf("%s: the failing operation is not drawn", sec)
		}
		for i := range h.Ops {
			o := &h.Ops[i]
			if o.Overlaps(fail) && bs[lin.DescribeOp(m, o)] == nil {
				t.Errorf("%s: %s overlaps the failing operation but was left out", sec, lin.DescribeOp(m, o))
			}
		}
	}
	if !bytes.Contains(page, []byte(fmt.Sprintf("Showing 10 of the counterexample&#39;s %d operations", len(cx.Operations)))) {
		t.Error("the counterexample's timeline does not say it left operations out")
	}
	if !bytes.Contains(page, []byte("Showing 10 of the 61 operations called up to the cut")) {
		t.Error("the whole history's timeline does not say it left operations out")
	}
	// Uncapped, everything is drawn.
	page = render(t, m, h, res, linhtml.Options{})
	if bs := bars(t, parse(t, page), "cx"); len(bs) != len(cx.Operations) {
		t.Errorf("uncapped: %d bars, want %d", len(bs), len(cx.Operations))
	}
}

// TestPartition: with a partitioned model the whole-history view shows
// the failing key's operations only.
func TestPartition(t *testing.T) {
	kop := func(client int, name, key string, in, out lin.Value, call, ret int64) lin.Op {
		o := op(client, name, in, out, call, ret, "")
		o.Key = sv(key)
		return o
	}
	h := &lin.History{Source: "kv.json", Ops: []lin.Op{
		kop(1, "put", "a", iv(1), none, 0, 1),
		kop(2, "put", "b", iv(5), none, 0, 2),
		kop(1, "get", "a", none, iv(1), 2, 3),
		kop(2, "get", "b", none, iv(6), 3, 4),
		kop(1, "put", "a", iv(2), none, 5, 6),
	}}
	h.Sort()
	m, res := check(t, "kv", none, h, lin.Options{})
	if res.Verdict != lin.NotLinearizable || res.Counterexample == nil {
		t.Fatalf("verdict %s", res.Verdict)
	}
	page := render(t, m, h, res, linhtml.Options{WholeHistory: true})
	html := parse(t, page)
	whole := bars(t, html, "whole")
	if len(whole) != 2 {
		t.Errorf("whole history of key b: %d bars (%v), want 2", len(whole), keys(whole))
	}
	for d := range whole {
		if !strings.Contains(d, `"b"`) {
			t.Errorf("whole history of key b shows %s", d)
		}
	}
	if !bytes.Contains(page, []byte("key &#34;b&#34;")) {
		t.Error("the page does not name the failing partition")
	}
	if err := linhtml.Write(io.Discard, nil, h, res, linhtml.Options{WholeHistory: true}); err == nil {
		t.Error("the whole-history view was written without a model")
	}
}

// TestInfo: an info operation keeps its name and its hatching although
// the checker treats it as pending.
func TestInfo(t *testing.T) {
	h := longHistory(8)
	last := &h.Ops[len(h.Ops)-1]
	last.Status, last.Return = lin.Info, lin.Never
	m, res := check(t, "register", none, h, lin.Options{})
	if res.Verdict != lin.NotLinearizable {
		t.Fatalf("verdict %s", res.Verdict)
	}
	page := render(t, m, h, res, linhtml.Options{WholeHistory: true})
	html := parse(t, page)
	for _, sec := range []string{"cx", "whole"} {
		g := bars(t, html, sec)["write(7) (info)"]
		if g == nil || !g.class("st-info") || !strings.Contains(g.text.String(), "info: outcome unknown") {
			t.Errorf("%s: the info write is not drawn as info", sec)
		}
	}
}
