#!/usr/bin/env bash
# `hydrate render` on a generated monorepo of N apps x 3 environments:
# cold (empty cache), warm (nothing changed) and after one base changed,
# with wall time, CPU time, CPU/wall and peak RSS; with --oracle, also
# kubectl kustomize + helm 3 on the 100-app subset: their time and how many
# of hydrate's outputs are byte-identical to theirs.
#
#   benches/render.sh [--oracle] [N ...]          (default: 100 500 2000)
#
# The repository comes from ../shared/bench/gen (seed 1) when it exists,
# converted to hydrate environment files by benches/bench_envs.py;
# otherwise from a small built-in generator (kustomize apps only).
# Needs target/release/hydrate (built when missing) and GNU time for RSS.
set -euo pipefail
cd "$(dirname "$0")/.."
here=$PWD
hydrate=$here/target/release/hydrate
gen=$here/../shared/bench/gen
oracle=0
if [ "${1:-}" = "--oracle" ]; then oracle=1; shift; fi
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(100 500 2000)
[ -x "$hydrate" ] || cargo build --release -q
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# builtin_gen DIR N: N apps, each a base (Deployment, Service, ConfigMap
# generator) and an overlay per environment (namespace, prefix, labels,
# images, a strategic-merge patch).
builtin_gen() {
  local dir=$1 n=$2 i e
  mkdir -p "$dir/environments"
  for e in dev staging production; do
    printf 'name: %s\noutput: {dir: rendered/%s}\napps:\n' "$e" "$e" >"$dir/environments/$e.yaml"
  done
  for i in $(seq 1 "$n"); do
    local a=app$i b=$dir/apps/app$i/base
    mkdir -p "$b/config"
    printf 'resources: [deployment.yaml, service.yaml]\nconfigMapGenerator:\n  - name: %s\n    files: [config/app.properties]\n' "$a" >"$b/kustomization.yaml"
    printf 'port=%s\nname=%s\n' "$((8000 + i))" "$a" >"$b/config/app.properties"
    printf 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: %s\nspec:\n  selector:\n    matchLabels: {app: %s}\n  template:\n    metadata:\n      labels: {app: %s}\n    spec:\n      containers:\n        - name: %s\n          image: registry.example.com/%s:1.0.0\n          envFrom: [{configMapRef: {name: %s}}]\n' "$a" "$a" "$a" "$a" "$a" "$a" >"$b/deployment.yaml"
    printf 'apiVersion: v1\nkind: Service\nmetadata:\n  name: %s\nspec:\n  selector: {app: %s}\n  ports: [{port: 80, targetPort: 8080}]\n' "$a" "$a" >"$b/service.yaml"
    for e in dev staging production; do
      local o=$dir/apps/$a/overlays/$e
      mkdir -p "$o"
      printf 'resources: [../../base]\nnamespace: %s-%s\nnamePrefix: %s-\nlabels: [{pairs: {env: %s}, includeSelectors: true}]\nimages: [{name: registry.example.com/%s, newTag: "1.%s.0"}]\npatches: [{path: replicas.yaml}]\n' "$a" "$e" "$e" "$e" "$a" "$i" >"$o/kustomization.yaml"
      printf 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: %s\nspec:\n  replicas: %s\n' "$a" "$(( ${#e} % 4 + 1 ))" >"$o/replicas.yaml"
      printf '  - {name: %s, kustomize: apps/%s/overlays/%s}\n' "$a" "$a" "$e" >>"$dir/environments/$e.yaml"
    done
  done
}

generate() { # DIR N
  if [ -x "$gen" ]; then
    "$gen" "$1" --apps "$2" --envs dev,staging,production --seed 1 >/dev/null
    python3 "$here/benches/bench_envs.py" "$1"
  else
    builtin_gen "$1" "$2"
  fi
}

# measure LABEL N DIR [ARGS...]: one `hydrate render`, one summary line.
measure() {
  local label=$1 n=$2 dir=$3 t
  shift 3
  t=$work/time
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f '%e %U %S %M' -o "$t" "$hydrate" render --root "$dir" "$@" >"$work/out" 2>"$work/err"
  else
    local s e
    s=$(date +%s%N)
    "$hydrate" render --root "$dir" "$@" >"$work/out" 2>"$work/err"
    e=$(date +%s%N)
    echo "$(( (e - s) / 1000000 ))e-3 0 0 0" >"$t"
  fi
  local renders
  renders=$(awk '{ n += $2 } END { print n }' "$work/out")
  awk -v label="$label" -v n="$n" -v r="$renders" '{
    cpu = $2 + $3
    ratio = ($1 > 0) ? cpu / $1 : 0
    printf "render %5d apps %-10s wall %6.2f s  cpu %6.2f s  cpu/wall %4.2f  peak RSS %6.1f MB  (%d renders)\n",
      n, label, $1, cpu, ratio, $4 / 1024, r
  }' "$t"
}

for n in "${sizes[@]}"; do
  dir=$work/repo-$n
  generate "$dir" "$n"
  measure cold "$n" "$dir"
  cold_wall=$(cut -d' ' -f1 "$work/time")
  measure unchanged "$n" "$dir"
  # One base changed: a file of the first app's base.
  bases=("$dir"/apps/*/base)   # (no `ls | head`: SIGPIPE under pipefail)
  base=${bases[0]}
  file=$(find "$base" -type f -path '*config*' | sort | sed -n 1p)
  [ -n "$file" ] || file=$base/kustomization.yaml
  echo "changed=$n" >>"$file"
  measure one-base "$n" "$dir"
  measure no-cache "$n" "$dir" --no-cache
  if [ "$oracle" = 1 ] && [ "$n" -le 100 ]; then
    kubectl=${KUBECTL:-$HOME/.cache/oracles/kubectl}
    helm=${HELM:-$HOME/.cache/oracles/helm3}
    if [ -x "$kubectl" ] && [ -x "$helm" ]; then
      same=0 total=0 s=$(date +%s%N)
      for envfile in "$dir"/environments/*.yaml; do
        env=$(basename "$envfile" .yaml)
        while read -r name path; do
          total=$((total + 1))
          "$kubectl" kustomize "$dir/$path" >"$work/oracle" 2>/dev/null || true
          cmp -s "$work/oracle" "$dir/rendered/$env/$name/manifest.yaml" && same=$((same + 1))
        done < <(sed -n 's/^  - {name: "\{0,1\}\([^",]*\)"\{0,1\}, kustomize: "\{0,1\}\([^"}]*\)"\{0,1\}}$/\1 \2/p' "$envfile")
        while read -r name chart release ns values; do
          total=$((total + 1))
          (cd "$dir" && "$helm" template "$release" "$chart" -f "$values" --namespace "$ns") >"$work/oracle" 2>/dev/null || true
          cmp -s "$work/oracle" "$dir/rendered/$env/$name/manifest.yaml" && same=$((same + 1))
        done < <(sed -n 's/^  - {name: "\([^"]*\)", helm: {chart: "\([^"]*\)", releaseName: "\([^"]*\)", namespace: "\([^"]*\)", valueFiles: \["\([^"]*\)"\]}}$/\1 \2 \3 \4 \5/p' "$envfile")
      done
      e=$(date +%s%N)
      wall=$(awk -v s="$s" -v e="$e" 'BEGIN { printf "%.2f", (e - s) / 1e9 }')
      ratio=$(awk -v h="$cold_wall" -v o="$wall" 'BEGIN { printf "%.3f", h / o }')
      echo "oracle $n apps: kubectl kustomize + helm3 template, one process each: $wall s; hydrate cold / oracle $ratio; byte-identical $same/$total"
    else
      echo "oracle: skipped (no $kubectl or $helm)"
    fi
  fi
  rm -rf "$dir"
done
