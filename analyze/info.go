package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/pflag"

	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
	"github.com/mgtrace/mgtrace/slice"
)

const infoHelp = `
Reads the whole trace once, checks it, and prints: the program and its
arguments, the recorder, the start time, the format version, whether the
trace is whole or was cut short (and where), how the process ended (exit
code, or the signal with its fault address and source line), events in total
and by kind, threads, blocks, file size and bytes per event, the sizes of the
static tables, and the C-points and markers the program reported.

A trace cut short (the recorder or the machine stopped) is not an error: info
summarizes every event up to the cut, says "truncated at byte N (reason)" and
exits 0. A corrupt trace, or one whose events do not make sense, is an input
error: one line on stderr naming the file and the byte offset, exit status 2.

On a terminal, reading a trace larger than 64 MiB shows its progress on
stderr.`

// infoFlags are the flags of analyze info.
type infoFlags struct {
	format string
	output string
}

// infoSetup defines the flags of analyze info.
func infoSetup(fs *pflag.FlagSet) func(*env, []string) error {
	f := &infoFlags{}
	fs.StringVar(&f.format, "format", "text", "`FORMAT` of the output: text (for people) or json (the schema in docs/cli.md)")
	fs.StringVarP(&f.output, "output", "o", "", "write the output to `FILE` instead of stdout")
	return func(e *env, args []string) error { return runInfo(e, f, args) }
}

// runInfo runs analyze info.
func runInfo(e *env, f *infoFlags, args []string) error {
	if err := formatFlag(f.format, "text", "json"); err != nil {
		return err
	}
	path, r, err := openTrace(args)
	if err != nil {
		return err
	}
	defer r.Close()
	prog := newProgress(e.stderr, path, r.Size())
	s, err := schema.Summarize(r, prog.callback())
	prog.clear()
	if err != nil {
		return err
	}
	out, err := openOutput(f.output, e.stdout)
	if err != nil {
		return err
	}
	if f.format == "json" {
		err = writeInfoJSON(out, s)
	} else {
		err = writeInfoText(out, s)
	}
	return out.finish(err)
}

// writeInfoText prints the summary for people.
func writeInfoText(w io.Writer, s *schema.Summary) error {
	h := s.Header
	var b strings.Builder
	field := func(label, format string, args ...any) {
		value := fmt.Sprintf(format, args...)
		if value == "" {
			value = "(none)"
		}
		fmt.Fprintf(&b, "%-13s%s\n", label+":", value)
	}
	field("trace", "%s", clean(s.Name))
	field("program", "%s", clean(h.GetProgram()))
	if p := h.GetProgramPath(); p != "" && p != h.GetProgram() {
		field("path", "%s", clean(p))
	}
	field("args", "%s", quoteArgs(h.GetArgs()))
	if h.GetCwd() != "" {
		field("cwd", "%s", clean(h.GetCwd()))
	}
	if h.GetPid() != 0 {
		field("pid", "%d", h.GetPid())
	}
	if m := machine(h); m != "" {
		field("machine", "%s", m)
	}
	field("recorder", "%s", clean(h.GetRecorder()))
	x, err := slice.ParseExecSlice(h)
	if err != nil {
		return err
	}
	lvl, err := schema.HeaderLevel(h)
	if err != nil {
		return err
	}
	field("level", "%s", levelText(lvl))
	if kvs := ownSettings(h.GetSettings()); len(kvs) > 0 {
		field("settings", "%s", keyValues(kvs))
	}
	if x != nil {
		field("slice of", "%s, criterion %s%s", clean(x.Of), clean(x.Criterion), optionsText(x.Options))
		field("keeps", "%d of its %d instructions (%.1f%%; %d in the slice), %d of its %d events (%.1f%%)",
			x.Kept, x.Instances, percent(x.Kept, x.Instances), x.Members, s.Events, x.Events, percent(s.Events, x.Events))
	}
	if h.GetEnvCount() > 0 || len(h.GetEnv()) > 0 {
		env := plural(int64(h.GetEnvCount()), "variable")
		if len(h.GetEnv()) > 0 {
			env += "; " + keyValues(h.GetEnv())
		}
		field("environment", "%s", env)
	}
	field("format", "version %d", h.GetFormatVersion())
	field("started", "%s", timeText(h.GetStartTimeUnixNanos()))
	if s.EndTimeUnixNanos != 0 {
		end := timeText(s.EndTimeUnixNanos)
		if start := h.GetStartTimeUnixNanos(); start != 0 && s.EndTimeUnixNanos >= start {
			end += fmt.Sprintf(" (recorded for %s)", time.Duration(s.EndTimeUnixNanos-start).Round(time.Millisecond))
		}
		field("ended", "%s", end)
	}
	if s.End.Whole {
		field("state", "whole")
	} else {
		field("state", "truncated at byte %d of %d (%s)", s.End.TruncatedAt, s.FileSize, s.End.Reason)
	}
	field("exit", "%s", exitText(s))
	if sig := s.Signal; sig != nil {
		field("signal", "%s", signalText(sig))
	}

	field("events", "%d", s.Events)
	for _, k := range schema.Kinds() {
		if c := s.KindCounts[k]; c > 0 {
			fmt.Fprintf(&b, "  %-16s%12d  %5.1f%%\n", k, c, 100*float64(c)/float64(s.Events))
		}
	}
	if s.Regions > 0 {
		field("regions", "%d, holding %d of the run's %d events in the trace (%.1f%%); outside them only system calls, thread events, signals, client requests and allocator calls are recorded",
			s.Regions, s.RegionEvents, s.RunEvents, percent(s.RegionEvents, s.RunEvents))
	}
	if s.KindCounts[schema.KindInput] > 0 {
		in := fmt.Sprintf("%d bytes written by system calls (INPUT events)", s.InputBytes)
		if s.InputUnrecorded > 0 {
			in += fmt.Sprintf("; %d of them not recorded, past the recorder's cap (record --input-cap): the trace says where they landed, not what they were", s.InputUnrecorded)
		}
		field("input", "%s", in)
	}
	writeThreadsText(&b, s.Threads)
	blocks := fmt.Sprintf("%d", s.Blocks)
	var parts []string
	for k := schema.BlockHeaderKind; k <= schema.BlockFooter; k++ {
		if n := s.BlockCounts[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, k))
		}
	}
	if len(parts) > 0 {
		blocks += ": " + strings.Join(parts, ", ")
	}
	field("blocks", "%s", blocks)
	size := fmt.Sprintf("%d bytes", s.FileSize)
	if s.FileSize >= 1024 {
		size += " (" + humanBytes(s.FileSize) + ")"
	}
	if s.Events > 0 {
		size += fmt.Sprintf(", %.1f bytes/event", s.BytesPerEvent)
	}
	field("file size", "%s", size)
	t := s.Tables
	field("tables", "%s, %s, %s, %s, %s", plural(int64(t.Modules), "module"), plural(int64(t.Files), "source file"),
		plural(int64(t.Functions), "function"), plural(int64(t.Instructions), "instruction"),
		plural(int64(t.StructTypes), "struct type"))
	if n := s.PCsWithoutInstruction; n > 0 {
		verb := "have"
		if n == 1 {
			verb = "has"
		}
		more := ""
		if s.PCsWithoutInstructionCapped {
			more, verb = "more than ", "have"
		}
		fmt.Fprintf(&b, "%-13s%s%s %s no instruction entry\n", "", more, plural(int64(n), "event pc"), verb)
	}
	writeNamesText(&b, "c-points", s.CPoints)
	writeNamesText(&b, "markers", s.Markers)
	if s.OtherRequests > 0 {
		field("other client requests", "%d", s.OtherRequests)
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// maxThreadRows bounds the thread table of the text output.
const maxThreadRows = 100

// writeThreadsText prints the thread table.
func writeThreadsText(b *strings.Builder, threads []schema.ThreadSummary) {
	fmt.Fprintf(b, "%-13s%d\n", "threads:", len(threads))
	if len(threads) == 0 {
		return
	}
	fmt.Fprintf(b, "  %8s  %8s  %8s  %12s  %12s  %12s\n", "thread", "parent", "os-tid", "first", "last", "events")
	dash := func(n uint64, known bool) string {
		if !known {
			return "-"
		}
		return strconv.FormatUint(n, 10)
	}
	for i, t := range threads {
		if i == maxThreadRows {
			fmt.Fprintf(b, "  ... %d more (--format json lists every thread)\n", len(threads)-i)
			break
		}
		line := fmt.Sprintf("  %8d  %8s  %8s  %12s  %12s  %12d", t.ID, dash(uint64(t.Parent), t.Parent != 0),
			dash(uint64(t.OSTID), t.OSTID != 0), dash(t.FirstSeq, t.Events > 0), dash(t.LastSeq, t.Events > 0), t.Events)
		if t.Exited {
			line += "  exited"
		}
		b.WriteString(line + "\n")
	}
}

// writeNamesText prints C-point or marker counts, one name per line.
func writeNamesText(b *strings.Builder, label string, names []schema.NameCount) {
	if len(names) == 0 {
		return
	}
	var total uint64
	for _, n := range names {
		total += n.Count
	}
	fmt.Fprintf(b, "%-13s%d (%s)\n", label+":", total, plural(int64(len(names)), "name"))
	for _, n := range names {
		name := clean(n.Name)
		if n.Name == "" {
			name = `""`
		}
		fmt.Fprintf(b, "  %-26s%12d\n", name, n.Count)
	}
}

// exitText says how the process ended.
func exitText(s *schema.Summary) string {
	x := s.Exit
	var text string
	switch {
	case !x.Known() && !s.End.Whole:
		return "unknown (the trace was cut short before saying)"
	case !x.Known():
		return "unknown (the trace does not say)"
	case !x.Ended:
		return "none: the recording stopped before the process ended"
	case x.Signal != 0:
		text = fmt.Sprintf("killed by %s (signal %d)", schema.SignalName(x.Signal), x.Signal)
		if x.CoreDumped {
			text += ", core dumped"
		}
	default:
		text = fmt.Sprintf("exited with code %d", x.Code)
	}
	if x.Source == schema.ExitFromEvent {
		text += " (from the exit event)"
	}
	return text
}

// signalText describes the last signal.
func signalText(sig *schema.SignalInfo) string {
	text := fmt.Sprintf("%s (signal %d, code %d) at %#x", schema.SignalName(sig.Number), sig.Number, sig.Code, sig.PC)
	if l, ok := knownLocation(sig.Location); ok {
		text += " " + l
	}
	return text + fmt.Sprintf(", fault address %#x; thread %d, event %d", sig.FaultAddr, sig.Thread, sig.Seq)
}

// knownLocation returns l as text when the tables knew anything about it.
func knownLocation(l schema.Location) (string, bool) {
	if l.File == "" && l.Function == "" && l.Module == "" {
		return "", false
	}
	return l.String(), true
}

// timeText formats nanoseconds since the epoch in UTC.
func timeText(ns int64) string {
	if ns == 0 {
		return "unknown"
	}
	return time.Unix(0, ns).UTC().Format("2006-01-02 15:04:05.000 UTC")
}

// timeRFC3339 formats nanoseconds since the epoch for JSON ("" when 0).
func timeRFC3339(ns int64) string {
	if ns == 0 {
		return ""
	}
	return time.Unix(0, ns).UTC().Format(time.RFC3339Nano)
}

// machine describes where the trace was recorded.
func machine(h *tracepb.Header) string {
	var parts []string
	if a := strings.TrimSpace(h.GetArch() + " " + h.GetOs()); a != "" {
		parts = append(parts, clean(a))
	}
	if h.GetHostname() != "" {
		parts = append(parts, "host "+clean(h.GetHostname()))
	}
	if h.GetKernel() != "" {
		parts = append(parts, "kernel "+clean(h.GetKernel()))
	}
	return strings.Join(parts, ", ")
}

// plural returns "1 module" or "2 modules".
func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// humanBytes formats a byte count with a binary unit ("1.5 MiB").
func humanBytes(n int64) string {
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB"}
	v := float64(n) / 1024
	i := 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	return fmt.Sprintf("%.1f %s", v, units[i])
}

// clean returns s, quoted when it holds characters that would garble a
// line of text (control characters, invalid UTF-8).
func clean(s string) string {
	for _, c := range s {
		if c == unicode.ReplacementChar || !unicode.IsPrint(c) && c != ' ' {
			return strconv.Quote(s)
		}
	}
	return s
}

// quoteArgs joins arguments, quoting those that are empty or hold spaces,
// quotes or control characters.
func quoteArgs(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\"'\\") || clean(a) != a {
			out[i] = strconv.Quote(a)
		} else {
			out[i] = a
		}
	}
	return strings.Join(out, " ")
}

// keyValues formats key=value pairs.
// ownSettings returns the settings but an execution slice's (which the
// text says in words).
func ownSettings(kvs []*tracepb.KeyValue) []*tracepb.KeyValue {
	var out []*tracepb.KeyValue
	for _, kv := range kvs {
		if !strings.HasPrefix(kv.GetKey(), "xslice.") {
			out = append(out, kv)
		}
	}
	return out
}

// optionsText returns an execution slice's slicing options for its
// description ("" for the defaults).
func optionsText(o string) string {
	if o == "" {
		return ""
	}
	return ", options " + clean(o)
}

func keyValues(kvs []*tracepb.KeyValue) string {
	parts := make([]string, len(kvs))
	for i, kv := range kvs {
		parts[i] = clean(kv.GetKey()) + "=" + quoteArgs([]string{kv.GetValue()})
	}
	return strings.Join(parts, " ")
}

// The JSON output of analyze info. Field names are part of the documented
// schema (docs/cli.md): add fields, never rename or remove them.
type (
	infoJSON struct {
		SchemaVersion      int               `json:"schema_version"`
		Trace              string            `json:"trace"`
		FormatVersion      uint32            `json:"format_version"`
		Recorder           string            `json:"recorder"`
		Program            string            `json:"program"`
		ProgramPath        string            `json:"program_path"`
		Args               []string          `json:"args"`
		Cwd                string            `json:"cwd"`
		Pid                uint32            `json:"pid"`
		Arch               string            `json:"arch"`
		OS                 string            `json:"os"`
		Hostname           string            `json:"hostname"`
		Kernel             string            `json:"kernel"`
		EnvCount           uint32            `json:"env_count"`
		Env                []keyValueJSON    `json:"env"`
		Settings           []keyValueJSON    `json:"settings"`
		Level              string            `json:"level"`
		StartTime          string            `json:"start_time"`
		StartTimeUnixNanos int64             `json:"start_time_unix_nanos"`
		EndTime            string            `json:"end_time"`
		EndTimeUnixNanos   int64             `json:"end_time_unix_nanos"`
		Whole              bool              `json:"whole"`
		TruncatedAt        *int64            `json:"truncated_at"`
		TruncationReason   string            `json:"truncation_reason"`
		FileSize           int64             `json:"file_size"`
		Events             uint64            `json:"events"`
		BytesPerEvent      float64           `json:"bytes_per_event"`
		Kinds              map[string]uint64 `json:"kinds"`
		Threads            []threadJSON      `json:"threads"`
		Blocks             blocksJSON        `json:"blocks"`
		Exit               exitJSON          `json:"exit"`
		Signal             *signalJSON       `json:"signal"`
		Tables             tablesJSON        `json:"tables"`
		PCsWithoutInstr    int               `json:"pcs_without_instruction"`
		PCsCapped          bool              `json:"pcs_without_instruction_capped"`
		CPoints            map[string]uint64 `json:"cpoints"`
		Markers            map[string]uint64 `json:"markers"`
		OtherRequests      uint64            `json:"other_client_requests"`
		Regions            *regionsJSON      `json:"regions,omitempty"`
		ExecutionSlice     *execSliceJSON    `json:"execution_slice,omitempty"`
		Input              *inputJSON        `json:"input,omitempty"`
	}
	// inputJSON describes the INPUT events (absent when there are none).
	inputJSON struct {
		Bytes      uint64 `json:"bytes"`      // bytes system calls wrote into the program
		Unrecorded uint64 `json:"unrecorded"` // of them, those past the recorder's cap
	}
	keyValueJSON struct {
		Key   string `json:"key"`
		Value string `json:"value"`
	}
	threadJSON struct {
		ID       uint32  `json:"id"`
		OSTID    uint32  `json:"os_tid"`
		Parent   uint32  `json:"parent"`
		FirstSeq *uint64 `json:"first_seq"`
		LastSeq  *uint64 `json:"last_seq"`
		Events   uint64  `json:"events"`
		Exited   bool    `json:"exited"`
	}
	blocksJSON struct {
		Total  int `json:"total"`
		Header int `json:"header"`
		Tables int `json:"tables"`
		Events int `json:"events"`
		Footer int `json:"footer"`
	}
	exitJSON struct {
		Known      bool   `json:"known"`
		Source     string `json:"source"`
		Ended      bool   `json:"ended"`
		Code       int32  `json:"code"`
		Signal     uint32 `json:"signal"`
		SignalName string `json:"signal_name"`
		CoreDumped bool   `json:"core_dumped"`
	}
	signalJSON struct {
		Seq       uint64  `json:"seq"`
		Thread    uint32  `json:"thread"`
		Number    uint32  `json:"number"`
		Name      string  `json:"name"`
		Code      uint32  `json:"code"`
		FaultAddr string  `json:"fault_addr"`
		PC        string  `json:"pc"`
		Loc       *string `json:"loc"`
		Function  string  `json:"function"`
		File      string  `json:"file"`
		Line      uint32  `json:"line"`
	}
	// regionsJSON describes a region trace's regions (absent for a whole
	// trace).
	// execSliceJSON describes an execution slice (analyze slice
	// --reduced-trace).
	execSliceJSON struct {
		Of                string  `json:"of"`
		Criterion         string  `json:"criterion"`
		Options           string  `json:"options,omitempty"`
		Instructions      uint64  `json:"instructions"`       // the original's instruction instances
		KeptInstructions  uint64  `json:"kept_instructions"`  // those this trace keeps
		SliceInstructions uint64  `json:"slice_instructions"` // the slice's among them
		InstructionFrac   float64 `json:"instruction_fraction"`
		Events            uint64  `json:"events"` // the original's events
		EventFrac         float64 `json:"event_fraction"`
	}
	regionsJSON struct {
		Count     int     `json:"count"`
		Events    uint64  `json:"events"`     // the run's events inside the regions
		RunEvents uint64  `json:"run_events"` // the run's events in the trace
		Fraction  float64 `json:"fraction"`   // events / run_events
	}
	tablesJSON struct {
		Modules      int `json:"modules"`
		Files        int `json:"files"`
		Functions    int `json:"functions"`
		Instructions int `json:"instructions"`
		StructTypes  int `json:"struct_types"`
	}
)

// percent returns 100*n/of, 0 when of is 0.
func percent(n, of uint64) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

// infoSchemaVersion is the version of the info JSON schema.
const infoSchemaVersion = 1

// writeInfoJSON prints the summary as one JSON object.
func writeInfoJSON(w io.Writer, s *schema.Summary) error {
	h := s.Header
	j := infoJSON{
		SchemaVersion: infoSchemaVersion,
		Trace:         s.Name, FormatVersion: h.GetFormatVersion(), Recorder: h.GetRecorder(),
		Program: h.GetProgram(), ProgramPath: h.GetProgramPath(), Args: h.GetArgs(), Cwd: h.GetCwd(),
		Pid: h.GetPid(), Arch: h.GetArch(), OS: h.GetOs(), Hostname: h.GetHostname(), Kernel: h.GetKernel(),
		EnvCount: h.GetEnvCount(), Env: keyValuesJSON(h.GetEnv()), Settings: keyValuesJSON(h.GetSettings()),
		Level:     levelName(h),
		StartTime: timeRFC3339(h.GetStartTimeUnixNanos()), StartTimeUnixNanos: h.GetStartTimeUnixNanos(),
		EndTime: timeRFC3339(s.EndTimeUnixNanos), EndTimeUnixNanos: s.EndTimeUnixNanos,
		Whole: s.End.Whole, FileSize: s.FileSize, Events: s.Events, BytesPerEvent: s.BytesPerEvent,
		Kinds: make(map[string]uint64), Threads: []threadJSON{},
		Blocks: blocksJSON{Total: s.Blocks, Header: s.BlockCounts[schema.BlockHeaderKind],
			Tables: s.BlockCounts[schema.BlockTables], Events: s.BlockCounts[schema.BlockEvents],
			Footer: s.BlockCounts[schema.BlockFooter]},
		Exit: exitJSON{Known: s.Exit.Known(), Source: s.Exit.Source, Ended: s.Exit.Ended, Code: s.Exit.Code,
			Signal: s.Exit.Signal, CoreDumped: s.Exit.CoreDumped},
		Tables: tablesJSON{Modules: s.Tables.Modules, Files: s.Tables.Files, Functions: s.Tables.Functions,
			Instructions: s.Tables.Instructions, StructTypes: s.Tables.StructTypes},
		PCsWithoutInstr: s.PCsWithoutInstruction, PCsCapped: s.PCsWithoutInstructionCapped,
		CPoints: nameCounts(s.CPoints), Markers: nameCounts(s.Markers), OtherRequests: s.OtherRequests,
	}
	if j.Args == nil {
		j.Args = []string{}
	}
	x, err := slice.ParseExecSlice(h)
	if err != nil {
		return err
	}
	if x != nil {
		j.ExecutionSlice = &execSliceJSON{Of: x.Of, Criterion: x.Criterion, Options: x.Options,
			Instructions: x.Instances, KeptInstructions: x.Kept, SliceInstructions: x.Members,
			InstructionFrac: percent(x.Kept, x.Instances) / 100, Events: x.Events, EventFrac: percent(s.Events, x.Events) / 100}
	}
	if s.Regions > 0 {
		j.Regions = &regionsJSON{Count: s.Regions, Events: s.RegionEvents, RunEvents: s.RunEvents,
			Fraction: percent(s.RegionEvents, s.RunEvents) / 100}
	}
	if s.KindCounts[schema.KindInput] > 0 {
		j.Input = &inputJSON{Bytes: s.InputBytes, Unrecorded: s.InputUnrecorded}
	}
	if !s.End.Whole {
		at := s.End.TruncatedAt
		j.TruncatedAt, j.TruncationReason = &at, s.End.Reason
	}
	for _, k := range schema.Kinds() {
		// The kinds of region recording and re-execution only when present.
		if k <= schema.KindExit || s.KindCounts[k] > 0 {
			j.Kinds[k.String()] = s.KindCounts[k]
		}
	}
	for _, t := range s.Threads {
		tj := threadJSON{ID: uint32(t.ID), OSTID: t.OSTID, Parent: uint32(t.Parent), Events: t.Events, Exited: t.Exited}
		if t.Events > 0 {
			first, last := t.FirstSeq, t.LastSeq
			tj.FirstSeq, tj.LastSeq = &first, &last
		}
		j.Threads = append(j.Threads, tj)
	}
	if s.Exit.Signal != 0 {
		j.Exit.SignalName = schema.SignalName(s.Exit.Signal)
	}
	if sig := s.Signal; sig != nil {
		sj := &signalJSON{Seq: sig.Seq, Thread: uint32(sig.Thread), Number: sig.Number, Name: schema.SignalName(sig.Number),
			Code: sig.Code, FaultAddr: hex(sig.FaultAddr), PC: hex(sig.PC),
			Function: sig.Location.Function, File: sig.Location.File, Line: sig.Location.Line}
		if l, ok := knownLocation(sig.Location); ok {
			sj.Loc = &l
		}
		j.Signal = sj
	}
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return fmt.Errorf("encode summary: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func keyValuesJSON(kvs []*tracepb.KeyValue) []keyValueJSON {
	out := make([]keyValueJSON, len(kvs))
	for i, kv := range kvs {
		out[i] = keyValueJSON{Key: kv.GetKey(), Value: kv.GetValue()}
	}
	return out
}

func nameCounts(ns []schema.NameCount) map[string]uint64 {
	m := make(map[string]uint64, len(ns))
	for _, n := range ns {
		m[n.Name] = n.Count
	}
	return m
}

// hex formats an address or value as "0x...".
func hex(v uint64) string { return "0x" + strconv.FormatUint(v, 16) }

// levelText describes a trace's level of detail (record --level) for
// analyze info's text output.
func levelText(l schema.Level) string {
	switch l {
	case schema.LevelHeap:
		return "heap (no loads or stores based on rsp or rbp)"
	case schema.LevelFlow:
		return "flow (no loads, stores or derivations)"
	}
	return l.String()
}

// levelName returns the level a header records, or "" when it is not one.
func levelName(h *tracepb.Header) string {
	l, err := schema.HeaderLevel(h)
	if err != nil {
		return ""
	}
	return l.String()
}
