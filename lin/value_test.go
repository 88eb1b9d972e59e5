package lin

import (
	"encoding/json"
	"testing"
)

func TestParseValue(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{in: "3", want: "3"},
		{in: " -17 ", want: "-17"},
		{in: "0x1f", want: "31"},
		{in: "nil", want: "nil"},
		{in: "null", want: "nil"},
		{in: "true", want: "true"},
		{in: `"a b\n"`, want: `"a b\n"`},
		{in: "[1 2]", want: "[1 2]"},
		{in: "[1, [2 \"x\"], nil]", want: `[1 [2 "x"] nil]`},
		{in: "[]", want: "[]"},
		{in: "", err: `value "": a value is missing at column 1`},
		{in: "[1 2", err: `value "[1 2": a list is not closed with ]`},
		{in: "1.5", err: `value "1.5": "1.5" is not an integer, string, nil, true, false or list`},
		{in: "1 2", err: `value "1 2": unexpected "2" at column 3`},
		{in: `"abc`, err: `value "\"abc": a string is not closed`},
	} {
		v, err := ParseValue(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("ParseValue(%q) error %v, want %s", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || v.String() != tc.want {
			t.Errorf("ParseValue(%q) = %s, %v; want %s", tc.in, v, err, tc.want)
		}
		back, err := ParseValue(v.String())
		if err != nil || !back.Equal(v) {
			t.Errorf("ParseValue(%q) does not read back: %v", v.String(), err)
		}
	}
}

func TestValueJSON(t *testing.T) {
	v := ListValue(IntValue(-3), StringValue("x"), BoolValue(true), Value{}, ListValue())
	b, err := json.Marshal(v)
	if err != nil || string(b) != `[-3,"x",true,null,[]]` {
		t.Fatalf("json %s, %v", b, err)
	}
	var w Value
	if err := json.Unmarshal(b, &w); err != nil || !w.Equal(v) {
		t.Fatalf("read back %s, %v", w, err)
	}
	if err := json.Unmarshal([]byte("1.5"), &w); err == nil {
		t.Fatal("1.5 read as a value")
	}
}

func FuzzParseValue(f *testing.F) {
	for _, s := range []string{"3", "[1 2]", `"x"`, "[[nil] true]", "0x10", "-5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseValue(s)
		if err != nil {
			return
		}
		back, err := ParseValue(v.String())
		if err != nil || !back.Equal(v) {
			t.Fatalf("%q -> %s does not read back: %v", s, v, err)
		}
	})
}
