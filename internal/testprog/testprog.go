// Package testprog compiles the C programs in testdata/programs for tests.
//
// A test asks for a program by name and gets the path of a binary built
// from testdata/programs/NAME.c (or, when there is no NAME.c, from the C++
// source testdata/programs/NAME.cc, compiled with g++ and the same flags):
//
//	bin := testprog.Build(t, "list")
//	out, err := exec.Command(bin, "5").Output()
//
// Binaries are cached in os.TempDir()/mgtrace-testprog-HASH/NAME, where
// HASH covers the source, the headers in include/, the compiler command
// line and the compiler's version, so a changed program or flag gives a
// fresh build and an unchanged one is compiled once for all the tests,
// test binaries and runs that ask for it. Build is safe to call from
// parallel tests and from several test processes at once: each build is
// written to a temporary name and renamed into place. Builds of older
// versions stay behind in the temporary directory; remove them with
// rm -rf "${TMPDIR:-/tmp}"/mgtrace-testprog-*.
//
// The default flags are -g -O1 -fno-omit-frame-pointer -I ROOT/include
// -pthread; the Static, Stripped, NoPIE and Flags options change them.
// Without gcc (g++ for a .cc program), Build skips the test.
// testdata/programs/README.md says what each program does and prints.
package testprog

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
)

// Module is the module path Root looks for in go.mod.
const Module = "github.com/mgtrace/mgtrace"

// defaultFlags are the compiler flags every build starts with, before the
// include directory (-I ROOT/include) and the options' flags.
var defaultFlags = []string{"-g", "-O1", "-fno-omit-frame-pointer", "-pthread"}

// Option changes how Build compiles a program.
type Option func(*config)

type config struct {
	static   bool
	stripped bool
	noPIE    bool
	flags    []string
}

// Static links the program statically (-static).
func Static() Option { return func(c *config) { c.static = true } }

// Stripped removes the symbol table and debug information from the binary
// after linking (strip), as in a release build.
func Stripped() Option { return func(c *config) { c.stripped = true } }

// NoPIE builds a position-dependent executable (-fno-pie -no-pie), loaded
// at a fixed address, instead of the PIE that Debian's gcc builds by
// default.
func NoPIE() Option { return func(c *config) { c.noPIE = true } }

// Flags adds compiler flags after the defaults, so that, for example,
// Flags("-O0") overrides the default -O1.
func Flags(flags ...string) Option {
	return func(c *config) { c.flags = append(c.flags, flags...) }
}

var (
	rootOnce sync.Once
	rootDir  string
	rootErr  error
)

// Root returns the module's root directory: the nearest directory at or
// above the test's working directory whose go.mod declares Module. It
// fails the test when there is none.
func Root(t testing.TB) string {
	t.Helper()
	rootOnce.Do(func() { rootDir, rootErr = findRoot() })
	if rootErr != nil {
		t.Fatalf("testprog: %v", rootErr)
	}
	return rootDir
}

func findRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; {
		if isModuleRoot(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod of module %s at or above %s", Module, wd)
		}
		dir = parent
	}
}

// isModuleRoot reports whether the go.mod file at path declares Module.
func isModuleRoot(path string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`+"`") == Module
		}
	}
	return false
}

// Source returns the path of testdata/programs/NAME.c (NAME may name a
// subfolder: "ds/avl"), or of testdata/programs/NAME.cc, a C++ program,
// when there is no NAME.c. It fails the test when there is neither.
func Source(t testing.TB, name string) string {
	t.Helper()
	if name == "" || filepath.IsAbs(name) || name != filepath.Clean(name) || strings.HasPrefix(name, ".") || strings.Contains(name, "..") {
		t.Fatalf("testprog: bad program name %q: want the path of a file under testdata/programs, without .c or .cc", name)
	}
	base := filepath.Join(Root(t), "testdata", "programs", name)
	src := base + ".c"
	_, err := os.Stat(src)
	if err != nil {
		if _, errcc := os.Stat(base + ".cc"); errcc == nil {
			return base + ".cc"
		}
		t.Fatalf("testprog: no program %q: %v (and no %s.cc)", name, err, filepath.Base(name))
	}
	return src
}

// isCPlusPlus reports whether src is a C++ source, which g++ compiles.
func isCPlusPlus(src string) bool { return strings.HasSuffix(src, ".cc") }

// Line returns the 1-based number of the first line of
// testdata/programs/NAME.c (or NAME.cc) that contains marker, such as "/* FAULT */".
// It fails the test when no line does.
func Line(t testing.TB, name, marker string) int {
	t.Helper()
	data, err := os.ReadFile(Source(t, name))
	if err != nil {
		t.Fatalf("testprog: %v", err)
	}
	for i, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, marker) {
			return i + 1
		}
	}
	t.Fatalf("testprog: no line of %s contains %q", filepath.Base(Source(t, name)), marker)
	return 0
}

// toolchain is a compiler found on PATH.
type toolchain struct {
	gcc     string // path of the compiler (gcc, or g++ for C++)
	version string // its --version output
	err     error
}

type lazyToolchain struct {
	once sync.Once
	tc   toolchain
}

var (
	cTools   lazyToolchain // gcc
	cxxTools lazyToolchain // g++
)

// findToolchain returns gcc, or g++ when cxx is true.
func findToolchain(cxx bool) toolchain {
	lt, name := &cTools, "gcc"
	if cxx {
		lt, name = &cxxTools, "g++"
	}
	lt.once.Do(func() {
		path, err := exec.LookPath(name)
		if err != nil {
			lt.tc.err = err
			return
		}
		out, err := exec.Command(path, "--version").Output()
		if err != nil {
			lt.tc.err = fmt.Errorf("%s --version: %v", path, err)
			return
		}
		lt.tc.gcc, lt.tc.version = path, string(out)
	})
	return lt.tc
}

// A build is one cached binary, shared by the callers of Build in this
// process that ask for the same key.
type build struct {
	once sync.Once
	path string
	err  error
}

var builds sync.Map // cache key -> *build

// Build compiles testdata/programs/NAME.c (or NAME.cc, with g++; see
// Source) with the default flags changed by opts, and returns the path of
// the binary. The binary is cached (see the package comment): callers must
// not modify or delete it.
//
// Build skips the test when gcc (g++ for C++) is not installed or the
// platform is not linux/amd64 (the programs are x86-64 Linux programs),
// and fails it with the compiler's output when compilation fails.
func Build(t testing.TB, name string, opts ...Option) string {
	t.Helper()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("testprog: the test programs are built for linux/amd64, not %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	src := Source(t, name)
	root := Root(t)
	tc := findToolchain(isCPlusPlus(src))
	if tc.err != nil {
		if isCPlusPlus(src) {
			t.Skipf("testprog: cannot build C++ test program %s: g++ not found (%v); install g++", name, tc.err)
		}
		t.Skipf("testprog: cannot build test program %s: gcc not found (%v); install gcc and libc6-dev (make deps)", name, tc.err)
	}
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.stripped {
		if _, err := exec.LookPath("strip"); err != nil {
			t.Skipf("testprog: cannot build stripped %s: strip not found (%v); install binutils", name, err)
		}
	}

	args := compileArgs(root, src, cfg)
	key, err := cacheKey(root, src, name, args, cfg, tc.version)
	if err != nil {
		t.Fatalf("testprog: %v", err)
	}
	v, _ := builds.LoadOrStore(key, new(build))
	b := v.(*build)
	b.once.Do(func() {
		dir := filepath.Join(os.TempDir(), "mgtrace-testprog-"+key)
		b.path, b.err = compile(tc.gcc, root, dir, name, args, cfg.stripped)
	})
	if b.err != nil {
		t.Fatalf("testprog: building %s: %v", name, b.err)
	}
	return b.path
}

// compileArgs returns gcc's arguments for src, without -o.
func compileArgs(root, src string, cfg config) []string {
	args := append([]string(nil), defaultFlags...)
	args = append(args, "-I", filepath.Join(root, "include"))
	if cfg.static {
		args = append(args, "-static")
	}
	if cfg.noPIE {
		args = append(args, "-fno-pie", "-no-pie")
	}
	args = append(args, cfg.flags...)
	return append(args, src)
}

// cacheKey hashes everything the binary depends on: the program's name and
// source, the headers it may include from include/, the command line
// (which names the source's and the include directory's paths, which end
// up in the debug information), the strip step and the compiler version.
func cacheKey(root, src, name string, args []string, cfg config, version string) (string, error) {
	h := sha256.New()
	field := func(s string) { fmt.Fprintf(h, "%d:%s;", len(s), s) }
	field("testprog v1")
	field(name)
	data, err := os.ReadFile(src)
	if err != nil {
		return "", err
	}
	field(string(data))
	// The client header and the headers beside the program (ds/suite.h).
	headers, err := filepath.Glob(filepath.Join(root, "include", "*.h"))
	if err != nil {
		return "", err
	}
	local, err := filepath.Glob(filepath.Join(filepath.Dir(src), "*.h"))
	if err != nil {
		return "", err
	}
	headers = append(headers, local...)
	sort.Strings(headers)
	for _, hdr := range headers {
		data, err := os.ReadFile(hdr)
		if err != nil {
			return "", err
		}
		field(filepath.Base(hdr))
		field(string(data))
	}
	for _, a := range args {
		field(a)
	}
	field(fmt.Sprint("stripped=", cfg.stripped))
	field(version)
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// compile builds dir/name unless it exists, and returns its path.
func compile(gcc, root, dir, name string, args []string, stripped bool) (string, error) {
	name = filepath.Base(name) // "ds/avl" builds dir/avl
	bin := filepath.Join(dir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// The directory is in a shared temporary directory: only trust it
	// (and the binaries in it) when it is ours.
	if err := checkOwner(dir); err != nil {
		return "", err
	}
	if fi, err := os.Stat(bin); err == nil && fi.Mode().IsRegular() {
		return bin, nil
	}

	tmp, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return "", err
	}
	tmpPath := tmp.Name()
	tmp.Close()
	ok := false
	defer func() {
		if !ok {
			os.Remove(tmpPath)
		}
	}()

	cmdArgs := append(append([]string(nil), args...), "-o", tmpPath)
	cmd := exec.Command(gcc, cmdArgs...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%v\n$ %s\n%s", err, commandLine(gcc, cmdArgs), out)
	}
	if stripped {
		cmd := exec.Command("strip", tmpPath)
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("strip: %v\n%s", err, out)
		}
	}
	if err := os.Chmod(tmpPath, 0o755); err != nil {
		return "", err
	}
	// Another process may have built the same binary meanwhile: both are
	// the same, and rename replaces atomically.
	if err := os.Rename(tmpPath, bin); err != nil {
		return "", err
	}
	ok = true
	return bin, nil
}

// commandLine formats a command for an error message, quoting arguments
// that need it.
func commandLine(name string, args []string) string {
	parts := []string{name}
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}
