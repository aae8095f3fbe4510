#!/usr/bin/env python3
"""Cuts the README's complete examples out into a CMake project that uses the installed package.

A ```cpp block whose first line is "// README example: NAME.cpp" is an example; each becomes
NAME.cpp in OUT_DIR, and OUT_DIR/CMakeLists.txt builds one executable per example, linked with
pipescope::runtime from find_package(pipescope), and registers nothing else. Prints the names.
Exits 1 when the README has no examples or two share a name (a renamed or broken marker).
usage: extract_examples.py README.md OUT_DIR
"""
import os
import re
import sys

readme, out = sys.argv[1], sys.argv[2]
text = open(readme, encoding="utf-8").read()
examples = {}
for block in re.findall(r"^```cpp\n(.*?)^```", text, re.S | re.M):
    m = re.match(r"// README example: ([A-Za-z0-9_]+)\.cpp\n", block)
    if not m:
        continue
    if m.group(1) in examples:
        sys.exit(f"extract_examples: two README examples named {m.group(1)}.cpp")
    examples[m.group(1)] = block
if not examples:
    sys.exit(f"extract_examples: no '// README example: NAME.cpp' block in {readme}")

os.makedirs(out, exist_ok=True)
for name, code in examples.items():
    with open(os.path.join(out, name + ".cpp"), "w", encoding="utf-8") as f:
        f.write(code)
with open(os.path.join(out, "CMakeLists.txt"), "w", encoding="utf-8") as f:
    f.write("cmake_minimum_required(VERSION 3.20)\nproject(pipescope_readme_examples CXX)\n"
            "set(CMAKE_CXX_STANDARD 20)\nset(CMAKE_CXX_STANDARD_REQUIRED ON)\n"
            "find_package(pipescope REQUIRED)\n")
    for name in examples:
        f.write(f"add_executable({name} {name}.cpp)\ntarget_link_libraries({name} PRIVATE pipescope::runtime)\n")
print(" ".join(examples))
