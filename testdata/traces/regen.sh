#!/usr/bin/env bash
# Regenerates the traces in testdata/traces/ (`make traces`): builds each
# program of testdata/programs/ with the flags below and records it with
# bin/record (run `make build` first). Source paths in the debug info are
# made relative to the repository with -ffile-prefix-map, so the traces
# name testdata/programs/NAME.c wherever they were made.
#
# The bug corpus' programs, testdata/programs/bugs/PROG.c, are recorded
# into testdata/traces/bugs/PROG.trace with the flags below.
#
# The slicer's programs, testdata/programs/slice/PROG.c, are recorded into
# testdata/traces/slice/PROG.trace, built as their README says: -O0, or the
# flags of the program's `// flags:` line.
#
# Usage: regen.sh [NAME...] re-records only the traces named (list,
# slice/loop, ...); without names, all of them.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
common=(-pthread -Iinclude "-ffile-prefix-map=$root/=")
flags=(-g -O1 -fno-omit-frame-pointer "${common[@]}")
slice_flags=(-g -O0 -fno-omit-frame-pointer "${common[@]}")

# name: program arguments (a name "prog-variant" records prog; a name
# "slice/prog" records testdata/programs/slice/prog.c)
runs=(
	"list:5"
	"tree:50"
	"threads:100"
	"wild:"
	"cpoint:"
	"overflow:"
	"syscalls:"
	"breaklist:"
	"dlpool:"
	"specsem-cycle:cycle"
	"specsem-wild:wild"
	"slice/loop:"
	"bugs/df_shallow_copy:"
	"bugs/ho_neighbour:"
	"bugs/np_lookup:tmp"
)
wanted=" $* "
mkdir -p testdata/traces/slice testdata/traces/bugs
for run in "${runs[@]}"; do
	name=${run%%:*}
	args=${run#*:}
	if [[ $# -gt 0 && $wanted != *" $name "* ]]; then
		continue
	fi
	if [[ $name == slice/* ]]; then
		prog=${name#slice/}
		src=testdata/programs/slice/$prog.c
		f=("${slice_flags[@]}")
		if line=$(grep -m1 '^// flags:' "$src"); then
			read -ra f <<<"${line#// flags:}"
			f+=("${common[@]}")
		fi
	elif [[ $name == bugs/* ]]; then
		prog=${name#bugs/}
		src=testdata/programs/bugs/$prog.c
		f=("${flags[@]}")
	else
		prog=${name%%-*}
		src=testdata/programs/$prog.c
		f=("${flags[@]}")
	fi
	gcc "${f[@]}" -o "$out/$prog" "$src"
	# Record from the output folder so that the header's paths are short.
	(cd "$out" && "$root/bin/record" -q -o "$root/testdata/traces/$name.trace" -- "./$prog" $args > /dev/null) || true
	echo "testdata/traces/$name.trace: $(wc -c < "testdata/traces/$name.trace") bytes"
done
