"""Add/replace OUR entries (matched by "name") in models/manifest.json, preserving everything else
(a new default entry takes the default flag from the other models of its kind).

  python3 -m training.voxkey_train.update_manifest entry1.json [entry2.json ...]
"""
from __future__ import annotations

import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MANIFEST = os.path.join(ROOT, "models", "manifest.json")


def update(entries, path=MANIFEST):
    if os.path.exists(path):
        with open(path) as f:
            doc = json.load(f)
    else:
        doc = {"models": []}
    models = doc.setdefault("models", [])
    for e in entries:
        if e.get("default"):  # one default per kind: the engine loads it
            for m in models:
                if isinstance(m, dict) and m.get("kind") == e.get("kind") and m.get("name") != e["name"]:
                    m["default"] = False
        for k, m in enumerate(models):
            if isinstance(m, dict) and m.get("name") == e["name"]:
                models[k] = e
                break
        else:
            models.append(e)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=2, ensure_ascii=False)
        f.write("\n")
    os.replace(tmp, path)


if __name__ == "__main__":
    es = []
    for p in sys.argv[1:]:
        with open(p) as f:
            es.append(json.load(f))
    update(es)
