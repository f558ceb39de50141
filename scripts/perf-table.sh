#!/usr/bin/env bash
# The README's performance table, measured: each row of issue 20's table as one wall-clock run
# of the release binary (run it on a quiet machine; other work inflates every figure).
# Plan-table rows run with --no-cache (enumeration) and again with a warm cache; the other rows
# run once on a cold cache, then again on the warm one. Prints Markdown on stdout.
# shellcheck source=scripts/timing-env.sh
source "$(dirname "$0")/timing-env.sh"
cache=$XDG_CACHE_HOME

# wall seconds of "$@" (stdout discarded)
wall() {
  local t0 t1
  t0=$(date +%s.%N)
  "$@" > /dev/null
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }'
}
# the plan-table seconds of a `plans --timings` run
plan_s() { "$bin" plans "$@" --timings | sed -n 's/.*plan tables \([0-9.]*\) s.*/\1/p'; }
# "cold | warm": plan-table seconds enumerating (--no-cache), then read from a filled cache
plan_row() {
  local cold warm
  cold=$(plan_s "$@" --no-cache)
  "$bin" plans "$@" > /dev/null
  warm=$(plan_s "$@")
  echo "$cold s | $warm s"
}

echo "| what | cold (plan tables enumerated) | warm (plan cache) | reference artifact |"
echo "|---|---|---|---|"
# The artifact's 136 s is for its own bert-base graph under its own planning rules: the same
# graph imported with --compat reference (the criterion bench's input too); then the zoo's.
bert_ref=(--import tests/fixtures/models/bert-base.json --compat reference --batch 8 --kv 512
  --chip ipu-mk2)
row=$(plan_row "${bert_ref[@]}")
ratio=$(awk -v c="${row%% s*}" 'BEGIN { printf "%.0f", 136 / c }')
echo "| plan tables, the artifact's bert-base graph (\`--import bert-base.json --compat reference\`) decode B8 KV512 @ ipu-mk2 (136 s / ours = ${ratio}) | $row | 136 s CPU |"
bert=(--model bert-base --batch 8 --kv 512 --chip ipu-mk2)
echo "| plan tables, zoo bert-base decode B8 KV512 @ ipu-mk2 | $(plan_row "${bert[@]}") | — |"
l13=(--model llama2-13b --chip ipu-pod4)
echo "| plan tables, llama2-13b decode B32 KV2048 @ ipu-pod4 | $(plan_row "${l13[@]}") | — |"
l13b8=(--model llama2-13b --batch 8 --chip ipu-mk2)
echo "| plan tables, llama2-13b decode B8 KV2048 @ ipu-mk2 (1,472 cores) | $(plan_row "${l13b8[@]}") | 199 s |"
rm -rf "${cache:?}"/*
c=$(wall "$bin" solve --method elk-full --model llama2-70b)
w=$(wall "$bin" solve --method elk-full --model llama2-70b)
echo "| \`solve --method elk-full --model llama2-70b\` (plan tables included) | $c s | $w s | — |"
rm -rf "${cache:?}"/*
c=$(wall "$bin" compare)
w=$(wall "$bin" compare)
echo "| \`compare\` (Llama2-13B: every heuristic, re-timed rows, Ideal, roofline bound) | $c s | $w s | — |"
rm -rf "${cache:?}"/*
c=$(wall "$bin")
w=$(wall "$bin")
echo "| \`elk-opt\`, the main job (\`compare --bound segment --layer-exact 1\`: the above with the segment relaxation's bound, plus one layer's MILP, 1 s limit) | $c s | $w s | — |"
