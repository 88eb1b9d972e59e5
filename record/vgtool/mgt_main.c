/* mgt_main.c: the mgtrace Valgrind probe.

   It captures raw facts and hands them to the Go driver in chunks of a
   file both map (the FIFO carries only notices; see protocol.h). It
   decides nothing: no encoding beyond fixed words, no symbolization, no
   filtering by meaning.

   Hot path. Every superblock (SB) is instrumented so that, when it runs,
   it appends one SB_EXEC record to the current chunk with plain IR stores: a header
   word, then the data words of its sites (memory accesses, address
   derivations, the call or return that ends it), at offsets fixed when the
   SB is translated. The static description of the SB (its instructions,
   their code bytes, its sites) is sent once, as an SB_DEF record, when the
   SB is translated. The only helper call on the hot path is a guarded one
   that hands the chunk over when the next SB might not fit.

   Commit protocol. The global mgt_cur is advanced after each site's words
   are written, so that a synchronous signal in the middle of an SB leaves
   every completed site in the buffer; mgt_sb_hdr points at the running
   SB's header word until the SB ends, so the signal path can mark the
   record as cut. A side exit rewrites the header with its exit number. */

#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_machine.h"
#include "pub_tool_options.h"
#include "pub_tool_aspacemgr.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_vki.h"
#include "pub_tool_vkiscnums.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_hashtable.h"
#include "pub_tool_debuginfo.h"
#include "libvex_guest_offsets.h"
#include "libvex_guest_amd64.h"
#include "valgrind.h"

#include "protocol.h"
#include "mgt_sched.h"

/* From Valgrind's core, linked into every tool but not in the tool
   headers: fcntl (m_libcfile.c) to make descriptors close-on-exec, and a
   shared file mapping (m_aspacemgr) for the chunks the driver reads. */
extern Int VG_(fcntl)(Int fd, Int cmd, Addr arg);
extern SysRes VG_(am_shared_mmap_file_float_valgrind)(SizeT length, UInt prot, Int fd, Off64T offset);
#define MGT_F_SETFD 2
#define MGT_FD_CLOEXEC 1

/* ------------------------------------------------------------------ */
/* The buffer                                                          */
/* ------------------------------------------------------------------ */

/* Records are written into chunks of a file the driver maps too
   (MGT_CHUNK_BYTES each, protocol.h); the FIFO carries only "chunk i holds
   n bytes" notices, and the driver hands chunks back through a second
   FIFO. A process that does not record writes into a private buffer that
   is thrown away. */
#define BUF_WORDS (MGT_CHUNK_BYTES / 8)
#define MAX_CHUNKS 256

static ULong mgt_private[BUF_WORDS];
/* The chunk being filled (or the private buffer), its end, and the next
   free word. Instrumented code reads mgt_cur and mgt_end and writes
   mgt_cur. */
static ULong* mgt_buf = mgt_private;
static ULong* mgt_end = mgt_private + BUF_WORDS;
static ULong* mgt_cur = mgt_private;
/* Header of the SB being run, or 0 between SBs. */
static ULong* mgt_sb_hdr = 0;

static UChar* mgt_shm = 0;  /* the mapped chunks */
static UInt mgt_nchunks = 0;
static Int mgt_chunk = -1;  /* index of the chunk being filled; -1: private */
static UInt mgt_free[MAX_CHUNKS]; /* chunks handed back and not used yet */
static UInt mgt_nfree = 0;
static Int mgt_ret_fd = -1;
static const HChar* mgt_shm_path = 0;
static const HChar* mgt_ret_path = 0;

static Int mgt_fd = -1;
static const HChar* mgt_out = 0;
static ULong mgt_next_sb_id = 1;
static ThreadId mgt_last_tid = VG_INVALID_THREADID;
static Bool mgt_write_failed = False;

/* Live translations: guest address (the key Valgrind discards them by) to
   superblock id, so that a discard can tell the driver which id to free. */
typedef struct {
   VgHashNode node; /* key: the translation's guest address (nraddr) */
   ULong id;
} LiveSB;
static VgHashTable* mgt_live = 0;
/* False in a process that is not the recorded one (a forked child that
   ran exec): it runs uninstrumented and writes nothing. */
static Bool mgt_recording = True;

/* Writes the buffer to the FIFO. A failed write (the driver died) stops
   the stream; the program goes on running. */
static void write_all(const UChar* p, SizeT n)
{
   while (n > 0 && !mgt_write_failed && mgt_fd >= 0) {
      Int w = VG_(write)(mgt_fd, p, n);
      if (w <= 0) {
         mgt_write_failed = True;
         if (mgt_fd < 0) return;
         VG_(umsg)("mgtrace: writing to the recorder failed; the trace stops here\n");
         return;
      }
      p += w;
      n -= w;
   }
}

/* Stops recording: from now on records go to the private buffer. */
static void stop_recording(void)
{
   mgt_recording = False;
   mgt_write_failed = True;
   mgt_chunk = -1;
   mgt_buf = mgt_cur = mgt_private;
   mgt_end = mgt_private + BUF_WORDS;
}

/* Takes a free chunk to fill, waiting for the driver to hand one back if
   needed. False when the driver is gone. */
static Bool acquire(void)
{
   while (mgt_nfree == 0) {
      UInt got[64];
      Int n = VG_(read)(mgt_ret_fd, got, sizeof got);
      if (n <= 0) {
         return False;
      }
      for (Int i = 0; i < n / 4; i++) {
         if (got[i] < mgt_nchunks && mgt_nfree < MAX_CHUNKS) {
            mgt_free[mgt_nfree++] = got[i];
         }
      }
   }
   mgt_chunk = mgt_free[--mgt_nfree];
   mgt_buf = mgt_cur = (ULong*)(mgt_shm + (SizeT)mgt_chunk * MGT_CHUNK_BYTES);
   mgt_end = mgt_buf + BUF_WORDS;
   return True;
}

/* Tells the driver that chunk i holds n bytes of records (0: it is
   handed back unused). */
static Bool notify(UInt i, SizeT n)
{
   ULong notice = ((ULong)i << 32) | n;
   write_all((const UChar*)&notice, sizeof notice);
   return !mgt_write_failed;
}

/* Sends the chunk being filled to the driver and, when more records will
   follow (more), takes another. Never called while an SB is in progress. */
static void send_chunk(Bool more)
{
   if (mgt_chunk < 0) {
      mgt_cur = mgt_buf; /* private: thrown away */
      return;
   }
   SizeT n = (mgt_cur - mgt_buf) * sizeof(ULong);
   if (n == 0 && more) {
      return;
   }
   if (!notify(mgt_chunk, n) || (more && !acquire())) {
      stop_recording();
      return;
   }
   if (!more) {
      mgt_chunk = -1;
      mgt_buf = mgt_cur = mgt_private;
      mgt_end = mgt_private + BUF_WORDS;
   }
}

static void mgt_flush(void) { send_chunk(True); }

/* Hands every chunk this image holds back to the driver (before exec:
   the next image takes chunks from the driver afresh). */
static void give_back_chunks(void)
{
   send_chunk(False);
   while (mgt_nfree > 0 && !mgt_write_failed) {
      notify(mgt_free[--mgt_nfree], 0);
   }
}

static void settle(void);

/* Makes room for n words (after settling an interrupted SB). */
static void need(SizeT n)
{
   tl_assert(n < BUF_WORDS / 2);
   if (!mgt_recording) {
      mgt_cur = mgt_buf; /* nothing is sent: keep room */
      return;
   }
   if (mgt_sb_hdr != 0) {
      settle();
   }
   if ((SizeT)(mgt_end - mgt_cur) < n) {
      mgt_flush();
   }
}

static inline void put(ULong w) { *mgt_cur++ = w; }

/* Called from an SB's prologue when the buffer may not hold the SB's
   record, or when an earlier SB was left interrupted. */
static VG_REGPARM(1) void mgt_slow_path(ULong words)
{
   need(words); /* settles, then flushes if needed */
}

static inline ULong hdr(UInt type, UInt mid, UInt top)
{
   return (ULong)type | ((ULong)(mid & 0xffffff) << 8) | ((ULong)top << 32);
}

/* Appends bytes padded with zeros to whole words. */
static void put_bytes(const UChar* p, SizeT n)
{
   SizeT words = (n + 7) / 8;
   if (words > 0) {
      mgt_cur[words - 1] = 0;
      VG_(memcpy)(mgt_cur, p, n);
      mgt_cur += words;
   }
}

/* Settles an SB that was interrupted (a synchronous signal or the end of
   the process stopped it): marks its record as cut after the words
   committed so far and emits a CUT record with the first uncommitted
   word. Every record written from C goes through need(), which calls this
   first, so no record lands inside an SB's record. */
static void settle(void)
{
   ULong* h = mgt_sb_hdr;
   mgt_sb_hdr = 0;
   if (h == 0 || h < mgt_buf || h >= mgt_cur) {
      return;
   }
   ULong committed = mgt_cur - h - 1;
   ULong pending = *mgt_cur; /* written by the interrupted site, not committed */
   *h = (*h & 0xffffffff00000000ULL) | MGT_REC_SB_EXEC
        | ((ULong)MGT_EXECF_CUT << 8) | ((committed & 0xffff) << 16);
   need(2);
   put(hdr(MGT_REC_CUT, 2, 0));
   put(pending);
}

/* ------------------------------------------------------------------ */
/* Registers                                                           */
/* ------------------------------------------------------------------ */

/* tracepb.Register REG_OTHER: a base whose register is not known. */
#define REG_OTHER 63

/* Level of detail (record --level, --mgt-level): 0 full, 1 heap (no
   access whose address has rsp or rbp as its base register), 2 flow (no
   loads, stores, CAS or derivations). Applied when an SB is instrumented,
   so what is left out costs nothing at run time. */
#define MGT_LEVEL_FULL 0
#define MGT_LEVEL_HEAP 1
#define MGT_LEVEL_FLOW 2
static Long mgt_level = MGT_LEVEL_FULL;

/* tracepb.Register number of the 64-bit general register at guest state
   offset off, or 0. */
static UInt reg_of_offset(Int off)
{
   switch (off) {
   case OFFSET_amd64_RAX: return 1;
   case OFFSET_amd64_RCX: return 2;
   case OFFSET_amd64_RDX: return 3;
   case OFFSET_amd64_RBX: return 4;
   case OFFSET_amd64_RSP: return 5;
   case OFFSET_amd64_RBP: return 6;
   case OFFSET_amd64_RSI: return 7;
   case OFFSET_amd64_RDI: return 8;
   case OFFSET_amd64_R8: return 9;
   case OFFSET_amd64_R9: return 10;
   case OFFSET_amd64_R10: return 11;
   case OFFSET_amd64_R11: return 12;
   case OFFSET_amd64_R12: return 13;
   case OFFSET_amd64_R13: return 14;
   case OFFSET_amd64_R14: return 15;
   case OFFSET_amd64_R15: return 16;
   }
   return 0;
}

/* ------------------------------------------------------------------ */
/* Instrumentation                                                     */
/* ------------------------------------------------------------------ */

/* What is known about a temporary: it holds base register `reg` (whose
   value is in temporary `base`) plus a displacement, constant when
   `disp_known`. */
typedef struct {
   UChar reg;
   Bool disp_known;
   Long disp;
   IRTemp base;
} TmpInfo;

typedef struct {
   UInt kind, size, reg, nwords, insn, flags, dest;
   Long disp;
   Int stmt; /* index of its statement in the input SB, -1 for the end */
} Site;

typedef struct {
   IRSB* out;
   IRTemp t0; /* the SB record's header address */
   Int off;   /* bytes written after the header so far */
} Emit;

static IRExpr* u64(ULong v) { return IRExpr_Const(IRConst_U64(v)); }

static IRTemp tmp_of(IRSB* sb, IRExpr* e)
{
   IRTemp t = newIRTemp(sb->tyenv, Ity_I64);
   addStmtToIRSB(sb, IRStmt_WrTmp(t, e));
   return t;
}

/* Stores the I64 atom val at the next data word of the record. */
static void emit_word(Emit* em, IRExpr* val)
{
   em->off += 8;
   IRTemp a = tmp_of(em->out, IRExpr_Binop(Iop_Add64, IRExpr_RdTmp(em->t0), u64(em->off)));
   addStmtToIRSB(em->out, IRStmt_Store(Iend_LE, IRExpr_RdTmp(a), val));
}

/* Publishes the words written so far. */
static void emit_commit(Emit* em)
{
   IRTemp a = tmp_of(em->out, IRExpr_Binop(Iop_Add64, IRExpr_RdTmp(em->t0), u64(em->off + 8)));
   addStmtToIRSB(em->out, IRStmt_Store(Iend_LE, u64((ULong)(HWord)&mgt_cur), IRExpr_RdTmp(a)));
}

/* Writes the words of the call (target, the six argument registers, the
   stack pointer) or return (target, rax, the stack pointer) that ends the
   superblock being built. */
static void emit_call_words(Emit* em, Bool call)
{
   IRSB* out = em->out;
   IRExpr* next = out->next;
   if (next->tag != Iex_RdTmp && next->tag != Iex_Const) {
      next = IRExpr_RdTmp(tmp_of(out, next));
   }
   emit_word(em, next);
   if (call) {
      static const Int args[6] = {OFFSET_amd64_RDI, OFFSET_amd64_RSI, OFFSET_amd64_RDX,
                                  OFFSET_amd64_RCX, OFFSET_amd64_R8, OFFSET_amd64_R9};
      for (Int a = 0; a < 6; a++) {
         emit_word(em, IRExpr_RdTmp(tmp_of(out, IRExpr_Get(args[a], Ity_I64))));
      }
   } else {
      emit_word(em, IRExpr_RdTmp(tmp_of(out, IRExpr_Get(OFFSET_amd64_RAX, Ity_I64))));
   }
   emit_word(em, IRExpr_RdTmp(tmp_of(out, IRExpr_Get(OFFSET_amd64_RSP, Ity_I64))));
}

/* Number of words an expression of type ty takes as a value, or 0 if the
   probe does not capture values of that type. */
static UInt value_words(IRType ty)
{
   switch (ty) {
   case Ity_I8: case Ity_I16: case Ity_I32: case Ity_I64:
   case Ity_F32: case Ity_F64: return 1;
   case Ity_I128: case Ity_V128: return 2;
   case Ity_V256: return 4;
   default: return 0;
   }
}

/* Writes the value of atom e (of type ty) as value_words(ty) words. */
static void emit_value(Emit* em, IRExpr* e, IRType ty)
{
   IRSB* sb = em->out;
   switch (ty) {
   case Ity_I8: emit_word(em, IRExpr_RdTmp(tmp_of(sb, IRExpr_Unop(Iop_8Uto64, e)))); break;
   case Ity_I16: emit_word(em, IRExpr_RdTmp(tmp_of(sb, IRExpr_Unop(Iop_16Uto64, e)))); break;
   case Ity_I32: emit_word(em, IRExpr_RdTmp(tmp_of(sb, IRExpr_Unop(Iop_32Uto64, e)))); break;
   case Ity_I64: emit_word(em, e); break;
   case Ity_F64: emit_word(em, IRExpr_RdTmp(tmp_of(sb, IRExpr_Unop(Iop_ReinterpF64asI64, e)))); break;
   case Ity_F32: {
      IRTemp t = newIRTemp(sb->tyenv, Ity_I32);
      addStmtToIRSB(sb, IRStmt_WrTmp(t, IRExpr_Unop(Iop_ReinterpF32asI32, e)));
      emit_word(em, IRExpr_RdTmp(tmp_of(sb, IRExpr_Unop(Iop_32Uto64, IRExpr_RdTmp(t)))));
      break;
   }
   case Ity_I128:
      emit_word(em, IRExpr_RdTmp(tmp_of(sb, IRExpr_Unop(Iop_128to64, e))));
      emit_word(em, IRExpr_RdTmp(tmp_of(sb, IRExpr_Unop(Iop_128HIto64, e))));
      break;
   case Ity_V128:
      emit_word(em, IRExpr_RdTmp(tmp_of(sb, IRExpr_Unop(Iop_V128to64, e))));
      emit_word(em, IRExpr_RdTmp(tmp_of(sb, IRExpr_Unop(Iop_V128HIto64, e))));
      break;
   case Ity_V256:
      emit_word(em, IRExpr_RdTmp(tmp_of(sb, IRExpr_Unop(Iop_V256to64_0, e))));
      emit_word(em, IRExpr_RdTmp(tmp_of(sb, IRExpr_Unop(Iop_V256to64_1, e))));
      emit_word(em, IRExpr_RdTmp(tmp_of(sb, IRExpr_Unop(Iop_V256to64_2, e))));
      emit_word(em, IRExpr_RdTmp(tmp_of(sb, IRExpr_Unop(Iop_V256to64_3, e))));
      break;
   default:
      tl_assert(0);
   }
}

/* Fills in the base register of an address atom. */
static void address_base(const TmpInfo* info, IRExpr* addr, Site* s)
{
   if (addr->tag != Iex_RdTmp) {
      return; /* a constant: absolute or rip-relative, no base */
   }
   const TmpInfo* ti = &info[addr->Iex.RdTmp.tmp];
   if (ti->reg == 0) {
      return;
   }
   s->reg = ti->reg;
   if (ti->disp_known) {
      s->flags |= MGT_SITEF_DISP;
      s->disp = ti->disp;
   } else {
      s->flags |= MGT_SITEF_BASE;
      s->nwords += 1;
   }
}

/* Whether the level of detail keeps the memory access of site s (its
   base register filled in): flow keeps none, heap none whose base
   register is rsp or rbp. */
static Bool keep_access(const Site* s)
{
   switch (mgt_level) {
   case MGT_LEVEL_FLOW:
      return False;
   case MGT_LEVEL_HEAP:
      return s->reg != 5 /* rsp */ && s->reg != 6 /* rbp */;
   }
   return True;
}

/* Pass 1 helper: what temporary t = e says about base registers. */
static void track_tmp(TmpInfo* info, IRTemp t, IRExpr* e, IRTypeEnv* env)
{
   TmpInfo* ti = &info[t];
   ti->reg = 0;
   if (typeOfIRTemp(env, t) != Ity_I64) {
      return;
   }
   if (e->tag == Iex_Load) {
      /* A value loaded from memory (a pointer, often). VEX keeps it in the
         temporary and may write it to its register only at the end of the
         superblock, so addresses computed from it name no register yet:
         REG_OTHER, renamed when a PUT shows where it lives. */
      ti->reg = REG_OTHER;
      ti->disp_known = True;
      ti->disp = 0;
      ti->base = t;
      return;
   }
   if (e->tag == Iex_Get && e->Iex.Get.ty == Ity_I64) {
      UInt r = reg_of_offset(e->Iex.Get.offset);
      if (r != 0) {
         ti->reg = r;
         ti->disp_known = True;
         ti->disp = 0;
         ti->base = t;
      }
      return;
   }
   if (e->tag != Iex_Binop || (e->Iex.Binop.op != Iop_Add64 && e->Iex.Binop.op != Iop_Sub64)) {
      return;
   }
   IRExpr* a = e->Iex.Binop.arg1;
   IRExpr* b = e->Iex.Binop.arg2;
   Bool sub = e->Iex.Binop.op == Iop_Sub64;
   /* Prefer the operand that already carries a base register. */
   if (!sub && a->tag != Iex_RdTmp && b->tag == Iex_RdTmp) {
      IRExpr* x = a; a = b; b = x;
   }
   if (!sub && a->tag == Iex_RdTmp && b->tag == Iex_RdTmp && info[a->Iex.RdTmp.tmp].reg == 0
       && info[b->Iex.RdTmp.tmp].reg != 0) {
      IRExpr* x = a; a = b; b = x;
   }
   if (a->tag != Iex_RdTmp || info[a->Iex.RdTmp.tmp].reg == 0) {
      return;
   }
   *ti = info[a->Iex.RdTmp.tmp];
   if (ti->disp_known && b->tag == Iex_Const && b->Iex.Const.con->tag == Ico_U64) {
      Long c = (Long)b->Iex.Const.con->Ico.U64;
      ti->disp = sub ? ti->disp - c : ti->disp + c;
   } else {
      ti->disp_known = False;
   }
}

static ULong site_word(const Site* s)
{
   return (ULong)s->kind | ((ULong)s->size << 8) | ((ULong)s->reg << 16)
          | ((ULong)s->nwords << 24) | ((ULong)(s->insn & 0xffff) << 32)
          | ((ULong)s->flags << 48) | ((ULong)s->dest << 56);
}

#define MAX_SITES 4096
#define MAX_INSNS 4096

/* Emits the SB_DEF record of an SB. */
static void emit_sb_def(ULong id, IRSB* sb, const Site* sites, UInt nsites)
{
   Addr pcs[MAX_INSNS];
   UInt lens[MAX_INSNS];
   UInt n = 0;
   SizeT codelen = 0;
   for (Int i = 0; i < sb->stmts_used; i++) {
      IRStmt* st = sb->stmts[i];
      if (st->tag == Ist_IMark && n < MAX_INSNS) {
         pcs[n] = st->Ist.IMark.addr;
         lens[n] = st->Ist.IMark.len;
         codelen += lens[n];
         n++;
      }
   }
   SizeT ndisp = 0;
   for (UInt i = 0; i < nsites; i++) {
      if (sites[i].flags & MGT_SITEF_DISP) {
         ndisp++;
      }
   }
   SizeT words = 2 + n + (codelen + 7) / 8 + nsites + ndisp;
   need(words);
   put(hdr(MGT_REC_SB_DEF, words, (UInt)id));
   put((ULong)n | ((ULong)nsites << 32));
   for (UInt i = 0; i < n; i++) {
      put((ULong)pcs[i] | ((ULong)lens[i] << 56));
   }
   /* Code bytes, read from guest memory (the SB was just decoded there). */
   SizeT cwords = (codelen + 7) / 8;
   if (cwords > 0) {
      mgt_cur[cwords - 1] = 0;
      UChar* dst = (UChar*)mgt_cur;
      for (UInt i = 0; i < n; i++) {
         VG_(memcpy)(dst, (const void*)pcs[i], lens[i]);
         dst += lens[i];
      }
      mgt_cur += cwords;
   }
   for (UInt i = 0; i < nsites; i++) {
      put(site_word(&sites[i]));
      if (sites[i].flags & MGT_SITEF_DISP) {
         put((ULong)sites[i].disp);
      }
   }
}

/* ------------------------------------------------------------------ */
/* Regions (record --from/--to)                                        */
/* ------------------------------------------------------------------ */

/* The driver writes the triggers to --mgt-region-file, one per line:
     <index> loc <K> <dev> <ino> <offset>   an instruction, its K-th run
     <index> mark <K> <name>                the K-th MGTRACE_MARK(name)
     <index> icount <N>                     N instructions have run
     <index> none                           never (a region to the end)
     <index> repeat                         the region starts again at
                                            its start trigger after it ends
   Index 2i is region i+1's start, 2i+1 its end; several loc lines with
   one index make one trigger (any of the instructions counts). An
   instruction is named as code_file_loc says. */
#define TRIG_NONE 0
#define TRIG_LOC 1
#define TRIG_MARK 2
#define TRIG_ICOUNT 3
#define MAX_TRIGGERS 64
#define MAX_TRIG_LOCS 512
#define MAX_KEEP 128

typedef struct {
   UInt kind;
   ULong k;            /* K-th hit (loc, mark) or instruction count */
   const HChar* name;  /* marker name */
} Trigger;

typedef struct {
   UInt trig;
   ULong dev, ino, off;
} TrigLoc;

static const HChar* mgt_region_file = 0;
static Bool mgt_regions = False;   /* region mode */
static Bool mgt_in_region = True;  /* full instrumentation */
static Trigger mgt_trig[MAX_TRIGGERS];
static UInt mgt_ntrig = 0;
static TrigLoc mgt_locs[MAX_TRIG_LOCS];
static UInt mgt_nlocs = 0;
static UInt mgt_next = 0;          /* the trigger waited for */
static Bool mgt_repeat[MAX_TRIGGERS / 2]; /* by region: starts again after its end */
static ULong mgt_hits = 0;         /* its hits so far */
/* Bumped at each toggle: every translation checks it at entry and has
   itself retranslated when it changed. */
static ULong mgt_gen = 1;
static ULong mgt_icount = 0;       /* instructions run (per superblock) */
static UInt mgt_region_no = 0;
static Bool mgt_pending = False;   /* a toggle whose records are not written yet */
static Addr mgt_resume_pc = 0;     /* the trigger instruction that runs again after a toggle */
/* Outside regions, the calls and returns the driver wants: those of
   functions whose name matches (=NAME exact, ^PREFIX), and those of
   functions whose name Valgrind does not know. The file's "keep" lines. */
static const HChar* mgt_keep[MAX_KEEP];
static UInt mgt_nkeep = 0;

/* Whether the call to (or the return from) the function at a is kept
   outside regions. */
static Bool keep_function_at(Addr a)
{
   const HChar* name = 0;
   if (mgt_nkeep == 0 || !VG_(get_fnname)(VG_(current_DiEpoch)(), a, &name) || name == 0 || name[0] == 0) {
      return True;
   }
   for (UInt i = 0; i < mgt_nkeep; i++) {
      const HChar* k = mgt_keep[i];
      if (k[0] == '=' && VG_(strcmp)(name, k + 1) == 0) {
         return True;
      }
      if (k[0] == '^' && VG_(strncmp)(name, k + 1, VG_(strlen)(k + 1)) == 0) {
         return True;
      }
   }
   return False;
}

/* Where the instruction at a comes from: the device and inode of the
   file it is mapped from and its offset there (which, unlike a, do not
   depend on where the file was loaded), or False for code not mapped
   from a file. Region triggers and alterations name instructions so. */
static Bool code_file_loc(Addr a, ULong* dev, ULong* ino, ULong* off)
{
   NSegment const* seg = VG_(am_find_nsegment)(a);
   if (seg == 0 || seg->kind != SkFileC) {
      return False;
   }
   *dev = seg->dev;
   *ino = seg->ino;
   *off = (ULong)seg->offset + (a - seg->start);
   return True;
}

/* Whether instruction a is one of the current trigger's. */
static Bool is_trigger_insn(Addr a)
{
   if (mgt_next >= mgt_ntrig || mgt_trig[mgt_next].kind != TRIG_LOC) {
      return False;
   }
   ULong dev, ino, off;
   if (!code_file_loc(a, &dev, &ino, &off)) {
      return False;
   }
   for (UInt i = 0; i < mgt_nlocs; i++) {
      if (mgt_locs[i].trig == mgt_next && mgt_locs[i].off == off && mgt_locs[i].ino == ino
          && mgt_locs[i].dev == dev) {
         return True;
      }
   }
   return False;
}

/* The current trigger fired: the region starts or ends. Its records are
   written at the next translation, which the new generation forces,
   when no superblock is running and every thread's registers are in its
   guest state. */
static void fire(void)
{
   mgt_next++;
   if (mgt_next % 2 == 0 && mgt_repeat[mgt_next / 2 - 1]) {
      mgt_next -= 2; /* a repeating region waits for its start again */
   }
   mgt_hits = 0;
   mgt_gen++;
   mgt_pending = True;
}

static VG_REGPARM(1) void mgt_trigger_hit(ULong pc)
{
   if (mgt_resume_pc == pc) {
      mgt_resume_pc = 0; /* the trigger instruction again, after the toggle */
      return;
   }
   mgt_resume_pc = 0;
   if (++mgt_hits >= mgt_trig[mgt_next].k) {
      mgt_resume_pc = pc;
      fire();
   }
}

static void mgt_icount_hit(void)
{
   if (mgt_next < mgt_ntrig && mgt_trig[mgt_next].kind == TRIG_ICOUNT
       && mgt_icount >= mgt_trig[mgt_next].k) {
      fire();
   }
}

/* Writes the client's writable memory as MEMORY records: every readable
   and writable client segment, a thread stack only from below its stack
   pointer (the red zone) up. */
#define MEMORY_PIECE (256 * 1024)
#define MEMORY_LIMIT ((ULong)1 << 30)
static void snapshot_memory(void)
{
   Addr starts[4096];
   Int n = VG_(am_get_segment_starts)(SkAnonC | SkFileC | SkShmC, starts, 4096);
   if (n < 0) {
      n = 0;
   }
   ULong total = 0;
   for (Int i = 0; i < n; i++) {
      NSegment const* seg = VG_(am_find_nsegment)(starts[i]);
      if (seg == 0 || !seg->hasR || !seg->hasW) {
         continue;
      }
      Addr lo = seg->start, hi = seg->end + 1;
      ThreadId tid;
      Addr smin, smax;
      VG_(thread_stack_reset_iter)(&tid);
      while (VG_(thread_stack_next)(&tid, &smin, &smax)) {
         Addr sp = VG_(get_SP)(tid);
         if (sp >= lo && sp < hi && sp - 128 > lo) {
            lo = (sp - 128) & ~(Addr)7;
         }
      }
      for (Addr a = lo; a < hi && total < MEMORY_LIMIT; ) {
         SizeT len = hi - a < MEMORY_PIECE ? hi - a : MEMORY_PIECE;
         if (!VG_(am_is_valid_for_client)(a, len, VKI_PROT_READ)) {
            break;
         }
         SizeT words = 3 + (len + 7) / 8;
         need(words);
         put(hdr(MGT_REC_MEMORY, words, 0));
         put(a);
         put(len);
         put_bytes((const UChar*)a, len);
         a += len;
         total += len;
      }
   }
}

/* Writes a REGS record for every live thread. */
static void snapshot_registers(void)
{
   static const Int offs[16] = {OFFSET_amd64_RAX, OFFSET_amd64_RCX, OFFSET_amd64_RDX, OFFSET_amd64_RBX,
                                OFFSET_amd64_RSP, OFFSET_amd64_RBP, OFFSET_amd64_RSI, OFFSET_amd64_RDI,
                                OFFSET_amd64_R8, OFFSET_amd64_R9, OFFSET_amd64_R10, OFFSET_amd64_R11,
                                OFFSET_amd64_R12, OFFSET_amd64_R13, OFFSET_amd64_R14, OFFSET_amd64_R15};
   ThreadId tid;
   Addr smin, smax;
   VG_(thread_stack_reset_iter)(&tid);
   while (VG_(thread_stack_next)(&tid, &smin, &smax)) {
      need(19);
      put(hdr(MGT_REC_REGS, 19, tid));
      for (Int r = 0; r < 16; r++) {
         ULong v = 0;
         VG_(get_shadow_regs_area)(tid, (UChar*)&v, 0, offs[r], 8);
         put(v);
      }
      put(VG_(get_IP)(tid));
      ULong fs = 0;
      VG_(get_shadow_regs_area)(tid, (UChar*)&fs, 0, offsetof(VexGuestAMD64State, guest_FS_CONST), 8);
      put(fs);
   }
}

/* Writes the records of a toggle that fired: REGION, and at a start the
   registers and the memory. Called when no superblock runs. */
static void write_pending(void)
{
   if (!mgt_pending || !mgt_recording) {
      return;
   }
   mgt_pending = False;
   mgt_in_region = (mgt_next % 2) == 1; /* waiting for an end: inside */
   if (mgt_in_region) {
      mgt_region_no++;
      need(1);
      put(hdr(MGT_REC_REGION, 1, 1 | (mgt_region_no << 8)));
      snapshot_registers();
      snapshot_memory();
   } else {
      need(1);
      put(hdr(MGT_REC_REGION, 1, 2 | (mgt_region_no << 8)));
   }
}

/* Reads the triggers. Returns False (after a message) when the file is
   bad: the driver wrote it, so that is a bug, not a user error. */
static Bool read_regions(void)
{
   SysRes r = VG_(open)(mgt_region_file, VKI_O_RDONLY, 0);
   if (sr_isError(r)) {
      VG_(fmsg)("mgtrace: cannot open %s\n", mgt_region_file);
      return False;
   }
   Int fd = sr_Res(r);
   SizeT cap = 1 << 20, len = 0;
   HChar* buf = VG_(malloc)("mgt.regions", cap + 1);
   for (;;) {
      Int got = VG_(read)(fd, buf + len, cap - len);
      if (got <= 0) break;
      len += got;
      if (len == cap) break;
   }
   VG_(close)(fd);
   buf[len] = 0;
   HChar* line = buf;
   while (*line) {
      HChar* end = line;
      while (*end && *end != '\n') end++;
      Bool last = *end == 0;
      *end = 0;
      HChar* p = line;
      if (VG_(strncmp)(p, "keep ", 5) == 0) {
         if (mgt_nkeep < MAX_KEEP) {
            mgt_keep[mgt_nkeep++] = p + 5;
         }
      } else if (*p) {
         UInt idx = (UInt)VG_(strtoll10)(p, &p);
         while (*p == ' ') p++;
         if (idx >= MAX_TRIGGERS) {
            VG_(fmsg)("mgtrace: too many region triggers\n");
            return False;
         }
         if (idx + 1 > mgt_ntrig) mgt_ntrig = idx + 1;
         Trigger* t = &mgt_trig[idx];
         if (VG_(strncmp)(p, "loc ", 4) == 0) {
            p += 4;
            t->kind = TRIG_LOC;
            t->k = VG_(strtoll10)(p, &p);
            if (mgt_nlocs >= MAX_TRIG_LOCS) {
               VG_(fmsg)("mgtrace: too many region trigger instructions\n");
               return False;
            }
            mgt_locs[mgt_nlocs].trig = idx;
            mgt_locs[mgt_nlocs].dev = VG_(strtoull10)(p, &p);
            mgt_locs[mgt_nlocs].ino = VG_(strtoull10)(p, &p);
            mgt_locs[mgt_nlocs].off = VG_(strtoull10)(p, &p);
            mgt_nlocs++;
         } else if (VG_(strncmp)(p, "mark ", 5) == 0) {
            p += 5;
            t->kind = TRIG_MARK;
            t->k = VG_(strtoll10)(p, &p);
            while (*p == ' ') p++;
            t->name = p;
         } else if (VG_(strncmp)(p, "icount ", 7) == 0) {
            t->kind = TRIG_ICOUNT;
            t->k = VG_(strtoll10)(p + 7, &p);
         } else if (VG_(strcmp)(p, "none") == 0) {
            t->kind = TRIG_NONE;
         } else if (VG_(strcmp)(p, "repeat") == 0) {
            mgt_repeat[idx / 2] = True;
         } else {
            VG_(fmsg)("mgtrace: bad region trigger line: %s\n", line);
            return False;
         }
         if (t->k == 0) t->k = 1;
      }
      if (last) break;
      line = end + 1;
   }
   mgt_regions = True;
   mgt_in_region = False;
   return True;
}

/* Adds the generation check: when the generation is no longer gen (a
   region started or ended since this translation was made), leave to
   addr through an invalidate-icache exit over the whole address space:
   Valgrind discards every translation at once (the first translation to
   notice does it; the others are gone with it) and translates anew. */
static void add_gen_check(IRSB* out, Addr addr, ULong gen)
{
   IRTemp g = newIRTemp(out->tyenv, Ity_I64);
   addStmtToIRSB(out, IRStmt_WrTmp(g, IRExpr_Load(Iend_LE, Ity_I64, u64((ULong)(HWord)&mgt_gen))));
   IRTemp ne = newIRTemp(out->tyenv, Ity_I1);
   addStmtToIRSB(out, IRStmt_WrTmp(ne, IRExpr_Binop(Iop_CmpNE64, IRExpr_RdTmp(g), u64(gen))));
   addStmtToIRSB(out, IRStmt_Put(offsetof(VexGuestAMD64State, guest_CMSTART), u64(0x1000)));
   addStmtToIRSB(out, IRStmt_Put(offsetof(VexGuestAMD64State, guest_CMLEN), u64(~(ULong)0xfff)));
   addStmtToIRSB(out, IRStmt_Exit(IRExpr_RdTmp(ne), Ijk_InvalICache, IRConst_U64(addr), OFFSET_amd64_RIP));
}

/* Adds, at the start of a translation made in generation gen, the check
   that has it retranslated when the generation changed (an
   invalidate-icache exit to its own start: Valgrind discards the
   translations there and translates again), and the instruction count
   of an icount trigger. */
static void add_entry_checks(IRSB* out, Addr start, UInt ninsns, ULong gen)
{
   if (mgt_next < mgt_ntrig && mgt_trig[mgt_next].kind == TRIG_ICOUNT) {
      IRTemp old = newIRTemp(out->tyenv, Ity_I64);
      addStmtToIRSB(out, IRStmt_WrTmp(old, IRExpr_Load(Iend_LE, Ity_I64, u64((ULong)(HWord)&mgt_icount))));
      IRTemp c = tmp_of(out, IRExpr_Binop(Iop_Add64, IRExpr_RdTmp(old), u64(ninsns)));
      addStmtToIRSB(out, IRStmt_Store(Iend_LE, u64((ULong)(HWord)&mgt_icount), IRExpr_RdTmp(c)));
      IRTemp reached = newIRTemp(out->tyenv, Ity_I1);
      addStmtToIRSB(out, IRStmt_WrTmp(reached, IRExpr_Binop(Iop_CmpLE64U, u64(mgt_trig[mgt_next].k), IRExpr_RdTmp(c))));
      IRDirty* d = unsafeIRDirty_0_N(0, "mgt_icount_hit", VG_(fnptr_to_fnentry)(&mgt_icount_hit), mkIRExprVec_0());
      d->guard = IRExpr_RdTmp(reached);
      addStmtToIRSB(out, IRStmt_Dirty(d));
   }
   add_gen_check(out, start, gen);
}

/* Adds the count of a trigger instruction at pc. Outside a region
   (exit_now) the translation then leaves at pc when the trigger fired,
   so that the region starts exactly there; inside, the superblock runs
   to its end and the region ends with it. */
static void add_trigger_hook(IRSB* out, Addr pc, ULong gen, Bool exit_now)
{
   IRDirty* d = unsafeIRDirty_0_N(1, "mgt_trigger_hit", VG_(fnptr_to_fnentry)(&mgt_trigger_hit),
                                  mkIRExprVec_1(u64(pc)));
   addStmtToIRSB(out, IRStmt_Dirty(d));
   if (exit_now) {
      add_gen_check(out, pc, gen);
   }
}

/* Adds, at the end of a superblock that ends with a call or a return,
   the XCALL or XRET record. */
static void add_xcall(IRSB* out, Bool call, Addr pc)
{
   UInt words = call ? 10 : 5;
   IRTemp c0 = newIRTemp(out->tyenv, Ity_I64);
   addStmtToIRSB(out, IRStmt_WrTmp(c0, IRExpr_Load(Iend_LE, Ity_I64, u64((ULong)(HWord)&mgt_cur))));
   IRTemp e0 = newIRTemp(out->tyenv, Ity_I64);
   addStmtToIRSB(out, IRStmt_WrTmp(e0, IRExpr_Load(Iend_LE, Ity_I64, u64((ULong)(HWord)&mgt_end))));
   IRTemp room = tmp_of(out, IRExpr_Binop(Iop_Sub64, IRExpr_RdTmp(e0), IRExpr_RdTmp(c0)));
   IRTemp full = newIRTemp(out->tyenv, Ity_I1);
   addStmtToIRSB(out, IRStmt_WrTmp(full, IRExpr_Binop(Iop_CmpLT64U, IRExpr_RdTmp(room), u64(8 * (words + 1)))));
   IRDirty* d = unsafeIRDirty_0_N(1, "mgt_slow_path", VG_(fnptr_to_fnentry)(&mgt_slow_path),
                                  mkIRExprVec_1(u64(words + 1)));
   d->guard = IRExpr_RdTmp(full);
   d->mFx = Ifx_Modify;
   d->mAddr = u64((ULong)(HWord)&mgt_cur);
   d->mSize = 8;
   addStmtToIRSB(out, IRStmt_Dirty(d));
   Emit em = {out, newIRTemp(out->tyenv, Ity_I64), 0};
   addStmtToIRSB(out, IRStmt_WrTmp(em.t0, IRExpr_Load(Iend_LE, Ity_I64, u64((ULong)(HWord)&mgt_cur))));
   addStmtToIRSB(out, IRStmt_Store(Iend_LE, IRExpr_RdTmp(em.t0),
                                   u64(hdr(call ? MGT_REC_XCALL : MGT_REC_XRET, words, 0))));
   emit_word(&em, u64(pc));
   emit_call_words(&em, call);
   emit_commit(&em);
}

/* Instruments a superblock outside any region: the generation check,
   the trigger instructions, and the call or return that ends it. */
static IRSB* instrument_outside(IRSB* in, Addr nraddr, Int offset_ip)
{
   ULong gen = mgt_gen;
   IRSB* out = deepCopyIRSBExceptStmts(in);
   UInt ninsns = 0;
   for (Int i = 0; i < in->stmts_used; i++) {
      if (in->stmts[i]->tag == Ist_IMark) ninsns++;
   }
   Bool started = False;
   Addr last = 0;
   for (Int i = 0; i < in->stmts_used; i++) {
      IRStmt* st = in->stmts[i];
      addStmtToIRSB(out, st);
      if (st->tag != Ist_IMark) {
         continue;
      }
      last = st->Ist.IMark.addr;
      if (!started) {
         started = True;
         add_entry_checks(out, last, ninsns, gen);
         mgt_sched_instrument(out, nraddr, offset_ip);
      }
      if (is_trigger_insn(last)) {
         add_trigger_hook(out, last, gen, True);
      }
   }
   if (started && in->jumpkind == Ijk_Call
       && (in->next->tag != Iex_Const || keep_function_at((Addr)in->next->Iex.Const.con->Ico.U64))) {
      add_xcall(out, True, last);
   }
   if (started && in->jumpkind == Ijk_Ret && keep_function_at(last)) {
      add_xcall(out, False, last);
   }
   return out;
}

/* ------------------------------------------------------------------ */
/* Alterations (record --switch, --suppress)                           */
/* ------------------------------------------------------------------ */

/* The driver decides what to alter; the probe only applies it. The file
   named by --mgt-alter-file has one line per instruction to alter:
       slot kind instance dev ino offset
   slot: the counter the instruction's executions are counted in (a
   source line's instructions share one); kind: 1 switch a conditional
   branch, 2 suppress a call, 3 suppress an instruction's stores;
   instance: the execution of the slot to alter, from 1, or 0 for all;
   dev, ino, offset: the file the instruction is mapped from and its
   offset there (so that where the file is loaded does not matter). */
#define ALT_SWITCH 1
#define ALT_CALL 2
#define ALT_STORE 3
#define ALT_FOLLOW 4
#define MAX_ALTERS 256

typedef struct {
   UInt slot, kind;
   ULong dev, ino, offset;
} AlterInsn;

static const HChar* mgt_alter_path = 0;
static AlterInsn mgt_alters[MAX_ALTERS];
static UInt mgt_nalters = 0;
static ULong mgt_alter_count[MAX_ALTERS]; /* by slot: executions so far */
static ULong mgt_alter_want[MAX_ALTERS];  /* by slot: the instance, 0 = all */
static UInt mgt_nslots = 0;
/* Where a suppressed store goes instead (the widest store is 32 bytes). */
static ULong mgt_alter_scratch[8];

/* Reads the alteration file; exits on a malformed one (the driver wrote
   it). */
static void read_alters(void)
{
   static HChar buf[32768];
   if (mgt_alter_path == 0) {
      return;
   }
   SysRes r = VG_(open)(mgt_alter_path, VKI_O_RDONLY, 0);
   if (sr_isError(r)) {
      VG_(fmsg)("mgtrace: cannot open %s\n", mgt_alter_path);
      VG_(exit)(2);
   }
   Int n = VG_(read)(sr_Res(r), buf, sizeof buf - 1);
   VG_(close)(sr_Res(r));
   if (n < 0) {
      n = 0;
   }
   buf[n] = 0;
   HChar* p = buf;
   while (*p != 0) {
      ULong v[6];
      for (Int i = 0; i < 6; i++) {
         while (*p == ' ') p++;
         HChar* end;
         v[i] = VG_(strtoull10)(p, &end);
         if (end == p) {
            VG_(fmsg)("mgtrace: malformed alteration file %s\n", mgt_alter_path);
            VG_(exit)(2);
         }
         p = end;
      }
      while (*p == ' ' || *p == '\n') p++;
      if (mgt_nalters >= MAX_ALTERS || v[0] >= MAX_ALTERS || v[1] < ALT_SWITCH || v[1] > ALT_FOLLOW) {
         VG_(fmsg)("mgtrace: bad alteration in %s\n", mgt_alter_path);
         VG_(exit)(2);
      }
      AlterInsn* a = &mgt_alters[mgt_nalters++];
      a->slot = (UInt)v[0];
      a->kind = (UInt)v[1];
      a->dev = v[3];
      a->ino = v[4];
      a->offset = v[5];
      mgt_alter_want[a->slot] = v[2];
      if (a->slot + 1 > mgt_nslots) {
         mgt_nslots = a->slot + 1;
      }
   }
}

/* The alteration of the instruction at a, or 0. */
static const AlterInsn* alter_at(Addr a)
{
   ULong dev, ino, off;
   if (!code_file_loc(a, &dev, &ino, &off)) {
      return 0;
   }
   for (UInt i = 0; i < mgt_nalters; i++) {
      const AlterInsn* x = &mgt_alters[i];
      if (x->offset == off && x->ino == ino && x->dev == dev) {
         return x;
      }
   }
   return 0;
}

/* Counts an execution of an altered instruction of slot; returns its
   instance number when this one is altered, else 0. */
static VG_REGPARM(1) ULong mgt_alter_hit(ULong slot)
{
   ULong c = ++mgt_alter_count[slot];
   ULong want = mgt_alter_want[slot];
   return want == 0 || c == want ? c : 0;
}

/* Sends the counts (at the end of the process). */
static void send_alter_counts(void)
{
   for (UInt s = 0; s < mgt_nslots; s++) {
      need(3);
      put(hdr(MGT_REC_ALTER, 3, 0));
      put(s);
      put(mgt_alter_count[s]);
   }
}

/* What the instrumentation needs to know about an SB's alterations, by
   statement index of the SB alter_sb returns: the statements that are
   ALTER sites (kind: 1 switch, 2 suppress; 0 none), with the temporary
   holding the instance number (the marked statement itself writes the
   address word). */
typedef struct {
   UChar* kind;
   IRTemp* word;
   Int n;
} AlterSB;

static UInt alter_site_kind(const AlterSB* alt, Int i)
{
   return alt->kind != 0 && i < alt->n ? alt->kind[i] : 0;
}

static IRTemp new_tmp(IRSB* sb, IRType ty, IRExpr* e)
{
   IRTemp t = newIRTemp(sb->tyenv, ty);
   addStmtToIRSB(sb, IRStmt_WrTmp(t, e));
   return t;
}

/* Emits the helper call for an altered instruction: returns the temporary
   with the instance number (0: not altered) and sets *b to the I1
   "altered". */
static IRTemp alter_call(IRSB* out, const AlterInsn* x, IRTemp* b)
{
   IRTemp w = newIRTemp(out->tyenv, Ity_I64);
   IRDirty* d = unsafeIRDirty_1_N(w, 1, "mgt_alter_hit", VG_(fnptr_to_fnentry)(&mgt_alter_hit),
                                  mkIRExprVec_1(u64(x->slot)));
   addStmtToIRSB(out, IRStmt_Dirty(d));
   *b = new_tmp(out, Ity_I1, IRExpr_Binop(Iop_CmpNE64, IRExpr_RdTmp(w), u64(0)));
   return w;
}

/* Marks the ALTER site: a statement writing the address word. */
static void alter_mark(IRSB* out, AlterSB* alt, UInt kind, IRTemp w, IRExpr* addr)
{
   new_tmp(out, Ity_I64, addr);
   Int i = out->stmts_used - 1;
   if (i < alt->n) {
      alt->kind[i] = (UChar)kind;
      alt->word[i] = w;
   }
}

/* Whether an atom is a temporary defined by a statement of sb so far (or
   a constant). */
static Bool atom_ready(IRSB* sb, IRExpr* e)
{
   if (e->tag == Iex_Const) {
      return True;
   }
   if (e->tag != Iex_RdTmp) {
      return False;
   }
   for (Int i = 0; i < sb->stmts_used; i++) {
      IRStmt* st = sb->stmts[i];
      if (st->tag == Ist_WrTmp && st->Ist.WrTmp.tmp == e->Iex.RdTmp.tmp) return True;
      if (st->tag == Ist_Dirty && st->Ist.Dirty.details->tmp == e->Iex.RdTmp.tmp) return True;
      if (st->tag == Ist_LoadG && st->Ist.LoadG.details->dst == e->Iex.RdTmp.tmp) return True;
   }
   return False;
}

/* Rewrites an SB whose instructions are to be altered (returns in itself
   when none is): a switched branch's exit guard becomes guard XOR
   altered; a suppressed call's stores go to a scratch buffer, its rsp
   update is undone and an added exit goes to the instruction after the
   call with rax = 0; a suppressed instruction's stores go to the scratch
   buffer. Each altered instruction gets an ALTER site (alt). */
static IRSB* alter_sb(IRSB* in, const VexGuestLayout* layout, AlterSB* alt)
{
   alt->kind = 0;
   alt->word = 0;
   alt->n = 0;
   if (mgt_nalters == 0) {
      return in;
   }
   Bool any = False;
   for (Int i = 0; i < in->stmts_used && !any; i++) {
      if (in->stmts[i]->tag == Ist_IMark && alter_at(in->stmts[i]->Ist.IMark.addr) != 0) {
         any = True;
      }
   }
   if (!any) {
      return in;
   }
   IRSB* out = deepCopyIRSBExceptStmts(in);
   /* Each instruction gains at most 10 statements, each store 1. */
   alt->n = 11 * in->stmts_used + 64;
   alt->kind = VG_(calloc)("mgt.alter", alt->n, 1);
   alt->word = VG_(calloc)("mgt.alter", alt->n, sizeof(IRTemp));
   IRTemp slot_w[MAX_ALTERS], slot_b[MAX_ALTERS]; /* the anchors met so far */
   for (UInt k = 0; k < MAX_ALTERS; k++) {
      slot_w[k] = slot_b[k] = IRTemp_INVALID;
   }
   const AlterInsn* x = 0; /* the alteration of the current instruction */
   Addr pc = 0, next_pc = 0;
   IRTemp w = IRTemp_INVALID, b = IRTemp_INVALID;
   Bool last = False; /* the current instruction is the SB's last */
   for (Int i = 0; i < in->stmts_used; i++) {
      IRStmt* st = in->stmts[i];
      if (st->tag == Ist_IMark) {
         x = alter_at(st->Ist.IMark.addr);
         pc = st->Ist.IMark.addr;
         next_pc = pc + st->Ist.IMark.len;
         w = b = IRTemp_INVALID;
         last = True;
         for (Int k = i + 1; k < in->stmts_used; k++) {
            if (in->stmts[k]->tag == Ist_IMark) {
               last = False;
               break;
            }
         }
         if (x != 0 && x->kind == ALT_CALL && !(last && in->jumpkind == Ijk_Call)) {
            x = 0; /* not a call that ends the SB: leave it */
         }
         addStmtToIRSB(out, st);
         if (x != 0 && x->kind == ALT_STORE) {
            w = alter_call(out, x, &b);
            alter_mark(out, alt, 2, w, u64(0));
            slot_w[x->slot] = w;
            slot_b[x->slot] = b;
         } else if (x != 0 && x->kind == ALT_FOLLOW) {
            if (slot_w[x->slot] == IRTemp_INVALID) {
               x = 0; /* its anchor is not in this SB: leave it */
            } else {
               w = slot_w[x->slot];
               b = slot_b[x->slot];
               alter_mark(out, alt, 2, w, u64(0));
            }
         }
         continue;
      }
      if (x == 0) {
         addStmtToIRSB(out, st);
         continue;
      }
      switch (x->kind) {
      case ALT_SWITCH:
         if (st->tag == Ist_Exit && w == IRTemp_INVALID) {
            IRExpr* g = st->Ist.Exit.guard;
            w = alter_call(out, x, &b);
            IRTemp g64 = new_tmp(out, Ity_I64, IRExpr_Unop(Iop_1Uto64, g));
            IRTemp b64 = new_tmp(out, Ity_I64, IRExpr_Unop(Iop_1Uto64, IRExpr_RdTmp(b)));
            IRTemp x64 = new_tmp(out, Ity_I64, IRExpr_Binop(Iop_Xor64, IRExpr_RdTmp(g64), IRExpr_RdTmp(b64)));
            IRTemp ng = new_tmp(out, Ity_I1, IRExpr_Binop(Iop_CmpNE64, IRExpr_RdTmp(x64), u64(0)));
            /* Where control goes when the exit is not taken: the next
               instruction of the SB, or the SB's next. */
            IRExpr* cont = u64(0);
            for (Int k = i + 1; k < in->stmts_used; k++) {
               if (in->stmts[k]->tag == Ist_IMark) {
                  cont = u64(in->stmts[k]->Ist.IMark.addr);
                  break;
               }
            }
            if (last && in->next->tag == Iex_Const) {
               cont = in->next;
            }
            IRExpr* dst = IRExpr_Const(st->Ist.Exit.dst);
            if (st->Ist.Exit.dst->tag != Ico_U64) {
               dst = u64(0);
            }
            alter_mark(out, alt, 1, w, IRExpr_ITE(IRExpr_RdTmp(ng), dst, cont));
            addStmtToIRSB(out, IRStmt_Exit(IRExpr_RdTmp(ng), st->Ist.Exit.jk, st->Ist.Exit.dst,
                                           st->Ist.Exit.offsIP));
            continue;
         }
         break;
      case ALT_CALL:
         if (w == IRTemp_INVALID && (st->tag == Ist_Store
                                     || (st->tag == Ist_Put && st->Ist.Put.offset == OFFSET_amd64_RSP))) {
            w = alter_call(out, x, &b);
            IRExpr* target = atom_ready(out, in->next) ? in->next : u64(0);
            alter_mark(out, alt, 2, w, target);
         }
         if (b != IRTemp_INVALID && st->tag == Ist_Put && st->Ist.Put.offset == OFFSET_amd64_RSP
             && st->Ist.Put.data->tag == Iex_RdTmp) {
            /* Undo the push when altered: rsp as it was before the call. */
            IRExpr* nsp = st->Ist.Put.data;
            IRTemp old = new_tmp(out, Ity_I64, IRExpr_Binop(Iop_Add64, nsp, u64(8)));
            IRTemp sel = new_tmp(out, Ity_I64, IRExpr_ITE(IRExpr_RdTmp(b), IRExpr_RdTmp(old), nsp));
            addStmtToIRSB(out, IRStmt_Put(OFFSET_amd64_RSP, IRExpr_RdTmp(sel)));
            continue;
         }
         break;
      default:
         break;
      }
      if (b != IRTemp_INVALID && st->tag == Ist_Store) {
         /* A suppressed store writes the scratch buffer instead. */
         IRTemp a = new_tmp(out, Ity_I64, IRExpr_ITE(IRExpr_RdTmp(b), u64((ULong)(HWord)mgt_alter_scratch),
                                                     st->Ist.Store.addr));
         addStmtToIRSB(out, IRStmt_Store(st->Ist.Store.end, IRExpr_RdTmp(a), st->Ist.Store.data));
         continue;
      }
      addStmtToIRSB(out, st);
   }
   if (x != 0 && x->kind == ALT_CALL && b != IRTemp_INVALID) {
      /* A suppressed call: rax = 0 and go on after the call. */
      IRTemp rax = new_tmp(out, Ity_I64, IRExpr_Get(OFFSET_amd64_RAX, Ity_I64));
      IRTemp sel = new_tmp(out, Ity_I64, IRExpr_ITE(IRExpr_RdTmp(b), u64(0), IRExpr_RdTmp(rax)));
      addStmtToIRSB(out, IRStmt_Put(OFFSET_amd64_RAX, IRExpr_RdTmp(sel)));
      addStmtToIRSB(out, IRStmt_Exit(IRExpr_RdTmp(b), Ijk_Boring, IRConst_U64(next_pc), layout->offset_IP));
   }
   return out;
}

static IRSB* mgt_instrument(VgCallbackClosure* closure, IRSB* in, const VexGuestLayout* layout,
                            const VexGuestExtents* vge, const VexArchInfo* archinfo_host,
                            IRType gWordTy, IRType hWordTy)
{
   if (!mgt_recording) {
      return in;
   }
   write_pending();
   if (mgt_regions && !mgt_in_region) {
      return instrument_outside(in, closure->nraddr, layout->offset_IP);
   }
   ULong gen = mgt_gen;
   UInt ninsns = 0;
   for (Int i = 0; i < in->stmts_used; i++) {
      if (in->stmts[i]->tag == Ist_IMark) ninsns++;
   }
   AlterSB alt;
   in = alter_sb(in, layout, &alt);
   IRTypeEnv* env = in->tyenv;
   Int ntmps = env->types_used;
   TmpInfo* info = VG_(calloc)("mgt.tmpinfo", ntmps > 0 ? ntmps : 1, sizeof(TmpInfo));
   Site* sites = VG_(malloc)("mgt.sites", MAX_SITES * sizeof(Site));
   UInt nsites = 0, words = 0, exits = 0;
   Int insn = -1;

   /* Pass 1: the sites, in execution order. */
   for (Int i = 0; i < in->stmts_used && nsites < MAX_SITES - 1; i++) {
      IRStmt* st = in->stmts[i];
      Site s = {0};
      if (alter_site_kind(&alt, i) != 0) {
         s.kind = MGT_SITE_ALTER;
         s.size = alter_site_kind(&alt, i);
         s.nwords = 2;
         s.insn = insn < 0 ? 0 : insn;
         s.stmt = i;
         sites[nsites++] = s;
         words += s.nwords;
         continue;
      }
      switch (st->tag) {
      case Ist_IMark:
         insn++;
         continue;
      case Ist_WrTmp: {
         IRExpr* e = st->Ist.WrTmp.data;
         track_tmp(info, st->Ist.WrTmp.tmp, e, env);
         if (e->tag == Iex_Load) {
            UInt vw = value_words(e->Iex.Load.ty);
            if (vw == 0) continue;
            s.kind = MGT_SITE_LOAD;
            s.size = sizeofIRType(e->Iex.Load.ty);
            s.nwords = 1 + vw;
            address_base(info, e->Iex.Load.addr, &s);
            if (!keep_access(&s)) continue;
            break;
         }
         continue;
      }
      case Ist_Store: {
         IRType ty = typeOfIRExpr(env, st->Ist.Store.data);
         UInt vw = value_words(ty);
         if (vw == 0) continue;
         s.kind = MGT_SITE_STORE;
         s.size = sizeofIRType(ty);
         s.nwords = 1 + vw;
         address_base(info, st->Ist.Store.addr, &s);
         if (!keep_access(&s)) continue;
         break;
      }
      case Ist_CAS: {
         IRCAS* c = st->Ist.CAS.details;
         IRType ty = typeOfIRExpr(env, c->dataLo);
         if (c->oldHi != IRTemp_INVALID || value_words(ty) != 1) continue;
         s.kind = MGT_SITE_CAS;
         s.size = sizeofIRType(ty);
         s.nwords = 4;
         address_base(info, c->addr, &s);
         if (!keep_access(&s)) continue;
         break;
      }
      case Ist_Put: {
         IRExpr* d = st->Ist.Put.data;
         UInt dest = reg_of_offset(st->Ist.Put.offset);
         if (dest == 0 || dest == 5 /* rsp */ || d->tag != Iex_RdTmp) continue;
         IRTemp t = d->Iex.RdTmp.tmp;
         if (t >= ntmps) continue;
         if ((info[t].reg == 0 || (info[t].reg == REG_OTHER && info[t].base == t))
             && typeOfIRTemp(env, t) == Ity_I64) {
            /* A value that came from elsewhere (a load, say) now lives in
               register dest. VEX reuses the temporary instead of reading
               the register back, so later addresses computed from it
               have dest as their base register. */
            info[t].reg = dest;
            info[t].disp_known = True;
            info[t].disp = 0;
            info[t].base = t;
            continue;
         }
         if (info[t].reg == 0 || info[t].base == t) continue;
         if (mgt_level == MGT_LEVEL_FLOW) continue; /* no data */
         s.kind = MGT_SITE_DERIVE;
         s.reg = info[t].reg;
         s.dest = dest;
         s.nwords = 2;
         break;
      }
      case Ist_Exit:
         s.kind = MGT_SITE_EXIT;
         exits++;
         break;
      default:
         continue;
      }
      s.insn = insn < 0 ? 0 : insn;
      s.stmt = i;
      sites[nsites++] = s;
      words += s.nwords;
   }
   if (in->jumpkind == Ijk_Call || in->jumpkind == Ijk_Ret) {
      Site s = {0};
      s.kind = in->jumpkind == Ijk_Call ? MGT_SITE_CALL : MGT_SITE_RET;
      s.nwords = in->jumpkind == Ijk_Call ? 8 : 3;
      s.insn = insn < 0 ? 0 : insn;
      s.stmt = -1;
      sites[nsites++] = s;
      words += s.nwords;
   }

   ULong id = mgt_next_sb_id++;
   emit_sb_def(id, in, sites, nsites);
   LiveSB* live = VG_(HT_remove)(mgt_live, closure->nraddr);
   if (live == 0) {
      live = VG_(malloc)("mgt.live", sizeof(LiveSB));
   }
   live->node.key = closure->nraddr;
   live->id = id;
   VG_(HT_add_node)(mgt_live, live);

   /* Pass 2: copy the SB, adding the record writes. */
   IRSB* out = deepCopyIRSBExceptStmts(in);
   Emit em = {out, IRTemp_INVALID, 0};
   UInt si = 0, exit_no = 0;
   Bool started = False;
   ULong header = hdr(MGT_REC_SB_EXEC, 0, (UInt)id);
   for (Int i = 0; i < in->stmts_used; i++) {
      IRStmt* st = in->stmts[i];
      if (!started && st->tag == Ist_IMark) {
         addStmtToIRSB(out, st);
         started = True;
         if (mgt_regions) {
            add_entry_checks(out, st->Ist.IMark.addr, ninsns, gen);
         }
         /* Interleaving control (mgt_sched.c): may leave before the
            SB runs, with nothing recorded. */
         mgt_sched_instrument(out, closure->nraddr, layout->offset_IP);
         /* Prologue: settle an SB that was interrupted without a
            callback (Valgrind restarts an instruction after growing the
            stack), make room, write the header, publish it. */
         IRTemp c0 = newIRTemp(out->tyenv, Ity_I64);
         addStmtToIRSB(out, IRStmt_WrTmp(c0, IRExpr_Load(Iend_LE, Ity_I64, u64((ULong)(HWord)&mgt_cur))));
         IRTemp h0 = newIRTemp(out->tyenv, Ity_I64);
         addStmtToIRSB(out, IRStmt_WrTmp(h0, IRExpr_Load(Iend_LE, Ity_I64, u64((ULong)(HWord)&mgt_sb_hdr))));
         IRTemp e0 = newIRTemp(out->tyenv, Ity_I64);
         addStmtToIRSB(out, IRStmt_WrTmp(e0, IRExpr_Load(Iend_LE, Ity_I64, u64((ULong)(HWord)&mgt_end))));
         IRTemp room = tmp_of(out, IRExpr_Binop(Iop_Sub64, IRExpr_RdTmp(e0), IRExpr_RdTmp(c0)));
         IRTemp full = newIRTemp(out->tyenv, Ity_I1);
         addStmtToIRSB(out, IRStmt_WrTmp(full, IRExpr_Binop(Iop_CmpLT64U, IRExpr_RdTmp(room), u64(8 * (words + 1)))));
         IRTemp stale = newIRTemp(out->tyenv, Ity_I1);
         addStmtToIRSB(out, IRStmt_WrTmp(stale, IRExpr_Binop(Iop_CmpNE64, IRExpr_RdTmp(h0), u64(0))));
         IRTemp either = tmp_of(out, IRExpr_Binop(Iop_Or64, IRExpr_RdTmp(tmp_of(out, IRExpr_Unop(Iop_1Uto64, IRExpr_RdTmp(full)))),
                                                  IRExpr_RdTmp(tmp_of(out, IRExpr_Unop(Iop_1Uto64, IRExpr_RdTmp(stale))))));
         IRTemp slow = newIRTemp(out->tyenv, Ity_I1);
         addStmtToIRSB(out, IRStmt_WrTmp(slow, IRExpr_Binop(Iop_CmpNE64, IRExpr_RdTmp(either), u64(0))));
         IRDirty* d = unsafeIRDirty_0_N(1, "mgt_slow_path", VG_(fnptr_to_fnentry)(&mgt_slow_path),
                                        mkIRExprVec_1(u64(words + 1)));
         d->guard = IRExpr_RdTmp(slow);
         d->mFx = Ifx_Modify;
         d->mAddr = u64((ULong)(HWord)&mgt_cur);
         d->mSize = 8;
         addStmtToIRSB(out, IRStmt_Dirty(d));
         em.t0 = newIRTemp(out->tyenv, Ity_I64);
         addStmtToIRSB(out, IRStmt_WrTmp(em.t0, IRExpr_Load(Iend_LE, Ity_I64, u64((ULong)(HWord)&mgt_cur))));
         addStmtToIRSB(out, IRStmt_Store(Iend_LE, IRExpr_RdTmp(em.t0), u64(header)));
         addStmtToIRSB(out, IRStmt_Store(Iend_LE, u64((ULong)(HWord)&mgt_sb_hdr), IRExpr_RdTmp(em.t0)));
         em.off = 0;
         emit_commit(&em);
         if (mgt_regions && is_trigger_insn(st->Ist.IMark.addr)) {
            add_trigger_hook(out, st->Ist.IMark.addr, gen, False);
         }
         continue;
      }
      if (!started || si >= nsites || sites[si].stmt != i) {
         addStmtToIRSB(out, st);
         if (mgt_regions && st->tag == Ist_IMark && is_trigger_insn(st->Ist.IMark.addr)) {
            add_trigger_hook(out, st->Ist.IMark.addr, gen, False);
         }
         continue;
      }
      const Site* s = &sites[si];
      if (s->kind == MGT_SITE_ALTER) {
         addStmtToIRSB(out, st);
         emit_word(&em, IRExpr_RdTmp(alt.word[i]));
         emit_word(&em, IRExpr_RdTmp(st->Ist.WrTmp.tmp));
         emit_commit(&em);
         si++;
         continue;
      }
      switch (st->tag) {
      case Ist_WrTmp: {
         IRExpr* e = st->Ist.WrTmp.data;
         if (s->kind == MGT_SITE_LOAD) {
            emit_word(&em, e->Iex.Load.addr);
            addStmtToIRSB(out, st);
            emit_value(&em, IRExpr_RdTmp(st->Ist.WrTmp.tmp), e->Iex.Load.ty);
            if (s->flags & MGT_SITEF_BASE) {
               emit_word(&em, IRExpr_RdTmp(info[e->Iex.Load.addr->Iex.RdTmp.tmp].base));
            }
            emit_commit(&em);
            si++;
            continue;
         }
         break;
      }
      case Ist_Store: {
         IRType ty = typeOfIRExpr(env, st->Ist.Store.data);
         if (s->kind == MGT_SITE_STORE) {
            emit_word(&em, st->Ist.Store.addr);
            emit_value(&em, st->Ist.Store.data, ty);
            if (s->flags & MGT_SITEF_BASE) {
               emit_word(&em, IRExpr_RdTmp(info[st->Ist.Store.addr->Iex.RdTmp.tmp].base));
            }
            /* Commit after the store: if it faults, its words stay
               uncommitted and the first of them (the address) is what the
               signal record reports. */
            addStmtToIRSB(out, st);
            emit_commit(&em);
            si++;
            continue;
         }
         break;
      }
      case Ist_CAS: {
         IRCAS* c = st->Ist.CAS.details;
         if (s->kind == MGT_SITE_CAS) {
            IRType ty = typeOfIRExpr(env, c->dataLo);
            emit_word(&em, c->addr);
            addStmtToIRSB(out, st);
            emit_value(&em, IRExpr_RdTmp(c->oldLo), ty);
            emit_value(&em, c->expdLo, ty);
            emit_value(&em, c->dataLo, ty);
            if (s->flags & MGT_SITEF_BASE) {
               /* An address like (%rdi,%rsi,4), as in xchg or lock cmpxchg
                  on an array element: address_base counted this word. */
               emit_word(&em, IRExpr_RdTmp(info[c->addr->Iex.RdTmp.tmp].base));
            }
            emit_commit(&em);
            si++;
            continue;
         }
         break;
      }
      case Ist_Put: {
         IRExpr* d = st->Ist.Put.data;
         if (s->kind == MGT_SITE_DERIVE) {
            addStmtToIRSB(out, st);
            emit_word(&em, d);
            emit_word(&em, IRExpr_RdTmp(info[d->Iex.RdTmp.tmp].base));
            emit_commit(&em);
            si++;
            continue;
         }
         break;
      }
      case Ist_Exit:
         if (s->kind == MGT_SITE_EXIT) {
            /* If the exit is taken: say which in the header, and end the SB. */
            ULong h = header | ((ULong)MGT_EXECF_EXIT << 8) | ((ULong)(exit_no & 0xffff) << 16);
            addStmtToIRSB(out, IRStmt_StoreG(Iend_LE, IRExpr_RdTmp(em.t0), u64(h), st->Ist.Exit.guard));
            addStmtToIRSB(out, IRStmt_StoreG(Iend_LE, u64((ULong)(HWord)&mgt_sb_hdr), u64(0), st->Ist.Exit.guard));
            addStmtToIRSB(out, st);
            exit_no++;
            si++;
            continue;
         }
         break;
      default:
         break;
      }
      tl_assert2(0, "mgtrace: site %u (kind %u) does not match statement %d", si, s->kind, i);
   }
   /* The end: the call or return, then the SB is over. */
   if (started && si < nsites && (sites[si].kind == MGT_SITE_CALL || sites[si].kind == MGT_SITE_RET)) {
      emit_call_words(&em, sites[si].kind == MGT_SITE_CALL);
      emit_commit(&em);
      si++;
   }
   if (started) {
      addStmtToIRSB(out, IRStmt_Store(Iend_LE, u64((ULong)(HWord)&mgt_sb_hdr), u64(0)));
   }
   tl_assert(!started || si == nsites);
   VG_(free)(info);
   VG_(free)(sites);
   if (alt.kind != 0) {
      VG_(free)(alt.kind);
      VG_(free)(alt.word);
   }
   return out;
}

/* ------------------------------------------------------------------ */
/* Events from the core                                                */
/* ------------------------------------------------------------------ */

static void on_discard(Addr orig_addr, VexGuestExtents extents)
{
   LiveSB* live = VG_(HT_remove)(mgt_live, orig_addr);
   if (live == 0) {
      return;
   }
   if (mgt_recording) {
      need(1);
      put(hdr(MGT_REC_SB_FREE, 1, (UInt)live->id));
   }
   VG_(free)(live);
}

static void on_start_client_code(ThreadId tid, ULong blocks)
{
   /* Also in a forked child, whose translations keep their checks. */
   if (mgt_sched_thread_run(tid) || !mgt_recording) {
      return;
   }
   if (tid != mgt_last_tid) {
      need(1);
      put(hdr(MGT_REC_THREAD_SWITCH, 1, tid));
      mgt_last_tid = tid;
   }
}

static void on_thread_create(ThreadId parent, ThreadId child)
{
   need(2);
   put(hdr(MGT_REC_THREAD_CREATE, 2, child));
   put(parent);
   mgt_sched_thread_create(child);
}

static void on_thread_exit(ThreadId tid)
{
   need(1);
   put(hdr(MGT_REC_THREAD_EXIT, 1, tid));
   mgt_sched_thread_exit(tid);
}

/* Arguments of each thread's syscall in progress (VG_N_THREADS is only
   known at run time). */
static UWord (*pending_args)[6];

/* The path argument of each thread's syscall in progress (open, openat,
   creat, openat2, chdir), copied at pre_syscall and sent after its
   SYSCALL record (SYSCALL_PATH); pending_plen is -1 when there is none.
   Buffers are allocated on a thread's first such call. */
#define MGT_MAX_PATH 4096
#ifndef __NR_openat2
#define __NR_openat2 437 /* not in Valgrind 3.19's syscall table */
#endif
static HChar** pending_path;
static Int* pending_plen;

/* Input capture (INPUT records): bytes the kernel wrote for read-like
   syscalls, up to mgt_input_cap bytes per process (--mgt-input-cap);
   past it the records say where the bytes landed, without them. */
static ULong mgt_input_cap = 16ULL << 20;

static ULong mgt_input_used = 0;

/* Whether len bytes at a are mapped readable for the client, checked
   page by page. */
static Bool client_readable(Addr a, SizeT len)
{
   if (len == 0) {
      return True;
   }
   return VG_(am_is_valid_for_client)(a, len, VKI_PROT_READ);
}

/* Copies the NUL-terminated string at a (at most MGT_MAX_PATH bytes, and
   only where the client may read) into buf; returns its length. */
static Int copy_client_string(Addr a, HChar* buf)
{
   Int n = 0;
   if (a == 0) {
      return 0;
   }
   while (n < MGT_MAX_PATH) {
      Addr p = a + n;
      if ((n == 0 || (p & 4095) == 0) && !VG_(am_is_valid_for_client)(p, 1, VKI_PROT_READ)) {
         break;
      }
      HChar c = *(const HChar*)p;
      if (c == 0) {
         break;
      }
      buf[n++] = c;
   }
   return n;
}

/* The index of the path argument of syscall sysno, or -1. */
static Int path_arg(UInt sysno)
{
   switch (sysno) {
   case __NR_open:
   case __NR_creat:
   case __NR_chdir:
      return 0;
   case __NR_openat:
   case __NR_openat2:
      return 1;
   }
   return -1;
}

/* Sends one INPUT record per MGT_INPUT_PIECE bytes of the len bytes at a
   that the kernel wrote; their bytes while the cap allows (always, when
   always is set: the descriptors of pipe and socketpair). */
#define MGT_INPUT_PIECE 65536
static void emit_input(Addr a, SizeT len, Bool always)
{
   while (len > 0) {
      SizeT piece = len < MGT_INPUT_PIECE ? len : MGT_INPUT_PIECE;
      Bool keep = (always || mgt_input_used + piece <= mgt_input_cap) && client_readable(a, piece);
      SizeT words = 4 + (keep ? (piece + 7) / 8 : 0);
      need(words);
      put(hdr(MGT_REC_INPUT, words, 0));
      put(a);
      put(piece);
      put(keep ? 1 : 0);
      if (keep) {
         put_bytes((const UChar*)a, piece);
         if (!always) {
            mgt_input_used += piece;
         }
      }
      a += piece;
      len -= piece;
   }
}

/* Sends the INPUT records of an iovec array (cnt entries at iov) that a
   syscall filled with n bytes in all. */
static void emit_iovec(Addr iov, UWord cnt, SizeT n)
{
   if (cnt > 1024 || !client_readable(iov, cnt * 16)) {
      return;
   }
   for (UWord i = 0; i < cnt && n > 0; i++) {
      Addr base = ((const UWord*)iov)[2 * i];
      SizeT len = ((const UWord*)iov)[2 * i + 1];
      if (len > n) {
         len = n;
      }
      emit_input(base, len, False);
      n -= len;
   }
}

/* Sends what a completed syscall brought in: its path argument, and the
   bytes it wrote into the client's memory. */
static void emit_syscall_inputs(ThreadId tid, UInt sysno, SysRes res)
{
   if (pending_plen != 0 && pending_plen[tid] >= 0) {
      Int plen = pending_plen[tid];
      SizeT words = 2 + (plen + 7) / 8;
      need(words);
      put(hdr(MGT_REC_SYSPATH, words, 0));
      put(plen);
      put_bytes((const UChar*)pending_path[tid], plen);
      pending_plen[tid] = -1;
   }
   if (sr_isError(res) || !mgt_recording) {
      return;
   }
   UWord* a = pending_args[tid];
   SizeT n = sr_Res(res);
   switch (sysno) {
   case __NR_read:
   case __NR_pread64:
   case __NR_recvfrom:
      emit_input(a[1], n, False);
      break;
   case __NR_readv:
   case __NR_preadv:
   case __NR_preadv2:
      emit_iovec(a[1], a[2], n);
      break;
   case __NR_recvmsg:
      /* struct msghdr: msg_iov at 16, msg_iovlen at 24. */
      if (client_readable(a[1], 32)) {
         emit_iovec(((const UWord*)a[1])[2], ((const UWord*)a[1])[3], n);
      }
      break;
   case __NR_pipe:
   case __NR_pipe2:
      emit_input(a[0], 8, True);
      break;
   case __NR_socketpair:
      emit_input(a[3], 8, True);
      break;
   }
}

static void pre_syscall(ThreadId tid, UInt sysno, UWord* args, UInt nargs)
{
   if ((sysno == __NR_execve || sysno == __NR_execveat) && mgt_recording) {
      /* If the exec succeeds this image ends without fini: send what the
         chunk holds and hand every chunk back. The new image's probe
         goes on with a new HELLO. */
      need(1);
      give_back_chunks();
   }
   for (UInt i = 0; i < 6; i++) {
      pending_args[tid][i] = i < nargs ? args[i] : 0;
   }
   pending_plen[tid] = -1;
   Int pa = path_arg(sysno);
   if (pa >= 0 && mgt_recording) {
      if (pending_path[tid] == 0) {
         pending_path[tid] = VG_(malloc)("mgt.path", MGT_MAX_PATH);
      }
      pending_plen[tid] = copy_client_string(pending_args[tid][pa], pending_path[tid]);
   }
   mgt_sched_pre_syscall(tid, sysno, pending_args[tid]);
}

static void post_syscall(ThreadId tid, UInt sysno, UWord* args, UInt nargs, SysRes res)
{
   if ((sysno == __NR_execve || sysno == __NR_execveat) && mgt_recording && mgt_chunk < 0) {
      /* The exec failed: this image goes on; take a chunk again. */
      if (!acquire()) {
         stop_recording();
      }
   }
   need(10);
   put(hdr(MGT_REC_SYSCALL, 10, sysno));
   put(tid);
   put(VG_(get_IP)(tid));
   for (UInt i = 0; i < 6; i++) {
      put(pending_args[tid][i]);
   }
   put(sr_isError(res) ? (ULong)(-(Long)sr_Err(res)) : (ULong)sr_Res(res));
   emit_syscall_inputs(tid, sysno, res);
   mgt_sched_post_syscall(tid, sysno, pending_args[tid], res);
}

static void emit_mmap(Addr a, SizeT len, Bool rr, Bool ww, Bool xx)
{
   const HChar* path = 0;
   ULong offset = 0;
   NSegment const* seg = VG_(am_find_nsegment)(a);
   if (seg != 0 && seg->kind == SkFileC) {
      path = VG_(am_get_filename)(seg);
      offset = seg->offset + (a - seg->start);
   }
   SizeT plen = path ? VG_(strlen)(path) : 0;
   if (plen > 4096) plen = 4096;
   SizeT words = 6 + (plen + 7) / 8;
   need(words);
   put(hdr(MGT_REC_MMAP, words, 0));
   put(a);
   put(len);
   put((rr ? 1 : 0) | (ww ? 2 : 0) | (xx ? 4 : 0));
   put(offset);
   put(plen);
   put_bytes((const UChar*)path, plen);
}

static void on_new_mem_startup(Addr a, SizeT len, Bool rr, Bool ww, Bool xx, ULong di_handle)
{
   emit_mmap(a, len, rr, ww, xx);
}

static void on_new_mem_mmap(Addr a, SizeT len, Bool rr, Bool ww, Bool xx, ULong di_handle)
{
   emit_mmap(a, len, rr, ww, xx);
}

static void on_die_mem_munmap(Addr a, SizeT len)
{
   need(3);
   put(hdr(MGT_REC_MUNMAP, 3, 0));
   put(a);
   put(len);
}

static void on_pre_deliver_signal(ThreadId tid, Int signo, Bool alt_stack)
{
   need(2);
   put(hdr(MGT_REC_SIGNAL, 2, (UInt)signo));
   put(VG_(get_IP)(tid));
}

static Bool on_client_request(ThreadId tid, UWord* args, UWord* ret)
{
   if (!VG_IS_TOOL_USERREQ('M', 'G', args[0])) {
      return False;
   }
   UInt code = args[0] & 0xffff;
   const HChar* name = (const HChar*)args[1];
   SizeT nlen = 0;
   if (name != 0) {
      /* Read the name only where the client may read. */
      while (nlen < 256 && VG_(am_is_valid_for_client)((Addr)name + nlen, 1, VKI_PROT_READ)
             && name[nlen] != 0) {
         nlen++;
      }
   }
   SizeT words = 7 + (nlen + 7) / 8;
   need(words);
   put(hdr(MGT_REC_CLIENT, words, code));
   put(VG_(get_IP)(tid));
   put(args[1]);
   put(args[2]);
   put(args[3]);
   put(args[4]);
   put(nlen);
   put_bytes((const UChar*)name, nlen);
   if (code == MGT_REQ_MARK && mgt_next < mgt_ntrig && mgt_trig[mgt_next].kind == TRIG_MARK
       && mgt_trig[mgt_next].name != 0 && nlen == VG_(strlen)(mgt_trig[mgt_next].name)
       && VG_(strncmp)(name, mgt_trig[mgt_next].name, nlen) == 0
       && ++mgt_hits >= mgt_trig[mgt_next].k) {
      fire();
   }
   *ret = 0;
   return True;
}

/* ------------------------------------------------------------------ */
/* Start and end                                                       */
/* ------------------------------------------------------------------ */

static Bool mgt_process_cmd_line_option(const HChar* arg)
{
   if (VG_STR_CLO(arg, "--mgt-out", mgt_out)) {
      return True;
   }
   if (VG_STR_CLO(arg, "--mgt-shm", mgt_shm_path)) {
      return True;
   }
   if (VG_STR_CLO(arg, "--mgt-ret", mgt_ret_path)) {
      return True;
   }
   if (VG_BINT_CLO(arg, "--mgt-chunks", mgt_nchunks, 2, MAX_CHUNKS)) {
      return True;
   }
   if (VG_STR_CLO(arg, "--mgt-region-file", mgt_region_file)) {
      return True;
   }
   if (VG_STR_CLO(arg, "--mgt-alter-file", mgt_alter_path)) {
      return True;
   }
   if (VG_BINT_CLO(arg, "--mgt-level", mgt_level, MGT_LEVEL_FULL, MGT_LEVEL_FLOW)) {
      return True;
   }
   if (VG_BINT_CLO(arg, "--mgt-input-cap", mgt_input_cap, 0, 1ULL << 40)) {
      return True;
   }
   if (mgt_sched_option(arg)) {
      return True;
   }
   return False;
}

static void mgt_print_usage(void)
{
   VG_(printf)("    --mgt-out=<fifo>          where to send chunk notices [required]\n");
   VG_(printf)("    --mgt-shm=<file>          the file of chunks records are written into [required]\n");
   VG_(printf)("    --mgt-ret=<fifo>          where chunks come back from the driver [required]\n");
   VG_(printf)("    --mgt-chunks=<n>          how many chunks the file holds [required]\n");
   VG_(printf)("    --mgt-region-file=<file>  record only the regions whose triggers the file lists\n");
   VG_(printf)("    --mgt-alter-file=<file>   instructions to alter (record --switch, --suppress)\n");
   VG_(printf)("    --mgt-input-cap=<bytes>   most bytes of read-like syscalls to capture [16 MiB]\n");
   VG_(printf)("    --mgt-level=<0|1|2>       0 full, 1 heap (no rsp/rbp-based accesses), 2 flow (no data) [0]\n");
   mgt_sched_usage();
}

static void mgt_print_debug_usage(void) {}

/* Moves fd into the range of descriptors Valgrind reserves above the
   client's limit, so that the program cannot close or reuse it. Valgrind
   takes the lowest of those for itself; this takes the highest free one. */
static Int hide_fd(Int fd)
{
   struct vki_rlimit rl;
   struct vg_stat st;
   if (VG_(getrlimit)(VKI_RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur < 16 || rl.rlim_cur > (1 << 30)) {
      return fd;
   }
   for (Int cand = (Int)rl.rlim_cur - 1; cand > (Int)rl.rlim_cur - 12 && cand > fd; cand--) {
      if (VG_(fstat)(cand, &st) != 0) { /* not open: free */
         SysRes r = VG_(dup2)(fd, cand);
         if (!sr_isError(r)) {
            VG_(close)(fd);
            return cand;
         }
      }
   }
   return fd;
}

/* A forked child goes on under the probe but must not write into the
   parent's stream: the trace covers the recorded process only. */
static void on_fork_child(ThreadId tid)
{
   if (mgt_fd >= 0) {
      VG_(close)(mgt_fd);
      mgt_fd = -1;
   }
   if (mgt_ret_fd >= 0) {
      VG_(close)(mgt_ret_fd);
      mgt_ret_fd = -1;
   }
   /* The chunks are shared with the parent: write elsewhere. */
   stop_recording();
   mgt_sched_fork_child(tid);
}

/* Decides whether this process is the recorded one. Valgrind follows exec
   (--trace-children=yes) so that a program started through a wrapper
   script is recorded; the first probe instance writes its pid to
   <fifo>.owner, and a later instance records only if it has the same pid
   (the same process after exec), not if it is a forked child's exec. */
static Bool is_recorded_process(void)
{
   HChar path[4200];
   HChar buf[32];
   Int pid = VG_(getpid)();
   if (VG_(strlen)(mgt_out) > 4000) {
      return True;
   }
   VG_(sprintf)(path, "%s.owner", mgt_out);
   SysRes r = VG_(open)(path, VKI_O_CREAT | VKI_O_EXCL | VKI_O_WRONLY, 0600);
   if (!sr_isError(r)) {
      Int n = VG_(sprintf)(buf, "%d\n", pid);
      VG_(write)(sr_Res(r), buf, n);
      VG_(close)(sr_Res(r));
      return True;
   }
   r = VG_(open)(path, VKI_O_RDONLY, 0);
   if (sr_isError(r)) {
      return False;
   }
   Int n = VG_(read)(sr_Res(r), buf, sizeof buf - 1);
   VG_(close)(sr_Res(r));
   if (n <= 0) {
      return False;
   }
   buf[n] = 0;
   return VG_(strtoll10)(buf, 0) == pid;
}

static void mgt_post_clo_init(void)
{
   if (mgt_out == 0 || mgt_shm_path == 0 || mgt_ret_path == 0 || mgt_nchunks == 0) {
      VG_(fmsg)("mgtrace: --mgt-out, --mgt-shm, --mgt-ret and --mgt-chunks are required (run the probe through `record`)\n");
      VG_(exit)(2);
   }
   pending_args = VG_(calloc)("mgt.args", VG_N_THREADS, sizeof(*pending_args));
   pending_path = VG_(calloc)("mgt.paths", VG_N_THREADS, sizeof(*pending_path));
   pending_plen = VG_(calloc)("mgt.plens", VG_N_THREADS, sizeof(*pending_plen));
   for (Int i = 0; i < VG_N_THREADS; i++) {
      pending_plen[i] = -1;
   }
   if (mgt_region_file != 0 && !read_regions()) {
      VG_(exit)(2);
   }
   read_alters();
   mgt_sched_init();
   if (!is_recorded_process()) {
      mgt_recording = False;
      mgt_write_failed = True;
      return;
   }
   SysRes r = VG_(open)(mgt_out, VKI_O_WRONLY, 0);
   if (sr_isError(r)) {
      VG_(fmsg)("mgtrace: cannot open %s\n", mgt_out);
      VG_(exit)(2);
   }
   mgt_fd = hide_fd(sr_Res(r));
   /* Closed on exec: the next image's probe opens the FIFO again. */
   VG_(fcntl)(mgt_fd, MGT_F_SETFD, MGT_FD_CLOEXEC);
   r = VG_(open)(mgt_ret_path, VKI_O_RDONLY, 0);
   if (sr_isError(r)) {
      VG_(fmsg)("mgtrace: cannot open %s\n", mgt_ret_path);
      VG_(exit)(2);
   }
   mgt_ret_fd = hide_fd(sr_Res(r));
   VG_(fcntl)(mgt_ret_fd, MGT_F_SETFD, MGT_FD_CLOEXEC);
   r = VG_(open)(mgt_shm_path, VKI_O_RDWR, 0);
   if (sr_isError(r)) {
      VG_(fmsg)("mgtrace: cannot open %s\n", mgt_shm_path);
      VG_(exit)(2);
   }
   SysRes m = VG_(am_shared_mmap_file_float_valgrind)((SizeT)mgt_nchunks * MGT_CHUNK_BYTES,
                                                      VKI_PROT_READ | VKI_PROT_WRITE, sr_Res(r), 0);
   VG_(close)(sr_Res(r));
   if (sr_isError(m)) {
      VG_(fmsg)("mgtrace: cannot map %s\n", mgt_shm_path);
      VG_(exit)(2);
   }
   mgt_shm = (UChar*)sr_Res(m);
   if (!acquire()) {
      VG_(fmsg)("mgtrace: the recorder gave no chunk to write into\n");
      VG_(exit)(2);
   }
   VG_(atfork)(0, 0, on_fork_child);
   need(3);
   put(hdr(MGT_REC_HELLO, 3, MGT_PROTOCOL_VERSION));
   put(VG_(getpid)());
   put(1);
}

static void mgt_fini(Int exitcode)
{
   if (mgt_recording) {
      send_alter_counts();
   }
   if (mgt_regions && !mgt_in_region && mgt_last_tid != VG_INVALID_THREADID) {
      /* No superblock record says where the program stopped. */
      need(3);
      put(hdr(MGT_REC_STOPPED, 3, 0));
      put(mgt_last_tid);
      put(VG_(get_IP)(mgt_last_tid));
   }
   need(1);
   put(hdr(MGT_REC_EXIT, 1, (UInt)exitcode));
   send_chunk(False);
   if (mgt_fd >= 0) {
      VG_(close)(mgt_fd);
      mgt_fd = -1;
   }
}

static void mgt_pre_clo_init(void)
{
   VG_(details_name)("mgtrace");
   VG_(details_version)("0.1");
   VG_(details_description)("the mgtrace recorder's probe");
   VG_(details_copyright_author)("the mgtrace authors");
   VG_(details_bug_reports_to)("the mgtrace issue tracker");
   VG_(details_avg_translation_sizeB)(640);

   VG_(basic_tool_funcs)(mgt_post_clo_init, mgt_instrument, mgt_fini);
   VG_(needs_command_line_options)(mgt_process_cmd_line_option, mgt_print_usage, mgt_print_debug_usage);
   VG_(needs_syscall_wrapper)(pre_syscall, post_syscall);
   VG_(needs_client_requests)(on_client_request);
   VG_(needs_superblock_discards)(on_discard);
   mgt_live = VG_(HT_construct)("mgt.live");

   VG_(track_start_client_code)(on_start_client_code);
   VG_(track_pre_thread_ll_create)(on_thread_create);
   VG_(track_pre_thread_ll_exit)(on_thread_exit);
   VG_(track_new_mem_startup)(on_new_mem_startup);
   VG_(track_new_mem_mmap)(on_new_mem_mmap);
   VG_(track_die_mem_munmap)(on_die_mem_munmap);
   VG_(track_pre_deliver_signal)(on_pre_deliver_signal);
}

VG_DETERMINE_INTERFACE_VERSION(mgt_pre_clo_init)
