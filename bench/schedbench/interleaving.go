package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/mgtrace/mgtrace/schema"
)

// stretch is one thread's run between two thread switches.
type stretch struct {
	thread schema.ThreadID
	blocks uint64 // BLOCK events of the stretch
}

// interleaving reads the trace at path and returns its stretches in
// order: a new stretch starts at each THREAD_SWITCH event.
func interleaving(path string) ([]stretch, error) {
	r, err := schema.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var runs []stretch
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return runs, nil
		}
		if err != nil {
			return runs, fmt.Errorf("read %s: %w", path, err)
		}
		switch ev.Kind {
		case schema.KindThreadSwitch:
			runs = append(runs, stretch{thread: ev.TID})
		case schema.KindBlock:
			if len(runs) == 0 {
				runs = append(runs, stretch{thread: ev.Thread})
			}
			runs[len(runs)-1].blocks++
		}
	}
}

// normalize drops the stretches without a block (a thread that got the
// big lock and ran nothing) and joins the neighbours that then belong to
// the same thread.
func normalize(runs []stretch) []stretch {
	var out []stretch
	for _, x := range runs {
		if x.blocks == 0 {
			continue
		}
		if n := len(out); n > 0 && out[n-1].thread == x.thread {
			out[n-1].blocks += x.blocks
			continue
		}
		out = append(out, x)
	}
	return out
}

// sequence is the stretches as text, "t1:1234 t2:56 ...".
func sequence(runs []stretch) string {
	var b strings.Builder
	for i, x := range runs {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "t%d:%d", x.thread, x.blocks)
	}
	return b.String()
}
