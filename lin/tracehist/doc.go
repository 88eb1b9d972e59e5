// Package tracehist turns a recorded run of a concurrent C program into
// linearizability histories (package lin), as an operations file says.
//
// An operations file (x.lin, parsed by ParseOps) names a model and maps C
// functions to the model's operations: which expressions over the
// argument registers, the return value and memory give each operation's
// input, key and output, when a call found its object empty, when it
// failed without effect, and which object it works on. Extract reads a
// trace once, in global event order: every outermost call of an op
// function on a thread becomes one operation, whose interval runs from the
// CALL event to the matching RETURN event, whose client is the thread and
// whose source is the call site. Calls still running when the trace ends
// are pending.
//
// Expressions are a small typed subset of C. Casts truncate and extend as
// C does; pointers are typed, so that arithmetic scales by the pointee's
// size; `->member` reads the struct layouts the trace's tables carry.
// Memory is read from a shadow of the program's memory kept from every
// LOAD and STORE event of the run: a byte holds the last value seen. When
// an expression needs a byte that no event has shown yet, its evaluation
// waits: the first later event that touches the byte gives its value at
// the evaluation point when it is a LOAD (nothing wrote the byte in
// between), and makes it unknowable when it is a STORE. A string literal
// passed to an op function is typically read this way, by the function
// itself. An evaluation that cannot complete is a problem of its
// operation alone: its output becomes unknown (or, at the call, the
// operation is dropped) and Extraction.Warnings says why.
//
// docs/lin.md describes the operations file for users.
package tracehist
