#!/bin/sh
# Seeds fuzz/corpus/<target> from testdata/ (run from the repository root).
set -eu
c=fuzz/corpus
mkdir -p $c/yaml_roundtrip $c/gotmpl $c/kustomization $c/chart_tgz $c/json_patch $c/strategic_merge
i=0
for f in $(find testdata -name '*.yaml' | sort); do
  i=$((i+1)); cp "$f" $c/yaml_roundtrip/seed$i
  case "$f" in */kustomization.yaml) cp "$f" $c/kustomization/seed$i;; esac
  case "$f" in */templates/*) cp "$f" $c/gotmpl/seed$i;; esac
  case "$f" in */testdata/kustomize/*) cp "$f" $c/strategic_merge/seed$i;; esac
done
for f in $(find testdata -name '*.json' | sort); do i=$((i+1)); cp "$f" $c/json_patch/seed$i; done
printf '[{"op":"add","path":"/spec/replicas","value":2}]' > $c/json_patch/seed-add
for d in $(find testdata -name Chart.yaml -exec dirname {} \; | sort); do
  i=$((i+1)); tar -czf $c/chart_tgz/seed$i -C "$(dirname "$d")" "$(basename "$d")"
done
