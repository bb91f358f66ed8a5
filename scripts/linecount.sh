#!/usr/bin/env bash
# linecount.sh: the line counts behind issue #17's "the line count of the kernel and test
# code goes down": the pieces the issue named (the operator rules, the PTX interpreters,
# the per-family scratch, the test files named after review passes, the ptxas finders,
# the race flags, the tuning knobs) at two revisions, and the whole root package and
# internal/kernel (code and tests apart), with the families whose files account for the
# difference.
#
#   scripts/linecount.sh [OLD [NEW]]    (defaults: 371f0ec, the issue's reference, and HEAD)
#   scripts/linecount.sh -v [OLD [NEW]] (also every piece's own count)
#
# Counts are physical lines (wc -l), comments and blank lines included, of the files as
# committed at each revision (git show REV:path; the working tree is not read). A piece
# is a whole file, a glob of files, or one top-level declaration of a Go file: path@NAME
# counts the declaration of NAME (func, method, type, var or const; the doc comment
# right above it included) up to its closing brace or parenthesis; path@const:NAME counts
# the const ( ... ) block whose first entries name NAME. A piece missing at a revision
# counts 0. The pieces of each group are listed below, at OLD (before) and at NEW
# (after): edit them there when the tree moves.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"

verbose=0
if [[ ${1:-} == -v ]]; then
	verbose=1
	shift
fi
OLD=${1:-371f0ec}
NEW=${2:-HEAD}

# decl_lines FILE-TEXT NAME: the lines of the declaration of NAME (see above) on stdin.
decl_lines() {
	awk -v sym="$1" '
	{ line[NR] = $0 }
	END {
		isconst = sub(/^const:/, "", sym)
		for (i = 1; i <= NR; i++) {
			l = line[i]
			hit = 0
			if (isconst) {
				if (l ~ /^const \($/)
					for (j = i + 1; j <= i + 4 && j <= NR; j++)
						if (line[j] ~ ("(^|[^A-Za-z0-9_])" sym "([^A-Za-z0-9_]|$)") && line[j] !~ /^[ \t]*\/\//) { hit = 1; break }
			} else if (l ~ ("^(func|type|var|const) (\\([^)]*\\) )?" sym "([^A-Za-z0-9_]|$)")) {
				hit = 1
			}
			if (!hit) continue
			s = i
			while (s > 1 && line[s-1] ~ /^\/\//) s--
			e = i
			if (l ~ /[{(]$/) {
				for (e = i + 1; e <= NR && line[e] !~ /^[})]/; e++) {}
			}
			print e - s + 1
			exit
		}
		print 0
	}'
}

# piece_lines REV PIECE: the lines of one piece at REV.
piece_lines() {
	local rev=$1 piece=$2 path sym n=0 f
	if [[ $piece == *@* ]]; then
		path=${piece%@*} sym=${piece#*@}
		if git cat-file -e "$rev:$path" 2>/dev/null; then
			git show "$rev:$path" | decl_lines "$sym"
		else
			echo 0
		fi
		return
	fi
	while read -r f; do
		[[ -z $f ]] && continue
		n=$((n + $(git show "$rev:$f" | wc -l)))
	done < <(git ls-tree -r --name-only "$rev" | grep -E "^($piece)\$" || true)
	echo "$n"
}

# group NAME "OLD PIECES" "NEW PIECES": prints the group's lines at OLD and NEW.
total_old=0 total_new=0
group() {
	local name=$1 o=0 n=0 p c
	for p in $2; do
		c=$(piece_lines "$OLD" "$p")
		o=$((o + c))
		((verbose)) && printf '    %-8s %6d  %s\n' "$OLD" "$c" "$p"
	done
	for p in $3; do
		c=$(piece_lines "$NEW" "$p")
		n=$((n + c))
		((verbose)) && printf '    %-8s %6d  %s\n' "$NEW" "$c" "$p"
	done
	total_old=$((total_old + o)) total_new=$((total_new + n))
	printf '%-34s %7d %7d %+7d\n' "$name" "$o" "$n" $((n - o))
}

echo "== the pieces issue #17 named (lines at $OLD, at $NEW, difference)"
group "operator rules and enums" \
	"internal/kernel/reduce.go@ReduceOp internal/kernel/reduce.go@const:RedSum
	 internal/kernel/reduce.go@reduceOpNames internal/kernel/reduce.go@String internal/kernel/scan.go@ScanOp internal/kernel/scan.go@const:ScanAdd
	 internal/kernel/scan.go@scanOpNames internal/kernel/scan.go@String
	 internal/kernel/reduce_ptx.go@redRT internal/kernel/reduce_ptx.go@redMemSuffix
	 internal/kernel/reduce_ptx.go@identity internal/kernel/reduce_ptx.go@combine internal/kernel/reduce_ptx.go@canonNaN
	 internal/kernel/reduce_cpu.go@redCanonNaN internal/kernel/reduce_cpu.go@redIdentity internal/kernel/reduce_cpu.go@redMinMax
	 internal/kernel/scan_gen.go@fminmax internal/kernel/scan.go@Identity
	 internal/kernel/elementwise_lower.go@fminmax
	 expr/kernels.go@kMin expr/kernels.go@kMax expr/kernels.go@kFmin expr/kernels.go@kFmax" \
	"internal/kernel/operator.go internal/fp/fp.go
	 internal/kernel/reduce_ptx.go@combine internal/kernel/elementwise_lower.go@fminmax
	 expr/kernels.go@kMin expr/kernels.go@kMax expr/kernels.go@kFmin expr/kernels.go@kFmax
	 internal/kernel/scan_gen.go@scanMemSuffix"
group "PTX interpreters / simulator" \
	"internal/ptxinterp/.*\\.go internal/kernel/scan_sim(run)?_test\\.go reduce_simt_test\\.go" \
	"internal/ptxinterp/.*\\.go internal/kernel/scan_sim(run)?_test\\.go reduce_simt_test\\.go internal/ptxsim/.*\\.go"
group "per-stream scratch" \
	"reduce.go@reduceCounters reduce.go@freeReduceCounters scan.go@scanScratch scan.go@scanStatusMem
	 scan.go@freeScanStatus scan.go@scanKeepStatus scan.go@init scan.go@scanStatusArg scan.go@scanStatus
	 search.go@compactStatus search.go@releaseCompactStatus search.go@freeCompactStatus" \
	"scratch\\.go scan.go@scanStatus"
group "test files named after review passes" \
	"runtime_edges_test\\.go array_edges_test\\.go nilrecv_test\\.go nilstream_test\\.go stage_edges_test\\.go" \
	"runtime_edges_test\\.go array_edges_test\\.go nilrecv_test\\.go nilstream_test\\.go stage_edges_test\\.go"
group "ptxas finders" \
	"internal/kernel/ewharness_test.go@ptxasPath internal/kernel/reduce_test.go@redPtxas
	 internal/kernel/scan_ptxas_test.go@scanPtxasPath" \
	"internal/testenv/testenv.go@CUDATool internal/testenv/testenv.go@isFile internal/testenv/testenv.go@Ptxas"
group "race flags" \
	"(.*/)?(.*_)?(no)?race_test\\.go" \
	"(.*/)?(.*_)?(no)?race_test\\.go internal/testenv/(no)?race\\.go"
group "tuning knobs" \
	"internal/kernel/reduce_plan.go@RedSplitMin search.go@compactEagerMax search.go@readPinned
	 permute.go@init scan.go@scanConfigFromEnv scan.go@scanKeepStatus" \
	"tuning\\.go half.go@init internal/kernel/reduce_plan.go@RedHalfUnroll"
printf '%-34s %7d %7d %+7d\n' "all the pieces" "$total_old" "$total_new" $((total_new - total_old))

# lines REV REGEX: the lines of the files at REV whose paths match REGEX.
lines() {
	local n=0 f
	while read -r f; do
		n=$((n + $(git show "$1:$f" | wc -l)))
	done < <(git ls-tree -r --name-only "$1" | grep -E "$2" || true)
	echo "$n"
}

echo
echo "== the root package and internal/kernel, whole (lines at $OLD, at $NEW, difference)"
for area in "root package:^[^/]+\\.go$" "internal/kernel:^internal/kernel/[^/]+\\.go$"; do
	name=${area%%:*} re=${area#*:}
	for kind in code test; do
		if [[ $kind == code ]]; then
			o=$(($(lines "$OLD" "$re") - $(lines "$OLD" "${re%\\.go\$}_test\\.go\$")))
			n=$(($(lines "$NEW" "$re") - $(lines "$NEW" "${re%\\.go\$}_test\\.go\$")))
		else
			o=$(lines "$OLD" "${re%\\.go\$}_test\\.go\$")
			n=$(lines "$NEW" "${re%\\.go\$}_test\\.go\$")
		fi
		printf '%-34s %7d %7d %+7d\n' "$name $kind" "$o" "$n" $((n - o))
	done
done

# families REV: "family lines" for the Go files of the root package and internal/kernel,
# a file's family being its name up to the first '_' or '.' (reduce_ptx_test.go:
# reduce), with "kernel/" before internal/kernel's.
families() {
	local f
	git ls-tree -r --name-only "$1" | grep -E '^([^/]+|internal/kernel/[^/]+)\.go$' | while read -r f; do
		local base=${f##*/} fam
		fam=${base%%[_.]*}
		[[ $f == internal/kernel/* ]] && fam=kernel/$fam
		echo "$fam $(git show "$1:$f" | wc -l)"
	done | awk '{s[$1] += $2} END {for (k in s) print k, s[k]}' | sort
}

echo
echo "== by family, code and tests together (lines at $OLD, at $NEW, difference; largest changes first)"
join -a1 -a2 -e0 -o 0,1.2,2.2 <(families "$OLD") <(families "$NEW") >"${TMPDIR:-/tmp}/linecount.$$"
awk '{d = $3 - $2; printf "%d\t%-34s %7d %7d %+7d\n", d < 0 ? -d : d, $1, $2, $3, d}' "${TMPDIR:-/tmp}/linecount.$$" |
	sort -t$'\t' -k1,1nr | cut -f2-
echo
echo "== the families that existed at $OLD, against the new ones"
awk '$2 > 0 {o += $2; n += $3} $2 == 0 {f += $3; k++}
	END {printf "%-34s %7d %7d %+7d\n", "families already at the start", o, n, n - o
	     printf "%-34s %7d %7d %+7d\n", "new families (" k ")", 0, f, f}' "${TMPDIR:-/tmp}/linecount.$$"
rm -f "${TMPDIR:-/tmp}/linecount.$$"
