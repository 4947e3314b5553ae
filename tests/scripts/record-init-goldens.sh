#!/usr/bin/env bash
# Records testdata/init/<shape>/expected/<env>/<app>.yaml with the real tools:
# `hydrate init` proposes the environments of testdata/init/<shape>/repo,
# `hydrate list --output json` says which directory or chart and values each
# app renders, and kubectl kustomize (v5.7.1) or helm template (v3.17, with
# Argo CD's --include-crds) prints what hydrate render must write for it.
#
#   tests/scripts/record-init-goldens.sh [SHAPE...]   (default: every shape)
set -euo pipefail
cd "$(dirname "$0")/../.."
kubectl=${KUBECTL:-$HOME/.cache/oracles/kubectl}
helm=${HELM:-$HOME/.cache/oracles/helm3}
hydrate=${HYDRATE:-target/debug/hydrate}
[ -x "$hydrate" ] || cargo build -q
shapes=("$@")
[ ${#shapes[@]} -gt 0 ] || shapes=($(ls testdata/init))
for shape in "${shapes[@]}"; do
  work=$(mktemp -d)
  cp -r "testdata/init/$shape/repo" "$work/repo"
  (cd "$work/repo" && "$OLDPWD/$hydrate" init >/dev/null)
  out="testdata/init/$shape/expected"
  rm -rf "$out"
  "$hydrate" list --root "$work/repo" --output json | python3 -c '
import json, subprocess, sys, os
repo, out, kubectl, helm = sys.argv[1:5]
for env in json.load(sys.stdin)["environments"]:
    for app in env["apps"]:
        src = app["source"]
        if "kustomize" in src:
            cmd = [kubectl, "kustomize", src["kustomize"]]
        else:
            h = src["helm"]
            cmd = [helm, "template", h["releaseName"], h["chart"], "--include-crds",
                   "--namespace", h["namespace"] or "default"]
            for v in h["valueFiles"]:
                cmd += ["-f", v]
        printed = subprocess.run(cmd, cwd=repo, check=True, capture_output=True).stdout
        path = os.path.join(out, env["name"], app["name"] + ".yaml")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        open(path, "wb").write(printed)
        print(path, "<-", " ".join(os.path.basename(c) if i == 0 else c for i, c in enumerate(cmd)))
' "$work/repo" "$out" "$kubectl" "$helm"
  rm -rf "$work"
done
