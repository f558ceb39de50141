# Sourced by the timing scripts (perf-table.sh, reports-time.sh): from the repository root,
# with the release binary in $bin and a scratch directory in $scratch (removed on exit) that
# holds the plan cache, so every run starts cold.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bin=target/release/elk-opt
[ -x "$bin" ] || { echo "error: $bin missing: run 'cargo build --release -j2 --bin elk-opt'" >&2; exit 1; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export XDG_CACHE_HOME="$scratch/cache"
