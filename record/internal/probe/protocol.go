// Package probe decodes the raw record stream of the mgtrace Valgrind
// probe (record/vgtool) into trace events. The probe only captures; this
// package decides what its records mean.
//
// The numbers here mirror record/vgtool/protocol.h, which documents the
// layout of every record.
package probe

// ProtocolVersion is the version of the raw stream this package reads.
const ProtocolVersion = 5

// Record types (MGT_REC_*).
const (
	recHello        = 1
	recSBDef        = 2
	recSBExec       = 3
	recSyscall      = 4
	recThreadSwitch = 5
	recThreadCreate = 6
	recThreadExit   = 7
	recSignal       = 8
	recClient       = 9
	recMmap         = 10
	recMunmap       = 11
	recExit         = 12
	recCut          = 13
	recSBFree       = 14
	recRegion       = 16
	recMemory       = 17
	recRegs         = 18
	recXCall        = 20
	recXRet         = 21
	recStopped      = 22
	recSysPath      = 23
	recInput        = 24
	recAlter        = 15
)

// SB_EXEC flags (MGT_EXECF_*).
const (
	execExit = 0x01
	execCut  = 0x02
)

// Site kinds (MGT_SITE_*).
const (
	siteLoad   = 1
	siteStore  = 2
	siteCAS    = 3
	siteDerive = 4
	siteExit   = 5
	siteCall   = 6
	siteRet    = 7
	siteAlter  = 8
)

// Site flags (MGT_SITEF_*).
const (
	siteDisp = 0x01
	siteBase = 0x02
)

// Lengths of the instructions whose end the probe reports as a pc: the
// syscall instruction (0f 05) and the last instruction of a client
// request's magic sequence (xchg %rbx,%rbx: 48 87 db). The decoder reports
// the instruction itself.
const (
	syscallInsnLen   = 2
	clientReqInsnLen = 3
)

// Limits on what a record may declare, checked before allocating.
const (
	maxRecordWords = 1 << 22
	maxSBInsns     = 1 << 16
	maxSBSites     = 1 << 16
)

// The system calls whose INPUT record holds two descriptors (kept past the
// input cap).
const (
	sysPipe       = 22
	sysSocketpair = 53
	sysPipe2      = 293
)

// Alterations in an ALTER site's size field (tracepb.Alteration).
const (
	alterSwitch   = 1
	alterSuppress = 2
)
