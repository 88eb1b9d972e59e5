package histfile

import (
	"testing"

	"github.com/mgtrace/mgtrace/lin"
)

func TestParseEtcdLog(t *testing.T) { runParseCases(t, EtcdLog, etcdCases()) }

// etcdCases are the inputs in the format that parse.
func etcdCases() []parseCase {
	return []parseCase{
		{
			name: "every event",
			in: "INFO  jepsen.util - 0\t:invoke\t:read\tnil\n" +
				"INFO  jepsen.util - 1\t:invoke\t:write\t4\n" +
				"INFO  jepsen.util - 2\t:invoke\t:cas\t[1 4]\n" +
				"INFO  jepsen.util - 0\t:ok\t:read\tnil\n" +
				"INFO  jepsen.util - 1\t:ok\t:write\t4\n" +
				"INFO  jepsen.util - 2\t:fail\t:cas\t[1 4]\n" +
				"INFO  jepsen.util - 0\t:invoke\t:read\tnil\n" +
				"INFO  jepsen.util - 2\t:invoke\t:cas\t[4 0]\n" +
				"INFO  jepsen.util - 0\t:ok\t:read\t4\n" +
				"INFO  jepsen.util - 2\t:ok\t:cas\t[4 0]\n" +
				"INFO  jepsen.util - 1\t:invoke\t:write\t3\n" +
				"INFO  jepsen.util - 0\t:invoke\t:read\tnil\n" +
				"INFO  jepsen.util - 2\t:invoke\t:cas\t[0 2]\n" +
				"INFO  jepsen.util - 3\t:invoke\t:write\t7\n" +
				"INFO  jepsen.util - 1\t:info\t:write\t:timed-out\n" +
				"INFO  jepsen.util - 0\t:fail\t:read\t:timed-out\n" +
				"INFO  jepsen.util - 2\t:info\t:cas\t:timed-out\n",
			ops: `
				0 c0 read key=nil in=nil out=nil ok 0-3 h:1
				1 c1 write key=nil in=4 out=nil ok 1-4 h:2
				2 c2 cas key=nil in=[1 4] out=false ok 2-5 h:3
				3 c0 read key=nil in=nil out=4 ok 6-8 h:7
				4 c2 cas key=nil in=[4 0] out=true ok 7-9 h:8
				5 c1 write key=nil in=3 out=nil info 10-- h:11
				6 c0 read key=nil in=nil out=nil unknown 11-15 h:12
				7 c2 cas key=nil in=[0 2] out=nil info 12-- h:13
				8 c3 write key=nil in=7 out=nil pending 13-- h:14`,
		},
		{
			name: "other lines, spaces, a failed write, the nemesis",
			in: "Running test\n" +
				"\n" +
				"2017-03-01 12:00:00,001 INFO  jepsen.util - 10  :invoke  :write  2\r\n" +
				"INFO  jepsen.util - :nemesis\t:info\t:start\tnil\n" +
				"INFO  jepsen.core - waiting\n" +
				"INFO jepsen.util -   10 :fail :write 2 ; refused\n" +
				"INFO  jepsen.util - 11\t:invoke\t:read\tnil\n" +
				"INFO  jepsen.util - 11\t:ok\t:read\t2",
			dropped: 1,
			ops:     `0 c11 read key=nil in=nil out=2 ok 6-7 h:7`,
		},
	}
}

func TestParseEtcdLogEmpty(t *testing.T) {
	h, _, err := Parse("h", []byte("no events here\n"), EtcdLog)
	if err != nil || len(h.Ops) != 0 || h.Dropped != 0 {
		t.Errorf("Parse: %v, %v", h, err)
	}
}

func TestParseEtcdLogErrors(t *testing.T) { runErrorCases(t, EtcdLog, etcdErrors()) }

// etcdErrors are the inputs in the format that do not parse.
func etcdErrors() []errorCase {
	const p = "INFO  jepsen.util - "
	return []errorCase{
		{"no dash", "x\nINFO  jepsen.util 3\t:invoke\t:read\tnil", `h:2:19: expected " - PROCESS" after jepsen.util, found '3'`},
		{"no process", p, `h:1:21: expected a process after "jepsen.util - ", found end of input`},
		{"bad process", p + "3x\t:invoke\t:read\tnil", `h:1:21: invalid process "3x"`},
		{"no type", p + "3", `h:1:22: unexpected end of input: expected the event's type (:invoke, :ok, :fail or :info)`},
		{"no f", p + "3\t:invoke", `h:1:30: unexpected end of input: expected the operation (:read, :write or :cas)`},
		{"no value", p + "3\t:invoke\t:read", `h:1:36: unexpected end of input: expected the event's value`},
		{"extra field", p + "3\t:invoke\t:read\tnil\tnil", `h:1:41: unexpected 'n' after the event's value`},
		{"type not a keyword", p + "3\tinvoke\t:read\tnil", `h:1:23: expected the event's type (:invoke, :ok, :fail or :info), found invoke`},
		{"unknown type", p + "3\t:start\t:read\tnil", `h:1:23: unknown event type :start (want :invoke, :ok, :fail or :info)`},
		{"unknown f", p + "3\t:invoke\t:delete\tnil", `h:1:31: unknown operation :delete (want :read, :write or :cas)`},
		{"read with a value", p + "3\t:invoke\t:read\t1", `h:1:37: a read is invoked with nil, not 1`},
		{"write without an integer", p + "3\t:invoke\t:write\tnil", `h:1:38: a write is invoked with an integer, not nil`},
		{"cas with three", p + "3\t:invoke\t:cas\t[1 2 3]", `h:1:36: a cas is invoked with [OLD NEW], two integers, not [1 2 3]`},
		{"read returns a keyword", p + "3\t:invoke\t:read\tnil\n" + p + "3\t:ok\t:read\t:x", `h:2:33: a read returns an integer or nil, not :x`},
		{"float", p + "3\t:invoke\t:write\t1.5", `h:1:38: the value holds the number 1.5: only integers that fit 64 bits are supported`},
		{"unclosed vector", p + "3\t:invoke\t:cas\t[1 2\n", `h:1:40: unexpected end of input: the vector opened at line 1, column 36 is not closed`},
		{"completion without invocation", p + "3\t:ok\t:read\t1", `h:1: process 3 completes read (:ok) but has no open invocation`},
		{"completion of another f", p + "3\t:invoke\t:read\tnil\n" + p + "3\t:ok\t:write\t1", `h:2: process 3 completes write (:ok) but its open invocation (line 1) is read`},
		{"second invocation", p + "3\t:invoke\t:read\tnil\n" + p + "3\t:invoke\t:read\tnil", `h:2: process 3 invokes read while its read (line 1) is still open`},
	}
}

// TestEtcdLogCasInput checks the one input built from two values.
func TestEtcdLogCasInput(t *testing.T) {
	h, _, err := Parse("h", []byte("INFO  jepsen.util - 0\t:invoke\t:cas\t[-1 9223372036854775807]\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	want := lin.ListValue(lin.IntValue(-1), lin.IntValue(9223372036854775807))
	if got := h.Ops[0].Input; !got.Equal(want) {
		t.Errorf("input %s, want %s", got, want)
	}
}

// etcdSeeds returns the inputs of the tests in the format.
func etcdSeeds() []string {
	var in []string
	for _, c := range etcdCases() {
		in = append(in, c.in)
	}
	for _, c := range etcdErrors() {
		in = append(in, c.in)
	}
	return in
}
