# Writes docs/benchmarks.md: where Kiln stands, from the recorded runs in docs/benchmarks/.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: summarize.py [--runs DIR] [--out FILE | --check FILE]

Reads every recorded run (docs/benchmarks/<date>-<what>.md, one file per run), finds its
tables that give Kiln's time and a peer's time for the same case in the same run
(onnxruntime on the CPU; PyTorch eager and torch.compile on CUDA), and writes, per target,
the latest figure for every kernel and model with the ratio to the peer of that run, and
which run it came from (date, commit, machine, load, the script that measured it).
--check FILE exits 1 if FILE differs from what this script writes (the test that keeps
docs/benchmarks.md from going stale); --out FILE writes it (default: print).
"""

import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNS = os.path.join(ROOT, "docs", "benchmarks")

# Peers per target: (name, header cells holding its time in ms).
PEERS = {
    "CPU": [("onnxruntime", ("ORT ms",))],
    "CUDA": [("PyTorch eager", ("eager ms",)),
             ("torch.compile", ("torch.compile ms", "compile ms"))],
}
# Header cells that qualify the case (a model at several batches, precisions, threads).
QUALIFIERS = ("batch", "precision", "threads")
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e-?\d+)?")


def number(cell):
    """The first number of a cell ("0.259 [0.253–0.523] ×1000" -> 0.259), or None."""
    match = NUMBER.search(cell.replace(",", ""))
    return float(match.group()) if match and not cell.strip().startswith("(") else None


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def tables(text):
    """[(header cells, [row cells])] of the markdown tables in text."""
    found, lines = [], text.splitlines()
    i = 0
    while i + 1 < len(lines):
        if lines[i].startswith("|") and re.match(r"^\|\s*:?-{3,}", lines[i + 1]):
            header, rows, i = cells(lines[i]), [], i + 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(cells(lines[i]))
                i += 1
            found.append((header, rows))
        else:
            i += 1
    return found


def run_info(name, text):
    """Date, target, commit, machine, load and measuring script of one run file."""
    title = text.splitlines()[0].lstrip("# ").strip()
    date = re.match(r"[\d-]+(?: [\d:–]+ UTC)?", title).group()
    if "CUDA" in title:
        target = "CUDA"
    elif "CPU" in title:
        target = "CPU"
    else:
        target = None
    threads = re.search(r"CPU, (\d+) threads", title)
    label = f"CPU, {threads.group(1)} thread{'s' if threads.group(1) != '1' else ''}" \
        if threads else target
    commit = re.search(r"kiln `([0-9a-f]{7,40})", text) or re.search(r"`([0-9a-f]{7,40})`", text)
    machine = re.search(r"^- machine: ([^;\n]*)", text, re.M)
    load = re.search(r"load average ([\d.]+) at start", text)
    script = re.search(r"bench/(?:run-cpu|[a-z_0-9]+\.py)", text)
    return {"file": name, "title": title, "date": date, "target": target, "label": label,
            "commit": commit.group(1) if commit else "not recorded",
            "machine": machine.group(1).strip().rstrip(".") if machine else
            ("NVIDIA H200" if target == "CUDA" else "not recorded"),
            "load": f"load average {load.group(1)} at start" if load else "not recorded",
            "script": script.group() if script else "not recorded",
            # A run compiled at another precision (its title says so) qualifies
            # its cases, so that they do not stand in for the fp32 ones.
            "precision": (re.search(r"--precision=(\w+)", title) or [None, None])[1]}


def figures(info, text):
    """{(case, qualifiers): {"kiln": ms, peer name: ms}} of the run's Kiln-vs-peer tables."""
    out = {}
    for header, rows in tables(text):
        kiln = next((j for j, h in enumerate(header) if re.match(r"Kiln (device )?ms\b", h)),
                    None)
        peers = [(name, header.index(h)) for name, cells in PEERS.get(info["target"], ())
                 for h in cells if h in header]
        if kiln is None or not peers or header[0].lower().startswith(("case", "model")) is False:
            continue
        qualifiers = [j for j, h in enumerate(header) if h in QUALIFIERS]
        for row in rows:
            if len(row) != len(header) or number(row[kiln]) is None:
                continue
            case = row[0].replace("^3", "³")  # older runs wrote 256^3
            key = (case, tuple(f"{header[j]} {row[j]}" for j in qualifiers))
            if info.get("precision") and "precision" not in header:
                key = (case, key[1] + (f"precision {info['precision']}",))
            entry = {"kiln": number(row[kiln])}
            for name, j in peers:
                if number(row[j]) is not None:
                    entry[name] = number(row[j])
            if len(entry) > 1:
                out[key] = entry
    return out


def collect(runs_dir):
    """(runs in date order, {label: {key: (entry, run)}}) with the latest run winning."""
    runs, latest = [], {}
    for name in sorted(os.listdir(runs_dir)):
        if not re.match(r"\d{4}-\d{2}-\d{2}-.*\.md$", name):
            continue
        with open(os.path.join(runs_dir, name)) as f:
            text = f.read()
        info = run_info(name, text)
        found = figures(info, text) if info["target"] else {}
        info["cases"] = len(found)
        runs.append(info)
        for key, entry in found.items():
            latest.setdefault(info["label"], {})[key] = (entry, info)
    return runs, latest


def commit(info):
    return f"`{info['commit']}`" if info["commit"] != "not recorded" else "not recorded"


def markdown(runs, latest, runs_dir_link="benchmarks/"):
    used = {info["file"] for cases in latest.values() for _, info in cases.values()}
    ids = {info["file"]: f"R{n}" for n, info in enumerate(
        [r for r in runs if r["file"] in used], 1)}
    out = ["# Benchmarks", "",
           "Generated by `bench/summarize.py` from the recorded runs in "
           f"[{runs_dir_link}]({runs_dir_link}) (one file per run); do not edit by hand: "
           "`test/scripts/benchmarks-summary.test` fails when this page differs from the "
           "script's output. Regenerate with `build/.venv/bin/python bench/summarize.py --out "
           "docs/benchmarks.md`.", "",
           "For every target, the latest recorded time of every kernel and model, and its ratio "
           "to the peer measured **in the same run** (same machine, same inputs): above 1 means "
           "Kiln is slower. Runs differ in machine load and sometimes in machine, so compare "
           "ratios rather than times across runs; each row names its run, and the runs table "
           "gives its date, commit, machine, load and the script that measured it. The "
           "hardware ceilings are in [hardware.md](hardware.md).", ""]
    for label in sorted(latest, key=lambda l: (not l.startswith("CPU"), l)):
        cases = latest[label]
        target = "CUDA" if label.startswith("CUDA") else "CPU"
        peers = [name for name, _ in PEERS[target]]
        out += [f"## {label}", "",
                f"Table generated by `bench/summarize.py` from the runs below (measured by the "
                f"script each names).", "",
                "| case | Kiln ms | " + " | ".join(f"{p} ms | Kiln / {p}" for p in peers)
                + " | run |",
                "| --- | ---: | " + " | ".join("---: | ---:" for _ in peers) + " | --- |"]
        for (case, qualifiers), (entry, info) in sorted(cases.items()):
            name = case + (f" ({', '.join(qualifiers)})" if qualifiers else "")
            cells = []
            for p in peers:
                if p in entry:
                    cells += [f"{entry[p]:g}", f"{entry['kiln'] / entry[p]:.2f}"]
                else:
                    cells += ["", ""]
            out.append(f"| {name} | {entry['kiln']:g} | " + " | ".join(cells)
                       + f" | {ids[info['file']]} {info['date']} |")
        out.append("")
    out += ["## Runs", "",
            "Table generated by `bench/summarize.py`: the runs the rows above come from.", "",
            "| run | date | what | commit | machine | load | measured by |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for info in runs:
        if info["file"] in ids:
            what = re.sub(r"^[^—]*—\s*", "", info["title"]).replace("|", "\\|")
            script = info["script"] if info["script"] == "not recorded" else f"`{info['script']}`"
            out.append(f"| {ids[info['file']]} | {info['date']} | [{what}]({runs_dir_link}"
                       f"{info['file']}) | {commit(info)} | {info['machine']} | "
                       f"{info['load']} | {script} |")
    rest = [r for r in runs if r["file"] not in ids]
    out += ["", "Other recorded runs (no Kiln-vs-peer table, or every case measured again "
            "later):", ""]
    out += [f"- [{r['title']}]({runs_dir_link}{r['file']})" for r in rest]
    return "\n".join(out) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", default=RUNS)
    group = p.add_mutually_exclusive_group()
    group.add_argument("--out")
    group.add_argument("--check")
    args = p.parse_args()
    text = markdown(*collect(args.runs))
    if args.check:
        with open(args.check) as f:
            if f.read() != text:
                print(f"summarize: {args.check} is stale; regenerate it with "
                      f"bench/summarize.py --out {args.check}")
                return 1
        print(f"summarize: {args.check} is up to date")
    elif args.out:
        with open(args.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
