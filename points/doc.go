// Package points names places and moments of a program's run the way a user
// gives them on a command line, and holds the one set of rules that record
// (re-executing a run with a change: record --switch and --suppress) and the
// analyses (analyze critical, region recording) share to turn them into
// instructions and instances.
//
// A place is FILE:LINE (a source line of the main program; FILE matches a
// source path by suffix, whole path components only, so "list.c" and
// "src/list.c" both name "/home/u/src/list.c") or a function name. A moment
// adds #N (the N-th instance, from 1) or #all.
//
// Instructions are located in two ways: by link-time address in the
// program's ELF file (Program, read before the run), and by the file they
// are mapped from and their offset in it (Loc), which does not depend on
// where the module is loaded, so position-independent executables and
// shared libraries work.
//
// # Instances of a line
//
// This is a contract: record numbers the instances it alters this way and
// writes the number in the ALTER event's count; analyze counts them the
// same way (Counter, InstanceOf).
//
//   - For a switch (a conditional branch inverted), the instances of a line
//     are the executions, over the whole run and all threads in run order,
//     of the line's conditional branch instructions (jcc, jrcxz, loop*),
//     all of them counted together: in `if (a && b)` each evaluation that
//     runs both tests counts twice.
//   - For a suppression, when the line holds call instructions, its
//     instances are the executions of those calls, counted together.
//   - Otherwise the instances of a suppression are the executions of the
//     line's anchor: its lowest-address instruction that stores to memory
//     (an explicit memory destination or a string store; pushes and the
//     return address of a call are not stores of a statement). A statement
//     run once per loop iteration thus has one instance per iteration,
//     however many stores it makes.
//
// What an instance of a store suppression skips: the anchor's stores, and
// the stores of the line's store instructions that follow the anchor in
// the same straight-line run of code that Valgrind translates together (a
// superblock); the line's store instructions that run elsewhere (another
// branch of the line) are not skipped.
package points
