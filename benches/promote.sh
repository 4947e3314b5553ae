#!/usr/bin/env bash
# The commands around a release on a generated monorepo of N apps x 3
# environments (default 500; dev -> staging -> production), committed in a
# git repository whose render cache is warm (as a CI job or a laptop that
# rendered before): `set-image` of one app, `promote` of one app and of
# every app, and `diff staging production` warm and cold, beside a cold
# `render` of the same two environments (the diff's yardstick). Each line:
# wall time, CPU time and peak RSS of one run, and the filesystem it ran on.
#
#   benches/promote.sh [N]
#
# Needs target/release/hydrate (built when missing), git, and GNU time for
# RSS. The repository comes from benches/gen.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
here=$PWD
hydrate=${HYDRATE:-$here/target/release/hydrate}
n=${1:-500}
[ -x "$hydrate" ] || cargo build --release -q
work=$(mktemp -d "${BENCH_DIR:-${TMPDIR:-/tmp}}/hydrate-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "bench directory: $work ($(df --output=fstype "$work" | tail -1) filesystem)"

. "$here/benches/gen.sh"

# measure LABEL CMD...: one run of CMD in the repository, one summary line
# (exit 1, a finding such as a diff, counts as success).
measure() {
  local label=$1 t=$work/time rc=0
  shift
  if [ -x /usr/bin/time ]; then
    (cd "$dir" && /usr/bin/time -f '%e %U %S %M' -o "$t" "$@" >"$work/out" 2>"$work/err") || rc=$?
  else
    local s e
    s=$(date +%s%N)
    (cd "$dir" && "$@" >"$work/out" 2>"$work/err") || rc=$?
    e=$(date +%s%N)
    echo "$(( (e - s) / 1000000 ))e-3 0 0 0" >"$t"
  fi
  if [ "$rc" -gt 1 ]; then
    echo "$label: failed (exit $rc):" >&2
    cat "$work/err" >&2
    exit 1
  fi
  # GNU time puts "Command exited with non-zero status 1" first then.
  tail -n 1 "$t" | awk -v label="$label" -v n="$n" '{
    printf "%-34s %5d apps  wall %6.3f s  cpu %6.3f s  peak RSS %6.1f MB\n", label, n, $1, $2 + $3, $4 / 1024
  }'
}

dir=$work/repo
generate "$dir" "$n"
printf 'promotesTo: staging\n' >>"$dir/environments/dev.yaml"
printf 'promotesTo: production\n' >>"$dir/environments/staging.yaml"
printf 'rendered/\n.hydrate/\n' >"$dir/.gitignore"
git -C "$dir" init -q
git -C "$dir" config user.name bench
git -C "$dir" config user.email bench@example.com
git -C "$dir" add -A
git -C "$dir" commit -qm "generated monorepo"
app=$(sed -n 's/^  - {name: "\([^"]*\)", kustomize: .*/\1/p' "$dir/environments/staging.yaml" | sed -n 1p)
image=$(sed -n 's/^- name: //p' "$dir/apps/$app/overlays/staging/kustomization.yaml" | sed -n 1p)
[ -n "$app" ] && [ -n "$image" ] || { echo "no kustomize app with an image in staging" >&2; exit 1; }

measure "render (cold, all environments)" "$hydrate" render -q
measure "set-image staging (one app)" "$hydrate" set-image staging "$image:9.9.9" --app "$app"
measure "promote staging production --app" "$hydrate" promote staging production --app "$app"
measure "promote staging production (all)" "$hydrate" promote staging production
measure "diff staging production (warm)" "$hydrate" diff staging production --brief
rm -rf "$dir/.hydrate/cache"
measure "diff staging production (cold)" "$hydrate" diff staging production --brief
rm -rf "$dir/.hydrate/cache"
measure "render staging+production (cold)" "$hydrate" render -q --env staging --env production
git -C "$dir" status --porcelain | sed -n 1,3p | sed 's/^/unexpected: git status: /'
