#!/usr/bin/env bash
# Whole-process timing of hydrate against the real kustomize on this repo's
# demo overlays, against helm 3.17 on the demo chart (one render per
# environment's values), plus one `hydrate render` of every environment.
#
#   benches/bench.sh [ROUNDS]        (needs target/release/hydrate; kubectl
#                                     from ../shared/tools/install-oracles is optional)
#
# For the large generated monorepo, use ../shared/bench/run with
#   --cmd-kustomize "$PWD/target/release/hydrate kustomize build"
#   --cmd-helm "$PWD/target/release/hydrate helm template".
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
hydrate=target/release/hydrate
kubectl=${KUBECTL:-$HOME/.cache/oracles/kubectl}
[ -x "$hydrate" ] || cargo build --release -q
mapfile -t overlays < <(ls -d testdata/apps/*/overlays/*)

now() { date +%s%N; }
time_builds() { # $@: command prefix; prints ms per build
  local start end n=0
  start=$(now)
  for _ in $(seq "$rounds"); do
    for o in "${overlays[@]}"; do "$@" "$o" >/dev/null; n=$((n + 1)); done
  done
  end=$(now)
  echo $(( (end - start) / n / 1000 ))
}

h=$(time_builds "$hydrate" kustomize build)
echo "hydrate kustomize build: ${h} us per overlay (${#overlays[@]} overlays x $rounds)"
if [ -x "$kubectl" ]; then
  k=$(time_builds "$kubectl" kustomize)
  echo "kubectl kustomize:       ${k} us per overlay"
  awk -v h="$h" -v k="$k" 'BEGIN { printf "ratio hydrate/kubectl:   %.3f\n", h / k }'
fi
helm=${HELM:-$HOME/.cache/oracles/helm3}
time_charts() { # $@: command prefix; prints ms per chart render
  local start end n=0
  start=$(now)
  for _ in $(seq "$rounds"); do
    for v in testdata/apps/status/values/*.yaml; do
      "$@" status testdata/apps/status/chart -f "$v" --namespace status >/dev/null
      n=$((n + 1))
    done
  done
  end=$(now)
  echo $(( (end - start) / n / 1000 ))
}
h=$(time_charts "$hydrate" helm template)
echo "hydrate helm template:   ${h} us per chart render"
if [ -x "$helm" ]; then
  k=$(time_charts "$helm" template)
  echo "helm template (3.17):    ${k} us per chart render"
  awk -v h="$h" -v k="$k" 'BEGIN { printf "ratio hydrate/helm:      %.3f\n", h / k }'
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r environments testdata "$tmp/"
start=$(now)
"$hydrate" render --root "$tmp" >/dev/null
end=$(now)
echo "hydrate render (all envs, cold): $(( (end - start) / 1000 )) us"
