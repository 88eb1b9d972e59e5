package bugs

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"
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

// sarifLog and the types below are the parts of SARIF 2.1.0 the report
// uses.
type sarifLog struct {
	Version string     `json:"version"`
	Schema  string     `json:"$schema"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool    sarifTool     `json:"tool"`
	Results []sarifResult `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name  string      `json:"name"`
	Rules []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID               string       `json:"id"`
	ShortDescription sarifMessage `json:"shortDescription"`
}

type sarifMessage struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID           string          `json:"ruleId"`
	Level            string          `json:"level"`
	Message          sarifMessage    `json:"message"`
	Locations        []sarifLocation `json:"locations"`
	RelatedLocations []sarifLocation `json:"relatedLocations,omitempty"`
	CodeFlows        []sarifCodeFlow `json:"codeFlows,omitempty"`
}

type sarifLocation struct {
	ID               *int           `json:"id,omitempty"`
	PhysicalLocation *sarifPhysical `json:"physicalLocation,omitempty"`
	Message          *sarifMessage  `json:"message,omitempty"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
}

type sarifCodeFlow struct {
	Message     sarifMessage      `json:"message"`
	ThreadFlows []sarifThreadFlow `json:"threadFlows"`
}

type sarifThreadFlow struct {
	Locations []sarifFlowLocation `json:"locations"`
}

type sarifFlowLocation struct {
	Location sarifLocation `json:"location"`
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

func sarifLoc(s Site, msg string) *sarifLocation {
	if s.File == "" || s.Line == 0 {
		if msg == "" {
			return nil
		}
		return &sarifLocation{Message: &sarifMessage{Text: msg + " (" + siteText(s) + ")"}}
	}
	l := &sarifLocation{PhysicalLocation: &sarifPhysical{
		ArtifactLocation: sarifArtifact{URI: strings.TrimPrefix(s.File, "/")},
		Region:           &sarifRegion{StartLine: int(s.Line)},
	}}
	if msg != "" {
		l.Message = &sarifMessage{Text: msg}
	}
	return l
}

// SARIF returns the report as a SARIF 2.1.0 log: one result per finding,
// its chains as code flows, the block's allocation and free as related
// locations.
func SARIF(rep *Report) any {
	run := sarifRun{Tool: sarifTool{Driver: sarifDriver{Name: "mgtrace analyze bugs"}}, Results: []sarifResult{}}
	for _, r := range rep.Rules {
		d := ruleText[r]
		if d == "" {
			d = "user rule " + r
		}
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRule{ID: r, ShortDescription: sarifMessage{Text: d}})
	}
	sort.Slice(run.Tool.Driver.Rules, func(i, j int) bool { return run.Tool.Driver.Rules[i].ID < run.Tool.Driver.Rules[j].ID })
	for i := range rep.Findings {
		f := &rep.Findings[i]
		res := sarifResult{RuleID: f.Rule, Level: "error", Message: sarifMessage{Text: f.Message}, Locations: []sarifLocation{}}
		if l := sarifLoc(f.Where, ""); l != nil {
			res.Locations = append(res.Locations, *l)
		}
		if b := f.Block; b != nil {
			if l := sarifLoc(b.Alloc, fmt.Sprintf("block #%d allocated here", b.ID)); l != nil {
				res.RelatedLocations = append(res.RelatedLocations, *l)
			}
			if b.Free != nil {
				if l := sarifLoc(*b.Free, fmt.Sprintf("block #%d freed here", b.ID)); l != nil {
					res.RelatedLocations = append(res.RelatedLocations, *l)
				}
			}
		}
		for j := range res.RelatedLocations {
			id := j + 1
			res.RelatedLocations[j].ID = &id
		}
		for _, c := range f.Chains {
			var tf sarifThreadFlow
			for k := len(c.Steps) - 1; k >= 0; k-- {
				s := c.Steps[k]
				msg := string(s.Kind)
				if s.Note != "" {
					msg += ": " + s.Note
				}
				if l := sarifLoc(s.Site, msg); l != nil {
					tf.Locations = append(tf.Locations, sarifFlowLocation{Location: *l})
				}
			}
			if len(tf.Locations) > 0 {
				res.CodeFlows = append(res.CodeFlows, sarifCodeFlow{Message: sarifMessage{Text: "VPC(" + c.Var + ")"}, ThreadFlows: []sarifThreadFlow{tf}})
			}
		}
		run.Results = append(run.Results, res)
	}
	return sarifLog{Version: "2.1.0", Schema: "https://json.schemastore.org/sarif-2.1.0.json", Runs: []sarifRun{run}}
}
