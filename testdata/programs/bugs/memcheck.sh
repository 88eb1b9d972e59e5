#!/bin/bash
# memcheck.sh: run Valgrind's memcheck on every program of the bug corpus
# and check each program's `// memcheck: yes|no` marker against what
# memcheck says.
#
# Usage: testdata/programs/bugs/memcheck.sh [-j JOBS] [PROGRAM...]
#
# PROGRAM is a source file name (df_simple.c) or a program name
# (df_simple); without any, every *.c and *.cc here. Each program is built
# in a temporary directory as testprog builds it (gcc, or g++ for .cc, with
# -g -O1 -fno-omit-frame-pointer -I include -pthread) and run with the
# arguments of its `// args:` line under
#
#   valgrind --tool=memcheck --leak-check=full --error-exitcode=99 -q \
#            --show-leak-kinds=all --vex-iropt-unroll-thresh=0
#
# The two extra options change nothing memcheck detects or counts as an
# error: --show-leak-kinds=all also lists still-reachable blocks (shown as
# the kind, never counted as an error: --errors-for-leak-kinds stays at
# definite,possible), and --vex-iropt-unroll-thresh=0 stops Valgrind from
# unrolling loops, which otherwise makes it blame an error inside a small
# loop on the loop's branch line instead of the access's line.
#
# One line per program:
#
#   NAME  EXPECTED-CLASSES  memcheck=yes|no  KIND  line=N  ok|MISMATCH ...
#
# memcheck=yes when memcheck reported an error (exit status 99, or an
# error before a fatal signal); KIND is the first error (or, failing one,
# the first still-reachable block): "Invalid read", "Invalid write",
# "Invalid free", "Mismatched free", "Conditional jump depends on
# uninitialised", "Use of uninitialised value", "Syscall param",
# "definitely lost", "possibly lost", "still reachable", or "-"; line=N is
# the first line of the program's own source in that error's stack.
# MISMATCH when memcheck=yes/no disagrees with the marker, or when the
# error's line is not one the markers name (a bug= line; for the leak
# classes, whose error is the allocation's stack, a root= line).
#
# Exit status: 0 when every program agrees with its markers, 1 otherwise.
# About a minute on two cores.

set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
jobs=2
if [ "${1:-}" = "-j" ]; then
    jobs=$2
    shift 2
fi
for tool in valgrind gcc g++; do
    if ! command -v "$tool" >/dev/null; then
        echo "memcheck.sh: $tool is not installed" >&2
        exit 2
    fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mgtrace-bugs-memcheck-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# marker FILE KEY: the text after "// KEY:" on the file's marker line.
marker() {
    sed -n "s#^[[:space:]]*// $2:[[:space:]]*##p" "$1" | head -n 1
}

# lines FILE WORD CLASSES: the numbers of the lines whose //@ marker has
# WORD=CLASS for one of the comma-separated CLASSES.
lines() {
    local file=$1 word=$2 classes=$3 c
    for c in ${classes//,/ }; do
        grep -n "//@.*$word=\([a-z_]*,\)*$c\b" "$file" | cut -d: -f1
    done | sort -n | uniq | tr '\n' ' '
}

# check_one FILE: build and run one program, print its line to
# $tmp/NAME.res and return non-zero on a mismatch.
check_one() {
    local src=$1 file name ext cc expect want args bin vg rc kind line reported verdict okline leakline
    file=$(basename "$src")
    name=${file%.*}
    ext=${file##*.}
    cc=gcc
    [ "$ext" = cc ] && cc=g++
    expect=$(marker "$src" expect)
    want=$(marker "$src" memcheck)
    want=${want%% *}
    args=$(marker "$src" args)
    bin=$tmp/$name
    vg=$tmp/$name.vg
    if ! (cd "$root" && $cc -g -O1 -fno-omit-frame-pointer -I "$root/include" -pthread "$src" -o "$bin") >"$tmp/$name.build" 2>&1; then
        printf '%-20s %-40s BUILD FAILED\n' "$name" "$expect" >"$tmp/$name.res"
        sed 's/^/    /' "$tmp/$name.build" >>"$tmp/$name.res"
        return 1
    fi
    # shellcheck disable=SC2086 # args is a word list
    (cd "$tmp" && ulimit -c 0 && exec timeout 120 valgrind --tool=memcheck --leak-check=full \
        --error-exitcode=99 -q --show-leak-kinds=all --vex-iropt-unroll-thresh=0 \
        "$bin" $args) >/dev/null 2>"$vg"
    rc=$?
    # The first error headline, and the first still-reachable block.
    kind=$(sed -n -E 's/^==[0-9]+== (Invalid read|Invalid write|Invalid free|Mismatched free|Conditional jump or move depends on uninitialised|Use of uninitialised value|Syscall param|Jump to the invalid address|Source and destination overlap|Argument .* has a fishy).*/\1/p;
        s/^==[0-9]+== .* are (definitely lost|possibly lost) in loss record.*/\1/p' "$vg" | head -n 1)
    reported=no
    if [ "$rc" = 99 ] || [ -n "$kind" ]; then
        reported=yes
    fi
    if [ -z "$kind" ]; then
        kind=$(sed -n -E 's/^==[0-9]+== .* are (still reachable) in loss record.*/\1/p' "$vg" | head -n 1)
    fi
    # The first frame in the program's own source after the first
    # headline of that kind.
    line=
    if [ -n "$kind" ]; then
        line=$(awk -v k="$kind" -v f="($file:" '
            !found && index($0, k) { found = 1; next }
            found && index($0, f) { s = substr($0, index($0, f) + length(f)); sub(/\).*/, "", s); print s; exit }
        ' "$vg")
    fi
    case $kind in
    "Conditional jump or move depends on uninitialised") kind="Conditional jump depends on uninitialised" ;;
    "") kind=- ;;
    esac
    verdict=ok
    if [ "$reported" != "$want" ]; then
        verdict="MISMATCH: the marker says memcheck: $want"
    elif [ "$reported" = yes ] && [ -n "$line" ]; then
        okline=$(lines "$src" bug "$expect")
        case $kind in
        "definitely lost" | "possibly lost") okline=$(lines "$src" root "$expect") ;;
        esac
        case " $okline " in
        *" $line "*) ;;
        *) verdict="MISMATCH: memcheck blames line $line, the markers name lines $okline" ;;
        esac
    fi
    printf '%-20s %-40s memcheck=%-3s %-42s line=%-4s %s\n' "$name" "$expect" "$reported" "$kind" "${line:--}" "$verdict" >"$tmp/$name.res"
    [ "$verdict" = ok ]
}

if [ $# -eq 0 ]; then
    set -- "$here"/*.c "$here"/*.cc
fi
srcs=()
for p in "$@"; do
    case $p in
    */*) ;;
    *) p=$here/$p ;;
    esac
    if [ ! -f "$p" ]; then
        if [ -f "$p.c" ]; then p=$p.c; elif [ -f "$p.cc" ]; then p=$p.cc; fi
    fi
    if [ ! -f "$p" ]; then
        echo "memcheck.sh: no program $p" >&2
        exit 2
    fi
    srcs+=("$p")
done

fail=0
running=0
for src in "${srcs[@]}"; do
    # check_one writes its result to a file; its stderr would only carry
    # bash's "Segmentation fault" notices for the crashing programs.
    check_one "$src" 2>/dev/null &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then
        wait -n || fail=1
        running=$((running - 1))
    fi
done
while [ "$running" -gt 0 ]; do
    wait -n || fail=1
    running=$((running - 1))
done

for src in "${srcs[@]}"; do
    file=$(basename "$src")
    cat "$tmp/${file%.*}.res"
done | sort
if [ "$fail" != 0 ]; then
    echo "memcheck.sh: some programs disagree with their markers" >&2
    exit 1
fi
