/* mgt_sched.h: interleaving control in the mgtrace probe (--mgt-preempt,
   --mgt-sched-seed). See mgt_sched.c for how it works and docs/record.md
   for what it gives. */
#ifndef MGT_SCHED_H
#define MGT_SCHED_H

#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"

/* mgt_sched_option handles --mgt-preempt=N and --mgt-sched-seed=S; True
   when arg was one of them. */
Bool mgt_sched_option(const HChar* arg);

/* mgt_sched_usage prints the two options' usage lines. */
void mgt_sched_usage(void);

/* mgt_sched_init allocates the per-thread state (after the command line
   was read). */
void mgt_sched_init(void);

/* mgt_sched_instrument adds the preemption check to the start of an SB
   being instrumented: out holds the SB's first IMark and nothing of its
   code yet; start is the guest address the SB is entered at (the
   closure's nraddr) and offset_ip the guest IP's offset in the guest
   state. Does nothing without --mgt-preempt. */
void mgt_sched_instrument(IRSB* out, Addr start, Int offset_ip);

/* mgt_sched_thread_create gives a new thread its own switch points. */
void mgt_sched_thread_create(ThreadId child);

/* mgt_sched_thread_exit: the thread is gone. */
void mgt_sched_thread_exit(ThreadId tid);

/* mgt_sched_pre_syscall: the thread makes system call sysno with args
   (six of them). */
void mgt_sched_pre_syscall(ThreadId tid, UInt sysno, const UWord* args);

/* mgt_sched_post_syscall: the thread's system call ended with res. */
void mgt_sched_post_syscall(ThreadId tid, UInt sysno, const UWord* args, SysRes res);

/* mgt_sched_fork_child: this process is a fork's child, whose only thread
   is tid. */
void mgt_sched_fork_child(ThreadId tid);

/* mgt_sched_thread_run is called whenever the core starts running a
   thread's client code (track_start_client_code). It returns True when
   the thread is sent back without running any guest code (another thread
   was chosen to run): no thread switch should be recorded for it. */
Bool mgt_sched_thread_run(ThreadId tid);

#endif
