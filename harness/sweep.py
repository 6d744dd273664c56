#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Run a scenario over a parameter grid with `zcow run --set`.

usage: sweep.py SCENARIO --grid key=v1,v2 [key=...] [--set key=value ...]
                [--zcow PATH] [--results DIR]

Every point of the cross product runs once; the result folders are listed
in DIR/sweep.csv (point values, folder) and printed, one per line.
Python 3 standard library only.
"""
import argparse
import csv
import itertools
import os
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("scenario")
    ap.add_argument("--grid", nargs="+", required=True, metavar="KEY=V1,V2")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VAL")
    ap.add_argument("--zcow", default=os.environ.get("ZCOW_BIN", "build/zcow"))
    ap.add_argument("--results", default="results/sweep")
    a = ap.parse_args()

    keys, values = [], []
    for g in a.grid:
        if "=" not in g:
            ap.error("bad --grid item %r (want key=v1,v2)" % g)
        k, v = g.split("=", 1)
        keys.append(k)
        values.append(v.split(","))
    os.makedirs(a.results, exist_ok=True)
    rows = []
    for point in itertools.product(*values):
        cmd = [a.zcow, "run", a.scenario, "--results", a.results, "--quiet"]
        for s in a.set:
            cmd += ["--set", s]
        for k, v in zip(keys, point):
            cmd += ["--set", "%s=%s" % (k, v)]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, universal_newlines=True)
        if p.returncode != 0:
            sys.stderr.write("sweep: failed: %s\n" % " ".join(cmd))
            return 1
        folder = p.stdout.strip().splitlines()[-1]
        rows.append(list(point) + [folder])
        print(folder, flush=True)
    with open(os.path.join(a.results, "sweep.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(keys + ["folder"])
        w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
