#!/usr/bin/env bash
# Times `make reports` without gap-whole (issue 20's row: the fig17 and fig19 sweeps and the
# other seven studies, in make's order), from scratch: a cold plan cache and a scratch output
# directory, so results/ is left alone. Prints a Markdown table of wall and CPU seconds per
# part and the total on stdout. Run it on a quiet machine: other work inflates every figure.
# shellcheck source=scripts/timing-env.sh
source "$(dirname "$0")/timing-env.sh"

parts=(
  "fig17|sweep fig17 -o $scratch/fig17.jsonl --report $scratch/fig17"
  "fig19|sweep fig19 -o $scratch/fig19.jsonl --report $scratch/fig19"
)
# The studies as the Makefile lists them, but gap-whole (≈ 45 min of time-boxed solves).
studies=$(sed -n 's/^STUDIES := //p' Makefile)
[ -n "$studies" ] || { echo "error: no 'STUDIES := ...' line in the Makefile" >&2; exit 1; }
for s in $studies; do
  [ "$s" = gap-whole ] || parts+=("$s|study $s -o $scratch/$s")
done

echo "| part | wall s | CPU s (user + sys) |"
echo "|---|---|---|"
t0=$(date +%s.%N)
for p in "${parts[@]}"; do
  name=${p%%|*}
  # shellcheck disable=SC2086 # the command line is split on purpose
  /usr/bin/time -f "%e %U %S" -o "$scratch/time" "$bin" ${p#*|} > /dev/null 2> "$scratch/err" || {
    echo "error: '$name' failed:" >&2; cat "$scratch/err" >&2; exit 1; }
  read -r wall user sys < "$scratch/time"
  echo "| $name | $wall | $(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }') |"
done
t1=$(date +%s.%N)
echo "| **total** | **$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')** | |"
