#!/usr/bin/env python3
"""Compares `hydrate validate` with kubernetes-validate (PyPI), object by
object, on a repository hydrate renders.

    pip install kubernetes-validate
    python3 schemas/validation/compare.py HYDRATE ROOT

HYDRATE is the hydrate binary; ROOT a repository with environments/ that
may be written: it renders ROOT (`hydrate render --to dir` writes
rendered/<env>/<app>/manifest.yaml under ROOT), runs `hydrate validate --output json`, then
validates every rendered object with kubernetes_validate.validate(...,
strict=True) for the environment's kubeVersion. An object is invalid for
hydrate when it has an error of a schema rule (removed APIs and missing
schemas are counted apart: kubernetes-validate has no table of removed APIs
and reports a missing schema as its own error). Prints the agreement count
and every disagreement with both tools' messages.
"""
import collections
import json
import os
import subprocess
import sys

import functools

import kubernetes_validate
import kubernetes_validate.utils
import yaml

# kubernetes-validate reads and parses the schema files on every call; the
# same files, read once.
kubernetes_validate.utils.schema_contents = functools.lru_cache(maxsize=None)(
    kubernetes_validate.utils.schema_contents)

SCHEMA_RULES = {"unknown-field", "wrong-type", "required", "enum", "duplicate-key", "value"}


def main():
    hydrate, root = sys.argv[1], sys.argv[2]
    subprocess.run([hydrate, "render", "--root", root, "--no-cache", "--to", "dir"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out = subprocess.run([hydrate, "validate", "--root", root, "--no-cache", "--output", "json"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    report = json.loads(out.stdout)
    ours = collections.defaultdict(list)
    for f in report["findings"]:
        key = (f["env"], f["app"], f["apiVersion"], f["kind"], f["namespace"], f["name"])
        ours[key].append(f)
    agree = disagree = 0
    skipped = collections.Counter()
    notes = []
    for env, conf in sorted(report["environments"].items()):
        version = conf["kubeVersion"]
        base = os.path.join(root, "rendered", env)
        for app in sorted(os.listdir(base)) if os.path.isdir(base) else []:
            path = os.path.join(base, app, "manifest.yaml")
            if not os.path.isfile(path):
                continue
            with open(path) as fh:
                docs = [d for d in yaml.safe_load_all(fh) if d]
            for d in docs:
                meta = d.get("metadata") or {}
                key = (env, app, d.get("apiVersion", ""), d.get("kind", ""),
                       meta.get("namespace", "") or "", meta.get("name", ""))
                mine = ours.get(key, [])
                rules = {f["rule"] for f in mine if f["severity"] == "error"}
                if rules & {"removed-api"} or any(f["rule"] == "no-schema" for f in mine):
                    skipped["removed API or no schema (hydrate)"] += 1
                    continue
                h_invalid = bool(rules & SCHEMA_RULES)
                try:
                    kubernetes_validate.validate(d, version, strict=True)
                    k_invalid, k_msg = False, ""
                except kubernetes_validate.SchemaNotFoundError:
                    skipped["no schema (kubernetes-validate)"] += 1
                    continue
                except kubernetes_validate.ValidationError as e:
                    k_invalid, k_msg = True, f"{'.'.join(str(p) for p in e.path)}: {e.message}"
                if h_invalid == k_invalid:
                    agree += 1
                else:
                    disagree += 1
                    h_msg = "; ".join(f"{f['path']}: {f['message']}" for f in mine) or "valid"
                    notes.append(f"{env}/{app} {key[3]} {key[5]}: hydrate: {h_msg} | "
                                 f"kubernetes-validate: {k_msg or 'valid'}")
    total = agree + disagree
    print(f"agreement: {agree} of {total} objects "
          f"(kubernetes-validate {getattr(kubernetes_validate, '__version__', '?')}, strict)")
    for k, n in sorted(skipped.items()):
        print(f"not compared: {n} ({k})")
    for n in notes:
        print("disagree:", n)


if __name__ == "__main__":
    main()
