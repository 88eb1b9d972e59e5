// Package mgbuild builds MG++ memory graphs from traces (the MG++ paper: Singh,
// Gupta and Neamtiu, "MG++: Memory graphs for analyzing dynamic data
// structures"): one graph holding the heap's shape at every moment of a
// run, each node and edge labelled with the timestamp and the statement
// that made it.
//
// Build reads a trace and returns a Graph; Graph.Snapshot rolls it back to
// any timestamp (Graph.At resolves events, C-points and markers to
// timestamps). Two modes: Agnostic forms nodes from heap references alone
// (the paper's Algorithm 2: base+offset joins, splits at stored interior
// pointers, cluster nodes for merges), Aware from allocator calls. The
// scope (ScopeApp, ScopeAll) says whether the allocator's own accesses are
// taken in. Heap-overflow findings are kept in Graph.Overflows. WriteText,
// WriteJSON and WriteDOT export a snapshot. docs/mgbuild.md describes the
// model and its limits.
package mgbuild
