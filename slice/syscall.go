package slice

import "github.com/mgtrace/mgtrace/schema"

// Linux x86-64 syscall numbers the slicer knows the memory effects of.
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

// memRange is memory a syscall read or wrote.
type memRange struct {
	addr  uint64
	size  uint64
	write bool
}

// syscallMemory returns the memory a completed syscall read (a buffer it
// sent out) or wrote (a buffer it filled), for the syscalls whose buffers
// carry a program's input and output. The probe does not see the kernel's
// accesses, so they are modelled from the arguments and the result.
func syscallMemory(ev *schema.Event) []memRange {
	ret := int64(ev.Value)
	a := ev.Args
	n := func(v int64) uint64 {
		if v <= 0 || v > maxSyscallRange {
			return 0
		}
		return uint64(v)
	}
	var m memRange
	switch ev.Num {
	case sysRead, sysPread64, sysRecvfrom:
		m = memRange{a[1], n(ret), true}
	case sysGetrandom:
		m = memRange{a[0], n(ret), true}
	case sysWrite, sysPwrite64, sysSendto:
		m = memRange{a[1], n(ret), false}
	case sysStat, sysFstat, sysLstat:
		if ret == 0 {
			m = memRange{a[1], statSize, true}
		}
	case sysNewfstatat:
		if ret == 0 {
			m = memRange{a[2], statSize, true}
		}
	case sysClockGettime:
		if ret == 0 {
			m = memRange{a[1], timespecSize, true}
		}
	case sysGettimeofday:
		if ret == 0 && a[0] != 0 {
			m = memRange{a[0], timespecSize, true}
		}
	case sysUname:
		if ret == 0 {
			m = memRange{a[0], utsnameSize, true}
		}
	case sysGetcwd:
		m = memRange{a[0], n(ret), true}
	}
	if m.size == 0 || m.addr == 0 {
		return nil
	}
	return []memRange{m}
}
