#!/usr/bin/env bash
# `hydrate render` on a generated monorepo of N apps x 3 environments:
# cold (empty cache), warm (nothing changed: the long way, then settled,
# answered by the records the long way left), after one base changed (the
# first change after the cold run, then a second one),
# with wall time, CPU time, CPU/wall and peak RSS, and the filesystem the
# repository is on (figures are for a real disk unless it says tmpfs).
#
# The loop ratio: where kubectl (kustomize v5.7.1) and helm 3 are installed,
# a timed sample of the shell loop (one `kubectl kustomize` or
# `helm template` process per render, one after another, as CI glue runs
# them) of about 60 renders spread over the repository, scaled to all of
# its renders, against hydrate's cold render of the same repository in the
# same run. With --oracle, every render of a repository of at most 100
# apps runs through the loop instead, and the line also counts how many of
# hydrate's outputs are byte-identical to the real tools'.
#
#   benches/render.sh [--oracle] [N ...]          (default: 100 500 2000)
#
# The repository comes from benches/gen.sh: ../shared/bench/gen (seed 1)
# when it exists, converted to hydrate environment files by
# benches/bench_envs.py; otherwise a small built-in generator (kustomize
# apps only).
# Needs target/release/hydrate (built when missing; $HYDRATE names another
# build, to time a before and an after) and GNU time for RSS.
set -euo pipefail
cd "$(dirname "$0")/.."
here=$PWD
hydrate=${HYDRATE:-$here/target/release/hydrate}
oracle=0
if [ "${1:-}" = "--oracle" ]; then oracle=1; shift; fi
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(100 500 2000)
[ -x "$hydrate" ] || cargo build --release -q
work=$(mktemp -d "${BENCH_DIR:-${TMPDIR:-/tmp}}/hydrate-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "bench directory: $work ($(df --output=fstype "$work" | tail -1) filesystem)"
kubectl=${KUBECTL:-$HOME/.cache/oracles/kubectl}
helm=${HELM:-$HOME/.cache/oracles/helm3}

. "$here/benches/gen.sh"

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

# renders DIR: every render of DIR's environment files, one per line:
# `k ENV NAME PATH` (a kustomize app) or `h ENV NAME CHART RELEASE NS VALUES`.
renders() {
  local dir=$1 envfile env
  for envfile in "$dir"/environments/*.yaml; do
    env=$(basename "$envfile" .yaml)
    sed -n 's/^  - {name: "\{0,1\}\([^",]*\)"\{0,1\}, kustomize: "\{0,1\}\([^"}]*\)"\{0,1\}}$/k '"$env"' \1 \2/p' "$envfile"
    sed -n 's/^  - {name: "\([^"]*\)", helm: {chart: "\([^"]*\)", releaseName: "\([^"]*\)", namespace: "\([^"]*\)", valueFiles: \["\([^"]*\)"\]}}$/h '"$env"' \1 \2 \3 \4 \5/p' "$envfile"
  done
}

# loop DIR LIST: runs each render of LIST as the shell loop does, one
# process each; prints "SECONDS SAME TOTAL" (SAME: outputs byte-identical
# to hydrate's rendered/ files).
loop() {
  local dir=$1 list=$2 same=0 total=0 s e kind env name a b c d
  s=$(date +%s%N)
  while read -r kind env name a b c d; do
    total=$((total + 1))
    if [ "$kind" = k ]; then
      "$kubectl" kustomize "$dir/$a" >"$work/oracle" 2>/dev/null || true
    else
      (cd "$dir" && "$helm" template "$b" "$a" -f "$d" --namespace "$c") >"$work/oracle" 2>/dev/null || true
    fi
    cmp -s "$work/oracle" "$dir/rendered/$env/$name/manifest.yaml" && same=$((same + 1))
  done <"$list"
  e=$(date +%s%N)
  awk -v s="$s" -v e="$e" -v same="$same" -v total="$total" 'BEGIN { printf "%.3f %d %d\n", (e - s) / 1e9, same, total }'
}

for n in "${sizes[@]}"; do
  dir=$work/repo-$n
  generate "$dir" "$n"
  # The generator's files written back before the cold run, not during
  # it: the cold run, not the loop sample after it, would pay for the
  # disk writing out the repository.
  sync
  measure cold "$n" "$dir"
  cold_wall=$(cut -d' ' -f1 "$work/time")
  if [ -x "$kubectl" ] && [ -x "$helm" ]; then
    renders "$dir" >"$work/all"
    all=$(wc -l <"$work/all")
    if [ "$oracle" = 1 ] && [ "$n" -le 100 ]; then
      cp "$work/all" "$work/sample"
    else
      # About 60 renders, evenly spread (every k-th line).
      awk -v k="$(( all / 60 > 0 ? all / 60 : 1 ))" 'NR % k == 0' "$work/all" >"$work/sample"
    fi
    read -r secs same total < <(loop "$dir" "$work/sample")
    awk -v n="$n" -v h="$cold_wall" -v secs="$secs" -v total="$total" -v all="$all" -v same="$same" 'BEGIN {
      est = secs / total * all
      printf "loop   %5d apps: kubectl kustomize + helm3 template, one process per render: %d of %d renders in %.2f s, so %.1f s for all; hydrate cold %.2f s: %.0fx faster (byte-identical %d/%d)\n",
        n, total, all, secs, est, h, est / h, same, total
    }'
  else
    echo "loop: skipped (no $kubectl or $helm; ../shared/tools/install-oracles installs them)"
  fi
  # Nothing changed: first the long way (every result looked up and
  # compared; it records each environment as settled), then the run after
  # it, answered by those records. A stat younger than a second is never
  # recorded (see docs/commands/render.md), so the cold run's files are
  # let age first when the loop sample did not take that long.
  sleep 1.1
  measure unchanged "$n" "$dir"
  measure settled "$n" "$dir"
  # One base changed: a file of the first app's base.
  bases=("$dir"/apps/*/base)   # (no `ls | head`: SIGPIPE under pipefail)
  base=${bases[0]}
  file=$(find "$base" -type f -path '*config*' | sort | sed -n 1p)
  [ -n "$file" ] || file=$base/kustomization.yaml
  echo "changed=$n" >>"$file"
  measure one-base "$n" "$dir"
  # The same again: from the second change on, each environment's new tree
  # is made from the spare tree the last switch set aside (the steady state
  # of a repository hydrate renders after every change).
  echo "changed=$n again" >>"$file"
  measure one-base-2 "$n" "$dir"
  measure no-cache "$n" "$dir" --no-cache
  # Kept until the bench ends (the trap removes it): on ext4, inodes freed
  # in the last minutes are skipped when new ones are allocated
  # (`recently_deleted` in the kernel's inode allocator), so deleting a
  # repository here made the next size's cold run pay for it (a third of
  # its CPU in find_inode_bit at 2,000 apps).
done
