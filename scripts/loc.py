#!/usr/bin/env python3
"""Lines of Rust under `src/decode` and `src` of a checkout (BENCHMARKS.md, issue #36).

Usage: scripts/loc.py [ROOT]   (ROOT: a checkout or a `git archive REV src` unpacked; default .)
Prints, per folder: .rs files, lines, code lines (not blank, not a `//` comment),
and unit-test lines (a `#[cfg(test)]` module to the end of its file), counted apart.
"""
import os
import sys


def count(root):
    files = lines = code = tests = 0
    for folder, _, names in os.walk(root):
        for name in names:
            if not name.endswith(".rs"):
                continue
            files += 1
            in_tests = False
            with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as f:
                for line in f:
                    text = line.strip()
                    in_tests = in_tests or text.startswith("#[cfg(test)]")
                    if in_tests:
                        tests += 1
                        continue
                    lines += 1
                    if text and not text.startswith("//"):
                        code += 1
    return files, lines, code, tests


root = sys.argv[1] if len(sys.argv) > 1 else "."
for folder in ("src/decode", "src"):
    files, lines, code, tests = count(os.path.join(root, folder))
    print(f"{folder:<11} files={files} lines={lines} code={code} unit-test-lines={tests}")
