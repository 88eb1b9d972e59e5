/* mgt_sched.c: interleaving control in the mgtrace probe.

   Valgrind runs one thread at a time and switches only when a thread's
   time slice of SCHEDULING_QUANTUM (100,000) superblock entries is used
   up, or when it blocks in a system call (coregrind/m_scheduler/
   scheduler.c). A tool cannot set the quantum, but it can end a slice
   early: an SB that leaves with jump kind Ijk_Yield makes the scheduler
   cut the thread's remaining slice (dispatch_ctr) to at most 300 entries
   (the VEX_TRC_JMP_YIELD case of VG_(scheduler)); dispatch_ctr is a local
   of VG_(scheduler) that is only refilled when it reaches 0, and a second
   yield cuts it to 300 again, not lower. When it reaches 0 the thread
   releases the big lock, and with --fair-sched=yes (a ticket lock) the
   longest-waiting runnable thread gets it.

   So, with --mgt-preempt=N, every SB starts with (mgt_sched_instrument):

       if (spin != 0) { spin--; goto self; }         Ijk_Boring, chained
       if (left == 0) { spin = 300; goto self; }     Ijk_Yield
       left--;

   where `self` is the SB's own guest address, so neither exit changes
   the guest state: the SB is entered again later. `left` is the running
   thread's countdown of SB entries. `spin` uses up the 300 entries the
   yield left in the slice without running any guest code: each spin is
   an SB entry, whose event check decrements the dispatch counter, and
   the 301st entry ends the slice. The switch therefore happens exactly
   where the countdown ran out, not up to 300 SBs later.

   Turns. Each thread runs in turns; a turn lasts a count of SBs drawn
   uniformly from [1, N] by the thread's splitmix64 generator (seeded from
   --mgt-sched-seed and the thread's creation number: 1 for the main
   thread, then 2, 3, ... in creation order), and also ends when the
   thread creates a thread or makes a system call. At the end of a turn
   the thread that runs next is drawn from the same generator among the
   runnable ones (end_turn), and until it has the big lock any other
   thread that gets it is sent back before it runs anything
   (mgt_sched_thread_run returns True: its first SB yields and spins, and
   no thread switch is recorded). So which thread runs is never left to
   the order in which the kernel hands the lock over. Futex waits and
   wakes are followed (mgt_sched_pre_syscall, wake): a waiter is not
   runnable until a wake on its word, and no other thread runs until the
   waiter is asleep in the kernel. What this file decides is what the
   Go driver asked for (--mgt-preempt, --mgt-sched-seed); the trace
   records only its effect, THREAD_SWITCH events. */

#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_aspacemgr.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_vki.h"
#include "pub_tool_vkiscnums.h"

#include "mgt_sched.h"

/* The yield's cut of the slice (scheduler.c, VEX_TRC_JMP_YIELD): the
   spins that use it up. */
#define MGT_SCHED_YIELD_TAIL 300

/* The largest --mgt-preempt. */
#define MGT_SCHED_MAX_PREEMPT 1000000000LL

/* How long (milliseconds) threads other than the one whose turn it is
   may get the big lock and be sent back before the turn is given up: a
   safety net should that thread not come (a thread blocked in a system
   call this file takes for one that returns). */
#define MGT_SCHED_MAX_HELD_MS 2000

/* From Valgrind's core (pub_core_syscall.h), linked into every tool: a
   raw system call, for sched_yield. */
extern SysRes VG_(do_syscall)(UWord sysno, RegWord, RegWord, RegWord, RegWord, RegWord, RegWord, RegWord, RegWord);

/* What the instrumented code reads and writes: the running thread's
   countdown and the spins left. */
static ULong mgt_sched_left = 0;
static ULong mgt_sched_spin = 0;

/* Options: N (0: no preemption) and the seed. */
static Long mgt_sched_n = 0;
static ULong mgt_sched_seed = 0;
static Bool mgt_sched_debug = False; /* print every decision (for developers) */
static Bool mgt_sched_spin_on = True; /* spin the yield's tail away (--mgt-sched-spin=no: for measuring) */

/* What a thread is doing, as far as choosing the next one goes. */
enum { ST_NONE = 0, /* not created, or exited */
       ST_RUN,      /* running or asking for the big lock */
       ST_SYSCALL,  /* in a system call that returns by itself */
       ST_BLOCKED,  /* in a system call that waits for something */
       ST_FUTEX };  /* in a futex wait on waddr, not yet woken */

/* Per thread (by Valgrind thread id). */
typedef struct {
   ULong saved;  /* its countdown while it is not running (0: draw one) */
   ULong rng;    /* its generator */
   UInt state;   /* ST_* */
   Addr waddr;   /* ST_FUTEX: the futex word */
   ULong wseq;   /* ST_FUTEX: when it started waiting */
   Addr ctid;    /* the word the kernel clears and wakes when it exits */
   Int lwp;      /* its kernel thread id */
   Bool asleep;  /* ST_FUTEX: seen asleep in the kernel */
} SchedThread;
static SchedThread* mgt_sched_th = 0;
static ULong mgt_sched_wseq = 0;

static ThreadId mgt_sched_cur = VG_INVALID_THREADID;  /* whose countdown mgt_sched_left is */
static ThreadId mgt_sched_turn = VG_INVALID_THREADID; /* the thread that may run: chosen, or running */
static UInt mgt_sched_held = 0;                       /* threads sent back in a row */
static UInt mgt_sched_held_since = 0;                 /* when the first of them was (ms) */
static ULong mgt_sched_created = 1;                   /* threads created, the main one included */
static Addr mgt_sched_clone_ctid = 0;                 /* of the clone in progress */

Bool mgt_sched_option(const HChar* arg)
{
   const HChar* s = 0;
   if (VG_BINT_CLO(arg, "--mgt-preempt", mgt_sched_n, 1, MGT_SCHED_MAX_PREEMPT)) {
      return True;
   }
   if (VG_BOOL_CLO(arg, "--mgt-sched-debug", mgt_sched_debug)) {
      return True;
   }
   if (VG_BOOL_CLO(arg, "--mgt-sched-spin", mgt_sched_spin_on)) {
      return True;
   }
   if (VG_STR_CLO(arg, "--mgt-sched-seed", s)) {
      HChar* end = 0;
      if (*s < '0' || *s > '9') {
         VG_(fmsg_bad_option)(arg, "the seed must be a decimal number\n");
      }
      mgt_sched_seed = VG_(strtoull10)(s, &end);
      if (*end != 0) {
         VG_(fmsg_bad_option)(arg, "the seed must be a decimal number\n");
      }
      return True;
   }
   return False;
}

void mgt_sched_usage(void)
{
   VG_(printf)("    --mgt-preempt=<n>         switch threads after 1..n SBs of a thread [off]\n");
   VG_(printf)("    --mgt-sched-seed=<s>      seed of the switch points [0]\n");
   VG_(printf)("    --mgt-sched-debug=yes     print the switch decisions [no]\n");
   VG_(printf)("    --mgt-sched-spin=no       leave the yield's tail to Valgrind's scheduler [yes]\n");
}

/* splitmix64: one draw from *state. */
static ULong next_random(ULong* state)
{
   ULong z = (*state += 0x9E3779B97F4A7C15ULL);
   z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
   z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
   return z ^ (z >> 31);
}

/* seed_thread starts the thread created as number ordinal. */
static void seed_thread(ThreadId tid, ULong ordinal)
{
   SchedThread* t = &mgt_sched_th[tid];
   ULong s = mgt_sched_seed ^ (ordinal * 0xD1B54A32D192ED03ULL);
   VG_(memset)(t, 0, sizeof *t);
   t->rng = next_random(&s);
   t->state = ST_RUN;
}

void mgt_sched_init(void)
{
   if (mgt_sched_n == 0) {
      return;
   }
   mgt_sched_th = VG_(calloc)("mgt.sched.threads", VG_N_THREADS, sizeof(SchedThread));
   seed_thread(1, 1);
}

static Bool valid(ThreadId tid)
{
   return mgt_sched_n != 0 && tid != VG_INVALID_THREADID && tid < VG_N_THREADS;
}

/* runnable: thread t holds or will ask for the big lock without another
   thread doing anything first. */
static Bool runnable(ThreadId t)
{
   return valid(t) && (mgt_sched_th[t].state == ST_RUN || mgt_sched_th[t].state == ST_SYSCALL);
}

/* pick_other draws, from self's generator, one of the runnable threads
   other than self; VG_INVALID_THREADID when there is none. */
static ThreadId pick_other(ThreadId self)
{
   UInt n = 0;
   for (ThreadId t = 1; t < VG_N_THREADS; t++) {
      n += t != self && runnable(t);
   }
   if (n == 0) {
      return VG_INVALID_THREADID;
   }
   UInt k = (UInt)(next_random(&mgt_sched_th[self].rng) % n);
   for (ThreadId t = 1; t < VG_N_THREADS; t++) {
      if (t != self && runnable(t) && k-- == 0) {
         return t;
      }
   }
   return VG_INVALID_THREADID;
}

/* end_turn: thread t (the one that runs) reached a switch point: its
   countdown ran out, it created a thread, or it makes a system call. The
   thread to run next is chosen now, among the others that can run,
   before Valgrind hands the lock to anyone; with none, t goes on. */
static void end_turn(ThreadId t, Bool countdown_over)
{
   if (mgt_sched_cur == t) {
      mgt_sched_th[t].saved = countdown_over ? 0 : mgt_sched_left;
      mgt_sched_cur = VG_INVALID_THREADID;
   }
   mgt_sched_left = 0;
   mgt_sched_turn = pick_other(t);
   if (mgt_sched_debug) {
      VG_(dmsg)("sched: t%u turn ends (%s), next t%u\n", t, countdown_over ? "countdown" : "syscall/create", mgt_sched_turn);
   }
}

/* wake makes up to n threads waiting on the futex word addr runnable,
   those that started waiting first first (the kernel's order). */
static void wake(Addr addr, Long n)
{
   while (n-- > 0) {
      ThreadId best = VG_INVALID_THREADID;
      for (ThreadId t = 1; t < VG_N_THREADS; t++) {
         SchedThread* th = &mgt_sched_th[t];
         if (th->state == ST_FUTEX && th->waddr == addr
             && (best == VG_INVALID_THREADID || th->wseq < mgt_sched_th[best].wseq)) {
            best = t;
         }
      }
      if (best == VG_INVALID_THREADID) {
         return;
      }
      mgt_sched_th[best].state = ST_SYSCALL;
      if (mgt_sched_debug) {
         VG_(dmsg)("sched: t%u woken\n", best);
      }
   }
}

void mgt_sched_thread_create(ThreadId child)
{
   if (!valid(child)) {
      return;
   }
   seed_thread(child, ++mgt_sched_created);
   mgt_sched_th[child].ctid = mgt_sched_clone_ctid;
   /* The creator's turn ends, the child among those it may choose:
      Valgrind yields right after a clone, and which thread then gets the
      lock would otherwise depend on timing. */
   ThreadId parent = VG_(get_running_tid)();
   if (valid(parent)) {
      end_turn(parent, False);
   }
}

void mgt_sched_thread_exit(ThreadId tid)
{
   if (!valid(tid)) {
      return;
   }
   SchedThread* th = &mgt_sched_th[tid];
   th->state = ST_NONE;
   /* The kernel clears the thread's tid word and wakes its joiner. */
   if (th->ctid != 0) {
      wake(th->ctid, 1 << 30);
   }
   if (mgt_sched_cur == tid) {
      mgt_sched_cur = VG_INVALID_THREADID;
   }
   if (mgt_sched_turn == tid || mgt_sched_turn == VG_INVALID_THREADID) {
      mgt_sched_turn = pick_other(tid);
   }
}

/* blocks says whether system call sysno may wait for another thread or
   for the outside world (then the thread does not count as runnable until
   it is back). */
static Bool blocks(UInt sysno)
{
   switch (sysno) {
   case __NR_read: case __NR_readv: case __NR_pread64: case __NR_recvfrom: case __NR_recvmsg:
   case __NR_accept: case __NR_accept4: case __NR_connect:
   case __NR_nanosleep: case __NR_clock_nanosleep: case __NR_pause:
   case __NR_poll: case __NR_ppoll: case __NR_select: case __NR_pselect6:
   case __NR_epoll_wait: case __NR_epoll_pwait:
   case __NR_wait4: case __NR_waitid: case __NR_rt_sigsuspend: case __NR_rt_sigtimedwait:
   case __NR_msgrcv: case __NR_semop: case __NR_semtimedop: case __NR_flock:
      return True;
   default:
      return False;
   }
}

void mgt_sched_pre_syscall(ThreadId tid, UInt sysno, const UWord* args)
{
   if (!valid(tid)) {
      return;
   }
   SchedThread* th = &mgt_sched_th[tid];
   th->state = blocks(sysno) ? ST_BLOCKED : ST_SYSCALL;
   th->lwp = VG_(gettid)();
   th->asleep = False;
   if (mgt_sched_debug) {
      VG_(dmsg)("sched: t%u syscall %u\n", tid, sysno);
   }
   if (sysno == __NR_futex) {
      UWord op = args[1] & 127; /* without FUTEX_PRIVATE_FLAG, FUTEX_CLOCK_REALTIME */
      if (op == 0 /* FUTEX_WAIT */ || op == 9 /* FUTEX_WAIT_BITSET */) {
         /* It returns at once (EAGAIN) when the word is not the value. */
         Addr a = args[0];
         if (VG_(am_is_valid_for_client)(a, 4, VKI_PROT_READ) && *(volatile UInt*)a == (UInt)args[2]) {
            th->state = ST_FUTEX;
            th->waddr = a;
            th->wseq = ++mgt_sched_wseq;
         }
      } else if (op == 1 /* FUTEX_WAKE */ || op == 10 /* FUTEX_WAKE_BITSET */) {
         /* Wake now, not when the call returns: Valgrind runs it without
            the big lock, and its return comes at a time of the kernel's
            choosing. The kernel wakes those that wait (at most args[2]). */
         wake(args[0], (Long)(Int)args[2]);
      } else if (op != 5) {
         th->state = ST_BLOCKED; /* requeue, PI: not modelled */
      }
   }
   if (sysno == __NR_clone) {
      /* x86-64: clone(flags, stack, parent_tid, child_tid, tls). */
      mgt_sched_clone_ctid = (args[0] & VKI_CLONE_CHILD_CLEARTID) ? args[3] : 0;
      return; /* the turn ends at the thread's creation */
   }
   /* A system call is a switch point: with another thread to run, this
      one runs again only after it. */
   if (mgt_sched_turn == tid || mgt_sched_turn == VG_INVALID_THREADID) {
      end_turn(tid, False);
   }
}

void mgt_sched_post_syscall(ThreadId tid, UInt sysno, const UWord* args, SysRes res)
{
   if (!valid(tid)) {
      return;
   }
   mgt_sched_th[tid].state = ST_RUN;
   if (sysno == __NR_futex && !sr_isError(res) && sr_Res(res) > 0) {
      UWord op = args[1] & 127;
      if (op == 5 /* FUTEX_WAKE_OP: the woken of both words, the first's first */) {
         wake(args[0], (Long)sr_Res(res));
         wake(args[4], (Long)sr_Res(res));
      }
   }
}

void mgt_sched_fork_child(ThreadId tid)
{
   if (!valid(tid)) {
      return;
   }
   for (ThreadId t = 0; t < VG_N_THREADS; t++) {
      if (t != tid) {
         mgt_sched_th[t].state = ST_NONE;
      }
   }
   mgt_sched_th[tid].state = ST_RUN;
   mgt_sched_turn = tid;
   mgt_sched_cur = VG_INVALID_THREADID;
}

/* sleeping says whether kernel thread lwp is asleep (state S or D in
   /proc/self/task/LWP/stat); True when that cannot be read. */
static Bool sleeping(Int lwp)
{
   HChar path[64], buf[512];
   VG_(sprintf)(path, "/proc/self/task/%d/stat", lwp);
   SysRes r = VG_(open)(path, VKI_O_RDONLY, 0);
   if (sr_isError(r)) {
      return True;
   }
   Int n = VG_(read)(sr_Res(r), buf, sizeof buf - 1);
   VG_(close)(sr_Res(r));
   if (n <= 0) {
      return True;
   }
   buf[n] = 0;
   HChar* p = VG_(strrchr)(buf, ')');
   if (p == 0 || p[1] != ' ') {
      return True;
   }
   return p[2] == 'S' || p[2] == 'D';
}

/* waiters_asleep says whether every thread that started a futex wait is
   asleep in the kernel. Valgrind lets go of the big lock before it makes
   a blocking system call: until the waiter is in the kernel, another
   thread that changes the futex word would make the wait return at once
   (EAGAIN), or a wake would miss it, at a moment of the kernel's
   choosing. */
static Bool waiters_asleep(void)
{
   for (ThreadId t = 1; t < VG_N_THREADS; t++) {
      SchedThread* th = &mgt_sched_th[t];
      if (th->state == ST_FUTEX && !th->asleep) {
         if (!sleeping(th->lwp)) {
            return False;
         }
         th->asleep = True;
      }
   }
   return True;
}

Bool mgt_sched_thread_run(ThreadId tid)
{
   if (!valid(tid)) {
      return False;
   }
   /* The thread that ran last: at 0, its countdown ran out. */
   if (mgt_sched_cur != VG_INVALID_THREADID) {
      if (mgt_sched_left == 0) {
         end_turn(mgt_sched_cur, True);
      } else {
         mgt_sched_th[mgt_sched_cur].saved = mgt_sched_left;
         mgt_sched_cur = VG_INVALID_THREADID;
      }
   }
   /* Not its turn (the lock came to it at the end of a time slice, or
      after a system call): it runs nothing (its first SB yields and
      spins the slice away), and leaves no trace. */
   if (((mgt_sched_turn != VG_INVALID_THREADID && mgt_sched_turn != tid && runnable(mgt_sched_turn))
        || !waiters_asleep())
       && (mgt_sched_held == 0 || VG_(read_millisecond_timer)() - mgt_sched_held_since < MGT_SCHED_MAX_HELD_MS)) {
      if (mgt_sched_held++ == 0) {
         mgt_sched_held_since = VG_(read_millisecond_timer)();
      }
      mgt_sched_left = 0;
      /* Let the kernel run the thread that is waited for: it may not
         even have asked for the big lock yet. */
      VG_(do_syscall)(__NR_sched_yield, 0, 0, 0, 0, 0, 0, 0, 0);
      if (mgt_sched_debug) {
         VG_(dmsg)("sched: t%u held for t%u\n", tid, mgt_sched_turn);
      }
      return True;
   }
   /* Its turn: the chosen thread, or the first to come when no thread
      was chosen. */
   mgt_sched_held = 0;
   mgt_sched_turn = tid;
   mgt_sched_spin = 0;
   SchedThread* th = &mgt_sched_th[tid];
   if (th->saved == 0) {
      th->saved = 1 + next_random(&th->rng) % (ULong)mgt_sched_n;
   }
   mgt_sched_left = th->saved;
   mgt_sched_cur = tid;
   if (mgt_sched_debug) {
      VG_(dmsg)("sched: t%u runs, countdown %llu\n", tid, mgt_sched_left);
   }
   return False;
}

static IRExpr* addr_of(ULong* p) { return IRExpr_Const(IRConst_U64((ULong)(HWord)p)); }

static IRTemp new_tmp(IRSB* out, IRType ty, IRExpr* e)
{
   IRTemp t = newIRTemp(out->tyenv, ty);
   addStmtToIRSB(out, IRStmt_WrTmp(t, e));
   return t;
}

void mgt_sched_instrument(IRSB* out, Addr start, Int offset_ip)
{
   if (mgt_sched_n == 0) {
      return;
   }
   /* Spinning: use up the slice, entering this SB again. */
   IRTemp spin = new_tmp(out, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, addr_of(&mgt_sched_spin)));
   IRTemp spinning = new_tmp(out, Ity_I1, IRExpr_Binop(Iop_CmpNE64, IRExpr_RdTmp(spin), IRExpr_Const(IRConst_U64(0))));
   IRTemp less = new_tmp(out, Ity_I64, IRExpr_Binop(Iop_Sub64, IRExpr_RdTmp(spin), IRExpr_Const(IRConst_U64(1))));
   addStmtToIRSB(out, IRStmt_StoreG(Iend_LE, addr_of(&mgt_sched_spin), IRExpr_RdTmp(less), IRExpr_RdTmp(spinning)));
   addStmtToIRSB(out, IRStmt_Exit(IRExpr_RdTmp(spinning), Ijk_Boring, IRConst_U64((ULong)start), offset_ip));
   /* The countdown ran out: yield, then spin. */
   IRTemp left = new_tmp(out, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, addr_of(&mgt_sched_left)));
   IRTemp fire = new_tmp(out, Ity_I1, IRExpr_Binop(Iop_CmpEQ64, IRExpr_RdTmp(left), IRExpr_Const(IRConst_U64(0))));
   if (mgt_sched_spin_on) {
      addStmtToIRSB(out, IRStmt_StoreG(Iend_LE, addr_of(&mgt_sched_spin), IRExpr_Const(IRConst_U64(MGT_SCHED_YIELD_TAIL)),
                                       IRExpr_RdTmp(fire)));
   }
   addStmtToIRSB(out, IRStmt_Exit(IRExpr_RdTmp(fire), Ijk_Yield, IRConst_U64((ULong)start), offset_ip));
   IRTemp next = new_tmp(out, Ity_I64, IRExpr_Binop(Iop_Sub64, IRExpr_RdTmp(left), IRExpr_Const(IRConst_U64(1))));
   addStmtToIRSB(out, IRStmt_Store(Iend_LE, addr_of(&mgt_sched_left), IRExpr_RdTmp(next)));
}
