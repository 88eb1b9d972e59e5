#!/usr/bin/env bash
# get.sh: fetch, patch and build the real programs of the fault-location
# benchmark (testdata/real/README.md) from Debian's source packages.
#
#   testdata/real/get.sh [ls|splay|bison|all]...     (default: all)
#
# For each program it downloads the pinned source package with
# `apt-get source` (adding `deb-src` entries for bookworm beside the
# machine's Debian sources when apt cannot find it), unpacks it without Debian's own patches,
# builds it with -g, once as it is (the correct build) and once per fault
# patch testdata/real/patches/PROG-K.patch (the faulty builds). Everything
# goes under out/real/ (OUT=DIR to change it), which git ignores: the
# sources are never committed. Runs again do only what is missing.
#
# Results, in $OUT/bin: ls-correct, ls-fault1, splay-correct,
# splay-fault1, bison-correct, bison-fault1; $OUT/input/coreutils-9.1 (the
# directory tree ls -R lists) and $OUT/bison-data (Bison's skeletons,
# BISON_PKGDATADIR).
#
# Needs a Debian (bookworm) machine; installing packages needs root (or
# sudo): dpkg-dev for dpkg-source, patch, gcc, make, m4 (Bison runs it),
# perl, xz-utils.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
OUT=${OUT:-$root/out/real}
patches=$here/patches

# The pinned versions: Debian bookworm's.
COREUTILS=coreutils=9.1-1
COREUTILS_DIR=coreutils-9.1
LIBIBERTY=libiberty=20230104-1
LIBIBERTY_DIR=libiberty-20230104
BISON=bison=2:3.8.2+dfsg-1
BISON_DIR=bison-3.8.2+dfsg

CFLAGS_REAL="-g -O1 -fno-omit-frame-pointer"
JOBS=${JOBS:-2}

log() { echo "get.sh: $*" >&2; }
die() { echo "get.sh: $*" >&2; exit 1; }

# asroot runs a command as root: directly, or through sudo.
asroot() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		sudo "$@"
	else
		die "need root (or sudo) for: $*"
	fi
}

# need installs the Debian packages of the commands that are missing.
need() {
	local missing=()
	local pair cmd pkg
	for pair in "$@"; do
		cmd=${pair%%:*} pkg=${pair#*:}
		command -v "$cmd" >/dev/null 2>&1 || missing+=("$pkg")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		log "installing ${missing[*]}"
		if ! asroot apt-get install -y --no-install-recommends "${missing[@]}" >&2; then
			asroot apt-get update >&2
			asroot apt-get install -y --no-install-recommends "${missing[@]}" >&2
		fi
	fi
}

# debsrc adds deb-src entries for bookworm beside the machine's sources
# (once) and runs apt-get update.
debsrc() {
	local f=/etc/apt/sources.list.d/mgtrace-src.sources
	if [ ! -f "$f" ]; then
		log "adding deb-src entries ($f)"
		asroot tee "$f" >/dev/null <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
	fi
	log "apt-get update"
	asroot apt-get update >&2
}

# fetch PKG=VERSION DIR: downloads and unpacks a source package into
# $OUT/src/DIR, without Debian's patches (bison's touch its Makefile.am,
# which would make the build run automake).
fetch() {
	local spec=$1 dir=$2 pkg=${1%%=*}
	[ -f "$OUT/src/$dir/.unpacked" ] && return
	need dpkg-source:dpkg-dev xz:xz-utils patch:patch
	mkdir -p "$OUT/src"
	log "apt-get source $spec"
	# Without a deb-src entry that has the pinned version, add one and try
	# again.
	if ! (cd "$OUT/src" && apt-get source --download-only "$spec" >&2); then
		debsrc
		(cd "$OUT/src" && apt-get source --download-only "$spec" >&2) ||
			die "apt-get source $spec failed"
	fi
	rm -rf "${OUT:?}/src/$dir"
	local dsc
	dsc=$(ls "$OUT/src/${pkg}_"*.dsc | head -1)
	(cd "$OUT/src" && dpkg-source --skip-patches -x "$(basename "$dsc")" "$dir" >&2)
	touch "$OUT/src/$dir/.unpacked"
}

# faultpatches PROG lists the fault patches of a program.
faultpatches() { ls "$patches/$1"-*.patch 2>/dev/null || true; }

# variant TREE NAME PATCH: a copy of TREE in $OUT/build/NAME, with PATCH
# applied (none for the correct build).
variant() {
	local tree=$1 name=$2 patch=${3:-}
	local dst=$OUT/build/$name
	if [ -f "$dst/.variant" ] && [ "$(cat "$dst/.variant")" = "$patch" ]; then
		return
	fi
	rm -rf "$dst"
	mkdir -p "$OUT/build"
	cp -a "$tree" "$dst"
	if [ -n "$patch" ]; then
		patch -s -d "$dst" -p1 <"$patch"
	fi
	echo "$patch" >"$dst/.variant"
}

# builtsources prints the BUILT_SOURCES of a configured Automake tree
# under lib/ and src/ (the others need the documentation, which the
# +dfsg sources lack).
builtsources() {
	local mk
	mk=$(mktemp)
	printf 'print-built-sources:\n\t@echo $(BUILT_SOURCES)\n' >"$mk"
	make -s -C "$1" -f Makefile -f "$mk" print-built-sources | tr ' ' '\n' | grep -E '^(lib|src)/' || true
	rm -f "$mk"
}

# autobuild TREE TARGET EXE CONFIGURE-ARGS...: configures TREE (once) and
# makes TARGET, then copies it to $OUT/bin/EXE.
autobuild() {
	local tree=$1 target=$2 exe=$3
	shift 3
	[ -x "$OUT/bin/$exe" ] && [ "$OUT/bin/$exe" -nt "$tree/.variant" ] && return
	need gcc:gcc make:make m4:m4 perl:perl
	if [ ! -f "$tree/config.status" ]; then
		log "$exe: configure"
		(cd "$tree" && FORCE_UNSAFE_CONFIGURE=1 ./configure CFLAGS="$CFLAGS_REAL" "$@" >configure.out 2>&1) ||
			die "$exe: configure failed: see $tree/configure.out and config.log"
	fi
	log "$exe: make $target"
	# shellcheck disable=SC2046
	(cd "$tree" && make -j"$JOBS" $(builtsources "$tree") >make.out 2>&1 && make -j"$JOBS" "$target" >>make.out 2>&1) ||
		die "$exe: make failed: see $tree/make.out"
	mkdir -p "$OUT/bin"
	cp "$tree/$target" "$OUT/bin/$exe"
}

get_ls() {
	fetch "$COREUTILS" "$COREUTILS_DIR"
	local opts=(--disable-nls --without-selinux --disable-acl --disable-xattr --without-libgmp --without-openssl)
	variant "$OUT/src/$COREUTILS_DIR" ls-correct
	autobuild "$OUT/build/ls-correct" src/ls ls-correct "${opts[@]}"
	for p in $(faultpatches ls); do
		local k=${p##*/ls-}
		k=${k%.patch}
		variant "$OUT/src/$COREUTILS_DIR" "ls-fault$k" "$p"
		autobuild "$OUT/build/ls-fault$k" src/ls "ls-fault$k" "${opts[@]}"
	done
	# The input: the coreutils source tree as released, unpacked on its own.
	if [ ! -d "$OUT/input/$COREUTILS_DIR" ]; then
		mkdir -p "$OUT/input"
		tar -C "$OUT/input" -xf "$OUT/src/coreutils_9.1.orig.tar.xz"
	fi
}

get_splay() {
	fetch "$LIBIBERTY" "$LIBIBERTY_DIR"
	need gcc:gcc
	local lib=$OUT/src/$LIBIBERTY_DIR
	local defs=(-DHAVE_STDLIB_H -DHAVE_STRING_H -DHAVE_STDINT_H -DHAVE_INTTYPES_H)
	local name p tree
	for p in "" $(faultpatches splay); do
		if [ -z "$p" ]; then
			name=splay-correct
		else
			name=splay-fault$(basename "$p" .patch | sed 's/^splay-//')
		fi
		tree=$OUT/build/$name
		# Only splay-tree.c and the headers it includes are needed.
		if [ ! -f "$tree/.variant" ] || [ "$(cat "$tree/.variant")" != "$p" ]; then
			rm -rf "$tree"
			mkdir -p "$tree/libiberty"
			cp -a "$lib/include" "$tree/include"
			cp "$lib/libiberty/splay-tree.c" "$tree/libiberty/"
			[ -n "$p" ] && patch -s -d "$tree" -p1 <"$p"
			echo "$p" >"$tree/.variant"
		fi
		if [ ! -x "$OUT/bin/$name" ] || [ "$OUT/bin/$name" -ot "$tree/.variant" ] || [ "$OUT/bin/$name" -ot "$here/splay/harness.c" ]; then
			log "$name: gcc"
			mkdir -p "$OUT/bin"
			gcc $CFLAGS_REAL "${defs[@]}" -I "$tree/include" -o "$OUT/bin/$name" \
				"$here/splay/harness.c" "$tree/libiberty/splay-tree.c"
		fi
	done
}

get_bison() {
	fetch "$BISON" "$BISON_DIR"
	local opts=(--disable-nls --disable-yacc)
	variant "$OUT/src/$BISON_DIR" bison-correct
	autobuild "$OUT/build/bison-correct" src/bison bison-correct "${opts[@]}"
	for p in $(faultpatches bison); do
		local k=${p##*/bison-}
		k=${k%.patch}
		variant "$OUT/src/$BISON_DIR" "bison-fault$k" "$p"
		autobuild "$OUT/build/bison-fault$k" src/bison "bison-fault$k" "${opts[@]}"
	done
	# Bison reads its skeletons from BISON_PKGDATADIR.
	ln -sfn "$OUT/build/bison-correct/data" "$OUT/bison-data"
}

progs=("$@")
[ ${#progs[@]} -eq 0 ] && progs=(all)
for prog in "${progs[@]}"; do
	case $prog in
	ls) get_ls ;;
	splay) get_splay ;;
	bison) get_bison ;;
	all) get_ls; get_splay; get_bison ;;
	*) die "unknown program $prog (want ls, splay, bison or all)" ;;
	esac
done
log "done: $OUT/bin"
