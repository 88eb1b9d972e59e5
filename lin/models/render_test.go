package models_test

import (
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/lin"
	"github.com/mgtrace/mgtrace/lin/models"
)

func TestWriteTextFigure3(t *testing.T) {
	h := pairSnapshot(l(i(1), i(2)))
	for k := range h.Ops {
		h.Ops[k].Source = "figure3:" + lin.IntValue(int64(k+1)).String()
	}
	res := check(t, "snapshot", l(i(1), i(1)), h)
	m, _ := models.New("snapshot", l(i(1), i(1)))
	var b strings.Builder
	if err := lin.WriteText(&b, m, res); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	t.Log("\n" + out)
	for _, want := range []string{
		"not linearizable: 5 operations, model snapshot",
		"The operation that could not be placed:\n  read() -> [1 2]  (client 2, figure3:2)",
		"5 operations: the one above, 4 that overlap it, 0 earlier ones it needs",
		"<- could not be placed",
		"then read() -> [1 2] cannot be placed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}
