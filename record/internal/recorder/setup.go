package recorder

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
)

// makeWorkDir makes the recorder's temporary folder. Its name always has
// the same length: Valgrind's library folder inside it is in the
// program's environment (VALGRIND_LIB, LD_PRELOAD), and a name of another
// length would move the program's stack and change how many superblocks
// its start takes, so that --sched-seed would not give the same
// interleaving twice.
func makeWorkDir() (string, error) {
	for range 100 {
		dir := filepath.Join(os.TempDir(), fmt.Sprintf("mgtrace-record-%016x", rand.Uint64()))
		err := os.Mkdir(dir, 0o700)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("make work folder: %w", err)
		}
	}
	return "", fmt.Errorf("make work folder: no free name in %s", os.TempDir())
}

// ProbeDirEnv is the environment variable that names the probe's folder
// when --probe-dir does not.
const ProbeDirEnv = "MGTRACE_PROBE_DIR"

// findProbe returns the folder that holds the probe executable: dir when
// given, else $MGTRACE_PROBE_DIR when set, else the first of these,
// relative to the running executable's folder (links resolved), that
// holds it: the folder itself (a checkout's bin/), ../libexec/mgtrace
// (what `make install` writes) and ../lib/mgtrace.
func findProbe(dir string) (string, error) {
	var tried []string
	try := func(d string) bool {
		tried = append(tried, d)
		st, err := os.Stat(filepath.Join(d, toolFile))
		return err == nil && !st.IsDir()
	}
	if dir != "" {
		if try(dir) {
			return dir, nil
		}
		return "", fmt.Errorf("the probe %s is not in %s", toolFile, dir)
	}
	if env := os.Getenv(ProbeDirEnv); env != "" {
		if try(env) {
			return env, nil
		}
		return "", fmt.Errorf("the probe %s is not in %s (from $%s)", toolFile, env, ProbeDirEnv)
	}
	if exe, err := os.Executable(); err == nil {
		if exe, err = filepath.EvalSymlinks(exe); err == nil {
			d := filepath.Dir(exe)
			for _, c := range []string{d, filepath.Join(d, "..", "libexec", "mgtrace"), filepath.Join(d, "..", "lib", "mgtrace")} {
				if try(c) {
					return c, nil
				}
			}
		}
	}
	return "", fmt.Errorf("the probe %s was not found (looked in %v); build it with `make build`, install it with `make install`, or name its folder with --probe-dir or $%s", toolFile, tried, ProbeDirEnv)
}

// valgrindLibDir returns the folder of valgrind's own tools and preload
// objects: $VALGRIND_LIB when set, else the first usual place that holds
// vgpreload_core-amd64-linux.so.
func valgrindLibDir(vgPath string) (string, error) {
	cands := []string{os.Getenv("VALGRIND_LIB")}
	if real, err := filepath.EvalSymlinks(vgPath); err == nil {
		prefix := filepath.Dir(filepath.Dir(real))
		cands = append(cands, filepath.Join(prefix, "libexec", "valgrind"), filepath.Join(prefix, "lib", "valgrind"))
	}
	cands = append(cands, "/usr/libexec/valgrind", "/usr/lib/x86_64-linux-gnu/valgrind", "/usr/lib/valgrind",
		"/usr/local/libexec/valgrind", "/usr/local/lib/valgrind")
	for _, c := range cands {
		if c == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(c, "vgpreload_core-amd64-linux.so")); err == nil {
			return c, nil
		}
	}
	return "", fmt.Errorf("valgrind's library folder (with vgpreload_core-amd64-linux.so) was not found; is valgrind installed for amd64?")
}

// makeLibDir makes a folder that Valgrind can use as VALGRIND_LIB: links to
// everything in its own library folder, plus the probe.
func makeLibDir(work, sysLib, probeDir string) (string, error) {
	dir := filepath.Join(work, "lib")
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", fmt.Errorf("make %s: %w", dir, err)
	}
	entries, err := os.ReadDir(sysLib)
	if err != nil {
		return "", fmt.Errorf("read valgrind's library folder: %w", err)
	}
	for _, e := range entries {
		if e.Name() == toolFile {
			continue
		}
		if err := os.Symlink(filepath.Join(sysLib, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			return "", fmt.Errorf("link %s: %w", e.Name(), err)
		}
	}
	probe, err := filepath.Abs(filepath.Join(probeDir, toolFile))
	if err != nil {
		return "", err
	}
	if err := os.Symlink(probe, filepath.Join(dir, toolFile)); err != nil {
		return "", fmt.Errorf("link the probe: %w", err)
	}
	return dir, nil
}
