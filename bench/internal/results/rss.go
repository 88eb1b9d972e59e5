package results

import (
	"os"
	"strconv"
	"strings"
)

// PeakRSS returns the process's peak resident set size (VmHWM) in bytes,
// or 0 when unknown.
func PeakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// ResetPeakRSS sets VmHWM to the current RSS (Linux 4.0 and later) and
// reports whether it could.
func ResetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}
