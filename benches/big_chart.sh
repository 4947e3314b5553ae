#!/usr/bin/env bash
# `hydrate helm template` against helm 3 on big charts: wall and CPU
# (user + sys, the minimum of several runs) of both, their ratio, and
# whether the outputs are byte-identical.
#
#   benches/big_chart.sh [-n RUNS] [CHART_DIR[=FLAGS] ...]
#
# Real charts are not vendored: pass unpacked ones (with their
# dependencies under charts/), e.g. argo-cd or kube-prometheus-stack with
# `=--set grafana.adminPassword=x` to pin a random value. Without
# arguments it generates an umbrella chart: N_SUB subcharts (default 12),
# each with deployments, services, config maps, helpers called through
# include, tpl, toYaml and nested ranges, so the template engine and the
# output path dominate, not start-up. Needs target/release/hydrate (or
# $HYDRATE) and
# ~/.cache/oracles/helm3 (without it, only hydrate is timed).
set -euo pipefail
cd "$(dirname "$0")/.."
hydrate=${HYDRATE:-$PWD/target/release/hydrate}
helm3=${HELM3:-$HOME/.cache/oracles/helm3}
runs=5
if [ "${1:-}" = "-n" ]; then runs=$2; shift 2; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# gen_umbrella DIR: the generated umbrella chart.
gen_umbrella() {
  local top=$1 n=${N_SUB:-12} i
  mkdir -p "$top/templates"
  printf 'apiVersion: v2\nname: umbrella\nversion: 1.0.0\ndependencies:\n' >"$top/Chart.yaml"
  printf 'global:\n  registry: registry.example.com\n  labels: {team: platform, tier: backend}\n' >"$top/values.yaml"
  for i in $(seq 1 "$n"); do
    local s=svc$i d=$top/charts/svc$i
    printf '  - name: %s\n    version: 1.0.0\n    condition: %s.enabled\n' "$s" "$s" >>"$top/Chart.yaml"
    printf '%s:\n  enabled: true\n' "$s" >>"$top/values.yaml"
    mkdir -p "$d/templates"
    printf 'apiVersion: v2\nname: %s\nversion: 1.0.%s\n' "$s" "$i" >"$d/Chart.yaml"
    {
      printf 'replicas: %s\nimage: {repository: app/%s, tag: "1.%s"}\n' "$((i % 3 + 1))" "$s" "$i"
      printf 'nameTemplate: "{{ .Release.Name }}-{{ .Chart.Name }}"\n'
      printf 'components:\n'
      for c in api worker cron web; do
        printf '  - name: %s\n    port: %s\n    env:\n' "$c" "$((8000 + i))"
        for e in $(seq 1 12); do printf '      VAR_%s: "value-%s-{{ .Release.Namespace }}"\n' "$e" "$e"; done
        printf '    resources: {limits: {cpu: 500m, memory: 256Mi}, requests: {cpu: 100m, memory: 128Mi}}\n'
      done
      printf 'config:\n'
      for e in $(seq 1 40); do printf '  key%s: "setting %s of %s"\n' "$e" "$e" "$s"; done
    } >"$d/values.yaml"
    cat >"$d/templates/_helpers.tpl" <<'TPL'
{{- define "svc.fullname" -}}{{ tpl .Values.nameTemplate . | trunc 63 | trimSuffix "-" }}{{- end -}}
{{- define "svc.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- with .Values.global.labels }}
{{ toYaml . }}
{{- end }}
{{- end -}}
TPL
    cat >"$d/templates/workloads.yaml" <<'TPL'
{{- $root := . }}
{{- range $c := .Values.components }}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "svc.fullname" $root }}-{{ $c.name }}
  labels:
    {{- include "svc.labels" $root | nindent 4 }}
spec:
  replicas: {{ $root.Values.replicas }}
  selector:
    matchLabels:
      {{- include "svc.labels" $root | nindent 6 }}
  template:
    metadata:
      annotations:
        checksum/config: {{ toYaml $root.Values.config | sha256sum }}
    spec:
      containers:
        - name: {{ $c.name }}
          image: "{{ $root.Values.global.registry }}/{{ $root.Values.image.repository }}:{{ $root.Values.image.tag }}"
          ports:
            - containerPort: {{ $c.port }}
          env:
            {{- range $k, $v := $c.env }}
            - name: {{ $k }}
              value: {{ tpl $v $root | quote }}
            {{- end }}
          resources:
            {{- toYaml $c.resources | nindent 12 }}
---
apiVersion: v1
kind: Service
metadata:
  name: {{ include "svc.fullname" $root }}-{{ $c.name }}
  labels:
    {{- include "svc.labels" $root | nindent 4 }}
spec:
  ports:
    - port: {{ $c.port }}
      targetPort: {{ $c.port }}
{{- end }}
TPL
    cat >"$d/templates/configmap.yaml" <<'TPL'
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "svc.fullname" . }}
  labels:
    {{- include "svc.labels" . | nindent 4 }}
data:
  {{- toYaml .Values.config | nindent 2 }}
  merged.json: {{ mergeOverwrite (dict "a" 1) (dict "b" .Values.config) | toJson | quote }}
TPL
  done
}

# min_time OUT CMD...: runs CMD $runs times (stdout to OUT); prints the
# minimum "wall cpu" pair. Timed to the microsecond by python3 (wall by
# its monotonic clock, CPU from the children's rusage) where it is
# installed: GNU time's 10 ms steps made a 30 ms render anything from
# 0.09x to 0.18x of helm. Without python3, GNU time.
min_time() {
  local out=$1 i t; shift
  if command -v python3 >/dev/null; then
    python3 - "$runs" "$out" "$@" <<'PY'
import resource, subprocess, sys, time
runs, out, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
wall = cpu = None
for _ in range(runs):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with open(out, "wb") as f:
        subprocess.run(cmd, stdout=f, stderr=subprocess.DEVNULL)
    w = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    c = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    wall = w if wall is None else min(wall, w)
    cpu = c if cpu is None else min(cpu, c)
print(f"{wall:.4f} {cpu:.4f}")
PY
    return
  fi
  for i in $(seq "$runs"); do
    /usr/bin/time -f '%e %U %S' -o "$work/t" "$@" >"$out" 2>/dev/null || true
    t=$(tail -1 "$work/t")
    echo "$t"
  done | awk '{w=$1; c=$2+$3; if (NR==1||w<mw) mw=w; if (NR==1||c<mc) mc=c} END {printf "%.3f %.3f", mw, mc}'
}

charts=("$@")
if [ ${#charts[@]} -eq 0 ]; then
  gen_umbrella "$work/umbrella"
  charts=("$work/umbrella")
fi
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
for spec in "${charts[@]}"; do
  dir=${spec%%=*}
  flags=()
  [ "$spec" != "$dir" ] && read -r -a flags <<<"${spec#*=}"
  name=$(basename "$dir")
  read -r hw hc <<<"$(min_time "$work/h.out" "$hydrate" helm template rel "$dir" "${flags[@]}")"
  size=$(wc -c <"$work/h.out")
  if [ -x "$helm3" ]; then
    read -r ow oc <<<"$(min_time "$work/o.out" "$helm3" template rel "$dir" "${flags[@]}")"
    same=no; cmp -s "$work/h.out" "$work/o.out" && same=yes
    awk -v n="$name" -v s="$size" -v hw="$hw" -v hc="$hc" -v ow="$ow" -v oc="$oc" -v same="$same" 'BEGIN {
      printf "%s (%d bytes): hydrate %.4f s wall %.4f s CPU; helm3 %.4f s wall %.4f s CPU; ratio wall %.3fx CPU %.3fx; byte-identical: %s\n",
        n, s, hw, hc, ow, oc, (ow > 0 ? hw / ow : 0), (oc > 0 ? hc / oc : 0), same }'
  else
    echo "$name ($size bytes): hydrate $hw s wall $hc s CPU; helm3 not installed"
  fi
done
