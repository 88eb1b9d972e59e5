#!/bin/sh
# selfcheck.sh: validates the programs of testdata/programs/ds/ with their
# built-in self-checks (see README.md), independently of the product's
# checker.
#
# For each program NAME.c it
#   - builds it as the tests do (gcc -g -O1 -fno-omit-frame-pointer
#     -I include), without a fault and with each FAULT k marked in the
#     source, warning-free under -Wall -Wextra, and checks that in the
#     FAULT=k binary an instruction of the line marked FAULT k stores to
#     memory through a register (the faulty store is on that line);
#   - builds it again with -DSELFCHECK and runs it:
#       correct program, seeds 1..10: exit status 0, no SELFCHECK
#       VIOLATION line (every C-point satisfies the spec);
#       FAULT=k, seeds 1..3: "FAULT k fired at op N" on stderr and the
#       first SELFCHECK VIOLATION at op N, that is at the first C-point
#       after the faulty store (the end of that operation);
#       a crash fault (listed in $crash below: it stores a non-heap
#       address into a link that the same operation then follows),
#       seeds 1..3: "FAULT k fired at op N", then death by SIGSEGV
#       (status 139) with no SELFCHECK VIOLATION line: the crash is the
#       first C-point after the faulty store.
# It prints PASS or FAIL per case and exits 1 when any case fails.
#
# Usage: selfcheck.sh [NAME...]   (default: all nine programs)
# Environment: CC (default gcc).
set -u
here=$(cd "$(dirname "$0")" && pwd)
inc=$here/../../../include
CC=${CC:-gcc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
progs=${*:-ordlist circlist dlist qdtree avl btree rbtree leftist bipartite poollist}
# The crash faults, as NAME:k (README.md, "The faults").
crash="avl:4 rbtree:4 leftist:4"
failed=0

fail() {
    echo "FAIL $*"
    failed=1
}

for p in $progs; do
    src=$here/$p.c
    if [ ! -f "$src" ]; then
        fail "$p: no $p.c"
        continue
    fi
    faults=$(grep -o '/\* FAULT [0-9]* \*/' "$src" | awk '{ print $3 }' | sort -un)
    for k in 0 $faults; do
        if [ "$k" -eq 0 ]; then
            name=$p def= seeds="1 2 3 4 5 6 7 8 9 10"
        else
            name="$p FAULT=$k" def=-DFAULT=$k seeds="1 2 3"
        fi
        bin=$tmp/$p-$k
        # The build the tests use, warning-free.
        if ! $CC -g -O1 -fno-omit-frame-pointer -Wall -Wextra -Werror -I "$inc" \
            $def "$src" -o "$bin" 2>"$tmp/err"; then
            fail "$name: build"; sed 's/^/    /' "$tmp/err"
            continue
        fi
        if [ "$k" -ne 0 ]; then
            line=$(grep -n "/\* FAULT $k \*/" "$src" | head -n 1 | cut -d: -f1)
            if ! objdump -dl --no-show-raw-insn "$bin" | awk -v L="$line" -v F="/$p.c" '
                /^\/.*:[0-9]+/ {
                    split($1, a, ":")
                    cur = (substr(a[1], length(a[1]) - length(F) + 1) == F) ? a[2] + 0 : -1
                    next
                }
                cur == L && /^ *[0-9a-f]+:/ && /mov[a-z]* +[^,]+,(-?0x[0-9a-f]+)?\(%r/ &&
                    !/\(%r[bs]p\)/ { found = 1 }
                END { exit found ? 0 : 1 }'; then
                fail "$name: no store instruction on line $line"
                continue
            fi
        fi
        if ! $CC -g -O1 -fno-omit-frame-pointer -Wall -Wextra -Werror -I "$inc" \
            -DSELFCHECK $def "$src" -o "$bin-sc" 2>"$tmp/err"; then
            fail "$name: SELFCHECK build"; sed 's/^/    /' "$tmp/err"
            continue
        fi
        for s in $seeds; do
            # In a subshell, so that the shell's own report of a crash
            # goes to the void and not into the output.
            ( "$bin-sc" "$s" >"$tmp/out" 2>"$tmp/err"; exit $? ) 2>/dev/null
            rc=$?
            first=$(grep -m 1 '^SELFCHECK VIOLATION' "$tmp/err")
            if [ "$k" -eq 0 ]; then
                if [ $rc -ne 0 ] || [ -n "$first" ]; then
                    fail "$name seed $s: exit $rc ${first:-}"
                else
                    echo "PASS $name seed $s: $(grep -m 1 '^SELFCHECK:' "$tmp/err")"
                fi
                continue
            fi
            fired=$(sed -n "s/^FAULT $k fired at op \([0-9]*\)$/\1/p" "$tmp/err" | head -n 1)
            vop=$(printf '%s\n' "$first" | sed -n 's/^SELFCHECK VIOLATION at op \(-*[0-9]*\) .*/\1/p')
            case " $crash " in
            *" $p:$k "*)
                if [ -z "$fired" ]; then
                    fail "$name seed $s: the fault never fired (exit $rc)"
                elif [ -n "$first" ]; then
                    fail "$name seed $s: fired at op $fired, a violation before the crash: ${first#SELFCHECK VIOLATION at }"
                elif [ $rc -ne 139 ]; then
                    fail "$name seed $s: fired at op $fired, exit $rc, not SIGSEGV (139)"
                else
                    echo "PASS $name seed $s: fired at op $fired; SIGSEGV before the next C-point"
                fi
                continue
                ;;
            esac
            if [ -z "$fired" ]; then
                fail "$name seed $s: the fault never fired (exit $rc)"
            elif [ -z "$vop" ]; then
                fail "$name seed $s: fired at op $fired, no violation (exit $rc)"
            elif [ "$vop" != "$fired" ]; then
                fail "$name seed $s: fired at op $fired, first violation at op $vop"
            else
                echo "PASS $name seed $s: fired at op $fired; ${first#SELFCHECK VIOLATION at }"
            fi
        done
    done
done
if [ $failed -ne 0 ]; then
    echo "selfcheck: FAILED"
    exit 1
fi
echo "selfcheck: all passed"
