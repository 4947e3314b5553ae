#!/bin/sh
# Seeds fuzz/corpus/<target> from testdata/ (run from the repository root;
# the corpora are git-ignored, see fuzz/.gitignore).
set -eu
c=fuzz/corpus
mkdir -p $c/yaml_roundtrip $c/gotmpl $c/kustomization $c/chart_tgz $c/json_patch $c/strategic_merge
i=0
# Every YAML file for the round trip; kustomizations for the loader; the
# kustomize cases' resources and patches for strategic merge.
for f in $(find testdata -name '*.yaml' | sort); do
  i=$((i+1)); cp "$f" $c/yaml_roundtrip/seed$i
  case "$f" in */kustomization.yaml) cp "$f" $c/kustomization/seed$i;; esac
  case "$f" in testdata/kustomize/*/input/*) cp "$f" $c/strategic_merge/seed$i;; esac
done
# Chart templates of every extension (.yaml, .tpl, .txt) for Go templates.
for f in $(find testdata -path '*/templates/*' -type f | sort); do
  i=$((i+1)); cp "$f" $c/gotmpl/seed$i
done
# JSON 6902 patches: .json files and YAML files holding `op:` entries.
for f in $(find testdata -name '*.json' | sort) $(grep -rlE '^\s*(- )?"?op"?\s*:' testdata | sort); do
  i=$((i+1)); cp "$f" $c/json_patch/seed$i
done
for op in '"add","path":"/spec/replicas","value":2' '"remove","path":"/spec/template/spec/containers/0"' \
  '"replace","path":"/metadata/name","value":"e"' '"move","from":"/metadata/name","path":"/metadata/x"' \
  '"copy","from":"/spec","path":"/spec/template/y"' '"test","path":"/kind","value":"Deployment"' \
  '"add","path":"/spec/template/spec/containers/-","value":{"name":"s"}'; do
  i=$((i+1)); printf '[{"op":%s}]' "$op" > $c/json_patch/seed$i
done
# Packaged charts: every directory holding a Chart.yaml, as .tgz bytes.
for d in $(find testdata -name Chart.yaml -exec dirname {} \; | sort); do
  i=$((i+1)); tar -czf $c/chart_tgz/seed$i -C "$(dirname "$d")" "$(basename "$d")"
done
