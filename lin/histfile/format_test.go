package histfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Format
	}{
		{`{"ops": []}`, JSON},
		{"\n\n  {\n  \"model\": \"queue\"", JSON},
		{`{}`, JSON},
		{`[{"client": 0}]`, JSON},
		{"[\n  {\n \"f\": 1}]", JSON},
		{"\xef\xbb\xbf{\"ops\": []}", JSON},
		{`{:process 0, :type :invoke}`, EDN},
		{"; comment\n;; another\n\n{:type :invoke}", EDN},
		{"[{:process 0}]", EDN},
		{"( {:process 0})", EDN},
		{"[]", EDN},
		{"( )", EDN},
		{"#jepsen.history.Op{:index 0}", EDN},
		{"INFO  jepsen.util - 3\t:invoke\t:read\tnil", EtcdLog},
		{"lein test\nRunning\n2017 INFO  jepsen.util - 3 :ok :read 1\n", EtcdLog},
		{"{\"a\" INFO jepsen.util", JSON},
	} {
		got, err := Detect([]byte(tc.in))
		if err != nil || got != tc.want {
			t.Errorf("Detect(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"", "  \n\t", "\xef\xbb\xbf"} {
		_, err := Detect([]byte(in))
		if want := "cannot tell the format of an empty file: expected JSON, Jepsen EDN or an etcd log"; err == nil || err.Error() != want {
			t.Errorf("Detect(%q): %v, want %q", in, err, want)
		}
		_, _, err = Parse("x.txt", []byte(in), "")
		if want := "x.txt: cannot tell the format of an empty file: expected JSON, Jepsen EDN or an etcd log"; err == nil || err.Error() != want {
			t.Errorf("Parse(%q): %v, want %q", in, err, want)
		}
	}
	for _, in := range []string{"hello", "{", "{1: 2}", "[1, 2]", "([{:a 1}])", "#{:a}", "# comment\n{\"ops\": []}", "(\"ops\")"} {
		got, err := Detect([]byte(in))
		if err == nil {
			t.Errorf("Detect(%q) = %q, want an error", in, got)
			continue
		}
		if want := "cannot tell the format: expected JSON, Jepsen EDN or an etcd log"; err.Error() != want {
			t.Errorf("Detect(%q): %v, want %q", in, err, want)
		}
		_, _, err = Parse("x.txt", []byte(in), "")
		if want := "x.txt: cannot tell the format: expected JSON, Jepsen EDN or an etcd log"; err == nil || err.Error() != want {
			t.Errorf("Parse(%q): %v, want %q", in, err, want)
		}
	}
}

func TestParseFormat(t *testing.T) {
	for _, f := range Formats() {
		if g, err := ParseFormat(string(f)); err != nil || g != f {
			t.Errorf("ParseFormat(%q) = %q, %v", f, g, err)
		}
	}
	if _, err := ParseFormat("yaml"); err == nil || err.Error() != `unknown history format "yaml" (want json, edn or etcd-log)` {
		t.Errorf("ParseFormat(yaml): %v", err)
	}
	_, _, err := Parse("h", []byte("{}"), "yaml")
	if err == nil || err.Error() != `h: unknown history format "yaml" (want json, edn or etcd-log)` {
		t.Errorf("Parse with format yaml: %v", err)
	}
}

func TestErrorText(t *testing.T) {
	for _, tc := range []struct {
		e    Error
		want string
	}{
		{Error{Name: "h.edn", Line: 3, Col: 7, Msg: "bad"}, "h.edn:3:7: bad"},
		{Error{Name: "h.edn", Line: 3, Msg: "bad"}, "h.edn:3: bad"},
		{Error{Name: "h.edn", Msg: "bad"}, "h.edn: bad"},
		{Error{Msg: "bad"}, "bad"},
		{Error{Line: 2, Msg: "bad"}, "2: bad"},
		{Error{Name: "a\nb", Line: 1, Msg: "x\r\ny"}, `a\nb:1: x\r\ny`},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.e, got, tc.want)
		}
	}
}

func TestParseFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.edn")
	if err := os.WriteFile(path, []byte("{:process 0, :type :invoke, :f :read}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, f, err := ParseFile(path, "")
	if err != nil || f != EDN || len(h.Ops) != 1 || h.Ops[0].Source != path+":1" || h.Source != path {
		t.Fatalf("ParseFile: %v, %q, %v", h, f, err)
	}
	_, _, err = ParseFile(filepath.Join(t.TempDir(), "none"), "")
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ParseFile of a missing file: %v", err)
	}
}
