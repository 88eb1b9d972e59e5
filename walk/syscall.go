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
	statSize        = 144 // sizeof(struct stat)
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
	}
	if m.Size == 0 || m.Addr == 0 {
		return nil
	}
	return []MemRange{m}
}
