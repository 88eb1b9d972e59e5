package histfile

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/lin"
)

// dump formats h's operations one per line, every field included:
// "ID cCLIENT NAME key=K in=I out=O STATUS CALL-RETURN SOURCE" (RETURN is
// "-" for Never).
func dump(h *lin.History) string {
	var b strings.Builder
	for i := range h.Ops {
		o := &h.Ops[i]
		ret := "-"
		if o.Return != lin.Never {
			ret = fmt.Sprint(o.Return)
		}
		fmt.Fprintf(&b, "%d c%d %s key=%s in=%s out=%s %s %d-%s %s\n",
			o.ID, o.Client, o.Name, o.Key, o.Input, o.Output, o.Status, o.Call, ret, o.Source)
	}
	return b.String()
}

// trim removes the indentation of a raw-string expectation.
func trim(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// parseCase is an input that parses.
type parseCase struct {
	name    string
	in      string
	ops     string // dump of the history, see trim
	dropped int
	model   string
	init    lin.Value
}

// runParseCases parses each case's input in format f, and once more with
// the format detected.
func runParseCases(t *testing.T, f Format, cases []parseCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, as := range []Format{f, ""} {
				h, got, err := Parse("h", []byte(tc.in), as)
				if err != nil {
					t.Fatalf("Parse(%q): %v", as, err)
				}
				if got != f {
					t.Errorf("Parse(%q) read %q, want %q", as, got, f)
				}
				if d, want := dump(h), trim(tc.ops); d != want {
					t.Errorf("Parse(%q) ops:\n%s\nwant:\n%s", as, d, want)
				}
				if h.Dropped != tc.dropped || h.Model != tc.model || !h.Init.Equal(tc.init) || h.Source != "h" {
					t.Errorf("Parse(%q): dropped %d, model %q, init %s, source %q; want %d, %q, %s, \"h\"",
						as, h.Dropped, h.Model, h.Init, h.Source, tc.dropped, tc.model, tc.init)
				}
			}
		})
	}
}

// errorCase is an input that does not parse.
type errorCase struct {
	name string
	in   string
	err  string // the exact message
}

// runErrorCases parses each case's input in format f and checks the
// error.
func runErrorCases(t *testing.T, f Format, cases []errorCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, _, err := Parse("h", []byte(tc.in), f)
			if err == nil {
				t.Fatalf("Parse succeeded:\n%s", dump(h))
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Errorf("error %v is a %T, not an *Error", err, err)
			}
			if err.Error() != tc.err {
				t.Errorf("error:\n %s\nwant:\n %s", err, tc.err)
			}
		})
	}
}

// sameOps reports how a and b differ: in their operations (all fields but
// Source), model and initial state. With positions false it compares the
// real-time order of the operations instead of their positions, and
// outputs only of ok operations (what EDN keeps).
func sameOps(a, b *lin.History, positions bool) error {
	if a.Model != b.Model || !a.Init.Equal(b.Init) {
		return fmt.Errorf("model %q, init %s; then model %q, init %s", a.Model, a.Init, b.Model, b.Init)
	}
	if len(a.Ops) != len(b.Ops) {
		return fmt.Errorf("%d operations, then %d", len(a.Ops), len(b.Ops))
	}
	for i := range a.Ops {
		x, y := a.Ops[i], b.Ops[i]
		x.Source, y.Source = "", ""
		if !positions {
			x.Call, x.Return, y.Call, y.Return = 0, 0, 0, 0
			if x.Status != lin.OK {
				x.Output, y.Output = lin.Value{}, lin.Value{}
			}
		}
		if x.ID != y.ID || x.Client != y.Client || x.Name != y.Name || !x.Key.Equal(y.Key) ||
			!x.Input.Equal(y.Input) || !x.Output.Equal(y.Output) || x.Status != y.Status ||
			x.Call != y.Call || x.Return != y.Return {
			return fmt.Errorf("operation %d: %+v, then %+v", i, a.Ops[i], b.Ops[i])
		}
	}
	if !positions {
		for i := range a.Ops {
			for j := range a.Ops {
				if a.Ops[i].Precedes(&a.Ops[j]) != b.Ops[i].Precedes(&b.Ops[j]) {
					return fmt.Errorf("operation %d precedes %d: %v, then %v", i, j, a.Ops[i].Precedes(&a.Ops[j]), b.Ops[i].Precedes(&b.Ops[j]))
				}
			}
		}
	}
	return nil
}

// roundTrip writes h with WriteJSON and reads it back, and, when edn is
// set, does the same with WriteEDN; it returns what differs.
func roundTrip(h *lin.History, edn bool) error {
	var b bytes.Buffer
	if err := WriteJSON(&b, h); err != nil {
		return fmt.Errorf("WriteJSON: %v", err)
	}
	j, f, err := Parse("rt.json", b.Bytes(), "")
	if err != nil {
		return fmt.Errorf("reading WriteJSON's output: %v\n%s", err, b.Bytes())
	}
	if f != JSON {
		return fmt.Errorf("WriteJSON's output detected as %q", f)
	}
	if err := sameOps(h, j, true); err != nil {
		return fmt.Errorf("JSON round trip: %v\n%s", err, b.Bytes())
	}
	if !edn {
		return nil
	}
	b.Reset()
	if err := WriteEDN(&b, h); err != nil {
		return fmt.Errorf("WriteEDN: %v", err)
	}
	e, _, err := Parse("rt.edn", b.Bytes(), EDN)
	if err != nil {
		return fmt.Errorf("reading WriteEDN's output: %v\n%s", err, b.Bytes())
	}
	plain := *h
	plain.Model, plain.Init = "", lin.Value{}
	if err := sameOps(&plain, e, false); err != nil {
		return fmt.Errorf("EDN round trip: %v\n%s", err, b.Bytes())
	}
	return nil
}
