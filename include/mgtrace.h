/* mgtrace.h: the mgtrace client header.

   Include this file to tell the mgtrace recorder about moments in your
   program's run. It has no dependencies (the Valgrind headers need not be
   installed), and it compiles as C (C89 and later) and C++ (C++98 and
   later) with gcc and clang at every optimisation level.

   MGTRACE_CPOINT("type")
       A C-point (consistency point) for data structures of type "type": a
       moment at which every structure of that type must satisfy its
       invariants, for example right after an insert into a list has
       finished relinking the nodes. `analyze check` evaluates the
       constraints written for "type" at every C-point of that type, and
       only there: between two C-points a structure may be half-updated.

   MGTRACE_CPOINT_AT("type", ptr)
       The same, naming the structure: ptr is a pointer to the root of the
       structure that must be consistent (the list head, the tree root).
       Optional: use it when the program has several structures of one
       type and only one of them is meant.

   MGTRACE_MARK("name")
       A named marker in the run ("phase-2", "request 17 done"), shown by
       `analyze dump` and usable to pick a moment of the run, for example
       the timestamp at which to build a memory graph.

   Each macro is a statement. The name must be a NUL-terminated string (a
   literal or any `const char *`); the recorder copies it at once. Keep
   side effects out of the arguments: they are evaluated once when the
   requests are compiled in, and not at all when they are not.

       #include "mgtrace.h"

       void list_insert(struct list *l, long v)
       {
           ... link the new node in ...
           MGTRACE_CPOINT("list");
       }

   Cost. Each macro is a Valgrind client request: a few stores to the stack
   and a fixed sequence of five instructions (four rotations of %rdi that
   add up to a full turn, and `xchgq %rbx,%rbx`) that do nothing when the
   program runs natively. Under Valgrind they are recognised and turned into
   a request to the running tool; tools that do not handle mgtrace's
   requests (memcheck, --tool=none, ...) ignore them. So the macros can
   stay in release builds. Define MGTRACE_DISABLE before including this
   header (or with -DMGTRACE_DISABLE) to compile them out entirely.

   The requests, for tool writers (record/vgtool/protocol.h): code
   VG_USERREQ_TOOL_BASE('M','G') + 1 (MGT_REQ_CPOINT) or + 2 (MGT_REQ_MARK),
   that is 0x4d470001 and 0x4d470002; arg1 the address of the name; arg2
   the root pointer of MGTRACE_CPOINT_AT, else 0; arg3..arg5 reserved, 0.
   The request's result is unused.

   Platforms. The requests exist on x86-64 (LP64) with a compiler that
   understands GNU inline assembly (gcc, clang). Everywhere else, and with
   MGTRACE_DISABLE, the macros expand to statements that generate no code
   (they still mention their arguments, so variables used only there do not
   draw "unused" warnings). */
#ifndef MGTRACE_H
#define MGTRACE_H

/* Request codes: Valgrind's VG_USERREQ_TOOL_BASE('M','G') + n, where
   VG_USERREQ_TOOL_BASE(a,b) is (a << 24 | b << 16) and 'M' is 0x4d, 'G'
   0x47. */
#define MGTRACE_REQ_BASE   0x4d470000u
#define MGTRACE_REQ_CPOINT (MGTRACE_REQ_BASE + 1)
#define MGTRACE_REQ_MARK   (MGTRACE_REQ_BASE + 2)

#if !defined(MGTRACE_DISABLE) && defined(__x86_64__) && !defined(__ILP32__) \
    && (defined(__GNUC__) || defined(__clang__))

/* The casts to unsigned long below turn pointers and integers alike into
   words. C++ projects often build with -Wold-style-cast (and g++ projects
   with -Wuseless-cast), which would flag them in the user's code, so in C++
   they are fenced off from those two warnings. */
#if defined(__cplusplus) && defined(__clang__)
#define MGTRACE_CASTS_BEGIN_                                                \
    _Pragma("clang diagnostic push")                                       \
    _Pragma("clang diagnostic ignored \"-Wold-style-cast\"")
#define MGTRACE_CASTS_END_ _Pragma("clang diagnostic pop")
#elif defined(__cplusplus) && defined(__GNUC__) \
    && (__GNUC__ > 4 || (__GNUC__ == 4 && __GNUC_MINOR__ >= 8))
#define MGTRACE_CASTS_BEGIN_                                                \
    _Pragma("GCC diagnostic push")                                         \
    _Pragma("GCC diagnostic ignored \"-Wold-style-cast\"")                 \
    _Pragma("GCC diagnostic ignored \"-Wuseless-cast\"")
#define MGTRACE_CASTS_END_ _Pragma("GCC diagnostic pop")
#else
#define MGTRACE_CASTS_BEGIN_
#define MGTRACE_CASTS_END_
#endif

/* MGTRACE_CLIENT_REQUEST_EXPR(default, request, a1, a2, a3, a4, a5) makes
   a Valgrind client request and evaluates to its result: the value the tool
   returns, or `default` when the program is not running under Valgrind or
   the tool does not handle the request. It is defined only where requests
   exist (this branch of the #if); the MGTRACE_* macros are the interface.

   This is Valgrind's documented amd64 calling sequence, the same
   instructions and operand constraints as VALGRIND_DO_CLIENT_REQUEST_EXPR
   in valgrind.h:
     - the request code and its five arguments are stored in a block of six
       words;
     - %rax holds the block's address and %rdx the default result;
     - the "special instruction preamble" rotates %rdi left by 3, 13, 61 and
       51 bits (128 in all: %rdi ends as it began), and `xchgq %rbx,%rbx`
       (which exchanges a register with itself) says "client request";
     - Valgrind's translator recognises the sequence, calls the tool, and
       leaves the result in %rdx. Natively nothing changes but the flags.
   The block is volatile so that the stores happen even though the only
   reader is the assembly; the "memory" clobber makes the compiler write
   back anything the tool may read (the name). */
#define MGTRACE_CLIENT_REQUEST_EXPR(mgt_default_, mgt_request_,             \
                                    mgt_a1_, mgt_a2_, mgt_a3_, mgt_a4_,     \
                                    mgt_a5_)                                \
    __extension__                                                          \
    ({ volatile unsigned long int mgtrace_args_[6];                         \
       volatile unsigned long int mgtrace_result_;                          \
       MGTRACE_CASTS_BEGIN_                                                 \
       mgtrace_args_[0] = (unsigned long int)(mgt_request_);                \
       mgtrace_args_[1] = (unsigned long int)(mgt_a1_);                     \
       mgtrace_args_[2] = (unsigned long int)(mgt_a2_);                     \
       mgtrace_args_[3] = (unsigned long int)(mgt_a3_);                     \
       mgtrace_args_[4] = (unsigned long int)(mgt_a4_);                     \
       mgtrace_args_[5] = (unsigned long int)(mgt_a5_);                     \
       MGTRACE_CASTS_END_                                                   \
       __asm__ volatile("rolq $3,  %%rdi ; rolq $13, %%rdi\n\t"             \
                        "rolq $61, %%rdi ; rolq $51, %%rdi\n\t"             \
                        "xchgq %%rbx,%%rbx"                                 \
                        : "=d" (mgtrace_result_)                            \
                        : "a" (&mgtrace_args_[0]), "0" (mgt_default_)       \
                        : "cc", "memory");                                  \
       mgtrace_result_;                                                     \
    })

/* The same as a statement, result discarded. */
#define MGTRACE_CLIENT_REQUEST_STMT(mgt_request_, mgt_a1_, mgt_a2_,         \
                                    mgt_a3_, mgt_a4_, mgt_a5_)              \
    do {                                                                    \
        (void)MGTRACE_CLIENT_REQUEST_EXPR(0, (mgt_request_), (mgt_a1_),     \
                                          (mgt_a2_), (mgt_a3_), (mgt_a4_), \
                                          (mgt_a5_));                       \
    } while (0)

#define MGTRACE_CPOINT(type) \
    MGTRACE_CLIENT_REQUEST_STMT(MGTRACE_REQ_CPOINT, (type), 0, 0, 0, 0)

#define MGTRACE_CPOINT_AT(type, ptr) \
    MGTRACE_CLIENT_REQUEST_STMT(MGTRACE_REQ_CPOINT, (type), (ptr), 0, 0, 0)

#define MGTRACE_MARK(name) \
    MGTRACE_CLIENT_REQUEST_STMT(MGTRACE_REQ_MARK, (name), 0, 0, 0, 0)

#else /* not x86-64 with GNU C, or MGTRACE_DISABLE: no code at all */

/* sizeof neither evaluates its operand nor generates code, but counts as a
   use of the variables in it. */
#define MGTRACE_CPOINT(type)         do { (void)sizeof(type); } while (0)
#define MGTRACE_CPOINT_AT(type, ptr) \
    do { (void)sizeof(type); (void)sizeof(ptr); } while (0)
#define MGTRACE_MARK(name)           do { (void)sizeof(name); } while (0)

#endif

#endif /* MGTRACE_H */
