#!/usr/bin/env bash
# Builds every overlay of the generated bench monorepo with hydrate and with
# kubectl kustomize (v5.7.1) and counts byte-identical outputs.
#
#   tests/scripts/bench-overlays.sh [APPS]    (default 100; needs ../shared/bench/gen
#                                              and ~/.cache/oracles/kubectl)
set -euo pipefail
cd "$(dirname "$0")/../.."
apps=${1:-100}
kubectl=${KUBECTL:-$HOME/.cache/oracles/kubectl}
gen=../shared/bench/gen
if [ ! -x "$kubectl" ] || [ ! -f "$gen" ]; then
  echo "skipped: needs $gen and $kubectl"
  exit 0
fi
[ -x target/release/hydrate ] || cargo build --release -q
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$gen" "$work/repo" --apps "$apps" --envs dev,staging,production --seed 1 >/dev/null
ok=0 bad=0
for d in "$work"/repo/apps/*/overlays/*; do
  if target/release/hydrate kustomize build "$d" >"$work/h.yaml" 2>"$work/h.err" &&
     "$kubectl" kustomize "$d" >"$work/k.yaml" 2>/dev/null &&
     cmp -s "$work/h.yaml" "$work/k.yaml"; then
    ok=$((ok + 1))
  else
    bad=$((bad + 1))
    echo "differs: ${d#"$work"/repo/}"
  fi
done
echo "bench overlays: $ok of $((ok + bad)) byte-identical to kubectl kustomize"
[ "$bad" -eq 0 ]
