#!/usr/bin/env python3
"""YAML-core round trip against kustomize: for every non-empty expected.yaml
of the kustomize conformance corpus (cases without --reorder none), build a
directory holding that file and `resources: [expected.yaml]` with hydrate and
with `kubectl kustomize` (v5.7.1), and compare the bytes.

    tests/scripts/roundtrip.py [--cases ../shared/conformance/kustomize/cases]
                               [--hydrate target/release/hydrate] [--show N]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

here = os.path.dirname(os.path.abspath(__file__))
repo = os.path.dirname(os.path.dirname(here))
ap = argparse.ArgumentParser()
ap.add_argument("--cases", default=os.path.join(repo, "..", "shared", "conformance", "kustomize", "cases"))
ap.add_argument("--hydrate", default=os.path.join(repo, "target", "release", "hydrate"))
ap.add_argument("--kubectl", default=os.path.expanduser("~/.cache/oracles/kubectl"))
ap.add_argument("--show", type=int, default=5)
args = ap.parse_args()

cases = []
for name in sorted(os.listdir(args.cases)):
    d = os.path.join(args.cases, name)
    exp = os.path.join(d, "expected.yaml")
    if not os.path.isfile(exp) or os.path.getsize(exp) == 0:
        continue
    flags = json.load(open(os.path.join(d, "case.json"))).get("flags", [])
    if "--reorder" in flags:
        continue
    cases.append((name, exp))

work = tempfile.mkdtemp(prefix="hydrate-roundtrip-")


def run(case):
    name, exp = case
    d = os.path.join(work, name)
    os.makedirs(d)
    shutil.copy(exp, os.path.join(d, "expected.yaml"))
    with open(os.path.join(d, "kustomization.yaml"), "w") as f:
        f.write("resources:\n- expected.yaml\n")
    want = subprocess.run([args.kubectl, "kustomize", d], capture_output=True)
    got = subprocess.run([args.hydrate, "kustomize", "build", d], capture_output=True)
    ok = want.returncode == got.returncode and want.stdout == got.stdout
    return name, ok, want, got, open(exp, "rb").read() == want.stdout


with ThreadPoolExecutor(os.cpu_count() or 2) as pool:
    results = list(pool.map(run, cases))
same = sum(1 for r in results if r[1])
identity = sum(1 for r in results if r[4])
shown = 0
for name, ok, want, got, _ in results:
    if ok or shown >= args.show:
        continue
    shown += 1
    print(f"--- {name}: oracle rc={want.returncode} hydrate rc={got.returncode}")
    a, b = want.stdout.decode(errors="replace").splitlines(), got.stdout.decode(errors="replace").splitlines()
    import difflib
    for line in list(difflib.unified_diff(a, b, "kustomize", "hydrate", lineterm=""))[:20]:
        print(line)
    if got.stderr:
        print(got.stderr.decode(errors="replace")[:300])
shutil.rmtree(work)
print(f"roundtrip: {same} of {len(results)} byte-identical to kubectl kustomize "
      f"({100.0 * same / max(len(results), 1):.1f}%); {identity} are the file itself")
sys.exit(0 if same == len(results) else 1)
