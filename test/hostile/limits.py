#!/usr/bin/env python3
# Runs one command under the hostile-input limits and checks how it ended.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""usage: limits.py [--cpu S] [--rss MIB] [--wall S] [--exit N] [--no-limits] -- CMD...

Runs CMD, passes its stdout and stderr through, and fails (exit 1, with a
`limits.py:` line on stderr) unless CMD
  - exited normally with code N (default 1: a clean error), not by a signal;
  - used at most S seconds of CPU (default 1) and peaked at most MIB MiB of
    resident memory (default 256), measured by wait4's rusage;
  - printed exactly one line starting with `error:` (or `PATH:L:C: error:`)
    when N is not 0.
A run is killed after S seconds of wall time (--wall, default 30: a hang;
generous, since CPU time is what is limited and the machine may be busy). --no-limits keeps the exit
and error-line checks but not the CPU and memory ones (sanitizer builds,
whose shadow memory and instrumentation distort both).
"""
import argparse
import os
import re
import resource
import signal
import subprocess
import sys
import time


def main():
    args = sys.argv[1:]
    if "--" not in args:
        sys.exit(__doc__)
    split = args.index("--")
    parser = argparse.ArgumentParser()
    parser.add_argument("--cpu", type=float, default=1.0)
    parser.add_argument("--rss", type=float, default=256.0)
    parser.add_argument("--wall", type=float, default=30.0)
    parser.add_argument("--exit", type=int, default=1)
    parser.add_argument("--no-limits", action="store_true")
    opts = parser.parse_args(args[:split])
    command = args[split + 1:]

    start = time.monotonic()
    child = subprocess.Popen(command, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, start_new_session=True)
    # Read both pipes to the end, then reap the child with its rusage.
    try:
        out, err = child.communicate(timeout=opts.wall)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        out, err = child.communicate()
        sys.stdout.buffer.write(out)
        sys.stderr.buffer.write(err)
        sys.exit(f"limits.py: '{command[0]}' was killed after {opts.wall:g} s (a hang)")
    sys.stdout.buffer.write(out)
    sys.stdout.flush()
    sys.stderr.buffer.write(err)
    sys.stderr.flush()
    # communicate() reaped the child, the only one: its usage is all of
    # RUSAGE_CHILDREN.
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = ru.ru_utime + ru.ru_stime
    rss_mib = ru.ru_maxrss / 1024.0
    wall = time.monotonic() - start

    problems = []
    code = child.returncode
    if code < 0:
        problems.append(f"killed by signal {-code} ({signal.Signals(-code).name})")
    elif code != opts.exit:
        problems.append(f"exit code {code}, expected {opts.exit}")
    if opts.exit != 0:
        text = (out + err).decode(errors="replace")
        errors = [l for l in text.splitlines()
                  if re.match(r"^(\S*: )?error: ", l)]
        if len(errors) != 1:
            problems.append(f"{len(errors)} 'error:' lines, expected 1")
    if not opts.no_limits:
        if cpu > opts.cpu:
            problems.append(f"{cpu:.2f} s of CPU, limit {opts.cpu:g} s")
        if rss_mib > opts.rss:
            problems.append(f"peak RSS {rss_mib:.0f} MiB, limit {opts.rss:g} MiB")
    if problems:
        sys.exit(f"limits.py: '{' '.join(command)}': " + "; ".join(problems) +
                 f" (cpu {cpu:.2f} s, wall {wall:.2f} s, rss {rss_mib:.0f} MiB)")


if __name__ == "__main__":
    main()
