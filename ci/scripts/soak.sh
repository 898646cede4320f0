#!/usr/bin/env bash
# Runs the parity suite <runs> times back to back to find flakes: each run
# brings up a lab of its own and tears it down (the suite does), and keeps
# its artifacts in <soak dir>/run-<i>. A failed run does not stop the
# soak. At the end ci/soaksummary prints one line per run (PASS/FAIL,
# aspect counts, duration) and the flake count: runs that failed or whose
# verdict or aspect counts differ from the first passing run. Exits 1 when
# there is a flake.
#
# Usage: soak.sh <runs> <soak dir>   (make e2e-parity-soak N=<runs>)
# <soak dir> is emptied first, so that no earlier soak's run mixes in.
set -euo pipefail

usage="usage: soak.sh <runs> <soak dir>"
runs=${1:?$usage}
soak_dir=${2:?$usage}
if ! [[ $runs =~ ^[1-9][0-9]*$ ]]; then
	echo "soak: the number of runs must be a positive number, not '$runs'" >&2
	exit 2
fi
make=${MAKE:-make}
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
mkdir -p "$soak_dir"
soak_dir=$(cd "$soak_dir" && pwd)
rm -rf "${soak_dir:?}"/run-*

# Build the summariser before the runs: a broken build must not wait for
# hours of them.
summariser="$soak_dir/soaksummary"
go build -o "$summariser" ./ci/soaksummary

for ((i = 1; i <= runs; i++)); do
	dir="$soak_dir/run-$i"
	mkdir -p "$dir"
	echo "=== soak run $i of $runs, artifacts in $dir"
	start=$SECONDS
	status=0
	"$make" --no-print-directory e2e-parity-run ARTIFACTS="$dir" || status=$?
	printf '{"exitCode": %d, "seconds": %d}\n' "$status" "$((SECONDS - start))" >"$dir/soak-run.json"
done

echo
echo "=== soak of $runs run(s), artifacts in $soak_dir"
"$summariser" "$soak_dir" "$runs"
