package inputs

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"

	"github.com/mgtrace/mgtrace/schema"
)

// Linux x86-64 system call numbers the reader follows.
const (
	sysRead       = 0
	sysWrite      = 1
	sysOpen       = 2
	sysClose      = 3
	sysLseek      = 8
	sysMmap       = 9
	sysPread64    = 17
	sysReadv      = 19
	sysWritev     = 20
	sysPipe       = 22
	sysDup        = 32
	sysDup2       = 33
	sysSocket     = 41
	sysAccept     = 43
	sysRecvfrom   = 45
	sysRecvmsg    = 47
	sysSocketpair = 53
	sysFcntl      = 72
	sysChdir      = 80
	sysFchdir     = 81
	sysCreat      = 85
	sysOpenat     = 257
	sysAccept4    = 288
	sysDup3       = 292
	sysPipe2      = 293
	sysPreadv     = 295
	sysPreadv2    = 327
	sysOpenat2    = 437
)

// Flags and values of their arguments.
const (
	atFDCWD       = -100    // openat's "relative to the working directory"
	fDupFD        = 0       // fcntl F_DUPFD
	fDupFDCloexec = 1030    // fcntl F_DUPFD_CLOEXEC
	mapAnonymous  = 0x20    // mmap MAP_ANONYMOUS
	msgPeek       = 0x2     // recv MSG_PEEK: the bytes stay queued
	maxErrno      = 4095    // results in [-4095, -1] are errors
	maxRange      = 1 << 40 // a larger range is a corrupt argument, not input
)

// syscallNames are the names Range.Syscall uses.
var syscallNames = map[uint64]string{
	sysRead: "read", sysPread64: "pread64", sysReadv: "readv", sysPreadv: "preadv",
	sysPreadv2: "preadv2", sysRecvfrom: "recvfrom", sysRecvmsg: "recvmsg", sysMmap: "mmap",
}

// Read reads a trace's events from where tr stands to the end, in one
// pass, and returns its input entities. It follows the file descriptors
// the system calls make, copy, move and close, so that every byte a read,
// pread64, readv, preadv, preadv2, recvfrom or recvmsg brought in, and
// every file range mmap mapped, gets its source and its offset there.
//
// The bytes themselves come from the trace's INPUT events (record since
// protocol 5); a trace recorded before them, or past the recorder's cap on
// input bytes, gives the ranges of read, pread64 and recvfrom without
// Data, and cannot place the buffers of readv, preadv and recvmsg (they
// are counted in Entities.Unplaced). Paths come from SYSCALL_PATH events;
// without them an opened file is a source of kind SourceOther.
func Read(tr *schema.Reader) (*Entities, error) {
	b := NewBuilder(tr.Header().GetCwd())
	for {
		ev, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read input entities: %w", err)
		}
		b.Add(ev)
	}
	return b.Entities(ModulePaths(tr.Tables())), nil
}

// ModulePaths returns the paths of the modules in t (nil when t is nil),
// for Builder.Entities.
func ModulePaths(t *schema.Tables) []string {
	if t == nil {
		return nil
	}
	paths := make([]string, 0, len(t.Modules))
	for _, m := range t.Modules {
		paths = append(paths, m.Path)
	}
	sort.Strings(paths)
	return paths
}

// FromEvents returns the input entities of events (a whole run, in order),
// for a trace whose working directory was cwd and whose modules (tables)
// are at the paths modules. It is Read without a trace file, for tests
// and for callers that hold the events already.
func FromEvents(events []schema.Event, cwd string, modules []string) *Entities {
	b := NewBuilder(cwd)
	for i := range events {
		b.Add(&events[i])
	}
	return b.Entities(modules)
}

// Builder makes the input entities of a run from its events, given one at
// a time, for a caller that reads the trace's events for its own ends and
// wants the entities from the same pass (Read is a Builder over a whole
// trace).
type Builder struct{ r *reader }

// NewBuilder returns a Builder for a run whose working directory (the
// trace header's cwd) was cwd.
func NewBuilder(cwd string) *Builder { return &Builder{r: newReader(cwd)} }

// Add takes the run's next event (it is not kept: the Builder copies what
// it needs).
func (b *Builder) Add(ev *schema.Event) { b.r.event(ev) }

// Entities returns the entities of the events added so far, with the
// file sources that are modules by the rule of IsModulePath marked as
// such (modules: the paths of the trace's modules, see ModulePaths). Call
// it once, after the last Add.
func (b *Builder) Entities(modules []string) *Entities {
	b.r.flush()
	b.r.classify(modules)
	return b.r.e
}

// Entity returns the range that holds entity n and n's offset in it (ok
// false when there is no entity n).
func (e *Entities) Entity(n uint64) (r Range, off uint64, ok bool) {
	i := sort.Search(len(e.Ranges), func(i int) bool { return e.Ranges[i].First+e.Ranges[i].Len > n })
	if i == len(e.Ranges) || e.Ranges[i].First > n {
		return Range{}, 0, false
	}
	return e.Ranges[i], n - e.Ranges[i].First, true
}

// At returns the ranges the SYSCALL event seq brought in (none for a call
// that brought nothing). The slice aliases e.Ranges.
func (e *Entities) At(seq uint64) []Range {
	i := sort.Search(len(e.Ranges), func(i int) bool { return e.Ranges[i].Seq >= seq })
	j := i
	for j < len(e.Ranges) && e.Ranges[j].Seq == seq {
		j++
	}
	return e.Ranges[i:j]
}

// Byte returns the value of entity n (ok false when there is no entity n
// or the trace does not hold its byte).
func (e *Entities) Byte(n uint64) (b byte, ok bool) {
	r, off, ok := e.Entity(n)
	if !ok || r.Data == nil {
		return 0, false
	}
	return r.Data[off], true
}

// desc is an open file description: what a descriptor refers to. dup and
// its kin make descriptors that share one (and its offset).
type desc struct {
	kind SourceKind
	path string // SourceFile: the absolute path
	name string
	// offset is the description's position: for a file, stdin and other
	// descriptors where the next read reads (moved by read, write and
	// lseek); for a socket or a pipe the bytes received so far.
	offset uint64
	source int // index in Entities.Sources, -1 until it brings bytes
}

// piece is one INPUT event of the call being read.
type piece struct {
	addr uint64
	size uint64
	data []byte // nil when the trace does not hold the bytes
}

// call is a SYSCALL event with the SYSCALL_PATH and INPUT events that
// follow it.
type call struct {
	ev      schema.Event
	path    string
	hasPath bool
	pieces  []piece
}

// reader follows the descriptors of one process through its events.
type reader struct {
	cwd    string
	fds    map[int32]*desc
	byPath map[string]int // file sources by path
	e      *Entities
	cur    call
	have   bool // cur holds a call not yet handled
}

func newReader(cwd string) *reader {
	r := &reader{cwd: cwd, fds: map[int32]*desc{}, byPath: map[string]int{}, e: &Entities{Sources: []Source{}, Ranges: []Range{}}}
	r.fds[0] = &desc{kind: SourceStdin, name: "stdin", source: -1}
	return r
}

// event takes the next event of the run.
func (r *reader) event(ev *schema.Event) {
	switch ev.Kind {
	case schema.KindSyscall:
		r.flush()
		r.cur = call{ev: *ev, pieces: r.cur.pieces[:0]}
		r.cur.ev.Data = nil
		r.have = true
	case schema.KindSyscallPath:
		if r.have && ev.Thread == r.cur.ev.Thread {
			r.cur.path, r.cur.hasPath = ev.Name, true
		}
	case schema.KindInput:
		if r.have && ev.Thread == r.cur.ev.Thread {
			p := piece{addr: ev.Addr, size: uint64(ev.Size)}
			if ev.Num == schema.InputRecorded {
				p.data = eventBytes(ev)
			}
			r.cur.pieces = append(r.cur.pieces, p)
		}
	default:
		r.flush()
	}
}

// eventBytes returns a copy of an INPUT event's recorded bytes.
func eventBytes(ev *schema.Event) []byte {
	if ev.Size > 8 {
		return append([]byte(nil), ev.Data...)
	}
	var w [8]byte
	binary.LittleEndian.PutUint64(w[:], ev.Value)
	return append([]byte(nil), w[:ev.Size]...)
}

// lookup returns the description behind fd, making one of kind
// SourceOther for a descriptor the run did not open where the trace shows.
func (r *reader) lookup(fd int32) *desc {
	d := r.fds[fd]
	if d == nil {
		d = &desc{kind: SourceOther, name: fmt.Sprintf("fd %d", fd), source: -1}
		r.fds[fd] = d
	}
	return d
}

// abs makes p absolute against dir (when dir is known).
func abs(dir, p string) string {
	if path.IsAbs(p) || dir == "" {
		return path.Clean(p)
	}
	return path.Join(dir, p)
}

// opened records that fd now refers to the file p (or, when the trace
// does not name it, to a descriptor of unknown origin).
func (r *reader) opened(fd int32, p string, named bool) {
	if !named {
		r.fds[fd] = &desc{kind: SourceOther, name: fmt.Sprintf("fd %d", fd), source: -1}
		return
	}
	r.fds[fd] = &desc{kind: SourceFile, path: p, name: p, source: -1}
}

// stream records that fd is a new socket or pipe.
func (r *reader) stream(fd int32, kind SourceKind) {
	r.fds[fd] = &desc{kind: kind, name: fmt.Sprintf("%s fd %d", kind, fd), source: -1}
}

// sourceOf returns d's source, making it when d brings its first bytes.
func (r *reader) sourceOf(d *desc) int {
	if d.source >= 0 {
		return d.source
	}
	if d.kind == SourceFile {
		if id, ok := r.byPath[d.path]; ok {
			d.source = id
			return id
		}
	}
	id := len(r.e.Sources)
	r.e.Sources = append(r.e.Sources, Source{ID: id, Kind: d.kind, Path: d.path, Name: d.name})
	if d.kind == SourceFile {
		r.byPath[d.path] = id
	}
	d.source = id
	return id
}

// fdPair returns the two descriptors pipe, pipe2 or socketpair wrote (in
// its INPUT event).
func (c *call) fdPair() (a, b int32, ok bool) {
	if len(c.pieces) != 1 || len(c.pieces[0].data) != 8 {
		return 0, 0, false
	}
	d := c.pieces[0].data
	return int32(binary.LittleEndian.Uint32(d)), int32(binary.LittleEndian.Uint32(d[4:])), true
}

// flush handles the call read so far, if any.
func (r *reader) flush() {
	if !r.have {
		return
	}
	r.have = false
	c := &r.cur
	ev := &c.ev
	res := int64(ev.Value)
	if res < 0 && res >= -maxErrno {
		return // a failed call brings nothing and changes no descriptor
	}
	a := ev.Args
	fd := int32(a[0])
	switch ev.Num {
	case sysOpen, sysCreat:
		r.opened(int32(res), abs(r.cwd, c.path), c.hasPath)
	case sysOpenat, sysOpenat2:
		dir := r.cwd
		if dfd := int32(a[0]); dfd != atFDCWD {
			dir = ""
			if d := r.fds[dfd]; d != nil && d.kind == SourceFile {
				dir = d.path
			}
		}
		r.opened(int32(res), abs(dir, c.path), c.hasPath)
	case sysChdir:
		if c.hasPath {
			r.cwd = abs(r.cwd, c.path)
		}
	case sysFchdir:
		if d := r.fds[fd]; d != nil && d.kind == SourceFile {
			r.cwd = d.path
		}
	case sysClose:
		delete(r.fds, fd)
	case sysDup:
		r.fds[int32(res)] = r.lookup(fd)
	case sysDup2, sysDup3:
		if int32(a[1]) != fd {
			r.fds[int32(a[1])] = r.lookup(fd)
		}
	case sysFcntl:
		if a[1] == fDupFD || a[1] == fDupFDCloexec {
			r.fds[int32(res)] = r.lookup(fd)
		}
	case sysSocket, sysAccept, sysAccept4:
		r.stream(int32(res), SourceSocket)
	case sysPipe, sysPipe2:
		if rd, wr, ok := c.fdPair(); ok {
			r.stream(rd, SourcePipe)
			r.stream(wr, SourcePipe)
		}
	case sysSocketpair:
		if s0, s1, ok := c.fdPair(); ok {
			r.stream(s0, SourceSocket)
			r.stream(s1, SourceSocket)
		}
	case sysLseek:
		r.lookup(fd).offset = uint64(res)
	case sysWrite, sysWritev:
		if d := r.lookup(fd); d.kind != SourceSocket && d.kind != SourcePipe {
			d.offset += uint64(res)
		}
	case sysRead, sysRecvfrom, sysReadv, sysRecvmsg:
		d := r.lookup(fd)
		r.brought(c, d, d.offset, uint64(res))
		peek := (ev.Num == sysRecvfrom && a[3]&msgPeek != 0) || (ev.Num == sysRecvmsg && a[2]&msgPeek != 0)
		if !peek {
			d.offset += uint64(res)
		}
	case sysPread64, sysPreadv:
		r.brought(c, r.lookup(fd), a[3], uint64(res))
	case sysPreadv2:
		d := r.lookup(fd)
		if int64(a[3]) == -1 {
			r.brought(c, d, d.offset, uint64(res))
			d.offset += uint64(res)
		} else {
			r.brought(c, d, a[3], uint64(res))
		}
	case sysMmap:
		if a[3]&mapAnonymous == 0 && int32(a[4]) >= 0 && a[1] > 0 && a[1] < maxRange {
			r.add(Range{Len: a[1], Source: r.sourceOf(r.lookup(int32(a[4]))), Offset: a[5], Addr: uint64(res),
				Seq: ev.Seq, Thread: ev.Thread, Syscall: "mmap"})
		}
	}
}

// brought adds the ranges of a read-like call c that brought n bytes from
// d, the first at offset off of the source.
func (r *reader) brought(c *call, d *desc, off, n uint64) {
	if n == 0 || n >= maxRange {
		return
	}
	ev := &c.ev
	base := Range{Source: r.sourceOf(d), Seq: ev.Seq, Thread: ev.Thread, Syscall: syscallNames[ev.Num]}
	if len(c.pieces) == 0 {
		switch ev.Num {
		case sysRead, sysPread64, sysRecvfrom:
			// A trace without INPUT events: the buffer is an argument.
			base.Len, base.Offset, base.Addr = n, off, ev.Args[1]
			r.add(base)
		default:
			r.e.Unplaced++
		}
		return
	}
	// The INPUT events, merged where one continues the last with the
	// same recordedness, at most n bytes in all.
	left := n
	var cur Range
	have := false
	for _, p := range c.pieces {
		if left == 0 {
			break
		}
		size := min(p.size, left)
		data := p.data
		if data != nil {
			data = data[:size]
		}
		left -= size
		if have && cur.Addr+cur.Len == p.addr && (cur.Data == nil) == (data == nil) {
			cur.Len += size
			if data != nil {
				cur.Data = append(cur.Data, data...)
			}
			continue
		}
		if have {
			off += cur.Len
			r.add(cur)
		}
		cur = base
		cur.Addr, cur.Len, cur.Offset, cur.Data = p.addr, size, off, data
		have = true
	}
	if have {
		r.add(cur)
	}
}

// add appends a range, numbering its entities.
func (r *reader) add(rg Range) {
	rg.First = r.e.Total
	r.e.Total += rg.Len
	r.e.Sources[rg.Source].Bytes += rg.Len
	if rg.Data == nil {
		r.e.Unrecorded += rg.Len
	}
	r.e.Ranges = append(r.e.Ranges, rg)
}

// classify marks as SourceModule the file sources the dynamic loader and
// the C library read to run the program (see IsModulePath).
func (r *reader) classify(modules []string) {
	set := moduleSet(modules)
	for i := range r.e.Sources {
		s := &r.e.Sources[i]
		if s.Kind == SourceFile && set.has(s.Path) {
			s.Kind = SourceModule
		}
	}
}
