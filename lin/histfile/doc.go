// Package histfile reads and writes operation histories (lin.History) in
// the file formats a linearizability check meets:
//
//   - JSON, the package's own format: an object with an optional "model"
//     and "init" and the operations under "ops", each with its client,
//     name, input, output, status and call and return positions;
//   - EDN, the histories Jepsen writes: one map per operation event
//     ({:process 0, :type :invoke, :f :read, :value nil}), either one per
//     line or all inside one vector;
//   - EtcdLog, the Jepsen etcd logs that porcupine's tests check, one
//     event per line ("INFO  jepsen.util - 3\t:invoke\t:cas\t[1 4]").
//
// Parse reads any of them (Detect tells which from the content), pairs
// invocations with their completions, and returns a sorted history that
// passes lin.History.Validate. Every malformed input gives an *Error, a
// one-line message with the file name, line and column. WriteJSON and
// WriteEDN write histories back. docs/lin-histories.md describes the
// formats and what each event means.
package histfile
