#!/usr/bin/env python3
"""ctest lint.function-length: no function of the project's own code is longer than its room allows.

The viewer's drawing code (viewer/views/: a frame of ImGui calls reads top to bottom) may take 150
lines; every other function 80 (docs/architecture.md, "Small functions"). Lengths are lizard's:
the lines from a function's signature to its closing brace, comments included.

usage: function_length.py SOURCE_DIR [ROOT...]      (default roots: the rooms of the project)
Exit 0 within limits, 1 naming every function over its limit, 77 without lizard (ctest: skipped).
"""
import os
import sys

try:
    import lizard
except ImportError:   # scripts/install-deps.sh installs it into the tooling venv
    print("function_length: the Python package lizard is missing: SKIP")
    sys.exit(77)

ROOMS = ["runtime", "tracer", "analysis", "workloads", "recording", "lessons", "cli", "viewer"]
DRAWING = ("viewer/views/",)
LIMIT, DRAWING_LIMIT = 80, 150


def limit_for(rel):
    return DRAWING_LIMIT if rel.startswith(DRAWING) else LIMIT


def main():
    source = sys.argv[1]
    roots = sys.argv[2:] or ROOMS
    files = []
    for root in roots:
        for dirpath, _, names in os.walk(os.path.join(source, root)):
            files += [os.path.join(dirpath, n) for n in sorted(names) if n.endswith((".cpp", ".hpp"))]
    if not files:
        print(f"function_length: no C++ file under {source} ({', '.join(roots)})")
        return 1
    over = []
    functions = 0
    for path in files:
        rel = os.path.relpath(path, source).replace(os.sep, "/")
        for f in lizard.analyze_file(path).function_list:
            functions += 1
            if f.length > limit_for(rel):
                over.append(f"  {rel}:{f.start_line}: {f.long_name.split('(')[0]} is {f.length} lines "
                            f"(limit {limit_for(rel)})")
    if over:
        print("function_length: functions over their room's limit:\n" + "\n".join(over))
        return 1
    print(f"function_length: {functions} functions in {len(files)} files within limits "
          f"({LIMIT} lines; {DRAWING_LIMIT} in {', '.join(DRAWING)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
