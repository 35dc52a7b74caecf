#!/usr/bin/env python3
# Checks the "Pass order (checked)" tables of docs/pass-order.md against the
# stage pipelines as kiln-opt builds them (`--dump-pass-pipeline`): the same
# passes, in the same order, for every pipeline the page lists; the CUDA
# pipelines at each --precision (a row's "when" column says under which
# precisions it runs). Exit 1 with a diff on any difference.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import argparse
import difflib
import re
import subprocess
import sys

PRECISIONS = ["fp32", "tf32", "fp16", "bf16"]
HEADING = re.compile(r"^#### `(kiln-[a-z-]+-pipeline)`\s*$")
ANCHORS = {"builtin.module", "func.func", "gpu.module"}


def read_tables(path):
    """{pipeline: [(pass, when)]} from the page's pass tables."""
    tables, current = {}, None
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        heading = HEADING.match(line)
        if heading:
            current = tables.setdefault(heading.group(1), [])
            continue
        if current is None:
            continue
        if line.startswith("#"):
            current = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[0].isdigit():
            continue
        name = re.match(r"`([^`]+)`", cells[1])
        if not name:
            sys.exit(f"check_pass_order: row '{line}' names no pass in backticks")
        when = cells[2]
        if when != "always" and not all(p.strip() in PRECISIONS for p in when.split(",")):
            sys.exit(f"check_pass_order: row '{line}': 'when' is '{when}', expected "
                     f"always or a list of {', '.join(PRECISIONS)}")
        current.append((name.group(1), when))
    return tables


def dumped_passes(kiln_opt, pipeline, option):
    """The pass names of `pipeline` in run order (nesting anchors dropped)."""
    flag = f"--{pipeline}" + (f"={option}" if option else "")
    run = subprocess.run([kiln_opt, flag, "--dump-pass-pipeline", "-o", "/dev/null"],
                         input="module {}\n", capture_output=True, text=True)
    text = run.stdout + run.stderr
    start = text.find("builtin.module(")
    if start < 0:
        sys.exit(f"check_pass_order: {' '.join([kiln_opt, flag])} dumped no pipeline:\n{text}")
    depth, end = 0, start
    for end in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[end], 0)
        if depth == 0 and text[end] == ")":
            break
    body = text[start:end + 1]
    while "{" in body:  # pass options, innermost braces first
        body = re.sub(r"\{[^{}]*\}", "", body)
    return [name for name, nested in re.findall(r"([A-Za-z0-9_.-]+)\s*(\(?)", body)
            if not nested and name not in ANCHORS]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--kiln-opt", required=True)
    parser.add_argument("--doc", required=True)
    args = parser.parse_args()
    tables = read_tables(args.doc)
    if not tables:
        sys.exit(f"check_pass_order: no pass tables in {args.doc}")
    failures, checked = 0, 0
    for pipeline, rows in tables.items():
        cuda = pipeline.startswith("kiln-cuda-")
        for precision in (PRECISIONS if cuda else [None]):
            expected = [name for name, when in rows
                        if when == "always" or precision in [p.strip() for p in when.split(",")]]
            option = f"precision={precision} gpu=sm_90a" if cuda else None
            actual = dumped_passes(args.kiln_opt, pipeline, option)
            checked += 1
            if actual != expected:
                failures += 1
                what = pipeline + (f" (precision={precision})" if precision else "")
                print(f"check_pass_order: {what}: the page differs from the pipeline")
                sys.stdout.writelines(difflib.unified_diff(
                    [n + "\n" for n in expected], [n + "\n" for n in actual],
                    "docs/pass-order.md", "kiln-opt --dump-pass-pipeline"))
    if failures:
        return 1
    print(f"check_pass_order: {len(tables)} pipelines, {checked} configurations match")
    return 0


if __name__ == "__main__":
    sys.exit(main())
