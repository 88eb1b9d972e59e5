/* protocol.h: the raw record stream from the mgtrace Valgrind probe to the
   Go driver (record/internal/probe mirrors every number here).

   The probe only captures: it appends raw records to chunks of memory it
   shares with the driver (see Transport). Every decision (what an event
   means, how it is encoded, what the source line is) is the driver's.

   Transport. Records are written into chunks of MGT_CHUNK_BYTES of a file
   that the probe and the driver both map (--mgt-shm, --mgt-chunks); a
   record never straddles two chunks. The FIFO (--mgt-out) carries 8-byte
   notices, chunk index << 32 | bytes used, in stream order (0 bytes: the
   chunk is handed back unused); the driver hands each chunk back, once
   read, as a 4-byte index on a second FIFO (--mgt-ret). The records of
   the chunks, in notice order, form the stream.

   The stream is a sequence of little-endian 64-bit words. Every record
   starts with a header word:

       bits  0..7   record type (MGT_REC_*)
       bits  8..31  type-specific (see each type)
       bits 32..63  type-specific

   Records other than SB_EXEC carry their length in words (header
   included) in bits 8..31, so a reader can skip unknown types.

   SB_EXEC records are the hot path and carry no length: their layout is
   given by the SB_DEF record of the same superblock id, which always comes
   earlier in the stream. */
#ifndef MGT_PROTOCOL_H
#define MGT_PROTOCOL_H

#define MGT_PROTOCOL_VERSION 5

/* Size of one chunk of the shared file. */
#define MGT_CHUNK_BYTES (1 << 20)

/* HELLO: version in bits 32..63; then words: pid, valgrind's main thread
   id. First record of every stream. */
#define MGT_REC_HELLO 1

/* SB_DEF: a superblock was translated. Bits 32..63: superblock id (ids are
   never reused). Words after the header:
     [0] number of instructions N, number of sites S (N | S << 32)
     [1..N] per instruction: pc (bits 0..55) | length (bits 56..63)
     then the code bytes of all N instructions, concatenated, padded with
       zeros to a whole word
     then S site words, in the order the SB_EXEC record's data words are
       written:
         bits  0..7   site kind (MGT_SITE_*)
         bits  8..15  access size in bytes (LOAD/STORE/CAS), or 0
         bits 16..23  base register (tracepb.Register numbering; 0 = none)
         bits 24..31  number of data words the site writes
         bits 32..47  index of its instruction in [1..N] (0-based)
         bits 48..55  flags (MGT_SITEF_*)
         bits 56..63  destination register (DERIVE)
       followed, when MGT_SITEF_DISP is set, by one word: the constant
       displacement (address minus base register value) */
#define MGT_REC_SB_DEF 2

/* SB_EXEC: a superblock ran. Bits 8..15: flags (MGT_EXECF_*); bits
   16..31: exit number when MGT_EXECF_EXIT (the side exit taken, counting
   MGT_SITE_EXIT sites from 0), or the number of data words that follow
   when MGT_EXECF_CUT; bits 32..63: superblock id. Then the data words of
   the sites, in site order, up to the exit taken (all sites when the
   superblock ran to its end). */
#define MGT_REC_SB_EXEC 3
#define MGT_EXECF_EXIT 0x01 /* left through a side exit */
#define MGT_EXECF_CUT  0x02 /* stopped by a synchronous signal */

/* SYSCALL: bits 32..63: syscall number. Words: thread id, pc (guest IP
   after the syscall instruction), args[6], result (raw kernel result:
   -errno on failure). Written when the syscall completes, which for a
   blocking syscall may be after other threads ran. */
#define MGT_REC_SYSCALL 4

/* SYSPATH: the path argument of the syscall whose SYSCALL record comes
   just before (open, openat, creat, openat2, chdir), as the client's
   memory held it when the syscall started. Words: length in bytes (at
   most 4096; the string is cut there, or where the client's memory stops
   being readable), then the bytes padded with zeros to a whole word. */
#define MGT_REC_SYSPATH 23

/* INPUT: bytes the kernel wrote into the client's memory for the syscall
   whose SYSCALL record (and SYSPATH) comes just before: read, pread64,
   recvfrom (the buffer), readv, preadv, preadv2, recvmsg (each iovec
   buffer, up to the result's length), pipe, pipe2, socketpair (the two
   descriptors). One record per 64 KiB of a buffer, in buffer order.
   Words: address, length (1..65536), 1 when the bytes follow (0 when the
   capture cap, --mgt-input-cap, was reached or the memory is not
   readable), then the bytes padded with zeros to a whole word. */
#define MGT_REC_INPUT 24

/* THREAD_SWITCH: bits 32..63: the Valgrind thread id that runs next. */
#define MGT_REC_THREAD_SWITCH 5
/* THREAD_CREATE: bits 32..63: the new thread's id. Word: parent id. */
#define MGT_REC_THREAD_CREATE 6
/* THREAD_EXIT: bits 32..63: the exiting thread's id. */
#define MGT_REC_THREAD_EXIT 7

/* SIGNAL: a signal is delivered to a handler of the program. Bits
   32..63: signal number. Word: pc (guest IP at delivery). A signal that
   kills the program is not delivered: the driver learns it from how
   Valgrind ends. */
#define MGT_REC_SIGNAL 8

/* CLIENT: a client request. Bits 32..63: request code (MGT_REQ_*). Words:
   pc (guest IP after the request's special instruction sequence), args[4], name length in bytes, then the name's bytes padded to a
   whole word. */
#define MGT_REC_CLIENT 9

/* MMAP: a file or anonymous range was mapped. Words: start, length,
   protection (bit 0 read, bit 1 write, bit 2 execute), file offset, path
   length in bytes (0 for anonymous memory), then the path's bytes padded
   with zeros to a whole word. Sent for the mappings present at startup
   too. */
#define MGT_REC_MMAP 10
/* MUNMAP: words: start, length. */
#define MGT_REC_MUNMAP 11

/* CUT: the SB being run was interrupted (by a synchronous signal, or by
   the end of the process) after the data words its header now counts
   (MGT_EXECF_CUT). Word: the first uncommitted word, which the interrupted
   site had written before its instruction faulted: for a memory access,
   the address it accessed. Emitted before any other record that follows
   the interruption. */
#define MGT_REC_CUT 13

/* SB_FREE: Valgrind discarded the translation of superblock id (bits
   32..63): it will not run again, and its id is not reused. */
#define MGT_REC_SB_FREE 14

/* ALTER_COUNT: how often an alteration's instructions ran (record
   --switch/--suppress, see --mgt-alter-file). Words: slot, executions
   counted. Sent at the end of the process, one per slot, before EXIT.
   (Each alteration performed is reported inside the SB_EXEC record of its
   superblock, by an ALTER site: a record of its own cannot be written
   while an SB's record is in progress.) */
#define MGT_REC_ALTER 15

/* EXIT: the process ended. Bits 32..63: exit code (as Valgrind's fini
   saw it). Last record of a whole stream. */
#define MGT_REC_EXIT 12

/* Region recording (record --from/--to). Without --mgt-region-file the
   probe records the whole run and writes none of these. With it, the run
   starts outside any region: superblocks are translated without their
   memory sites, and only the calls and returns that end them are written
   (XCALL, XRET), for the driver to keep the allocator's. When a region's
   start trigger fires, the probe writes REGION (start), then a REGS record
   per live thread and MEMORY records for the client's writable memory,
   and retranslates every superblock with full instrumentation (until the
   end trigger, which writes REGION (end)). */

/* REGION: bits 32..39: 1 the region starts, 2 it ends; bits 40..63: the
   region's number (from 1). No words. */
#define MGT_REC_REGION 16
/* MEMORY: words: start address, length in bytes, then the bytes padded
   with zeros to a whole word. The client's memory when a region starts. */
#define MGT_REC_MEMORY 17
/* REGS: bits 32..63: the Valgrind thread id. Words: rax, rcx, rdx, rbx,
   rsp, rbp, rsi, rdi, r8..r15 (tracepb.Register order 1..16), rip,
   fs_base. A thread's registers when a region starts. */
#define MGT_REC_REGS 18
/* XCALL: outside regions, a superblock ended with a call. Words: pc of
   the call instruction, target, rdi, rsi, rdx, rcx, r8, r9, rsp. */
#define MGT_REC_XCALL 20
/* XRET: outside regions, a superblock ended with a return. Words: pc of
   the ret instruction, target, rax, rsp. */
#define MGT_REC_XRET 21

/* STOPPED: outside regions, the process ended: words: the Valgrind
   thread that ran last, its guest pc (where a fatal signal hit it). */
#define MGT_REC_STOPPED 22

/* Site kinds and the data words each writes (in this order). */
#define MGT_SITE_LOAD   1 /* addr (written before the access), then the
                             value: 1 word for 1..8 bytes, size/8 words
                             for wider accesses (after the access);
                             + base register value when MGT_SITEF_BASE */
#define MGT_SITE_STORE  2 /* addr, value word(s) (both written before the
                             store, committed after it); + base value
                             when MGT_SITEF_BASE */
#define MGT_SITE_CAS    3 /* addr, old value, expected value, new value
                             (the store happened iff old == expected);
                             + base value when MGT_SITEF_BASE */
#define MGT_SITE_DERIVE 4 /* result, base value */
#define MGT_SITE_EXIT   5 /* no words: a side exit (its number is its
                             position among EXIT sites) */
#define MGT_SITE_CALL   6 /* target, rdi, rsi, rdx, rcx, r8, r9, rsp;
                             the superblock's end is a call */
#define MGT_SITE_RET    7 /* target, rax, rsp; the superblock's end is a
                             return */
#define MGT_SITE_ALTER  8 /* instance number (0: this execution was not
                             altered), address (a switch: where control
                             went instead; a suppressed call: its target;
                             else 0). The site's size field holds the
                             alteration (1 switch, 2 suppress). Written
                             before the instruction's effects: the
                             instruction's STORE sites that follow it in
                             an altered execution wrote to a scratch
                             buffer of the probe, not the program */

/* Site flags. */
#define MGT_SITEF_DISP 0x01 /* a displacement word follows the site word:
                               base = address - displacement */
#define MGT_SITEF_BASE 0x02 /* the base register's value is written as
                               the site's last data word */

/* Client request codes: VG_USERREQ_TOOL_BASE('M','G') + n. */
#define MGT_REQ_CPOINT 1
#define MGT_REQ_MARK   2

#endif
