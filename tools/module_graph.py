#!/usr/bin/env python3
"""Prints kvscope's module graph, read from the CMake targets, as a Mermaid diagram.

usage: tools/module_graph.py [BUILD_DIR]   (default build/release; configures it with --graphviz)

Only the direct links between kvscope's own libraries and the executable are drawn; a PUBLIC link
is a solid arrow, a PRIVATE one dashed. docs/design.md holds its output.
"""
import os, re, subprocess, sys, tempfile

build = sys.argv[1] if len(sys.argv) > 1 else "build/release"
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with tempfile.TemporaryDirectory() as tmp:
    dot = os.path.join(tmp, "deps.dot")
    subprocess.run(["cmake", "-S", root, "-B", build, f"--graphviz={dot}"], check=True, stdout=subprocess.DEVNULL)
    text = open(dot).read()
edges = []
# Each edge line ends with a comment naming both targets: `"node3" -> "node2" [ style = dotted ] // a -> b`.
for style, a, b in re.findall(r'-> "node\d+"(?: \[ style = (\w+) \])?\s*// (\S+) -> (\S+)', text):
    if a.startswith("kvscope_") and b.startswith("kvscope_") and a not in ("kvscope_tests", "kvscope_kernel_bench"):
        edges.append((a, b, style or "solid"))
short = lambda n: "cli" if n == "kvscope_cli" else n.removeprefix("kvscope_")
print("```mermaid\ngraph BT")
for a, b, style in sorted(set(edges)):
    if a == "kvscope_cli":
        continue  # the executable links every module; drawing it hides the layering
    arrow = "-.->" if style == "dotted" else "-->"
    print(f"  {short(a)} {arrow} {short(b)}")
print("```")
