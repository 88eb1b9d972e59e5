package testprog

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// ProbeFile is the name of the probe executable that Probe builds.
const ProbeFile = "mgtrace-amd64-linux"

// valgrindHeader is a Valgrind tool header the probe is compiled against.
const valgrindHeader = "/usr/include/valgrind/pub_tool_basics.h"

// probeSources are the files the probe is built from, relative to
// record/vgtool.
var probeSources = []string{"mgt_main.c", "mgt_sched.c", "mgt_sched.h", "protocol.h", "Makefile"}

var probeBuild struct {
	once sync.Once
	dir  string
	err  error
}

// Probe returns a folder holding the recorder's Valgrind probe built from
// the current sources (record/vgtool), building it on first use into a
// cache folder shared by test binaries and keyed by the sources' hash. It
// skips the test when the platform is not linux/amd64 or valgrind, gcc,
// make or the Valgrind headers are missing.
func Probe(t testing.TB) string {
	t.Helper()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("the recorder needs linux/amd64, not %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	for _, tool := range []string{"valgrind", "gcc", "make"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (%v): cannot build or run the probe", tool, err)
		}
	}
	if _, err := os.Stat(valgrindHeader); err != nil {
		t.Skipf("the Valgrind tool headers are missing (%v): apt-get install valgrind", err)
	}
	root := Root(t)
	probeBuild.once.Do(func() { probeBuild.dir, probeBuild.err = buildProbe(root) })
	if probeBuild.err != nil {
		t.Fatalf("build the probe: %v", probeBuild.err)
	}
	return probeBuild.dir
}

func hashProbeSources(src string) (string, error) {
	h := sha256.New()
	for _, name := range probeSources {
		data, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s:%d:", name, len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// buildProbe builds the probe with make into a fresh folder and renames it
// into the cache, so that concurrent test binaries never see a half-built
// probe.
func buildProbe(root string) (string, error) {
	src := filepath.Join(root, "record", "vgtool")
	sum, err := hashProbeSources(src)
	if err != nil {
		return "", err
	}
	cache := filepath.Join(os.TempDir(), "mgtrace-probe-"+sum)
	if probeCached(cache) {
		return cache, nil
	}
	tmp, err := os.MkdirTemp(os.TempDir(), "mgtrace-probe-build-")
	if err != nil {
		return "", err
	}
	out, err := exec.Command("make", "-C", src, "OUT="+tmp).CombinedOutput()
	if err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("make -C %s OUT=%s: %v\n%s", src, tmp, err, out)
	}
	if again, err := hashProbeSources(src); err != nil || again != sum {
		// The sources changed while make ran: use this build, don't cache it.
		return tmp, nil
	}
	if err := os.Rename(tmp, cache); err != nil {
		os.RemoveAll(tmp)
		if probeCached(cache) {
			return cache, nil // another test binary won the race
		}
		return "", err
	}
	return cache, nil
}

// probeCached reports whether cache is a folder of ours holding a probe.
func probeCached(cache string) bool {
	if checkOwner(cache) != nil {
		return false
	}
	st, err := os.Stat(filepath.Join(cache, ProbeFile))
	return err == nil && st.Mode().IsRegular()
}
