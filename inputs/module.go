package inputs

import (
	"path"
	"strings"
)

// The rule for SourceModule: a file the program did not ask for, read or
// mapped by the dynamic loader or the C library to run it. A file is one
// when
//
//   - it is a module of the trace's tables (the executable, a shared
//     library, the loader);
//   - its file name looks like a shared library: it ends in ".so" or holds
//     ".so." (the loader may open a library through a symbolic link that
//     the module table names resolved, or open one and leave it unmapped);
//   - it is one of the loader's files, /etc/ld.so.cache, /etc/ld.so.preload,
//     or a setting the C library's allocator reads,
//     /proc/sys/vm/overcommit_memory;
//   - it is under a folder of the C library's data: locales
//     (/usr/lib/locale/, /usr/share/locale/), character set converters
//     (a gconv/ folder), time zones (/usr/share/zoneinfo/, /etc/localtime),
//     the CPU list glibc reads to size its allocator
//     (/sys/devices/system/cpu/), and the huge page settings it reads
//     (/sys/kernel/mm/transparent_hugepage/).
//
// A program that reads such a file as its own data (a tool that inspects
// shared libraries) gets it classified as a module too; its bytes are
// still entities.
var (
	moduleFiles   = []string{"/etc/ld.so.cache", "/etc/ld.so.preload", "/etc/localtime", "/proc/sys/vm/overcommit_memory"}
	moduleFolders = []string{"/usr/lib/locale/", "/usr/share/locale/", "/usr/share/zoneinfo/",
		"/sys/devices/system/cpu/", "/sys/kernel/mm/transparent_hugepage/"}
	moduleSegments = []string{"/gconv/"}
)

// modules is the set of the trace's module paths.
type modules map[string]bool

func moduleSet(paths []string) modules {
	m := modules{}
	for _, p := range paths {
		if p != "" && path.IsAbs(p) { // not a pseudo-module ("[vdso]")
			m[path.Clean(p)] = true
		}
	}
	return m
}

// has reports whether the file p is a module by the rule above.
func (m modules) has(p string) bool {
	p = path.Clean(p)
	base := path.Base(p)
	if m[p] || strings.HasSuffix(base, ".so") || strings.Contains(base, ".so.") {
		return true
	}
	for _, f := range moduleFiles {
		if p == f {
			return true
		}
	}
	for _, f := range moduleFolders {
		if strings.HasPrefix(p, f) {
			return true
		}
	}
	for _, s := range moduleSegments {
		if strings.Contains(p, s) {
			return true
		}
	}
	return false
}

// IsModulePath reports whether the file at path p counts as SourceModule
// in a trace whose modules are at the paths mods (see the rule above).
func IsModulePath(p string, mods []string) bool { return moduleSet(mods).has(p) }
