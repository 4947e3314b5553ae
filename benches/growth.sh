#!/usr/bin/env bash
# Issue 16's "linear growth", as a bench with a recorded bound (it was a
# unit test that a debug build skipped and a loaded machine could fail by
# chance): the large kustomization of benches/large_kustomization.sh with
# 1,000 and with 4,000 ConfigMaps, built by the release binary, best of
# three each. Four times the resources must take under eight times as long
# (quadratic growth would take sixteen); the line ends in FAIL otherwise,
# and the script exits 1.
#
#   benches/growth.sh        (HYDRATE=path/to/hydrate to time another build)
set -euo pipefail
cd "$(dirname "$0")/.."
hydrate=${HYDRATE:-$PWD/target/release/hydrate}
[ -x "$hydrate" ] || cargo build --release -q
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
best_ms() { # DIR: the best of three builds, in milliseconds
  local best= start end ms
  for _ in 1 2 3; do
    start=$(date +%s%N)
    "$hydrate" kustomize build "$1" >/dev/null 2>&1  # its deprecation warnings
    end=$(date +%s%N)
    ms=$(( (end - start) / 1000000 ))
    if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
  done
  echo "$best"
}
benches/large_kustomization.sh "$work/small" 1000
benches/large_kustomization.sh "$work/big" 4000
small=$(best_ms "$work/small")
big=$(best_ms "$work/big")
verdict=ok
[ "$big" -lt $(( 8 * (small > 0 ? small : 1) )) ] || verdict=FAIL
echo "growth: 1000 ConfigMaps ${small} ms, 4000 ConfigMaps ${big} ms (bound: under 8x) $verdict"
[ "$verdict" = ok ]
