package walk

import "github.com/mgtrace/mgtrace/schema"

// Linux x86-64 syscall numbers whose memory effects are modelled.
const (
	sysRead         = 0
	sysWrite        = 1
	sysStat         = 4
	sysFstat        = 5
	sysLstat        = 6
	sysPread64      = 17
	sysPwrite64     = 18
	sysRtSigreturn  = 15
	sysSendto       = 44
	sysRecvfrom     = 45
	sysUname        = 63
	sysGetcwd       = 79
	sysGettimeofday = 96
	sysClockGettime = 228
	sysNewfstatat   = 262
	sysGetrandom    = 318
	sysPipe         = 22
	sysGetdents     = 78
	sysReadlink     = 89
	sysGetrlimit    = 97
	sysGetrusage    = 98
	sysSysinfo      = 99
	sysStatfs       = 137
	sysFstatfs      = 138
	sysGetxattr     = 191
	sysLgetxattr    = 192
	sysFgetxattr    = 193
	sysListxattr    = 194
	sysLlistxattr   = 195
	sysFlistxattr   = 196
	sysTime         = 201
	sysGetdents64   = 217
	sysWait4        = 61
	sysReadlinkat   = 267
	sysPipe2        = 293
	sysPrlimit64    = 302
	sysStatx        = 332
	statSize        = 144 // sizeof(struct stat)
	statfsSize      = 120 // sizeof(struct statfs)
	statxSize       = 256 // sizeof(struct statx)
	rusageSize      = 144 // sizeof(struct rusage)
	sysinfoSize     = 112 // sizeof(struct sysinfo)
	rlimitSize      = 16  // sizeof(struct rlimit)
	utsnameSize     = 390 // sizeof(struct utsname)
	timespecSize    = 16
	maxSyscallRange = 1 << 30
)

// MemRange is memory a system call read or wrote.
type MemRange struct {
	Addr  uint64
	Size  uint64
	Write bool // the kernel wrote it (else read it)
}

// Modelled reports whether SyscallMemory knows the memory effects of
// system call num (for the others, a buffer the kernel may fill is not
// known).
func Modelled(num uint64) bool {
	switch num {
	case sysRead, sysWrite, sysStat, sysFstat, sysLstat, sysPread64, sysPwrite64, sysSendto, sysRecvfrom,
		sysUname, sysGetcwd, sysGettimeofday, sysClockGettime, sysNewfstatat, sysGetrandom, sysPipe,
		sysGetdents, sysReadlink, sysGetrlimit, sysGetrusage, sysSysinfo, sysStatfs, sysFstatfs,
		sysGetxattr, sysLgetxattr, sysFgetxattr, sysListxattr, sysLlistxattr, sysFlistxattr, sysTime,
		sysGetdents64, sysWait4, sysReadlinkat, sysPipe2, sysPrlimit64, sysStatx:
		return true
	}
	return false
}

// WritesNoMemory reports whether system call num never writes the
// caller's memory (close, lseek, mmap, futex, exit, ...): its argument
// registers may hold stale pointers that it does not touch.
func WritesNoMemory(num uint64) bool {
	switch num {
	case 2, 3, 8, 9, 10, 11, 12, 21, 22, 24, 25, 26, 28, 32, 33, 34, 39, 41, 42, 48, 49, 50,
		56, 57, 58, 60, 62, 72, 73, 74, 75, 76, 77, 80, 81, 82, 83, 84, 86, 87, 88, 90, 91, 92,
		93, 94, 95, 102, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 117, 119, 121,
		124, 186, 200, 202, 203, 218, 231, 234, 257, 258, 259, 263, 264, 266, 268, 269, 273,
		285, 292, 316, 324, 334, 435, 436, 439:
		return true
	}
	return false
}

// SyscallMemory returns the memory a completed syscall read (a buffer it
// sent out) or wrote (a buffer it filled), for the syscalls whose buffers
// carry a program's input and output. The probe does not see the kernel's
// accesses, so they are modelled from the arguments and the result.
func SyscallMemory(ev *schema.Event) []MemRange {
	ret := int64(ev.Value)
	a := ev.Args
	n := func(v int64) uint64 {
		if v <= 0 || v > maxSyscallRange {
			return 0
		}
		return uint64(v)
	}
	var m MemRange
	switch ev.Num {
	case sysRead, sysPread64, sysRecvfrom:
		m = MemRange{a[1], n(ret), true}
	case sysGetrandom:
		m = MemRange{a[0], n(ret), true}
	case sysWrite, sysPwrite64, sysSendto:
		m = MemRange{a[1], n(ret), false}
	case sysStat, sysFstat, sysLstat:
		if ret == 0 {
			m = MemRange{a[1], statSize, true}
		}
	case sysNewfstatat:
		if ret == 0 {
			m = MemRange{a[2], statSize, true}
		}
	case sysClockGettime:
		if ret == 0 {
			m = MemRange{a[1], timespecSize, true}
		}
	case sysGettimeofday:
		if ret == 0 && a[0] != 0 {
			m = MemRange{a[0], timespecSize, true}
		}
	case sysUname:
		if ret == 0 {
			m = MemRange{a[0], utsnameSize, true}
		}
	case sysGetcwd:
		m = MemRange{a[0], n(ret), true}
	case sysGetdents, sysGetdents64, sysReadlink:
		m = MemRange{a[1], n(ret), true}
	case sysReadlinkat, sysGetxattr, sysLgetxattr, sysFgetxattr:
		m = MemRange{a[2], n(ret), true}
	case sysListxattr, sysLlistxattr, sysFlistxattr:
		m = MemRange{a[1], n(ret), true}
	case sysStatfs, sysFstatfs:
		if ret == 0 {
			m = MemRange{a[1], statfsSize, true}
		}
	case sysStatx:
		if ret == 0 {
			m = MemRange{a[4], statxSize, true}
		}
	case sysPipe, sysPipe2:
		if ret == 0 {
			m = MemRange{a[0], 8, true}
		}
	case sysGetrlimit, sysGetrusage:
		if ret == 0 {
			size := uint64(rlimitSize)
			if ev.Num == sysGetrusage {
				size = rusageSize
			}
			m = MemRange{a[1], size, true}
		}
	case sysPrlimit64:
		if ret == 0 && a[3] != 0 {
			m = MemRange{a[3], rlimitSize, true}
		}
	case sysSysinfo:
		if ret == 0 {
			m = MemRange{a[0], sysinfoSize, true}
		}
	case sysTime:
		if a[0] != 0 {
			m = MemRange{a[0], 8, true}
		}
	case sysWait4:
		if int64(ret) > 0 && a[1] != 0 {
			m = MemRange{a[1], 4, true}
		}
	}
	if m.Size == 0 || m.Addr == 0 {
		return nil
	}
	return []MemRange{m}
}
