#!/usr/bin/env python3
"""The layering of src/, checked on #include lines.

Each folder of src/ is a layer and may include headers of its own folder and
of the layers below it only (docs/ARCHITECTURE.md, "Layers"). The build
checks calls the same way (a program linked per layer from that layer and
the ones below it); this checks what the linker cannot see: headers, whose
inline functions and macros are dependencies too.

usage: check_includes.py SRC_DIR LAYER... [--extra FOLDER=LAYER,LAYER...]
            [--doc ARCHITECTURE.md]

LAYERs are given bottom first. --extra names a folder outside the library
(the launcher) and the layers it may include. --doc checks that the layer
table of the architecture document has one row per folder. Exits 1 and
names every offending line when a rule is broken."""

import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def parse_args(argv):
    layers, extra, doc = [], {}, None
    it = iter(argv)
    src = next(it)
    for a in it:
        if a == "--extra":
            folder, allowed = next(it).split("=", 1)
            extra[folder] = set(x for x in allowed.split(",") if x)
        elif a == "--doc":
            doc = next(it)
        else:
            layers.append(a)
    return src, layers, extra, doc


def check(src, layers, extra, doc):
    rank = {name: i for i, name in enumerate(layers)}
    problems = []
    folders = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))
    for folder in folders:
        if folder not in rank and folder not in extra:
            problems.append(f"src/{folder}/ is in no layer: add it to LM_LAYERS "
                            "(CMakeLists.txt) and to the table in docs/ARCHITECTURE.md")
    edges = set()
    for folder in folders:
        for dirpath, _, files in os.walk(os.path.join(src, folder)):
            for f in sorted(files):
                if not f.endswith((".c", ".h")):
                    continue
                path = os.path.join(dirpath, f)
                with open(path, encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
                for m in INCLUDE.finditer(text):
                    inc = m.group(1)
                    if "/" not in inc:
                        continue  # same folder (or a public header such as mpi.h)
                    target = inc.split("/", 1)[0]
                    if not os.path.isdir(os.path.join(src, target)) or target == folder:
                        continue
                    edges.add((folder, target))
                    line = text.count("\n", 0, m.start()) + 1
                    rel = os.path.relpath(path, os.path.dirname(src))
                    if folder in extra:
                        ok = target in extra[folder]
                    else:
                        ok = target in rank and folder in rank and rank[target] < rank[folder]
                    if not ok:
                        problems.append(f"{rel}:{line}: includes {inc}, but {folder} may not use {target}")
    if doc:
        with open(doc, encoding="utf-8") as fh:
            text = fh.read()
        rows = set(re.findall(r"^\|\s*`src/([a-z0-9_]+)/`", text, re.M))
        for folder in folders:
            if folder not in rows:
                problems.append(f"{doc}: the layer table has no row for src/{folder}/")
        for folder in sorted(rows - set(folders)):
            problems.append(f"{doc}: the layer table names src/{folder}/, which does not exist")
    return problems, edges


def main():
    src, layers, extra, doc = parse_args(sys.argv[1:])
    problems, edges = check(src, layers, extra, doc)
    for p in problems:
        print(p)
    if problems:
        print(f"FAIL layering: {len(problems)} problem(s)")
        return 1
    print(f"layering: {len(edges)} folder dependencies, all downward ({' < '.join(layers)})")
    print("PASS layering")
    return 0


if __name__ == "__main__":
    sys.exit(main())
