#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Reclaim experiments 4 and 5 on small zones
(docs/reclaim-experiments-small.md): zcow bench-commits ({empty file, full
commit} and {4 KiB file, fsync}) and zcow bench-refill, their CSVs, verdicts
and a gnuplot plot of the unusable share and the free zones over each
commits run, into the folder OUT.

usage: harness/gcsmall.py [--quick] OUT
  --quick   all three on 128 MiB of 4 MiB zones: 8,000 empty-file commits,
            4,000 4 KiB files with fsync, the refill (~5 s)
The tool is $ZCOW_BIN or build/zcow.  Exit status: 0 when every run ended
with exit status 0 (a run stopped by ENOSPC is a result, printed), 1 if
one failed, 2 on a usage error.  Python 3 standard library only; gnuplot
must be on PATH for the plots."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plot  # noqa: E402  (harness/plot.py: gnuplot())

DEV_1G = "sim:zones=256,zone_size=4M,max_open=14,max_active=14"
DEV_QUICK = "sim:zones=32,zone_size=4M,max_open=14,max_active=14"


def run(zcow, out, name, args):
    """Run zcow with @args, its stdout into OUT/name.txt; returns the
    exit status and the last verdict line."""
    with open(os.path.join(out, name + ".txt"), "w") as f:
        p = subprocess.run([zcow] + args, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT,
                           universal_newlines=True)
        f.write(p.stdout)
    lines = [l for l in p.stdout.splitlines() if l.startswith(
        ("completed", "stopped", "failed"))]
    verdict = lines[-1] if lines else p.stdout.strip().splitlines()[-1:]
    print("%s: exit %d: %s" % (name, p.returncode, verdict))
    return p.returncode


def plot_commits(out, name, title):
    csv = os.path.join(out, name + ".csv")
    if not os.path.exists(csv):
        return 1
    return plot.gnuplot(out, name, [
        "set datafile separator ','",
        "set key autotitle columnhead top left",
        "set title '%s'" % title,
        "set xlabel 'operations'",
        "set ylabel 'zone-unusable share of the writable bytes (%)'",
        "set y2label 'free zones'",
        "set yrange [0:100]",
        "set y2range [0:*]",
        "set ytics nomirror", "set y2tics",
        "set grid"],
        "'%s' using 1:($11*100) with lines title 'unusable %%', "
        "'%s' using 1:12 axes x1y2 with lines title 'free zones'"
        % (csv, csv))


def main(argv):
    quick = "--quick" in argv
    rest = [a for a in argv if a != "--quick"]
    if len(rest) != 1 or rest[0].startswith("-"):
        sys.stderr.write(__doc__)
        return 2
    out = rest[0]
    os.makedirs(out, exist_ok=True)
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    zcow = os.environ.get("ZCOW_BIN", os.path.join(here, "build", "zcow"))
    dev = DEV_QUICK if quick else DEV_1G
    size = "128 MiB" if quick else "1 GiB"
    every = "100" if quick else "1000"
    status = 0
    runs = [
        ("commits-empty", "8000" if quick else "100000",
         ["--size", "0", "--sync", "commit"],
         "{empty file, full commit}, %s of 4 MiB zones, greedy" % size),
        ("commits-4k-fsync", "4000" if quick else "100000",
         ["--size", "4k", "--sync", "fsync"],
         "{4 KiB file, fsync}, %s of 4 MiB zones, greedy" % size),
    ]
    for name, ops, extra, title in runs:
        rc = run(zcow, out, name,
                 ["bench-commits", "--ops", ops, "--every", every,
                  "--csv", os.path.join(out, name + ".csv"), "--check"] +
                 extra + [dev])
        status |= rc != 0
        status |= plot_commits(out, name, title)
    rc = run(zcow, out, "refill",
             ["bench-refill", "--rounds", "5", "--csv",
              os.path.join(out, "refill.csv"), "--check",
              dev])
    status |= rc != 0
    return 1 if status else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
