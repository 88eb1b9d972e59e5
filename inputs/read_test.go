package inputs

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/mgtrace/mgtrace/schema"
)

// Synthetic events: a system call, the path it named, the bytes it wrote.
func sys(num uint64, res int64, args ...uint64) schema.Event {
	ev := schema.Event{Kind: schema.KindSyscall, Thread: 1, Num: num, Value: uint64(res)}
	copy(ev.Args[:], args)
	return ev
}

func named(p string) schema.Event {
	return schema.Event{Kind: schema.KindSyscallPath, Thread: 1, Name: p}
}

func input(addr uint64, data string) schema.Event {
	ev := schema.Event{Kind: schema.KindInput, Thread: 1, Addr: addr, Size: uint32(len(data)), Num: schema.InputRecorded}
	var w [8]byte
	copy(w[:], data)
	ev.Value = binary.LittleEndian.Uint64(w[:])
	if len(data) > 8 {
		ev.Data = []byte(data)
	}
	return ev
}

func unrecorded(addr uint64, size uint32) schema.Event {
	return schema.Event{Kind: schema.KindInput, Thread: 1, Addr: addr, Size: size}
}

func fds(a, b int32) schema.Event {
	var w [8]byte
	binary.LittleEndian.PutUint32(w[:], uint32(a))
	binary.LittleEndian.PutUint32(w[4:], uint32(b))
	return input(0x7ffc_0000_0000, string(w[:]))
}

func neg(v int64) uint64 { return uint64(v) }

// want is one expected range: the source's name and kind, the offset, the
// length, the address and the bytes ("" when not recorded).
type want struct {
	source string
	kind   SourceKind
	offset uint64
	len    uint64
	addr   uint64
	data   string
	call   string
}

func TestReadDescriptors(t *testing.T) {
	const buf = 0x5000
	tests := []struct {
		name   string
		cwd    string
		mods   []string
		events []schema.Event
		want   []want
	}{{
		name: "stdin read twice, offsets go on",
		events: []schema.Event{
			sys(sysRead, 3, 0, buf, 100), input(buf, "abc"),
			sys(sysRead, 2, 0, buf+10, 100), input(buf+10, "de"),
			sys(sysRead, 0, 0, buf, 100), // end of file: nothing
		},
		want: []want{{"stdin", SourceStdin, 0, 3, buf, "abc", "read"}, {"stdin", SourceStdin, 3, 2, buf + 10, "de", "read"}},
	}, {
		name: "relative open against the working directory; a failed read brings nothing",
		cwd:  "/home/u",
		events: []schema.Event{
			sys(sysOpenat, 3, neg(atFDCWD), 0x1000, 0), named("data/in.txt"),
			sys(sysRead, -11, 3, buf, 10),
			sys(sysRead, 4, 3, buf, 10), input(buf, "1234"),
			sys(sysPread64, 2, 3, buf, 2, 100), input(buf, "xy"),
			sys(sysRead, 1, 3, buf, 10), input(buf, "5"),
		},
		want: []want{
			{"/home/u/data/in.txt", SourceFile, 0, 4, buf, "1234", "read"},
			{"/home/u/data/in.txt", SourceFile, 100, 2, buf, "xy", "pread64"},
			{"/home/u/data/in.txt", SourceFile, 4, 1, buf, "5", "read"},
		},
	}, {
		name: "lseek, dup shares the offset, close and reopen gives a new offset in the same source",
		events: []schema.Event{
			sys(sysOpen, 3, 0x1000, 0), named("/d/f"),
			sys(sysLseek, 10, 3, 10, 0),
			sys(sysDup, 5, 3),
			sys(sysRead, 2, 5, buf), input(buf, "ab"),
			sys(sysRead, 2, 3, buf), input(buf, "cd"),
			sys(sysClose, 0, 3),
			sys(sysClose, 0, 5),
			sys(sysOpen, 3, 0x1000, 0), named("/d/f"),
			sys(sysRead, 1, 3, buf), input(buf, "a"),
		},
		want: []want{
			{"/d/f", SourceFile, 10, 2, buf, "ab", "read"},
			{"/d/f", SourceFile, 12, 2, buf, "cd", "read"},
			{"/d/f", SourceFile, 0, 1, buf, "a", "read"},
		},
	}, {
		name: "dup2 onto stdin and fcntl F_DUPFD; writes move a file's offset",
		events: []schema.Event{
			sys(sysOpen, 3, 0x1000, 2), named("/tmp/x"),
			sys(sysWrite, 5, 3, buf, 5),
			sys(sysDup2, 0, 3, 0),
			sys(sysFcntl, 7, 0, fDupFD, 0),
			sys(sysRead, 1, 0, buf), input(buf, "q"),
			sys(sysRead, 1, 7, buf), input(buf, "r"),
		},
		want: []want{{"/tmp/x", SourceFile, 5, 1, buf, "q", "read"}, {"/tmp/x", SourceFile, 6, 1, buf, "r", "read"}},
	}, {
		name: "openat relative to a directory descriptor; chdir",
		cwd:  "/",
		events: []schema.Event{
			sys(sysOpenat, 4, neg(atFDCWD), 0x1000, 0), named("/srv/d"),
			sys(sysOpenat, 5, 4, 0x1000, 0), named("a.txt"),
			sys(sysChdir, 0, 0x1000), named("/var"),
			sys(sysOpen, 6, 0x1000, 0), named("b.txt"),
			sys(sysRead, 1, 5, buf), input(buf, "A"),
			sys(sysRead, 1, 6, buf), input(buf, "B"),
		},
		want: []want{{"/srv/d/a.txt", SourceFile, 0, 1, buf, "A", "read"}, {"/var/b.txt", SourceFile, 0, 1, buf, "B", "read"}},
	}, {
		name: "readv: one range per buffer, offsets follow one another",
		events: []schema.Event{
			sys(sysOpen, 3, 0x1000, 0), named("/f"),
			sys(sysReadv, 5, 3, 0x2000, 2), input(buf, "abc"), input(buf+0x100, "de"),
			sys(sysPreadv, 3, 3, 0x2000, 1, 50), input(buf, "xyz"),
			sys(sysPreadv2, 1, 3, 0x2000, 1, neg(-1), 0, 0), input(buf, "f"),
		},
		want: []want{
			{"/f", SourceFile, 0, 3, buf, "abc", "readv"},
			{"/f", SourceFile, 3, 2, buf + 0x100, "de", "readv"},
			{"/f", SourceFile, 50, 3, buf, "xyz", "preadv"},
			{"/f", SourceFile, 5, 1, buf, "f", "preadv2"},
		},
	}, {
		name: "contiguous INPUT events make one range; bytes past the cap are not recorded",
		events: []schema.Event{
			sys(sysOpen, 3, 0x1000, 0), named("/big"),
			sys(sysRead, 24, 3, buf, 24), input(buf, "0123456789"), input(buf+10, "abcdef"), unrecorded(buf+16, 8),
		},
		want: []want{{"/big", SourceFile, 0, 16, buf, "0123456789abcdef", "read"}, {"/big", SourceFile, 16, 8, buf + 16, "", "read"}},
	}, {
		name: "sockets and pipes count the bytes received; MSG_PEEK does not consume",
		events: []schema.Event{
			sys(sysSocketpair, 0, 1, 1, 0, 0x3000), fds(3, 4),
			sys(sysPipe2, 0, 0x3000, 0), fds(5, 6),
			sys(sysRecvfrom, 2, 3, buf, 10, msgPeek, 0, 0), input(buf, "hi"),
			sys(sysRecvfrom, 2, 3, buf, 10, 0, 0, 0), input(buf, "hi"),
			sys(sysRecvmsg, 3, 3, 0x4000, 0), input(buf, "you"),
			sys(sysRead, 4, 5, buf, 10), input(buf, "pipe"),
			sys(sysSocket, 7, 2, 1, 0),
			sys(sysRead, 2, 7, buf, 10), input(buf, "ok"),
		},
		want: []want{
			{"socket fd 3", SourceSocket, 0, 2, buf, "hi", "recvfrom"},
			{"socket fd 3", SourceSocket, 0, 2, buf, "hi", "recvfrom"},
			{"socket fd 3", SourceSocket, 2, 3, buf, "you", "recvmsg"},
			{"pipe fd 5", SourcePipe, 0, 4, buf, "pipe", "read"},
			{"socket fd 7", SourceSocket, 0, 2, buf, "ok", "read"},
		},
	}, {
		name: "mmap of a file: the mapped length from the mmap offset, no bytes; anonymous maps are not input",
		events: []schema.Event{
			sys(sysOpen, 3, 0x1000, 0), named("/data/m"),
			sys(sysMmap, 0x7000_0000, 0, 8192, 1, 2, 3, 4096),
			sys(sysMmap, 0x7100_0000, 0, 8192, 3, 0x22, neg(-1), 0),
		},
		want: []want{{"/data/m", SourceFile, 4096, 8192, 0x7000_0000, "", "mmap"}},
	}, {
		name: "module files: the loader's cache, libraries, the trace's modules, locale data",
		mods: []string{"/opt/app/bin/prog"},
		events: []schema.Event{
			sys(sysOpenat, 3, neg(atFDCWD), 0x1000, 0), named("/etc/ld.so.cache"),
			sys(sysRead, 1, 3, buf), input(buf, "c"),
			sys(sysOpenat, 3, neg(atFDCWD), 0x1000, 0), named("/lib/x86_64-linux-gnu/libc.so.6"),
			sys(sysRead, 1, 3, buf), input(buf, "E"),
			sys(sysOpen, 4, 0x1000, 0), named("/opt/app/bin/prog"),
			sys(sysRead, 1, 4, buf), input(buf, "p"),
			sys(sysOpen, 5, 0x1000, 0), named("/usr/lib/locale/C.utf8/LC_CTYPE"),
			sys(sysRead, 1, 5, buf), input(buf, "l"),
			sys(sysOpen, 6, 0x1000, 0), named("/opt/app/input"),
			sys(sysRead, 1, 6, buf), input(buf, "i"),
		},
		want: []want{
			{"/etc/ld.so.cache", SourceModule, 0, 1, buf, "c", "read"},
			{"/lib/x86_64-linux-gnu/libc.so.6", SourceModule, 0, 1, buf, "E", "read"},
			{"/opt/app/bin/prog", SourceModule, 0, 1, buf, "p", "read"},
			{"/usr/lib/locale/C.utf8/LC_CTYPE", SourceModule, 0, 1, buf, "l", "read"},
			{"/opt/app/input", SourceFile, 0, 1, buf, "i", "read"},
		},
	}, {
		name: "a trace without paths or INPUT events: read from its arguments, open without a path is other",
		events: []schema.Event{
			sys(sysOpen, 3, 0x1000, 0),
			sys(sysRead, 5, 3, buf, 100),
			sys(sysReadv, 5, 3, 0x2000, 2),
			sys(sysRead, 2, 9, buf+8, 100),
		},
		want: []want{{"fd 3", SourceOther, 0, 5, buf, "", "read"}, {"fd 9", SourceOther, 0, 2, buf + 8, "", "read"}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			evs := append([]schema.Event(nil), tc.events...)
			for i := range evs {
				evs[i].Seq = uint64(i)
			}
			e := FromEvents(evs, tc.cwd, tc.mods)
			if len(e.Ranges) != len(tc.want) {
				t.Fatalf("%d ranges, want %d: %+v", len(e.Ranges), len(tc.want), e.Ranges)
			}
			next := uint64(0)
			for i, w := range tc.want {
				r := e.Ranges[i]
				s := e.Sources[r.Source]
				if r.First != next || r.Len != w.len || r.Offset != w.offset || r.Addr != w.addr || r.Syscall != w.call ||
					s.Name != w.source || s.Kind != w.kind || s.ID != r.Source {
					t.Errorf("range %d: %+v from %+v, want %+v", i, r, s, w)
				}
				if w.data == "" && r.Data != nil || w.data != "" && !bytes.Equal(r.Data, []byte(w.data)) {
					t.Errorf("range %d: data %q, want %q", i, r.Data, w.data)
				}
				if evs[r.Seq].Kind != schema.KindSyscall {
					t.Errorf("range %d: seq %d is a %s event", i, r.Seq, evs[r.Seq].Kind)
				}
				next += r.Len
			}
			if e.Total != next {
				t.Errorf("total %d, want %d", e.Total, next)
			}
			var perSource uint64
			for _, s := range e.Sources {
				perSource += s.Bytes
			}
			if perSource != e.Total {
				t.Errorf("sources count %d bytes, total %d", perSource, e.Total)
			}
		})
	}
}

func TestReadUnplaced(t *testing.T) {
	e := FromEvents([]schema.Event{sys(sysReadv, 5, 0, 0x2000, 2), sys(sysRecvmsg, 5, 0, 0x2000, 0)}, "/", nil)
	if e.Total != 0 || e.Unplaced != 2 {
		t.Errorf("total %d, unplaced %d; want 0 and 2", e.Total, e.Unplaced)
	}
}

func TestEntityAtByte(t *testing.T) {
	const buf = 0x5000
	evs := []schema.Event{
		sys(sysRead, 3, 0, buf, 10), input(buf, "abc"),
		sys(sysGetpid, 42),
		sys(sysReadv, 4, 0, 0x2000, 2), input(buf, "de"), input(buf+0x10, "fg"),
		sys(sysRead, 2, 0, buf, 10), unrecorded(buf, 2),
	}
	for i := range evs {
		evs[i].Seq = uint64(i)
	}
	e := FromEvents(evs, "/", nil)
	for _, c := range []struct {
		n     uint64
		first uint64
		off   uint64
		b     byte
		hasB  bool
		ok    bool
	}{{0, 0, 0, 'a', true, true}, {2, 0, 2, 'c', true, true}, {3, 3, 0, 'd', true, true}, {6, 5, 1, 'g', true, true},
		{7, 7, 0, 0, false, true}, {8, 7, 1, 0, false, true}, {9, 0, 0, 0, false, false}} {
		r, off, ok := e.Entity(c.n)
		if ok != c.ok || ok && (r.First != c.first || off != c.off) {
			t.Errorf("Entity(%d) = range at %d, offset %d, %v; want %d, %d, %v", c.n, r.First, off, ok, c.first, c.off, c.ok)
		}
		b, hasB := e.Byte(c.n)
		if b != c.b || hasB != c.hasB {
			t.Errorf("Byte(%d) = %q, %v; want %q, %v", c.n, b, hasB, c.b, c.hasB)
		}
	}
	for _, c := range []struct {
		seq    uint64
		ranges int
	}{{0, 1}, {1, 0}, {2, 0}, {3, 2}, {6, 1}, {99, 0}} {
		if got := e.At(c.seq); len(got) != c.ranges || len(got) > 0 && got[0].Seq != c.seq {
			t.Errorf("At(%d) = %+v, want %d ranges", c.seq, got, c.ranges)
		}
	}
}

const sysGetpid = 39

func TestIsModulePath(t *testing.T) {
	mods := []string{"/opt/app/prog", "[vdso]", "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"}
	for _, c := range []struct {
		path string
		want bool
	}{
		{"/opt/app/prog", true},
		{"/opt/app/../app/prog", true},
		{"/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", true},
		{"/lib/x86_64-linux-gnu/libm.so.6", true},
		{"/usr/lib/libfoo.so", true},
		{"/etc/ld.so.cache", true},
		{"/usr/lib/locale/locale-archive", true},
		{"/usr/lib/x86_64-linux-gnu/gconv/gconv-modules.cache", true},
		{"/usr/share/zoneinfo/Europe/Paris", true},
		{"/sys/devices/system/cpu/online", true},
		{"/proc/sys/vm/overcommit_memory", true},
		{"/opt/app/input.txt", false},
		{"/opt/app/prog.input", false},
		{"[vdso]", false},
		{"/etc/passwd", false},
		{"/home/u/solutions.sol", false},
	} {
		if got := IsModulePath(c.path, mods); got != c.want {
			t.Errorf("IsModulePath(%q) = %v, want %v", c.path, got, c.want)
		}
	}
}
