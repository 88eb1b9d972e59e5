package histfile

import (
	"testing"

	"github.com/mgtrace/mgtrace/lin"
)

func TestParseJSON(t *testing.T) { runParseCases(t, JSON, jsonCases()) }

// jsonCases are the inputs in the format that parse.
func jsonCases() []parseCase {
	return []parseCase{
		{
			name: "queue",
			in: `{"model": "queue", "init": [1, 2], "ops": [
  {"client": 0, "f": "enqueue", "input": 3, "call": 0, "return": 4},
  {"client": 1, "f": "dequeue", "output": 1, "status": "ok", "call": 1, "return": 2},
  {"client": 1, "f": "dequeue", "status": "unknown", "call": 3, "return": 5},
  {"client": 2, "f": "enqueue", "input": 4, "status": "info", "call": 2},
  {"client": 3, "f": "dequeue", "status": "pending", "call": 6}
]}`,
			model: "queue",
			init:  lin.ListValue(lin.IntValue(1), lin.IntValue(2)),
			ops: `
				0 c0 enqueue key=nil in=3 out=nil ok 0-4 h:2
				1 c1 dequeue key=nil in=nil out=1 ok 1-2 h:3
				2 c2 enqueue key=nil in=4 out=nil info 2-- h:5
				3 c1 dequeue key=nil in=nil out=nil unknown 3-5 h:4
				4 c3 dequeue key=nil in=nil out=nil pending 6-- h:6`,
		},
		{
			name: "values and keys",
			in: `{"ops": [{"client": 7, "f": "put", "key": "k1", "input": ["x", -3, true, null, [false]], "output": null, "call": 10, "return": 10},
{"client": -1, "f": "get", "key": 9223372036854775807, "output": "\u00e9\n", "call": 10, "return": 11}]}`,
			ops: `
				0 c-1 get key=9223372036854775807 in=nil out="é\n" ok 10-11 h:2
				1 c7 put key="k1" in=["x" -3 true nil [false]] out=nil ok 10-10 h:1`,
		},
		{
			name: "ops array alone",
			in:   "[\n{\"client\": 0, \"f\": \"read\", \"call\": 0, \"return\": 1}\n]\n",
			ops:  `0 c0 read key=nil in=nil out=nil ok 0-1 h:2`,
		},
		{
			name: "empty",
			in:   `{"ops": []}`,
			ops:  ``,
		},
		{
			name:  "byte order mark",
			in:    "\xef\xbb\xbf{\"model\": \"register\", \"ops\": []}",
			model: "register",
		},
	}
}

func TestParseJSONErrors(t *testing.T) { runErrorCases(t, JSON, jsonErrors()) }

// jsonErrors are the inputs in the format that do not parse.
func jsonErrors() []errorCase {
	return []errorCase{
		{"empty", ``, `h:1:1: unexpected end of input`},
		{"not an object", `"ops"`, `h:1:1: a history is a JSON object, {"ops": [...]}, not a string`},
		{"no ops", "\n {\"model\": \"queue\"}", `h:2:2: the history has no "ops"`},
		{"unknown field", `{"ops": [], "modle": "queue"}`, `h:1:13: unknown field "modle" (want "model", "init" or "ops")`},
		{"duplicate field", `{"ops": [], "ops": []}`, `h:1:13: duplicate field "ops"`},
		{"model not a string", `{"model": 3, "ops": []}`, `h:1:11: "model" must be a string, not the number 3`},
		{"ops not an array", `{"ops": {}}`, `h:1:9: "ops" must be an array of operations, not an object`},
		{"op not an object", `{"ops": [1]}`, `h:1:10: an operation must be a JSON object, not the number 1`},
		{"float input", "{\"ops\": [\n {\"client\": 0, \"f\": \"w\", \"input\": 1.5, \"call\": 0, \"return\": 1}]}", `h:2:35: "input": want an integer, not 1.5`},
		{"huge input", `{"ops": [{"client": 0, "f": "w", "input": 99999999999999999999, "call": 0, "return": 1}]}`, `h:1:43: "input": 99999999999999999999 does not fit 64 bits`},
		{"object value", `{"ops": [{"client": 0, "f": "w", "input": [{}], "call": 0, "return": 1}]}`, `h:1:43: "input": a value is an integer, a string, a boolean, null or an array, not an object`},
		{"init float", `{"init": 2e3, "ops": []}`, `h:1:10: "init": want an integer, not 2e3`},
		{"unknown op field", `{"ops": [{"client": 0, "f": "w", "call": 0, "return": 1, "id": 3}]}`, `h:1:58: unknown field "id" (want "client", "f", "key", "input", "output", "status", "call" or "return")`},
		{"no client", `{"ops": [{"f": "w", "call": 0, "return": 1}]}`, `h:1:10: the operation has no "client"`},
		{"no f", `{"ops": [{"client": 0, "call": 0, "return": 1}]}`, `h:1:10: the operation has no "f"`},
		{"empty f", `{"ops": [{"client": 0, "f": "", "call": 0, "return": 1}]}`, `h:1:29: "f" is empty: an operation needs a name`},
		{"f not a string", `{"ops": [{"client": 0, "f": :read, "call": 0, "return": 1}]}`, `h:1:29: invalid character ':' looking for beginning of value`},
		{"no call", `{"ops": [{"client": 0, "f": "w", "return": 1}]}`, `h:1:10: the operation has no "call"`},
		{"no return", `{"ops": [{"client": 0, "f": "w", "call": 0}]}`, `h:1:10: the operation has no "return" (needed unless its status is info or pending)`},
		{"info with return", `{"ops": [{"client": 0, "f": "w", "status": "info", "call": 0, "return": 1}]}`, `h:1:63: an operation whose status is info has no "return" (its response was never seen)`},
		{"bad status", `{"ops": [{"client": 0, "f": "w", "status": "fail", "call": 0, "return": 1}]}`, `h:1:44: unknown operation status "fail" (want ok, unknown, info or pending)`},
		{"negative call", `{"ops": [{"client": 0, "f": "w", "call": -1, "return": 1}]}`, `h:1:42: "call": -1 is not a position (want 0 to 9223372036854775806)`},
		{"client string", `{"ops": [{"client": "a", "f": "w", "call": 0, "return": 1}]}`, `h:1:21: "client": want an integer, not a string`},
		{"return before call", "{\"ops\": [\n{\"client\": 0, \"f\": \"w\", \"call\": 5, \"return\": 1}]}", `h:2: operation w by client 0 returns (at 1) before it is called (at 5)`},
		{"client overlaps", "{\"ops\": [\n{\"client\": 0, \"f\": \"w\", \"call\": 0, \"return\": 5},\n{\"client\": 0, \"f\": \"r\", \"call\": 5, \"return\": 6}]}",
			`h:3: client 0 calls r at 5 before its operation w (h:2) returns at 5`},
		{"syntax error", "{\"ops\": [\n  {\"client\": 0,, \"f\": \"w\"}]}", `h:2:16: invalid character ',' looking for beginning of object key string`},
		{"bad literal", "{\"ops\": [{\"client\": tru}]}", `h:1:24: invalid character '}' in literal true (expecting 'e')`},
		{"truncated", `{"ops": [{"client": 0, "f": "w"`, `h:1:32: unexpected end of input`},
		{"trailing data", `{"ops": []} {}`, `h:1:13: unexpected data after the history`},
		{"control character", "{\"ops\": [{\"f\": \"a\nb\"}]}", `h:1:18: invalid character '\n' in string literal`},
	}
}

// jsonSeeds returns the inputs of the tests in the format.
func jsonSeeds() []string {
	var in []string
	for _, c := range jsonCases() {
		in = append(in, c.in)
	}
	for _, c := range jsonErrors() {
		in = append(in, c.in)
	}
	return in
}
