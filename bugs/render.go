package bugs

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/mgtrace/mgtrace/internal/sarif"
	"github.com/mgtrace/mgtrace/internal/version"
)

// WriteText writes the report for people.
func WriteText(w io.Writer, rep *Report) error {
	bw := bufio.NewWriter(w)
	n := len(rep.Findings)
	fmt.Fprintf(bw, "%s: %s", rep.Trace, plural(n, "finding"))
	if rep.Dropped > 0 {
		fmt.Fprintf(bw, " (and %d more not reported)", rep.Dropped)
	}
	fmt.Fprintf(bw, "; rules: %s\n", strings.Join(rep.Rules, ", "))
	if rep.Truncated {
		fmt.Fprintf(bw, "the trace was cut short (%s): the analysis covers the run up to the cut\n", rep.Reason)
	}
	if rep.Stats.Regions > 0 {
		fmt.Fprintf(bw, "a region trace (%s): the rules run inside the regions only", plural(rep.Stats.Regions, "region"))
		if rep.Stats.EndSkipped {
			fmt.Fprintf(bw, "; the run ended outside a region, so no leak is reported")
		}
		fmt.Fprintf(bw, "\n")
	}
	for i := range rep.Findings {
		f := &rep.Findings[i]
		fmt.Fprintf(bw, "\n%s at %s", f.Rule, siteText(f.Where))
		if f.Count > 1 {
			fmt.Fprintf(bw, " (%d times)", f.Count)
		}
		fmt.Fprintf(bw, "\n  %s\n", f.Message)
		fmt.Fprintf(bw, "  event %d, instruction %d, thread %d\n", f.Seq, f.Instr, f.Thread)
		if len(f.Stack) > 1 {
			fmt.Fprintf(bw, "  stack: %s\n", stackText(f.Stack))
		}
		if b := f.Block; b != nil {
			fmt.Fprintf(bw, "  block #%d: %d bytes at %#x, %s at %s", b.ID, b.Size, b.Base, b.Family, stackText(b.AllocStack))
			if b.Freed {
				fmt.Fprintf(bw, "; freed at %s (event %d)", stackText(b.FreeStack), b.FreeSeq)
			}
			if f.ByAddress {
				fmt.Fprint(bw, " (found by address: the pointer's provenance was lost)")
			}
			fmt.Fprintln(bw)
		}
		for _, c := range f.Chains {
			fmt.Fprintf(bw, "  VPC(%s) = %#x, %s:\n", c.Var, c.Value, plural(c.Instructions, "instruction"))
			for _, s := range c.Steps {
				fmt.Fprintf(bw, "    %-9s %s", s.Kind, siteText(s.Site))
				if s.Address != 0 {
					fmt.Fprintf(bw, " [%#x]", s.Address)
				}
				if s.Note != "" {
					fmt.Fprintf(bw, ": %s", s.Note)
				}
				if s.Seq != 0 {
					fmt.Fprintf(bw, " (event %d)", s.Seq)
				}
				fmt.Fprintln(bw)
			}
		}
	}
	if n > 0 {
		fmt.Fprintf(bw, "\nfollow a finding: analyze mg --at seq:N %s; analyze slice --criterion seq:N %s\n", rep.Trace, rep.Trace)
	}
	return bw.Flush()
}

func siteText(s Site) string {
	if s.PC == 0 && s.File == "" {
		return "?"
	}
	loc := short(s)
	if s.Function != "" && (s.File != "" && s.Line != 0) {
		return fmt.Sprintf("%s (%s)", loc, s.Function)
	}
	if s.Module != "" && s.File == "" {
		return fmt.Sprintf("%s in %s", loc, baseName(s.Module))
	}
	return loc
}

func stackText(st []Site) string {
	var parts []string
	for i, s := range st {
		if i == 6 {
			parts = append(parts, "...")
			break
		}
		parts = append(parts, siteText(s))
	}
	return strings.Join(parts, " <- ")
}

func baseName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// ruleText describes the built-in rules for SARIF's rule list.
var ruleText = map[string]string{
	"unmatched_free":         "free of memory no allocator returned, or of a pointer into a block",
	"double_free":            "a heap block freed twice",
	"mismatched_free":        "a heap block released by a function of another family (malloc/free, new/delete, new[]/delete[])",
	"dangling_pointer_deref": "an access through a pointer to a freed heap block",
	"null_pointer_deref":     "an access through a NULL pointer",
	"heap_buffer_overflow":   "an access outside the heap block the pointer was derived from",
	"uninitialized_read":     "uninitialized heap bytes decide a branch, form an address or reach a system call",
	"definite_leak":          "a heap block never freed and unreachable at the end of the run",
	"possible_leak":          "a heap block never freed and reachable only through interior pointers at the end of the run",
	"still_reachable":        "a heap block still allocated, and reachable, at the end of the run",
	"leak_in_transaction":    "a heap block allocated during a transaction and still allocated when it returns",
}

// SARIF returns the report as a SARIF 2.1.0 log: one result per finding,
// its chains as code flows, the block's allocation and free as related
// locations; source files named by loc (relative to the repository when
// they lie in it).
func SARIF(rep *Report, loc *sarif.Locator) *sarif.Log {
	var rules []sarif.Rule
	for _, r := range rep.Rules {
		d := ruleText[r]
		if d == "" {
			d = "user rule " + r
		}
		rules = append(rules, sarif.Rule{ID: r, ShortDescription: sarif.Message{Text: d}})
	}
	log := sarif.New("mgtrace analyze bugs", version.Version, rules, loc)
	at := func(s Site, msg string) *sarif.Location { return loc.At(s.File, int(s.Line), msg, siteText(s)) }
	for i := range rep.Findings {
		f := &rep.Findings[i]
		res := sarif.Result{RuleID: f.Rule, Level: sarif.LevelError, Message: sarif.Message{Text: f.Message}}
		if l := at(f.Where, ""); l != nil {
			res.Locations = append(res.Locations, *l)
		}
		if b := f.Block; b != nil {
			if l := at(b.Alloc, fmt.Sprintf("block #%d allocated here", b.ID)); l != nil {
				res.RelatedLocations = append(res.RelatedLocations, *l)
			}
			if b.Free != nil {
				if l := at(*b.Free, fmt.Sprintf("block #%d freed here", b.ID)); l != nil {
					res.RelatedLocations = append(res.RelatedLocations, *l)
				}
			}
		}
		for _, c := range f.Chains {
			var tf sarif.ThreadFlow
			for k := len(c.Steps) - 1; k >= 0; k-- {
				s := c.Steps[k]
				msg := string(s.Kind)
				if s.Note != "" {
					msg += ": " + s.Note
				}
				if l := at(s.Site, msg); l != nil {
					tf.Locations = append(tf.Locations, sarif.ThreadFlowLocation{Location: *l})
				}
			}
			if len(tf.Locations) > 0 {
				res.CodeFlows = append(res.CodeFlows, sarif.CodeFlow{Message: sarif.Message{Text: "VPC(" + c.Var + ")"}, ThreadFlows: []sarif.ThreadFlow{tf}})
			}
		}
		log.Add(res)
	}
	return log
}
