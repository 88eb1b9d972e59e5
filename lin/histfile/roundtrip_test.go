package histfile

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/lin"
)

// handMade is a history with every status, keys, lists, odd names and
// strings, tied positions and negative clients.
func handMade() *lin.History {
	h := &lin.History{
		Model: "kv",
		Init:  lin.ListValue(lin.StringValue("a"), lin.IntValue(-1)),
		Ops: []lin.Op{
			{Client: 0, Name: "put", Key: lin.StringValue("k"), Input: lin.StringValue(":kw"), Output: lin.BoolValue(true), Status: lin.OK, Call: 0, Return: 5},
			{Client: 1, Name: "get it", Key: lin.IntValue(3), Output: lin.StringValue("line\nbreak \"q\" \\ \x01 é"), Status: lin.OK, Call: 5, Return: 5},
			{Client: -2, Name: ":odd", Input: lin.ListValue(lin.ListValue(), lin.ListValue(lin.BoolValue(false))), Status: lin.Info, Call: 5, Return: lin.Never},
			{Client: 1, Name: "get", Output: lin.StringValue(":"), Status: lin.OK, Call: 6, Return: 9},
			{Client: 3, Name: "cas", Input: lin.ListValue(lin.IntValue(1), lin.IntValue(2)), Status: lin.Pending, Call: 8, Return: lin.Never},
			{Client: 0, Name: "put", Key: lin.StringValue("k"), Input: lin.StringValue(":"), Status: lin.OK, Call: 9, Return: 12},
		},
	}
	h.Sort()
	return h
}

func TestRoundTrip(t *testing.T) {
	h := handMade()
	if err := h.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := roundTrip(h, true); err != nil {
		t.Error(err)
	}
	// Every history the parse tests read.
	var cases []string
	for _, f := range []func() []string{jsonSeeds, ednSeeds, etcdSeeds} {
		cases = append(cases, f()...)
	}
	for _, in := range cases {
		h, _, err := Parse("h", []byte(in), "")
		if err != nil {
			continue
		}
		if err := roundTrip(h, !hasUnknown(h)); err != nil {
			t.Errorf("%q: %v", in, err)
		}
	}
}

func hasUnknown(h *lin.History) bool {
	for i := range h.Ops {
		if h.Ops[i].Status == lin.Unknown {
			return true
		}
	}
	return false
}

func TestWriteEDNUnknown(t *testing.T) {
	h := &lin.History{Ops: []lin.Op{{Name: "read", Status: lin.Unknown, Call: 0, Return: 1}}}
	err := WriteEDN(&bytes.Buffer{}, h)
	if err == nil || err.Error() != "operation 0 (read() -> ?) has an unknown output, which Jepsen's EDN cannot express" {
		t.Errorf("WriteEDN: %v", err)
	}
}

// TestWriteExact pins down the output of both writers.
func TestWriteExact(t *testing.T) {
	h := handMade()
	var b bytes.Buffer
	if err := WriteJSON(&b, h); err != nil {
		t.Fatal(err)
	}
	wantJSON := `{"model": "kv", "init": ["a",-1], "ops": [
  {"client": 0, "f": "put", "key": "k", "input": ":kw", "output": true, "call": 0, "return": 5},
  {"client": -2, "f": ":odd", "input": [[],[false]], "status": "info", "call": 5},
  {"client": 1, "f": "get it", "key": 3, "output": "line\nbreak \"q\" \\ \u0001 é", "call": 5, "return": 5},
  {"client": 1, "f": "get", "output": ":", "call": 6, "return": 9},
  {"client": 3, "f": "cas", "input": [1,2], "status": "pending", "call": 8},
  {"client": 0, "f": "put", "key": "k", "input": ":", "call": 9, "return": 12}
]}
`
	if b.String() != wantJSON {
		t.Errorf("WriteJSON:\n%s\nwant:\n%s", b.String(), wantJSON)
	}
	b.Reset()
	if err := WriteEDN(&b, h); err != nil {
		t.Fatal(err)
	}
	wantEDN := strings.TrimLeft(`
{:process 0, :type :invoke, :f :put, :key "k", :value :kw}
{:process -2, :type :invoke, :f ":odd", :value [[] [false]]}
{:process 1, :type :invoke, :f "get it", :key 3, :value nil}
{:process 0, :type :ok, :f :put, :key "k", :value true}
{:process 1, :type :ok, :f "get it", :key 3, :value "line\nbreak \"q\" \\ \u0001 é"}
{:process 1, :type :invoke, :f :get, :value nil}
{:process 3, :type :invoke, :f :cas, :value [1 2]}
{:process 0, :type :invoke, :f :put, :key "k", :value ":"}
{:process 1, :type :ok, :f :get, :value ":"}
{:process 0, :type :ok, :f :put, :key "k", :value nil}
{:process -2, :type :info, :f ":odd", :value [[] [false]]}
`, "\n")
	if b.String() != wantEDN {
		t.Errorf("WriteEDN:\n%s\nwant:\n%s", b.String(), wantEDN)
	}
}

// TestLarge parses 100,000 operations in each format, which must take
// one pass (a quadratic parser would not finish in time).
func TestLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("parses 100,000 operations three times")
	}
	const n = 100000
	h := &lin.History{Ops: make([]lin.Op, n)}
	for i := range h.Ops {
		h.Ops[i] = lin.Op{Client: i % 50, Name: "write", Input: lin.IntValue(int64(i)), Call: int64(2 * i), Return: int64(2*i + 1)}
		if i%7 == 0 {
			h.Ops[i].Name, h.Ops[i].Input, h.Ops[i].Output = "read", lin.Value{}, lin.IntValue(int64(i-1))
		}
	}
	h.Sort()
	var j, e, l bytes.Buffer
	if err := WriteJSON(&j, h); err != nil {
		t.Fatal(err)
	}
	if err := WriteEDN(&e, h); err != nil {
		t.Fatal(err)
	}
	for i := range h.Ops {
		o := &h.Ops[i]
		in := "nil"
		if o.Name == "write" {
			in = o.Input.String()
		}
		l.WriteString("INFO  jepsen.util - " + lin.IntValue(int64(o.Client)).String() + "\t:invoke\t:" + o.Name + "\t" + in + "\n")
		out := in
		if o.Name == "read" {
			out = o.Output.String()
		}
		l.WriteString("INFO  jepsen.util - " + lin.IntValue(int64(o.Client)).String() + "\t:ok\t:" + o.Name + "\t" + out + "\n")
	}
	for _, in := range []*bytes.Buffer{&j, &e, &l} {
		g, f, err := Parse("big", in.Bytes(), "")
		if err != nil {
			t.Fatalf("%v", err)
		}
		if len(g.Ops) != n {
			t.Errorf("%s: %d operations, want %d", f, len(g.Ops), n)
		}
		if f == JSON {
			if err := sameOps(h, g, true); err != nil {
				t.Errorf("%s: %v", f, err)
			}
		}
	}
}
