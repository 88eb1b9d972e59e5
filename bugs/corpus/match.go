package corpus

import (
	"path/filepath"
	"slices"

	"github.com/mgtrace/mgtrace/bugs"
)

// InFile says whether a site is a line of the program's own source.
func (p *Program) InFile(s bugs.Site) bool {
	return s.Line != 0 && filepath.Base(s.File) == filepath.Base(p.Path)
}

// HasLine says whether a site is one of lines of the program's source.
func (p *Program) HasLine(s bugs.Site, lines []int) bool {
	return p.InFile(s) && slices.Contains(lines, int(s.Line))
}

// RootSites are the sites a finding names as its root cause: its chains'
// steps, its block's allocation and free with their stacks.
func RootSites(f *bugs.Finding) []bugs.Site {
	var out []bugs.Site
	for _, c := range f.Chains {
		for _, s := range c.Steps {
			out = append(out, s.Site)
		}
	}
	if b := f.Block; b != nil {
		out = append(out, b.Alloc)
		out = append(out, b.AllocStack...)
		if b.Free != nil {
			out = append(out, *b.Free)
			out = append(out, b.FreeStack...)
		}
	}
	return out
}

// AtSymptom returns the findings of class at one of the program's symptom
// lines of that class (for a leak, the block's allocation may be the
// line).
func (p *Program) AtSymptom(class string, fs []bugs.Finding) []*bugs.Finding {
	var out []*bugs.Finding
	for i := range fs {
		f := &fs[i]
		if f.Rule != class {
			continue
		}
		if p.HasLine(f.Where, p.Symptoms[class]) || IsLeak(class) && f.Block != nil && p.HasLine(f.Block.Alloc, p.Symptoms[class]) {
			out = append(out, f)
		}
	}
	return out
}

// Rooted says whether one of the findings names a root line of class.
func (p *Program) Rooted(class string, fs []*bugs.Finding) bool {
	for _, f := range fs {
		for _, s := range RootSites(f) {
			if p.HasLine(s, p.Roots[class]) {
				return true
			}
		}
	}
	return false
}
