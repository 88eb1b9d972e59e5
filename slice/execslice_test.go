package slice_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
	"github.com/mgtrace/mgtrace/slice"
)

// TestExecSliceSettings writes an execution slice's description as header
// settings and reads it back; a header without them is no execution
// slice, and malformed ones are a one-line error.
func TestExecSliceSettings(t *testing.T) {
	for _, x := range []*slice.ExecSlice{
		{Of: "run.trace", Criterion: "list.c:42#3", From: 7, Instances: 1000, Kept: 100, Members: 90, Events: 600,
			Point:  slice.Point{Label: "list.c:42#3", Insts: []uint32{10, 11, 12}, Last: 12},
			Stacks: map[schema.ThreadID][2]uint64{1: {0x1ffeff0000, 0x1fff000700}, 2: {0x5000, 0x6000}}},
		{Of: "a b.trace", Criterion: "seq:5 reg rax", Options: "--data-only --depth 3", Instances: 5, Kept: 1, Members: 1,
			Point: slice.Point{Label: "seq:5 reg rax", Last: 0, HasLoc: true, Reg: tracepb.Register_RAX}},
		{Of: "c.trace", Criterion: "crash addr 0x1000:4", Instances: 5, Kept: 2, Members: 1,
			Point: slice.Point{Label: "crash addr 0x1000:4", Last: 1, HasLoc: true, Addr: 0x1000, Size: 4}},
	} {
		h := &tracepb.Header{Settings: append([]*tracepb.KeyValue{{Key: "go", Value: "1"}}, x.Settings()...)}
		got, err := slice.ParseExecSlice(h)
		if err != nil {
			t.Fatalf("%s: %v", x.Of, err)
		}
		if !reflect.DeepEqual(got, x) {
			t.Errorf("read back\n%+v\nwant\n%+v", got, x)
		}
	}
	if x, err := slice.ParseExecSlice(&tracepb.Header{Settings: []*tracepb.KeyValue{{Key: "go", Value: "1"}}}); x != nil || err != nil {
		t.Errorf("a trace without the settings: %v, %v", x, err)
	}
	for _, kv := range [][2]string{
		{"xslice.instances", "12"},
		{"xslice.criterion-instances", "1,x"},
		{"xslice.criterion-location", "reg rsx"},
		{"xslice.stacks", "1:0x10"},
		{"xslice.from", "-1"},
	} {
		h := &tracepb.Header{Settings: []*tracepb.KeyValue{{Key: "xslice.of", Value: "o.trace"}, {Key: kv[0], Value: kv[1]}}}
		_, err := slice.ParseExecSlice(h)
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), kv[0]) {
			t.Errorf("%s=%q: error %v", kv[0], kv[1], err)
		}
	}
}
