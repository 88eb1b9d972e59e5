package histfile

import (
	"errors"
	"strings"
	"testing"
)

// checkParse parses data in format f and checks the properties every
// input must have: no panic; an error is an *Error on one line; a history
// is sorted, valid, and survives WriteJSON and (without unknown
// operations) WriteEDN.
func checkParse(t *testing.T, data []byte, f Format) {
	h, got, err := Parse("fuzz", data, f)
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("error %v is a %T, not an *Error", err, err)
		}
		if strings.ContainsAny(err.Error(), "\n\r") {
			t.Fatalf("error on more than one line: %q", err)
		}
		if !strings.HasPrefix(err.Error(), "fuzz") {
			t.Fatalf("error does not start with the name: %q", err)
		}
		return
	}
	if f != "" && got != f {
		t.Fatalf("Parse in %q says it read %q", f, got)
	}
	if err := h.Validate(); err != nil {
		t.Fatalf("Parse returned an invalid history: %v", err)
	}
	for i := range h.Ops {
		if h.Ops[i].ID != i || i > 0 && h.Ops[i].Call < h.Ops[i-1].Call {
			t.Fatalf("operation %d is out of order", i)
		}
	}
	edn := !hasUnknown(h) && len(h.Ops) <= 1000 // the EDN check is quadratic
	if err := roundTrip(h, edn); err != nil {
		t.Fatal(err)
	}
}

// addSeeds adds the inputs of the tests to f's corpus.
func addSeeds(f *testing.F, seeds ...[]string) {
	for _, s := range seeds {
		for _, in := range s {
			f.Add([]byte(in))
		}
	}
}

func FuzzParseJSON(f *testing.F) {
	addSeeds(f, jsonSeeds())
	f.Fuzz(func(t *testing.T, data []byte) { checkParse(t, data, JSON) })
}

func FuzzParseEDN(f *testing.F) {
	addSeeds(f, ednSeeds())
	f.Fuzz(func(t *testing.T, data []byte) { checkParse(t, data, EDN) })
}

func FuzzParseEtcdLog(f *testing.F) {
	addSeeds(f, etcdSeeds())
	f.Fuzz(func(t *testing.T, data []byte) { checkParse(t, data, EtcdLog) })
}

// FuzzDetect checks that Detect never panics and that Parse with no
// format reads what Detect says.
func FuzzDetect(f *testing.F) {
	addSeeds(f, jsonSeeds(), ednSeeds(), etcdSeeds())
	f.Fuzz(func(t *testing.T, data []byte) {
		want, err := Detect(data)
		_, got, perr := Parse("fuzz", data, "")
		if err != nil {
			if perr == nil {
				t.Fatalf("Detect failed (%v) but Parse read %q", err, got)
			}
			return
		}
		if got != want {
			t.Fatalf("Detect says %q, Parse read %q", want, got)
		}
		checkParse(t, data, "")
	})
}
