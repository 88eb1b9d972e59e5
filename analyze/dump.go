package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/spf13/pflag"

	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
)

const dumpHelp = `
Prints the events of a trace in global order, one per line: JSON objects by
default (schema in docs/cli.md), or aligned text with --format text. Each
line has the sequence number, the kind and the thread, then only the fields
that kind uses. Addresses and values are hex strings ("0x..."); a pc that
the trace's tables know also gets "loc": "file:line (function)".

Filters combine: --from and --to select a range of sequence numbers,
--kind and --thread select among those, and --limit stops after that many
printed events. --from seeks through the trace's block index, so dumping
the end of a large trace does not read all of it; --to stops reading.

A trace cut short is dumped up to its last whole block, with a warning on
stderr. A corrupt trace is dumped up to the damage, then the error is
printed and the exit status is 2.`

// dumpFlags are the flags of analyze dump.
type dumpFlags struct {
	format string
	kinds  []string
	thread uint32
	from   uint64
	to     uint64
	limit  uint64
	output string
	fs     *pflag.FlagSet // to know which flags were given
}

// dumpSetup defines the flags of analyze dump.
func dumpSetup(fs *pflag.FlagSet) func(*env, []string) error {
	f := &dumpFlags{fs: fs}
	names := make([]string, 0, schema.NumKinds)
	for _, k := range schema.Kinds() {
		names = append(names, k.String())
	}
	fs.StringVar(&f.format, "format", "json", "`FORMAT` of the output: json (one object per line) or text (one aligned line per event)")
	fs.StringSliceVar(&f.kinds, "kind", nil, "print only events of these kinds, `K[,K...]` (the flag may be repeated); kinds: "+
		strings.Join(names, ", "))
	fs.Uint32Var(&f.thread, "thread", 0, "print only the events of thread `T` (a thread-switch belongs to the thread it switches to)")
	fs.Uint64Var(&f.from, "from", 0, "start at sequence number `N` (seeks: the events before it are not read)")
	fs.Uint64Var(&f.to, "to", 0, "stop after sequence number `N` (inclusive); default: the last event")
	fs.Uint64Var(&f.limit, "limit", 0, "print at most `N` events (after filtering); 0 means no limit")
	fs.StringVarP(&f.output, "output", "o", "", "write the output to `FILE` instead of stdout")
	return func(e *env, args []string) error { return runDump(e, f, args) }
}

// dumpFilter selects events.
type dumpFilter struct {
	kinds     [schema.NumKinds]bool // all true when --kind is not given
	thread    schema.ThreadID       // 0 = every thread
	from, to  uint64                // inclusive
	limit     uint64                // 0 = none
	hasFilter bool                  // kind or thread filter
}

// parseDumpFilter checks the flags and builds the filter.
func parseDumpFilter(f *dumpFlags) (*dumpFilter, error) {
	d := &dumpFilter{from: f.from, to: ^uint64(0), limit: f.limit}
	if len(f.kinds) == 0 {
		if f.fs.Changed("kind") {
			return nil, usagef("--kind needs at least one event kind")
		}
		for k := range d.kinds {
			d.kinds[k] = true
		}
	}
	for _, name := range f.kinds {
		k, err := schema.ParseKind(strings.TrimSpace(name))
		if err != nil {
			names := make([]string, 0, schema.NumKinds)
			for _, k := range schema.Kinds() {
				names = append(names, k.String())
			}
			return nil, usagef("unknown event kind %q in --kind (valid kinds: %s)", name, strings.Join(names, ", "))
		}
		d.kinds[k] = true
		d.hasFilter = true
	}
	if f.fs.Changed("thread") {
		if f.thread == 0 {
			return nil, usagef("--thread 0: thread ids start at 1")
		}
		d.thread = schema.ThreadID(f.thread)
		d.hasFilter = true
	}
	if f.fs.Changed("to") {
		if f.to < f.from {
			return nil, usagef("--to %d is before --from %d", f.to, f.from)
		}
		d.to = f.to
	}
	return d, nil
}

// match reports whether ev passes the kind and thread filters.
func (d *dumpFilter) match(ev *schema.Event) bool {
	return d.kinds[ev.Kind] && (d.thread == 0 || ev.Thread == d.thread)
}

// runDump runs analyze dump.
func runDump(e *env, f *dumpFlags, args []string) error {
	if err := formatFlag(f.format, "json", "text"); err != nil {
		return err
	}
	filter, err := parseDumpFilter(f)
	if err != nil {
		return err
	}
	path, r, err := openTrace(args)
	if err != nil {
		return err
	}
	defer r.Close()
	if filter.from > 0 {
		// A trace without a single whole block has no events to seek to
		// (and SeekSeq, as first written, could not handle that case).
		// Damage after the events wanted is for reading to find, so the
		// error of Blocks is not the answer here.
		if blocks, _ := r.Blocks(); len(blocks) > 0 {
			if err := r.SeekSeq(filter.from); err != nil {
				return err
			}
		}
	}
	out, err := openOutput(f.output, e.stdout)
	if err != nil {
		return err
	}
	d := &dumper{text: f.format == "text", locs: make(map[uint64]string)}
	atEnd, err := d.dump(out, r, filter)
	if err = out.finish(err); err != nil {
		return err
	}
	if end := r.End(); atEnd && !end.Whole {
		warnTruncated(e.stderr, path, end, "dumped the events before the cut")
	}
	return nil
}

// dumper formats events.
type dumper struct {
	text  bool
	buf   []byte
	locs  map[uint64]string // pc -> location text, "" when unknown
	known int               // table entries when locs was filled
}

// dump writes the events r yields that pass filter. atEnd reports whether
// it read up to the end of the trace.
func (d *dumper) dump(w io.Writer, r *schema.Reader, filter *dumpFilter) (atEnd bool, err error) {
	var printed uint64
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		if ev.Seq < filter.from {
			continue
		}
		if ev.Seq > filter.to {
			return false, nil
		}
		if !filter.match(ev) {
			continue
		}
		if d.text {
			d.buf = d.appendText(d.buf[:0], ev, r.Tables())
		} else {
			d.buf = d.appendJSON(d.buf[:0], ev, r.Tables())
		}
		if _, err := w.Write(d.buf); err != nil {
			return false, err
		}
		printed++
		if printed == filter.limit || ev.Seq == filter.to {
			return false, nil
		}
	}
}

// maxLocs bounds the location cache.
const maxLocs = 1 << 20

// loc returns the location of pc as text, or "" when the tables know
// nothing about it.
func (d *dumper) loc(t *schema.Tables, pc uint64) string {
	if n := len(t.Instructions) + len(t.Functions) + len(t.Modules); n != d.known || len(d.locs) >= maxLocs {
		clear(d.locs) // the tables grew: what was unknown may be known now
		d.known = n
	}
	s, ok := d.locs[pc]
	if !ok {
		s, _ = knownLocation(t.Locate(pc))
		d.locs[pc] = s
	}
	return s
}

// appendJSON appends ev as one JSON object and a newline.
func (d *dumper) appendJSON(b []byte, ev *schema.Event, t *schema.Tables) []byte {
	b = append(b, `{"seq":`...)
	b = strconv.AppendUint(b, ev.Seq, 10)
	b = append(b, `,"kind":"`...)
	b = append(b, ev.Kind.String()...)
	b = append(b, `","thread":`...)
	b = strconv.AppendUint(b, uint64(ev.Thread), 10)
	if ev.Kind.HasPC() {
		b = jsonHex(b, "pc", ev.PC)
		if l := d.loc(t, ev.PC); l != "" {
			b = append(b, `,"loc":`...)
			b = appendJSONString(b, l)
		}
	}
	switch ev.Kind {
	case schema.KindBlock:
		b = jsonUint(b, "count", uint64(ev.Count))
	case schema.KindLoad, schema.KindStore:
		b = jsonHex(b, "addr", ev.Addr)
		b = jsonUint(b, "size", uint64(ev.Size))
		b = jsonHex(b, "value", ev.Value)
		if ev.Size > 8 {
			b = append(b, `,"data":"`...)
			b = appendHexBytes(b, ev.Data)
			b = append(b, '"')
		}
		b = jsonBase(b, ev)
	case schema.KindDerive:
		b = jsonHex(b, "addr", ev.Addr)
		b = append(b, `,"reg":`...)
		b = appendJSONString(b, ev.Reg.String())
		b = jsonBase(b, ev)
	case schema.KindCall:
		b = jsonHex(b, "addr", ev.Addr)
		b = jsonHex(b, "sp", ev.SP)
		b = jsonArgs(b, ev)
	case schema.KindReturn:
		b = jsonHex(b, "addr", ev.Addr)
		b = jsonHex(b, "sp", ev.SP)
		b = jsonHex(b, "value", ev.Value)
	case schema.KindSyscall:
		b = jsonUint(b, "num", ev.Num)
		b = jsonArgs(b, ev)
		b = jsonHex(b, "value", ev.Value)
	case schema.KindThreadCreate, schema.KindThreadSwitch:
		b = jsonUint(b, "tid", uint64(ev.TID))
	case schema.KindSignal:
		b = jsonUint(b, "num", ev.Num)
		b = jsonUint(b, "count", uint64(ev.Count))
		b = jsonHex(b, "addr", ev.Addr)
	case schema.KindClientRequest:
		b = jsonUint(b, "num", ev.Num)
		b = append(b, `,"name":`...)
		b = appendJSONString(b, ev.Name)
		b = jsonArgs(b, ev)
	case schema.KindExit:
		b = jsonHex(b, "value", ev.Value)
		b = jsonUint(b, "num", ev.Num)
	case schema.KindAlter:
		b = jsonUint(b, "num", ev.Num)
		b = jsonUint(b, "count", uint64(ev.Count))
		b = jsonHex(b, "addr", ev.Addr)
	case schema.KindRegion:
		b = jsonUint(b, "num", ev.Num)
		b = jsonUint(b, "count", uint64(ev.Count))
	case schema.KindExcluded:
		b = jsonHex(b, "addr", ev.Addr)
		b = jsonUint(b, "count", uint64(ev.Count))
		b = jsonUint(b, "num", ev.Num)
	case schema.KindClobber:
		b = jsonHex(b, "addr", ev.Addr)
		b = jsonUint(b, "count", uint64(ev.Count))
	case schema.KindControl:
		b = jsonUint(b, "count", uint64(ev.Count))
	case schema.KindPair:
		b = jsonUint(b, "count", uint64(ev.Count))
		b = append(b, `,"reg":`...)
		b = appendJSONString(b, regName(ev.Num))
	case schema.KindMemory, schema.KindRegisters, schema.KindInject:
		if ev.Kind != schema.KindRegisters {
			b = jsonHex(b, "addr", ev.Addr)
		} else {
			b = jsonUint(b, "count", uint64(ev.Count))
			b = append(b, `,"reg":`...)
			b = appendJSONString(b, regName(ev.Num))
		}
		b = jsonUint(b, "size", uint64(ev.Size))
		b = jsonHex(b, "value", ev.Value)
		if ev.Size > 8 {
			b = append(b, `,"data":"`...)
			b = appendHexBytes(b, ev.Data)
			b = append(b, '"')
		}
	case schema.KindSyscallPath:
		b = append(b, `,"name":`...)
		b = appendJSONString(b, ev.Name)
	case schema.KindInput:
		b = jsonHex(b, "addr", ev.Addr)
		b = jsonUint(b, "size", uint64(ev.Size))
		b = jsonUint(b, "num", ev.Num)
		if ev.Num == schema.InputRecorded {
			b = jsonHex(b, "value", ev.Value)
			if ev.Size > 8 {
				b = append(b, `,"data":"`...)
				b = appendHexBytes(b, ev.Data)
				b = append(b, '"')
			}
		}
	}
	return append(b, "}\n"...)
}

// regNames names the registers of a mask (an EXCLUDED event's num), bit n
// for register n.
func regNames(mask uint64) string {
	var names []string
	for r := 0; r < 64; r++ {
		if mask&(1<<r) != 0 {
			names = append(names, schema.Reg(r).String())
		}
	}
	return strings.Join(names, ",")
}

// regName names the register numbered n (a REGISTERS event's first).
func regName(n uint64) string {
	if n > 255 {
		return fmt.Sprintf("reg%d", n)
	}
	return schema.Reg(n).String()
}

func jsonUint(b []byte, key string, v uint64) []byte {
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, '"', ':')
	return strconv.AppendUint(b, v, 10)
}

func jsonHex(b []byte, key string, v uint64) []byte {
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, `":"0x`...)
	b = strconv.AppendUint(b, v, 16)
	return append(b, '"')
}

// jsonBase appends base_reg and base when the event has a base register.
func jsonBase(b []byte, ev *schema.Event) []byte {
	if ev.BaseReg == 0 {
		return b
	}
	b = append(b, `,"base_reg":`...)
	b = appendJSONString(b, ev.BaseReg.String())
	return jsonHex(b, "base", ev.Base)
}

func jsonArgs(b []byte, ev *schema.Event) []byte {
	b = append(b, `,"args":[`...)
	for i, a := range ev.Args {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `"0x`...)
		b = strconv.AppendUint(b, a, 16)
		b = append(b, '"')
	}
	return append(b, ']')
}

const hexDigits = "0123456789abcdef"

// appendHexBytes appends data as lower-case hex, two digits per byte, in
// memory order.
func appendHexBytes(b []byte, data []byte) []byte {
	for _, c := range data {
		b = append(b, hexDigits[c>>4], hexDigits[c&15])
	}
	return b
}

// appendJSONString appends s as a JSON string. Invalid UTF-8 becomes
// U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, `\u202`...)
			b = append(b, hexDigits[r&15])
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// appendText appends ev as one aligned line of text.
func (d *dumper) appendText(b []byte, ev *schema.Event, t *schema.Tables) []byte {
	b = fmt.Appendf(b, "%12d  t%-5d %-15s", ev.Seq, ev.Thread, ev.Kind)
	if ev.Kind == schema.KindThreadExit {
		// no fields: no padding either
		return append(bytes.TrimRight(b, " "), '\n')
	}
	if ev.Kind.HasPC() {
		b = fmt.Appendf(b, " pc=%#x", ev.PC)
	}
	switch ev.Kind {
	case schema.KindBlock:
		b = fmt.Appendf(b, " count=%d", ev.Count)
	case schema.KindLoad, schema.KindStore:
		b = fmt.Appendf(b, " addr=%#x size=%d value=%#x", ev.Addr, ev.Size, ev.Value)
		if ev.Size > 8 {
			b = append(b, " data="...)
			b = appendHexBytes(b, ev.Data)
		}
		b = textBase(b, ev)
	case schema.KindDerive:
		b = fmt.Appendf(b, " addr=%#x reg=%s", ev.Addr, ev.Reg)
		b = textBase(b, ev)
	case schema.KindCall:
		b = fmt.Appendf(b, " addr=%#x sp=%#x", ev.Addr, ev.SP)
		b = textArgs(b, ev)
	case schema.KindReturn:
		b = fmt.Appendf(b, " addr=%#x sp=%#x value=%#x", ev.Addr, ev.SP, ev.Value)
	case schema.KindSyscall:
		b = fmt.Appendf(b, " num=%d", ev.Num)
		b = textArgs(b, ev)
		b = fmt.Appendf(b, " value=%#x", ev.Value)
		if int64(ev.Value) < 0 && int64(ev.Value) >= -4095 {
			b = fmt.Appendf(b, " (%d)", int64(ev.Value))
		}
	case schema.KindThreadCreate, schema.KindThreadSwitch:
		b = fmt.Appendf(b, " tid=%d", ev.TID)
	case schema.KindSignal:
		b = fmt.Appendf(b, " num=%d (%s) count=%d addr=%#x", ev.Num, schema.SignalName(uint32(ev.Num)), ev.Count, ev.Addr)
	case schema.KindClientRequest:
		b = fmt.Appendf(b, " num=%d", ev.Num)
		if name, ok := tracepb.ClientRequest_name[int32(ev.Num)]; ok && ev.Num != 0 && ev.Num <= 1<<31 {
			b = fmt.Appendf(b, " (%s)", strings.ToLower(name))
		}
		b = append(b, " name="...)
		b = strconv.AppendQuote(b, ev.Name)
		b = textArgs(b, ev)
	case schema.KindExit:
		b = fmt.Appendf(b, " value=%d num=%d", int32(ev.Value), ev.Num)
		if ev.Num != 0 {
			b = fmt.Appendf(b, " (%s)", schema.SignalName(uint32(ev.Num)))
		}
	case schema.KindAlter:
		b = fmt.Appendf(b, " num=%d", ev.Num)
		if name, ok := tracepb.Alteration_name[int32(ev.Num)]; ok && ev.Num != 0 && ev.Num <= 1<<31 {
			b = fmt.Appendf(b, " (%s)", strings.ToLower(name))
		}
		b = fmt.Appendf(b, " count=%d addr=%#x", ev.Count, ev.Addr)
	case schema.KindRegion:
		b = fmt.Appendf(b, " num=%d", ev.Num)
		switch ev.Num {
		case 1:
			b = append(b, " (start)"...)
		case 2:
			b = append(b, " (end)"...)
		}
		b = fmt.Appendf(b, " count=%d", ev.Count)
	case schema.KindExcluded:
		b = fmt.Appendf(b, " addr=%#x count=%d num=%#x", ev.Addr, ev.Count, ev.Num)
		if regs := regNames(ev.Num); regs != "" {
			b = fmt.Appendf(b, " (%s)", regs)
		}
	case schema.KindClobber:
		b = fmt.Appendf(b, " addr=%#x count=%d", ev.Addr, ev.Count)
	case schema.KindControl:
		b = fmt.Appendf(b, " count=%d", ev.Count)
	case schema.KindPair:
		b = fmt.Appendf(b, " count=%d reg=%s", ev.Count, regName(ev.Num))
	case schema.KindMemory, schema.KindRegisters, schema.KindInject:
		if ev.Kind != schema.KindRegisters {
			b = fmt.Appendf(b, " addr=%#x", ev.Addr)
		} else {
			b = fmt.Appendf(b, " count=%d reg=%s", ev.Count, regName(ev.Num))
		}
		b = fmt.Appendf(b, " size=%d value=%#x", ev.Size, ev.Value)
		if ev.Size > 8 {
			b = append(b, " data="...)
			b = appendHexBytes(b, ev.Data)
		}
	case schema.KindSyscallPath:
		b = append(b, " name="...)
		b = strconv.AppendQuote(b, ev.Name)
	case schema.KindInput:
		b = fmt.Appendf(b, " addr=%#x size=%d num=%d", ev.Addr, ev.Size, ev.Num)
		if ev.Num == schema.InputRecorded {
			b = append(b, " data="...)
			b = appendInputText(b, ev)
		} else {
			b = append(b, " (bytes not recorded)"...)
		}
	}
	if ev.Kind.HasPC() {
		if l := d.loc(t, ev.PC); l != "" {
			b = append(b, "  at "...)
			b = append(b, clean(l)...)
		}
	}
	return append(b, '\n')
}

func textBase(b []byte, ev *schema.Event) []byte {
	if ev.BaseReg == 0 {
		return b
	}
	return fmt.Appendf(b, " base=%s:%#x", ev.BaseReg, ev.Base)
}

func textArgs(b []byte, ev *schema.Event) []byte {
	b = append(b, " args="...)
	for i, a := range ev.Args {
		if i > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, "%#x", a)
	}
	return b
}

// inputTextBytes is how many bytes of an INPUT event the text dump shows.
const inputTextBytes = 48

// appendInputText appends the start of an INPUT event's bytes as a quoted
// Go string, with the number of bytes left out when there are more.
func appendInputText(b []byte, ev *schema.Event) []byte {
	data := ev.Data
	if ev.Size <= 8 {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], ev.Value)
		data = w[:ev.Size]
	}
	shown := data[:min(len(data), inputTextBytes)]
	b = strconv.AppendQuote(b, string(shown))
	if len(data) > len(shown) {
		b = fmt.Appendf(b, " (+%d bytes)", len(data)-len(shown))
	}
	return b
}
