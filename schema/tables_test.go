package schema

import (
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/schema/tracepb"
)

// TestTablesFunctionCode checks that a function's code is either absent or
// exactly high-low bytes long.
func TestTablesFunctionCode(t *testing.T) {
	for _, tc := range []struct {
		name      string
		low, high uint64
		code      []byte
		wantErr   bool
	}{
		{"no code", 0x1000, 0x1004, nil, false},
		{"whole", 0x1000, 0x1004, []byte{0x55, 0x48, 0x89, 0xc3}, false},
		{"short", 0x1000, 0x1004, []byte{0x55, 0x48}, true},
		{"long", 0x1000, 0x1002, []byte{0x55, 0x48, 0x89}, true},
		{"reversed range", 0x1004, 0x1000, []byte{0x55, 0x48, 0x89, 0xc3}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb := NewTables()
			err := tb.Add(&tracepb.Tables{Functions: []*tracepb.Function{{Id: 1, Name: "f", Low: tc.low, High: tc.high, Code: tc.code}}})
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), "code bytes") {
					t.Errorf("Add: error %v, want one about code bytes", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Add: %v", err)
			}
		})
	}
}

// TestMatchFile checks how a file a user names matches a trace's paths.
func TestMatchFile(t *testing.T) {
	for _, tc := range []struct {
		path, name string
		want       bool
	}{
		{"testdata/programs/list.c", "list.c", true},
		{"testdata/programs/list.c", "programs/list.c", true},
		{"testdata/programs/list.c", "testdata/programs/list.c", true},
		{"testdata/programs/list.c", "./testdata/programs/list.c", true},
		{"testdata/programs/list.c", "/home/me/mgtrace/testdata/programs/list.c", true},
		{"/build/src/list.c", "list.c", true},
		{"/build/src/list.c", "src/list.c", true},
		{"testdata/programs/list.c", "st.c", false},
		{"testdata/programs/list.c", "tree.c", false},
		{"testdata/programs/list.c", "other/list.c", false},
		{"testdata/programs/list.c", "", false},
		{"", "list.c", false},
	} {
		if got := MatchFile(tc.path, tc.name); got != tc.want {
			t.Errorf("MatchFile(%q, %q) = %v, want %v", tc.path, tc.name, got, tc.want)
		}
	}
}
