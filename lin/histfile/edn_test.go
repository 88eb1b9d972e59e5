package histfile

import (
	"testing"
)

func TestParseEDN(t *testing.T) { runParseCases(t, EDN, ednCases()) }

// ednCases are the inputs in the format that parse.
func ednCases() []parseCase {
	return []parseCase{
		{
			name: "register",
			in: `{:process 0, :type :invoke, :f :write, :value 3}
{:process 1, :type :invoke, :f :read, :value nil}
{:process 0, :type :ok, :f :write, :value 3}
{:process 1, :type :ok, :f :read, :value 3}
{:process 2, :type :invoke, :f :cas, :value [3 4]}
{:process 3, :type :invoke, :f :write, :value 1}
{:process 2, :type :fail, :f :cas, :value [3 4]}
{:process 0, :type :invoke, :f :read, :value nil}
{:process 3, :type :info, :f :write, :value 1}
{:process 1, :type :invoke, :f :write, :value 9}
`,
			dropped: 1,
			ops: `
				0 c0 write key=nil in=3 out=3 ok 0-2 h:1
				1 c1 read key=nil in=nil out=3 ok 1-3 h:2
				2 c3 write key=nil in=1 out=nil info 5-- h:6
				3 c0 read key=nil in=nil out=nil pending 7-- h:8
				4 c1 write key=nil in=9 out=nil pending 9-- h:10`,
		},
		{
			name: "nemesis and other keys",
			in: `; a Jepsen history
{:type :info, :f :start, :process :nemesis, :time 1.5e9, :value nil}
{:index 1, :time 12.5, :type :invoke, :process 4, :f :enqueue, :value 7}
{:process :nemesis, :type :info, :f :start, :value [:isolated {"n1" #{"n2"}}]}
{:index 3, :type :ok, :process 4, :f :enqueue, :value 7, :error nil}
`,
			ops: `0 c4 enqueue key=nil in=7 out=7 ok 1-3 h:3`,
		},
		{
			name: "keys, strings and keywords",
			in: `{:process 0, :type :invoke, :f :append, :key "0", :value "x 0 0 y"}
{:process 1, :type :invoke, :f "get", :key "0", :value nil}
{:process 0, :type :ok, :f :append, :key "0", :value "x 0 0 y"}
{:process 1, :type :ok, :f "get", :key "0", :value "x 0 0 y"}
{:process 2, :type :invoke, :f :put, :key :k, :value "tab\there \"q\" \u00e9"}
{:process 2, :type :ok, :f :put, :value :timed-out}
{:process 3, :type :invoke, :f :r, :value nil}
{:process 3, :type :ok, :f :r, :key [1 "a"], :value (1 -2N \c \newline true false)}
`,
			ops: `
				0 c0 append key="0" in="x 0 0 y" out="x 0 0 y" ok 0-2 h:1
				1 c1 get key="0" in=nil out="x 0 0 y" ok 1-3 h:2
				2 c2 put key=":k" in="tab\there \"q\" é" out=":timed-out" ok 4-5 h:5
				3 c3 r key=[1 "a"] in=nil out=[1 -2 "c" "\n" true false] ok 6-7 h:7`,
		},
		{
			name: "one vector over many lines",
			in: `[{:process 0, :type :invoke, :f :read, :value nil}
 {:process 0, :type :ok, :f :read, :value 1}, {:process 1,
  :type :invoke, :f :write, :value 2} ; the last one
]
`,
			ops: `
				0 c0 read key=nil in=nil out=1 ok 0-1 h:1
				1 c1 write key=nil in=2 out=nil pending 2-- h:2`,
		},
		{
			name: "a list, tags, sets, discards, records",
			in: `({:process 0 :type :invoke :f :add :value #{1} :time #inst "2024-01-01T00:00:00Z"}
 #_{:process 0 :type :ok :f :add :value 5}
 #jepsen.history.Op{:index 1, :process 0 :type :ok :f :add :value #my/tag [#_ 9 2 3]})`,
			ops: `0 c0 add key=nil in=[1] out=[2 3] ok 0-1 h:1`,
		},
		{
			name: "empty vector",
			in:   "[]",
		},
		{
			name: "crlf",
			in:   "{:process 0, :type :invoke, :f :read, :value nil}\r\n{:process 0, :type :ok, :f :read, :value 0}\r\n",
			ops:  `0 c0 read key=nil in=nil out=0 ok 0-1 h:1`,
		},
	}
}

func TestParseEDNEmpty(t *testing.T) {
	for _, in := range []string{"", "\n ; nothing\n", "()", "#_{:a 1}"} {
		h, _, err := Parse("h", []byte(in), EDN)
		if err != nil || len(h.Ops) != 0 {
			t.Errorf("Parse(%q): %v, %v", in, h, err)
		}
	}
}

func TestParseEDNErrors(t *testing.T) { runErrorCases(t, EDN, ednErrors()) }

// ednErrors are the inputs in the format that do not parse.
func ednErrors() []errorCase {
	return []errorCase{
		{"not a map", `[1 2]`, `h:1:2: expected a map (an event), found an integer`},
		{"no process", `{:type :invoke, :f :read}`, `h:1:1: the event has no :process`},
		{"no type", "\n{:process 0, :f :read}", `h:2:1: the event has no :type`},
		{"no f", `{:process 0, :type :invoke}`, `h:1:1: the event has no :f`},
		{"f a number", `{:process 0, :type :invoke, :f 3}`, `h:1:32: :f must be a keyword or a non-empty string, not 3`},
		{"unknown type", `{:process 0, :type :start, :f :read}`, `h:1:20: unknown :type :start (want :invoke, :ok, :fail or :info)`},
		{"duplicate key", `{:process 0, :type :invoke, :f :read, :process 1}`, `h:1:39: duplicate key :process`},
		{"float value", "{:process 0, :type :invoke, :f :w,\n :value [1 2.5]}", `h:2:12: :value holds the number 2.5: only integers that fit 64 bits are supported`},
		{"ratio key", `{:process 0, :type :invoke, :f :w, :key 1/2}`, `h:1:41: :key holds the number 1/2: only integers that fit 64 bits are supported`},
		{"big value", `{:process 0, :type :invoke, :f :w, :value 123456789012345678901N}`, `h:1:43: :value holds the number 123456789012345678901N: only integers that fit 64 bits are supported`},
		{"map value", `{:process 0, :type :invoke, :f :w, :value {:a 1}}`, `h:1:43: :value holds a map: a value must be nil, a boolean, an integer, a string, a keyword or a vector of those`},
		{"completion without invocation", "{:process 0, :type :invoke, :f :read}\n{:process 1, :type :ok, :f :read, :value 1}", `h:2: process 1 completes read (:ok) but has no open invocation`},
		{"completion of another f", "{:process 0, :type :invoke, :f :read}\n{:process 0, :type :fail, :f :write}", `h:2: process 0 completes write (:fail) but its open invocation (line 1) is read`},
		{"second invocation", "{:process 0, :type :invoke, :f :read}\n{:process 0, :type :invoke, :f :write}", `h:2: process 0 invokes write while its read (line 1) is still open`},
		{"invocation after info", "{:process 0, :type :invoke, :f :read}\n{:process 0, :type :info, :f :read}\n{:process 0, :type :invoke, :f :read}",
			`h:3: client 0 calls read while its info operation read (h:1) has not returned`},
		{"key differs", "{:process 0, :type :invoke, :f :get, :key 1}\n{:process 0, :type :ok, :f :get, :key 2}", `h:2:39: the completion's :key 2 differs from its invocation's, 1`},
		{"unclosed map", "{:process 0,\n :type :invoke", `h:2:15: unexpected end of input: the map opened at line 1, column 1 is not closed`},
		{"odd map", `{:process 0 :type}`, `h:1:1: a map needs an even number of forms, not 3`},
		{"wrong closing", `{:process 0]`, `h:1:12: unexpected ']': the map opened at line 1, column 1 closes with '}'`},
		{"stray closing", `}`, `h:1:1: unexpected '}': nothing to close`},
		{"unclosed string", `{:process 0, :f "read}`, `h:1:17: unexpected end of input: the string is not closed`},
		{"bad escape", `{:f "a\qb"}`, `h:1:7: unknown escape sequence \'q'`},
		{"bad unicode escape", `{:f "\u12"}`, `h:1:6: invalid \u escape: want four hexadecimal digits`},
		{"lone surrogate", `{:f "\ud800"}`, `h:1:6: invalid \u escape: a lone surrogate`},
		{"invalid utf8", "{:f \"\xff\"}", `h:1:5: invalid UTF-8 in string`},
		{"bad number", `{:process 0x10}`, `h:1:11: invalid number "0x10"`},
		{"leading zero", `{:process 010}`, `h:1:11: invalid number "010"`},
		{"bad keyword", `{: 1}`, `h:1:2: a keyword needs a name after the colon`},
		{"bad character", `{:a @b}`, `h:1:5: unexpected character '@'`},
		{"bad dispatch", `{:a #"re"}`, `h:1:5: unsupported dispatch #'"'`},
		{"unknown char name", `{:a \foo}`, `h:1:5: unknown character \foo`},
		{"discard at end", `{:process 0, :type :invoke, :f :r} #_`, `h:1:36: #_ discards nothing: the input ends`},
		{"tag at end", `#inst`, `h:1:6: unexpected end of input: expected a form after the tag #inst`},
		{"after vector", `[{:process 0, :type :invoke, :f :r}] {:a 1}`, `h:1:38: unexpected '{' after the history's closing ']'`},
		{"unclosed vector", "[{:process 0, :type :invoke, :f :r}\n", `h:2:1: unexpected end of input: the vector opened at line 1, column 1 is not closed`},
		{"too deep", "{:value " + repeat("[", 2000), `h:1:1009: forms nested more than 1000 deep`},
	}
}

func repeat(s string, n int) string {
	b := make([]byte, 0, len(s)*n)
	for range n {
		b = append(b, s...)
	}
	return string(b)
}

// ednSeeds returns the inputs of the tests in the format.
func ednSeeds() []string {
	var in []string
	for _, c := range ednCases() {
		in = append(in, c.in)
	}
	for _, c := range ednErrors() {
		in = append(in, c.in)
	}
	return in
}
