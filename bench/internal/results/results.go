// Package results holds what the benchmark tools in bench/ share: a
// description of the machine a run was on, number formatting, the
// answer to -h and to a bad command line, and the rewriting of a tool's
// own marked section of a Markdown results file (bench/RESULTS.md),
// leaving the rest of the file alone.
//
// A tool's section starts with its begin marker and ends with its end
// marker, both HTML comments:
//
//	<!-- tracebench:begin: written by bench/tracebench (make bench); edits here are overwritten -->
//	...
//	<!-- tracebench:end -->
package results

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// Section names the marked section of one tool in a results file.
type Section struct {
	Tool   string // the tool's name, as in bench/TOOL: "tracebench"
	Target string // the make target that runs it: "make bench"
}

// Begin returns the comment that opens the section.
func (s Section) Begin() string {
	return fmt.Sprintf("<!-- %s:begin: written by bench/%s (%s); edits here are overwritten -->", s.Tool, s.Tool, s.Target)
}

// End returns the comment that closes the section.
func (s Section) End() string { return "<!-- " + s.Tool + ":end -->" }

// Update replaces the section in the Markdown file at path with section,
// which must start with s.Begin() and end with s.End() and a newline. A
// file without the section gets it appended after a blank line; a missing
// or empty file is created with a title. The begin marker is recognised by
// its start ("<!-- TOOL:begin"), so a changed wording still matches. A file
// with only one of the markers is an error, to be fixed by hand. The file is
// replaced by renaming a new one into place.
func (s Section) Update(path, section string) error {
	if !strings.HasPrefix(section, s.Begin()+"\n") || !strings.HasSuffix(section, s.End()+"\n") {
		return fmt.Errorf("update results: the %s section is not between its markers", s.Tool)
	}
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("update results: %w", err)
	}
	endMarker := s.End()
	var out []byte
	begin := bytes.Index(old, []byte("<!-- "+s.Tool+":begin"))
	end := bytes.Index(old, []byte(endMarker))
	switch {
	case len(old) == 0:
		out = []byte("# Benchmark results\n\n" + section)
	case begin >= 0 && end > begin:
		end += len(endMarker)
		if end < len(old) && old[end] == '\n' {
			end++
		}
		out = append(append(append([]byte{}, old[:begin]...), section...), old[end:]...)
	case begin >= 0 || end >= 0:
		return fmt.Errorf("update results: %s has only one of the %s markers; fix it by hand", path, s.Tool)
	default:
		out = append(bytes.TrimRight(old, "\n"), "\n\n"+section...)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, out, 0o644); err != nil {
		return fmt.Errorf("update results: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("update results: %w", err)
	}
	return nil
}

// Group formats n with thousands separators: 50000000 is "50,000,000".
func Group(n uint64) string {
	s := strconv.FormatUint(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Machine describes the computer a benchmark ran on. Fields that could
// not be read say "unknown" (Cores is then 0).
type Machine struct {
	CPU    string // CPU model name
	Cores  int    // logical processors
	Memory string // total memory: "23.5 GiB"
	Kernel string // kernel release
	Load   string // 1, 5 and 15 minute load averages when described
}

// DescribeMachine reads the machine's description from /proc; call it
// when a run starts, for the load average of that moment.
func DescribeMachine() Machine {
	m := Machine{CPU: "unknown CPU", Memory: "unknown", Kernel: "unknown", Load: "unknown"}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			key, val, ok := strings.Cut(sc.Text(), ":")
			switch key = strings.TrimSpace(key); {
			case !ok:
			case key == "processor":
				m.Cores++
			case key == "model name" && m.Cores == 1:
				m.CPU = strings.TrimSpace(val)
			}
		}
		f.Close()
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				if kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64); err == nil {
					m.Memory = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
				}
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) >= 3 {
			m.Load = strings.Join(f[:3], " ")
		}
	}
	return m
}

// String describes the machine and the Go toolchain in one line, as the
// results sections print it after "Machine: ":
// "AMD EPYC; 2 cores (2 usable by Go); 23.5 GiB memory; Linux 6.1.0; go1.26.8".
func (m Machine) String() string {
	return fmt.Sprintf("%s; %d cores (%d usable by Go); %s memory; Linux %s; %s",
		m.CPU, m.Cores, runtime.NumCPU(), m.Memory, m.Kernel, runtime.Version())
}
