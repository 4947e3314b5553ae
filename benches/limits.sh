#!/usr/bin/env bash
# Issue 14's must-show: every bad or deep input through the release binary,
# one line each: name, exit code, wall and CPU seconds, peak RSS, and the
# first line of the message (which names the file). A line ends in FAIL
# when the exit code is not the expected one, the run took 2 s or more
# (CPU seconds; 5 s for the inputs that walk 100,000 levels), peak RSS reached
# 200 MB, or a failing run's message does not name the file.
#
#   benches/limits.sh            (needs target/release/hydrate, GNU time)
#
# Each probe runs under `ulimit -v 4000000` and `timeout -s KILL 30`.
set -uo pipefail
cd "$(dirname "$0")/.."
hydrate=$PWD/target/release/hydrate
[ -x "$hydrate" ] || cargo build --release -q
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The "billion laughs" document: nine levels of nine aliases.
bomb() {
    printf 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    local prev=a
    for n in b c d e f g h i; do
        printf '%s: &%s [%s]\n' "$n" "$n" "$(printf "*$prev,%.0s" 1 2 3 4 5 6 7 8 | sed 's/$/'"*$prev"'/')"
        prev=$n
    done
}
rep() { head -c "$2" /dev/zero | tr '\0' "$1"; }
deep() { rep '[' "$1"; rep ']' "$1"; echo; }
flat_aliases() {
    echo 'x: &x 1'
    for i in $(seq 1 "$1"); do echo "k$i: *x"; done
}

chart() { # chart DIR: a minimal chart
    mkdir -p "$1/templates"
    printf 'apiVersion: v2\nname: c\nversion: 0.1.0\n' >"$1/Chart.yaml"
}
kust() { # kust DIR: a kustomization with resource bad.yaml
    mkdir -p "$1"
    printf 'resources:\n- bad.yaml\n' >"$1/kustomization.yaml"
}

# probe NAME EXPECTED_EXIT FILE_NAMED LIMIT_S -- COMMAND...
probe() {
    local name=$1 want=$2 file=$3 limit=$4
    shift 5
    local err=$work/err.$name stat=$work/time.$name
    (
        ulimit -v 4000000
        /usr/bin/time -o "$stat" -f '%e %U %S %M' timeout -s KILL 30 "$@" >"$work/out.$name" 2>"$err"
    )
    local code
    code=$(grep -oE 'status [0-9]+|signal [0-9]+' "$stat" | tr -d 'a-z ' || true)
    grep -q signal "$stat" && code=sig$code
    code=${code:-0}
    read -r wall user sys rss < <(tail -1 "$stat")
    local cpu mb first verdict=ok
    cpu=$(echo "$user + $sys" | bc)
    mb=$((rss / 1024))
    first=$(grep -v '^Command exited' "$err" | head -1 | cut -c1-150)
    [ "$code" = "$want" ] || verdict=FAIL
    # CPU seconds: wall time on the shared 2-core build machine mostly
    # measures the other jobs (see `uptime` printed first).
    [ "$(echo "$cpu < $limit" | bc)" = 1 ] || verdict=FAIL
    [ "$mb" -lt 200 ] || verdict=FAIL
    if [ "$want" != 0 ] && ! grep -q -- "$file" "$err"; then verdict=FAIL; fi
    if [ "$want" != 0 ] && [ -s "$work/out.$name" ]; then verdict=FAIL; fi
    printf '%-34s exit %-3s %5.2f s  cpu %5.2f s  %4d MB  %-4s %s\n' \
        "$name" "$code" "$wall" "$cpu" "$mb" "$verdict" "${first:-(renders)}"
}

echo "# $(uptime)"
H=("$hydrate" helm template rel c)
K=("$hydrate" kustomize build)
from_yaml='{{ $v := fromYaml (.Files.Get "data.yaml") }}{{ if $v.Error }}{{ fail $v.Error }}{{ end }}'

# Alias bombs through every YAML entry point.
d=$work/k-bomb && kust "$d" && bomb >"$d/bad.yaml"
probe alias-bomb:resource 1 bad.yaml 2 -- "${K[@]}" "$d"
d=$work/k-patch && mkdir -p "$d" && bomb >"$d/patch.yaml" &&
    printf 'resources:\n- cm.yaml\npatches:\n- path: patch.yaml\n' >"$d/kustomization.yaml" &&
    printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n' >"$d/cm.yaml"
probe alias-bomb:patch 1 patch.yaml 2 -- "${K[@]}" "$d"
d=$work/h-values && chart "$d/c" && bomb >"$d/c/values.yaml"
probe alias-bomb:values.yaml 1 values.yaml 2 -- bash -c 'cd "$0" && exec "$@"' "$d" "${H[@]}"
d=$work/h-chart && chart "$d/c" && bomb >>"$d/c/Chart.yaml"
probe alias-bomb:Chart.yaml 1 Chart.yaml 2 -- bash -c 'cd "$0" && exec "$@"' "$d" "${H[@]}"
d=$work/env && mkdir -p "$d/environments" && bomb >"$d/environments/dev.yaml"
probe alias-bomb:environment 2 dev.yaml 2 -- "$hydrate" render --root "$d"
d=$work/h-fromyaml && chart "$d/c" && bomb >"$d/c/data.yaml" && echo "$from_yaml" >"$d/c/templates/cm.yaml"
probe alias-bomb:fromYaml 1 cm.yaml 2 -- bash -c 'cd "$0" && exec "$@"' "$d" "${H[@]}"
d=$work/h-flat && chart "$d/c" && flat_aliases 20000 >"$d/c/values.yaml" && echo 'x: {{ .Values.k20000 }}' >"$d/c/templates/cm.yaml"
probe flat-aliases-20000:values.yaml 0 - 2 -- bash -c 'cd "$0" && exec "$@"' "$d" "${H[@]}"

# Deep nesting.
d=$work/h-if && chart "$d/c" && { for _ in $(seq 5000); do printf '{{ if true }}'; done; printf 'x: 1\n'; for _ in $(seq 5000); do printf '{{ end }}'; done; } >"$d/c/templates/a.yaml"
probe if-nested-5000 0 - 2 -- bash -c 'cd "$0" && exec "$@"' "$d" "${H[@]}"
d=$work/h-json && chart "$d/c" && deep 40000 >"$d/c/data.json" && echo '{{ $v := mustFromJson (.Files.Get "data.json") }}' >"$d/c/templates/cm.yaml"
probe fromJson-40000-deep 1 cm.yaml 2 -- bash -c 'cd "$0" && exec "$@"' "$d" "${H[@]}"
d=$work/h-yaml && chart "$d/c" && deep 40000 >"$d/c/data.yaml" && echo "$from_yaml" >"$d/c/templates/cm.yaml"
probe fromYaml-40000-deep 1 cm.yaml 2 -- bash -c 'cd "$0" && exec "$@"' "$d" "${H[@]}"
d=$work/k-deep && kust "$d" && deep 40000 >"$d/bad.yaml"
probe resource-40000-deep 1 bad.yaml 2 -- "${K[@]}" "$d"
d=$work/h-values-deep && chart "$d/c" && deep 40000 >"$d/c/values.yaml"
probe values-40000-deep 1 values.yaml 2 -- bash -c 'cd "$0" && exec "$@"' "$d" "${H[@]}"
d=$work/h-tpl && chart "$d/c" && echo 'x: "{{ tpl .Values.x . }}"' >"$d/c/values.yaml" && echo '{{ tpl .Values.x . }}' >"$d/c/templates/a.yaml"
probe tpl-self-recursion 1 a.yaml 2 -- bash -c 'cd "$0" && exec "$@"' "$d" "${H[@]}"
paren() { printf 'x: {{ %s1%s }}\n' "$(rep '(' "$1")" "$(rep ')' "$1")"; }
d=$work/h-paren1 && chart "$d/c" && paren 100000 >"$d/c/templates/a.yaml"
probe parens-100000 0 - 5 -- bash -c 'cd "$0" && exec "$@"' "$d" "${H[@]}"
d=$work/h-paren2 && chart "$d/c" && paren 100001 >"$d/c/templates/a.yaml"
probe parens-100001 1 a.yaml 2 -- bash -c 'cd "$0" && exec "$@"' "$d" "${H[@]}"
d=$work/h-paren4 && chart "$d/c" && paren 10001 >"$d/c/templates/a.yaml"
probe parens-10001:helm4 1 a.yaml 2 -- bash -c 'cd "$0" && exec "$@" --helm-version 4' "$d" "${H[@]}"
toml() { printf '{{- $s := printf "a = %%s1%%s" (repeat %d "[") (repeat %d "]") }}x: {{ fromToml $s | %s }}\n' "$1" "$1" "$2"; }
d=$work/h-toml1 && chart "$d/c" && toml 50000 'toJson | sha256sum' >"$d/c/templates/a.yaml"
probe fromToml-50000-deep 0 - 2 -- bash -c 'cd "$0" && exec "$@"' "$d" "${H[@]}"
d=$work/h-toml2 && chart "$d/c" && toml 100001 'len' >"$d/c/templates/a.yaml"
probe fromToml-100001-deep 1 a.yaml 2 -- bash -c 'cd "$0" && exec "$@"' "$d" "${H[@]}"
d=$work/h-tmpl && chart "$d/c" && echo '{{- define "r" }}{{ if gt . 0 }}{{ template "r" (sub . 1) }}{{ end }}{{ end }}x: a{{ template "r" 100000 }}' >"$d/c/templates/a.yaml"
probe template-recursion-100001 1 a.yaml 5 -- bash -c 'cd "$0" && exec "$@"' "$d" "${H[@]}"
