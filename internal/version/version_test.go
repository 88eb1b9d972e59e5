package version

import (
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	i := Info{Program: "record", Version: "v1.2.0", Commit: "abc", Formats: "writes 1", Extra: []string{"probe protocol: 5"}}
	want := "record (mgtrace) v1.2.0\ncommit: abc\ntrace format: writes 1\nprobe protocol: 5\n"
	if got := i.String(); got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func TestGetDefaults(t *testing.T) {
	i := Get("analyze", "reads 1")
	if i.Version != Version || i.Commit == "" || !strings.HasPrefix(i.String(), "analyze (mgtrace) ") {
		t.Errorf("Get = %+v", i)
	}
}
