// Package sarif writes the parts of SARIF 2.1.0 (the OASIS Static Analysis
// Results Interchange Format) that analyze's reports use: one run of one
// tool, its rules, results with a level, a message and source locations,
// related locations and code flows. `analyze bugs`, `analyze check` and
// `analyze locate` fill a Log with --format sarif; code-scanning services
// (GitHub's upload-sarif, among others) read it.
//
// Source files are named relative to a root folder (the repository) when
// they lie under it, with the base id %SRCROOT%, and as file:// URIs
// otherwise (Locator).
package sarif

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Version and Schema are the SARIF version the logs declare and its
// JSON schema.
const (
	Version = "2.1.0"
	Schema  = "https://json.schemastore.org/sarif-2.1.0.json"
)

// SrcRoot is the uriBaseId of artifact locations relative to the root.
const SrcRoot = "%SRCROOT%"

// Levels of results.
const (
	LevelError   = "error"
	LevelWarning = "warning"
	LevelNote    = "note"
)

// Log is a SARIF log.
type Log struct {
	Version string `json:"version"`
	Schema  string `json:"$schema"`
	Runs    []Run  `json:"runs"`
}

// Run is one run of a tool.
type Run struct {
	Tool Tool `json:"tool"`
	// OriginalURIBaseIDs says where %SRCROOT% was on the machine that
	// wrote the log.
	OriginalURIBaseIDs map[string]ArtifactLocation `json:"originalUriBaseIds,omitempty"`
	Results            []Result                    `json:"results"`
}

// Tool names the tool.
type Tool struct {
	Driver Driver `json:"driver"`
}

// Driver is the tool's component that produced the results.
type Driver struct {
	Name           string `json:"name"`
	Version        string `json:"version,omitempty"`
	InformationURI string `json:"informationUri,omitempty"`
	Rules          []Rule `json:"rules"`
}

// Rule describes a rule id that results name.
type Rule struct {
	ID               string         `json:"id"`
	ShortDescription Message        `json:"shortDescription"`
	FullDescription  *Message       `json:"fullDescription,omitempty"`
	Default          *Configuration `json:"defaultConfiguration,omitempty"`
}

// Configuration is a rule's default level.
type Configuration struct {
	Level string `json:"level"`
}

// Message is a plain-text message.
type Message struct {
	Text string `json:"text"`
}

// Result is one finding.
type Result struct {
	RuleID           string     `json:"ruleId"`
	Level            string     `json:"level"`
	Message          Message    `json:"message"`
	Locations        []Location `json:"locations"`
	RelatedLocations []Location `json:"relatedLocations,omitempty"`
	CodeFlows        []CodeFlow `json:"codeFlows,omitempty"`
}

// Location is a place in a source file (PhysicalLocation) with a
// message, or a message alone when the place is not known. ID numbers
// related locations.
type Location struct {
	ID               *int              `json:"id,omitempty"`
	PhysicalLocation *PhysicalLocation `json:"physicalLocation,omitempty"`
	Message          *Message          `json:"message,omitempty"`
}

// PhysicalLocation is a file and a region of it.
type PhysicalLocation struct {
	ArtifactLocation ArtifactLocation `json:"artifactLocation"`
	Region           *Region          `json:"region,omitempty"`
}

// ArtifactLocation is a file's URI, relative to URIBaseID when that is
// set.
type ArtifactLocation struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId,omitempty"`
}

// Region is a line of a file.
type Region struct {
	StartLine int `json:"startLine"`
}

// CodeFlow is a path through the program: here one thread flow.
type CodeFlow struct {
	Message     Message      `json:"message"`
	ThreadFlows []ThreadFlow `json:"threadFlows"`
}

// ThreadFlow is the locations of a code flow in order.
type ThreadFlow struct {
	Locations []ThreadFlowLocation `json:"locations"`
}

// ThreadFlowLocation is one step of a thread flow.
type ThreadFlowLocation struct {
	Location Location `json:"location"`
}

// New returns a log with one run of the tool name, version and rules
// (sorted by id), no results yet, and the root of loc as %SRCROOT%.
func New(name, version string, rules []Rule, loc *Locator) *Log {
	rules = append([]Rule{}, rules...)
	sort.Slice(rules, func(i, j int) bool { return rules[i].ID < rules[j].ID })
	run := Run{Tool: Tool{Driver: Driver{Name: name, Version: version,
		InformationURI: "https://github.com/mgtrace/mgtrace", Rules: rules}}, Results: []Result{}}
	if loc != nil && loc.root != "" {
		run.OriginalURIBaseIDs = map[string]ArtifactLocation{SrcRoot: {URI: fileURI(loc.root) + "/"}}
	}
	return &Log{Version: Version, Schema: Schema, Runs: []Run{run}}
}

// Add appends a result to the log's run.
func (l *Log) Add(r Result) {
	if r.Locations == nil {
		r.Locations = []Location{}
	}
	for i := range r.RelatedLocations {
		id := i + 1
		r.RelatedLocations[i].ID = &id
	}
	l.Runs[0].Results = append(l.Runs[0].Results, r)
}

// Locator makes the locations of source files, relative to a root folder
// when they lie under it.
type Locator struct {
	root string // absolute and clean, or "" for none
}

// NewLocator returns a Locator for the root folder dir ("" for none: every
// absolute path becomes a file:// URI).
func NewLocator(dir string) (*Locator, error) {
	if dir == "" {
		return &Locator{}, nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("SARIF root %s: %w", dir, err)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	return &Locator{root: abs}, nil
}

// RepoRoot returns the root of the git work tree that holds dir (the
// nearest folder above it, or itself, with a .git entry), or dir itself
// when there is none.
func RepoRoot(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	for d := abs; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		up := filepath.Dir(d)
		if up == d {
			return abs
		}
		d = up
	}
}

// Artifact returns the artifact location of file: relative to the root
// with base id %SRCROOT% when it lies under it, a file:// URI when it is
// another absolute path, the path as it is when it is relative.
func (l *Locator) Artifact(file string) ArtifactLocation {
	if !filepath.IsAbs(file) {
		return ArtifactLocation{URI: filepath.ToSlash(filepath.Clean(file))}
	}
	file = filepath.Clean(file)
	if l != nil && l.root != "" {
		if rel, err := filepath.Rel(l.root, file); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return ArtifactLocation{URI: filepath.ToSlash(rel), URIBaseID: SrcRoot}
		}
	}
	return ArtifactLocation{URI: fileURI(file)}
}

// At returns the location of line in file with an optional message; a
// location with the message alone (and where, the place in words) when
// file or line is not known, or nil when there is no message either.
func (l *Locator) At(file string, line int, msg, where string) *Location {
	if file == "" || line <= 0 {
		if msg == "" {
			return nil
		}
		if where != "" {
			msg += " (" + where + ")"
		}
		return &Location{Message: &Message{Text: msg}}
	}
	loc := &Location{PhysicalLocation: &PhysicalLocation{ArtifactLocation: l.Artifact(file), Region: &Region{StartLine: line}}}
	if msg != "" {
		loc.Message = &Message{Text: msg}
	}
	return loc
}

// fileURI is the file:// URI of an absolute path (its bytes escaped
// where a URI needs it).
func fileURI(p string) string {
	var b strings.Builder
	b.WriteString("file://")
	for _, c := range []byte(filepath.ToSlash(p)) {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("/-._~+", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// Validate checks a SARIF log's bytes for what SARIF 2.1.0 requires and
// what code-scanning services need of each result: the version, a run
// with a tool driver's name, results with a rule id among the driver's
// rules, a level, a message text, and locations whose files have a URI and
// whose regions start at line 1 or later. It returns the first problem.
func Validate(data []byte) error {
	var log struct {
		Version *string `json:"version"`
		Runs    []struct {
			Tool *struct {
				Driver *struct {
					Name  string `json:"name"`
					Rules []struct {
						ID               string   `json:"id"`
						ShortDescription *Message `json:"shortDescription"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results *[]struct {
				RuleID           string            `json:"ruleId"`
				Level            string            `json:"level"`
				Message          *Message          `json:"message"`
				Locations        []json.RawMessage `json:"locations"`
				RelatedLocations []json.RawMessage `json:"relatedLocations"`
				CodeFlows        []struct {
					ThreadFlows []struct {
						Locations []struct {
							Location json.RawMessage `json:"location"`
						} `json:"locations"`
					} `json:"threadFlows"`
				} `json:"codeFlows"`
			} `json:"results"`
		} `json:"runs"`
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	if err := dec.Decode(&log); err != nil {
		return fmt.Errorf("not JSON of a SARIF log: %w", err)
	}
	if log.Version == nil || *log.Version != Version {
		return fmt.Errorf("version is not %q", Version)
	}
	if len(log.Runs) == 0 {
		return fmt.Errorf("no runs")
	}
	for i, run := range log.Runs {
		if run.Tool == nil || run.Tool.Driver == nil || run.Tool.Driver.Name == "" {
			return fmt.Errorf("run %d: no tool.driver.name", i)
		}
		rules := make(map[string]bool)
		for _, r := range run.Tool.Driver.Rules {
			if r.ID == "" || r.ShortDescription == nil || r.ShortDescription.Text == "" {
				return fmt.Errorf("run %d: a rule without an id or a short description", i)
			}
			rules[r.ID] = true
		}
		if run.Results == nil {
			return fmt.Errorf("run %d: no results array", i)
		}
		for j, res := range *run.Results {
			where := fmt.Sprintf("run %d, result %d", i, j)
			switch {
			case res.RuleID == "" || !rules[res.RuleID]:
				return fmt.Errorf("%s: rule id %q is not among the driver's rules", where, res.RuleID)
			case res.Level != LevelError && res.Level != LevelWarning && res.Level != LevelNote && res.Level != "none":
				return fmt.Errorf("%s: level %q", where, res.Level)
			case res.Message == nil || res.Message.Text == "":
				return fmt.Errorf("%s: no message text", where)
			}
			var all []json.RawMessage
			all = append(all, res.Locations...)
			all = append(all, res.RelatedLocations...)
			for _, cf := range res.CodeFlows {
				if len(cf.ThreadFlows) == 0 {
					return fmt.Errorf("%s: a code flow without thread flows", where)
				}
				for _, tf := range cf.ThreadFlows {
					if len(tf.Locations) == 0 {
						return fmt.Errorf("%s: a thread flow without locations", where)
					}
					for _, l := range tf.Locations {
						all = append(all, l.Location)
					}
				}
			}
			for _, raw := range all {
				if err := validLocation(raw); err != nil {
					return fmt.Errorf("%s: %w", where, err)
				}
			}
		}
	}
	return nil
}

func validLocation(raw json.RawMessage) error {
	var l struct {
		PhysicalLocation *struct {
			ArtifactLocation *ArtifactLocation `json:"artifactLocation"`
			Region           *struct {
				StartLine *int `json:"startLine"`
			} `json:"region"`
		} `json:"physicalLocation"`
		Message *Message `json:"message"`
	}
	if err := json.Unmarshal(raw, &l); err != nil {
		return fmt.Errorf("location: %w", err)
	}
	p := l.PhysicalLocation
	switch {
	case p == nil && (l.Message == nil || l.Message.Text == ""):
		return fmt.Errorf("a location with neither a physical location nor a message")
	case p == nil:
		return nil
	case p.ArtifactLocation == nil || p.ArtifactLocation.URI == "":
		return fmt.Errorf("a physical location without an artifact URI")
	case strings.HasPrefix(p.ArtifactLocation.URI, "/"):
		return fmt.Errorf("artifact URI %q is an absolute path, not a URI", p.ArtifactLocation.URI)
	case p.Region != nil && (p.Region.StartLine == nil || *p.Region.StartLine < 1):
		return fmt.Errorf("a region without a start line of 1 or more")
	}
	return nil
}
