package recorder

import (
	"reflect"
	"testing"

	"github.com/mgtrace/mgtrace/points"
)

func TestAlterWarnings(t *testing.T) {
	alt := func(kind points.Kind, text string) Alteration {
		sp, err := points.ParseSpec(text)
		if err != nil {
			t.Fatal(err)
		}
		return Alteration{Kind: kind, Spec: sp, Text: text}
	}
	p := &alterPlan{alts: []Alteration{
		alt(points.Switch, "list.c:40#7"),
		alt(points.Suppress, "list.c:52#all"),
		alt(points.Switch, "list.c:41#2"),
		alt(points.Suppress, "list.c:60"),
		alt(points.Suppress, "list.c:61#2"),
	}}
	got := p.warnings(map[uint64]uint64{0: 3, 1: 0, 2: 2, 3: 9, 4: 1})
	want := []string{
		"--switch list.c:40#7: the line ran only 3 times",
		"--suppress list.c:52#all: the line never ran",
		"--suppress list.c:61#2: the line ran only 1 time",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("warnings:\n%q\nwant\n%q", got, want)
	}
	if got := p.warnings(nil); got != nil {
		t.Errorf("no counts (the probe did not report them): %q, want none", got)
	}
	if got := (*alterPlan)(nil).warnings(map[uint64]uint64{0: 1}); got != nil {
		t.Errorf("no alterations: %q", got)
	}
}
