#!/usr/bin/env bash
# Generates one large kustomization (issue 16, "linear growth"): N ConfigMaps
# plus one Deployment per 100 ConfigMaps that refers to each of them
# (envFrom, volumes: name references), through namePrefix, namespace,
# commonLabels and two patches with target selectors (a label selector and a
# kind + name pattern). With --time, builds it with hydrate (and, with
# --oracle, with kubectl kustomize) and prints the wall time.
#
#   benches/large_kustomization.sh DIR N [--time] [--oracle]
#
# Example: for n in 1000 5000 20000; do
#            benches/large_kustomization.sh /tmp/large-$n $n --time; done
set -euo pipefail
dir=${1:?usage: large_kustomization.sh DIR N [--time] [--oracle]}
n=${2:?usage: large_kustomization.sh DIR N [--time] [--oracle]}
shift 2
mkdir -p "$dir"
python3 - "$dir" "$n" <<'PY'
import os, sys
d, n = sys.argv[1], int(sys.argv[2])
deps = max(1, n // 100)
with open(os.path.join(d, "configmaps.yaml"), "w") as f:
    for i in range(n):
        tier = "hot" if i % 10 == 0 else "cold"
        f.write(f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i:05d}\n"
                f"  labels:\n    tier: {tier}\ndata:\n  key: value-{i}\n  index: \"{i}\"\n---\n")
with open(os.path.join(d, "deployments.yaml"), "w") as f:
    for j in range(deps):
        refs = range(j * 100, min(n, (j + 1) * 100))
        f.write(f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-{j:04d}\n"
                f"spec:\n  selector:\n    matchLabels:\n      app: app-{j:04d}\n"
                f"  template:\n    metadata:\n      labels:\n        app: app-{j:04d}\n"
                f"    spec:\n      containers:\n      - name: main\n        image: nginx:1.25\n"
                f"        envFrom:\n")
        for i in refs:
            f.write(f"        - configMapRef:\n            name: cm-{i:05d}\n")
        f.write("      volumes:\n")
        for i in refs:
            f.write(f"      - name: v{i:05d}\n        configMap:\n          name: cm-{i:05d}\n")
        f.write("---\n")
with open(os.path.join(d, "kustomization.yaml"), "w") as f:
    f.write("""apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namePrefix: big-
namespace: large
commonLabels:
  team: platform
resources:
- configmaps.yaml
- deployments.yaml
patches:
- target:
    kind: ConfigMap
    labelSelector: tier=hot
  patch: |-
    - op: add
      path: /metadata/annotations
      value:
        cache: "true"
- target:
    kind: Deployment
    name: app-00.*
  patch: |-
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: not-used
    spec:
      replicas: 2
""")
PY
for arg in "$@"; do
  case $arg in
    --time)
      hydrate=${HYDRATE:-$(dirname "$0")/../target/release/hydrate}
      start=$(date +%s%N)
      "$hydrate" kustomize build "$dir" >"$dir.hydrate.yaml"
      end=$(date +%s%N)
      echo "large kustomization: $n ConfigMaps + $(( n / 100 > 0 ? n / 100 : 1 )) Deployments: hydrate $(( (end - start) / 1000000 )) ms, $(wc -c <"$dir.hydrate.yaml") bytes"
      ;;
    --oracle)
      kubectl=${KUBECTL:-$HOME/.cache/oracles/kubectl}
      start=$(date +%s%N)
      "$kubectl" kustomize "$dir" >"$dir.kubectl.yaml"
      end=$(date +%s%N)
      echo "large kustomization: $n: kubectl kustomize $(( (end - start) / 1000000 )) ms; identical: $(cmp -s "$dir.hydrate.yaml" "$dir.kubectl.yaml" && echo yes || echo no)"
      ;;
  esac
done
