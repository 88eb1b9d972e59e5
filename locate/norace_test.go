//go:build !race

package locate

// raceDetector says whether the tests run under the race detector.
const raceDetector = false
