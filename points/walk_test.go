package points

import (
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/walk"
)

// collect keeps the pc of every executed instruction, in run order.
type collect struct{ pcs []uint64 }

func (c *collect) Instance(in *walk.Instance) error {
	c.pcs = append(c.pcs, in.Static.PC)
	return nil
}

func (c *collect) Event(*schema.Event) error { return nil }

func walkAll(tr *schema.Reader, v walk.Visitor) (walk.Stats, error) {
	return walk.Walk(tr, v, walk.Options{})
}
