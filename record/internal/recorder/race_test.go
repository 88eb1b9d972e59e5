//go:build race

package recorder

// raceEnabled is true when the tests run under the race detector, which
// makes the recorder's decoding several times slower.
const raceEnabled = true
