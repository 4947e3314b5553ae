#!/usr/bin/env python3
"""Turn the environment descriptors ../shared/bench/gen writes
(environments/<env>.yaml: data only) into hydrate environment files in
place: every overlay as a kustomize app, every chart as a helm app named
<chart>-chart. Python 3 standard library only.

    benches/bench_envs.py REPO
"""
import json
import os
import re
import sys

FLOW = re.compile(r"^- \{(.*)\}\s*$")


def flow_items(line):
    m = FLOW.match(line)
    if not m:
        return None
    out = {}
    for part in m.group(1).split(", "):
        k, _, v = part.partition(": ")
        out[k.strip()] = v.strip().strip('"')
    return out


def convert(path):
    name, section, apps, charts = None, None, [], []
    with open(path) as f:
        for line in f:
            if line.startswith("name: "):
                name = line.split(":", 1)[1].strip().strip('"')
            elif line.startswith("apps:"):
                section = apps
            elif line.startswith("charts:"):
                section = charts
            elif section is not None:
                item = flow_items(line)
                if item is not None:
                    section.append(item)
                elif line.strip() and not line.startswith(" "):
                    section = None
    if name is None:
        return False
    out = [f"name: {json.dumps(name)}", f"output: {{dir: {json.dumps('rendered/' + name)}}}", "apps:"]
    for a in apps:
        out.append(f"  - {{name: {json.dumps(a['name'])}, kustomize: {json.dumps(a['overlay'])}}}")
    for c in charts:
        out.append(
            f"  - {{name: {json.dumps(c['name'] + '-chart')}, helm: {{chart: {json.dumps(c['chart'])}, "
            f"releaseName: {json.dumps(c['release'])}, namespace: {json.dumps(c['namespace'])}, "
            f"valueFiles: [{json.dumps(c['values'])}]}}}}"
        )
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    return True


def main():
    root = sys.argv[1]
    envs = os.path.join(root, "environments")
    for name in sorted(os.listdir(envs)):
        p = os.path.join(envs, name)
        if name.endswith(".yaml") and os.path.isfile(p):
            with open(p) as f:
                if "overlayPath:" not in f.read():
                    continue
            convert(p)


if __name__ == "__main__":
    main()
