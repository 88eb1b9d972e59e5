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
   thread's countdown of SB entries, drawn again (uniformly in [1, N])
   when the thread next starts running with it at 0. `spin` uses up the
   300 entries the yield left in the slice without running any guest
   code: each spin is an SB entry, whose event check decrements the
   dispatch counter, and the 301st entry ends the slice. The switch
   therefore happens exactly where the countdown ran out, not up to 300
   SBs later. A spin that the slice's end cut short (the slice had fewer
   than 300 entries left) is dropped when another thread starts running;
   if the same thread goes on (no other thread was runnable), it spins
   the rest away in its new slice, at no cost to the program.

   The countdowns come from a per-thread splitmix64 generator seeded from
   --mgt-sched-seed and the thread's creation number (1 for the main
   thread, then 2, 3, ... in the order threads are created), so a
   thread's switch points in its own SB count depend only on the seed.
   Which thread runs next is still Valgrind's choice: the next one in the
   ticket lock's queue. */

#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_threadstate.h"

#include "mgt_sched.h"

/* The yield's cut of the slice (scheduler.c, VEX_TRC_JMP_YIELD): the
   spins that use it up. */
#define MGT_SCHED_YIELD_TAIL 300

/* The largest --mgt-preempt. */
#define MGT_SCHED_MAX_PREEMPT 1000000000LL

/* What the instrumented code reads and writes: the running thread's
   countdown and the spins left. */
static ULong mgt_sched_left = 0;
static ULong mgt_sched_spin = 0;

/* Options: N (0: no preemption) and the seed. */
static Long mgt_sched_n = 0;
static ULong mgt_sched_seed = 0;

/* Per thread (by Valgrind thread id): the countdown while it is not
   running, the generator's state, and whether the thread is live
   (created and not exited) and in a system call (between the tool's pre-
   and post-syscall callbacks: it may be blocked, and takes the big lock
   again only when the kernel returns). */
static ULong* mgt_sched_saved = 0;
static ULong* mgt_sched_rng = 0;
static Bool* mgt_sched_live = 0;
static Bool* mgt_sched_insys = 0;
static ThreadId mgt_sched_cur = VG_INVALID_THREADID;  /* whose countdown mgt_sched_left is */
static ThreadId mgt_sched_turn = VG_INVALID_THREADID; /* the thread that may run: chosen, or running */
static ThreadId mgt_sched_soft = VG_INVALID_THREADID; /* in a system call, may take its turn back */
static UInt mgt_sched_held = 0;                       /* rounds others were sent back in a row */
static ULong mgt_sched_created = 1; /* threads created, the main one included */

/* How many times in a row threads other than the one whose turn it is
   may get the big lock and be sent back before the turn is given up: a
   safety net (about a second of spinning) should that thread never
   come. */
#define MGT_SCHED_MAX_HELD 100000

Bool mgt_sched_option(const HChar* arg)
{
   const HChar* s = 0;
   if (VG_BINT_CLO(arg, "--mgt-preempt", mgt_sched_n, 1, MGT_SCHED_MAX_PREEMPT)) {
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
   ULong s = mgt_sched_seed ^ (ordinal * 0xD1B54A32D192ED03ULL);
   mgt_sched_rng[tid] = next_random(&s);
   mgt_sched_saved[tid] = 0;
   mgt_sched_live[tid] = True;
   mgt_sched_insys[tid] = False;
}

void mgt_sched_init(void)
{
   if (mgt_sched_n == 0) {
      return;
   }
   mgt_sched_saved = VG_(calloc)("mgt.sched.saved", VG_N_THREADS, sizeof(ULong));
   mgt_sched_rng = VG_(calloc)("mgt.sched.rng", VG_N_THREADS, sizeof(ULong));
   mgt_sched_live = VG_(calloc)("mgt.sched.live", VG_N_THREADS, sizeof(Bool));
   mgt_sched_insys = VG_(calloc)("mgt.sched.insys", VG_N_THREADS, sizeof(Bool));
   seed_thread(1, 1);
}

/* pick_other is defined below. */
static ThreadId pick_other(ThreadId self);

void mgt_sched_thread_exit(ThreadId tid)
{
   if (mgt_sched_n == 0 || tid >= VG_N_THREADS) {
      return;
   }
   mgt_sched_live[tid] = False;
   if (mgt_sched_turn == tid) {
      mgt_sched_turn = pick_other(tid);
   }
   if (mgt_sched_cur == tid) {
      mgt_sched_cur = VG_INVALID_THREADID;
   }
}

void mgt_sched_syscall(ThreadId tid, Bool in)
{
   if (mgt_sched_n == 0 || tid >= VG_N_THREADS) {
      return;
   }
   mgt_sched_insys[tid] = in;
   /* The system call may block: choose who goes on if it does. If the
      thread comes back before the chosen one took the lock, it takes its
      turn back. */
   if (in && mgt_sched_turn == tid) {
      mgt_sched_turn = pick_other(tid);
      mgt_sched_soft = tid;
   }
}

void mgt_sched_fork_child(ThreadId tid)
{
   if (mgt_sched_n == 0 || tid >= VG_N_THREADS) {
      return;
   }
   for (ThreadId t = 0; t < VG_N_THREADS; t++) {
      if (t != tid) {
         mgt_sched_live[t] = False;
      }
   }
   mgt_sched_insys[tid] = False;
   mgt_sched_turn = tid;
}

/* runnable: thread t exists and is not in a system call, so it holds or
   is about to ask for the big lock. */
static Bool runnable(ThreadId t)
{
   return t != VG_INVALID_THREADID && t < VG_N_THREADS && mgt_sched_live[t] && !mgt_sched_insys[t];
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
   UInt k = (UInt)(next_random(&mgt_sched_rng[self]) % n);
   for (ThreadId t = 1; t < VG_N_THREADS; t++) {
      if (t != self && runnable(t) && k-- == 0) {
         return t;
      }
   }
   return VG_INVALID_THREADID;
}

/* end_turn: the running thread cur reached a switch point (its countdown
   ran out, or it created a thread). The thread to run next is chosen
   now, among the others that can run, before Valgrind hands the lock to
   anyone; with none, cur goes on. */
static void end_turn(void)
{
   ThreadId t = mgt_sched_cur;
   mgt_sched_saved[t] = 0;
   mgt_sched_turn = pick_other(t);
   mgt_sched_cur = VG_INVALID_THREADID;
   mgt_sched_left = 0;
}

void mgt_sched_thread_create(ThreadId child)
{
   if (mgt_sched_n == 0 || child >= VG_N_THREADS) {
      return;
   }
   seed_thread(child, ++mgt_sched_created);
   /* The creator's turn ends (the child among those it may choose):
      Valgrind yields right after a clone, and which thread then gets the
      lock would otherwise depend on timing. */
   if (mgt_sched_cur != VG_INVALID_THREADID) {
      end_turn();
   }
}

Bool mgt_sched_thread_run(ThreadId tid)
{
   if (mgt_sched_n == 0 || tid == VG_INVALID_THREADID || tid >= VG_N_THREADS) {
      return False;
   }
   /* The thread that ran last: keep its countdown; at 0, its turn ended. */
   if (mgt_sched_cur != VG_INVALID_THREADID) {
      if (mgt_sched_left == 0) {
         end_turn();
      } else {
         mgt_sched_saved[mgt_sched_cur] = mgt_sched_left;
         mgt_sched_cur = VG_INVALID_THREADID;
      }
   }
   /* Not its turn (the lock came to it at the end of a time slice, or
      at a yield): it runs nothing (its first SB yields and spins the
      slice away), and leaves no trace. */
   if (mgt_sched_turn != VG_INVALID_THREADID && mgt_sched_turn != tid && runnable(mgt_sched_turn)
       && tid != mgt_sched_soft && mgt_sched_held < MGT_SCHED_MAX_HELD) {
      mgt_sched_held++;
      mgt_sched_left = 0;
      return True;
   }
   /* Its turn: the chosen thread, or the first to come while the thread
      whose turn it was is in a system call. */
   mgt_sched_held = 0;
   mgt_sched_turn = tid;
   mgt_sched_soft = VG_INVALID_THREADID;
   mgt_sched_spin = 0;
   if (mgt_sched_saved[tid] == 0) {
      mgt_sched_saved[tid] = 1 + next_random(&mgt_sched_rng[tid]) % (ULong)mgt_sched_n;
   }
   mgt_sched_left = mgt_sched_saved[tid];
   mgt_sched_cur = tid;
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
   addStmtToIRSB(out, IRStmt_StoreG(Iend_LE, addr_of(&mgt_sched_spin), IRExpr_Const(IRConst_U64(MGT_SCHED_YIELD_TAIL)),
                                    IRExpr_RdTmp(fire)));
   addStmtToIRSB(out, IRStmt_Exit(IRExpr_RdTmp(fire), Ijk_Yield, IRConst_U64((ULong)start), offset_ip));
   IRTemp next = new_tmp(out, Ity_I64, IRExpr_Binop(Iop_Sub64, IRExpr_RdTmp(left), IRExpr_Const(IRConst_U64(1))));
   addStmtToIRSB(out, IRStmt_Store(Iend_LE, addr_of(&mgt_sched_left), IRExpr_RdTmp(next)));
}
