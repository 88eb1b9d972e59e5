package recorder

import (
	"fmt"
	"os"
	"strings"

	"github.com/mgtrace/mgtrace/points"
)

// Alteration is one change to make to the run (record --switch or
// --suppress): the instance(s) of a source line of the main program, with
// the rules of package points.
type Alteration struct {
	Kind points.Kind
	Spec points.Spec
	// Text is the spec as the user wrote it, for messages.
	Text string
}

// String is the alteration as a flag: "--switch list.c:40#2".
func (a Alteration) String() string { return "--" + a.Kind.String() + " " + a.Text }

// alterPlan is the alterations resolved against the program: what the
// probe is told (one slot, that is one counter, per alteration).
type alterPlan struct {
	alts  []Alteration
	rules []*points.Rule
}

// planAlterations resolves each alteration against the program's ELF file
// before it runs. Errors name the flag: "--switch list.c:99: no code on
// that line (lines with code near it: 97, 101)".
func planAlterations(prog string, alts []Alteration) (*alterPlan, error) {
	if len(alts) == 0 {
		return nil, nil
	}
	p, err := points.Open(prog)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	plan := &alterPlan{alts: alts}
	for _, a := range alts {
		r, err := p.Resolve(a.Kind, a.Spec)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a, err)
		}
		plan.rules = append(plan.rules, r)
	}
	return plan, nil
}

// Probe alteration kinds (record/vgtool/mgt_main.c, ALT_*).
const (
	probeSwitch = 1
	probeCall   = 2
	probeStore  = 3
	probeFollow = 4
)

// writeFile writes the probe's alteration file (--mgt-alter-file): one
// line per instruction, "slot kind instance dev ino offset", with the
// instruction located by the device and inode of the program's file and
// its offset there.
func (p *alterPlan) writeFile(path, prog string) error {
	dev, ino, err := fileIdentity(prog)
	if err != nil {
		return fmt.Errorf("alterations: %w", err)
	}
	var b strings.Builder
	for slot, r := range p.rules {
		kind := probeStore
		switch {
		case r.Kind == points.Switch:
			kind = probeSwitch
		case r.Call:
			kind = probeCall
		}
		inst := p.alts[slot].Spec.Instance
		for i, in := range r.Effect {
			k := kind
			if kind == probeStore && i > 0 {
				// The stores after the anchor are not counted on their
				// own: they follow the anchor's decision.
				k = probeFollow
			}
			fmt.Fprintf(&b, "%d %d %d %d %d %d\n", slot, k, inst, dev, ino, in.Loc.Offset)
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("alterations: %w", err)
	}
	return nil
}

// warnings says which alterations never happened, from the probe's counts
// of each slot's executions (nil counts: the probe did not report them).
func (p *alterPlan) warnings(counts map[uint64]uint64) []string {
	if p == nil {
		return nil
	}
	var out []string
	for slot, a := range p.alts {
		n, ok := counts[uint64(slot)]
		if !ok && counts == nil {
			continue
		}
		switch {
		case n == 0:
			out = append(out, fmt.Sprintf("%s: the line never ran", a))
		case !a.Spec.All && n < a.Spec.Instance:
			times := "times"
			if n == 1 {
				times = "time"
			}
			out = append(out, fmt.Sprintf("%s: the line ran only %d %s", a, n, times))
		}
	}
	return out
}
