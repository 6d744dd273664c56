#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The dbench table of zcow run result folders (configs/dbench.scenario).

usage: harness/dbench_table.py DIR...

One row per folder: clients, treelog, dbench's MB/s, fsyncs (the fs's
nr_fsyncs: fsync calls that wrote, over the whole jobs, as the device
counters), commits per fsync, device flushes per fsync, metadata KiB per
fsync (superblock + metadata + tree-log bytes written), device KiB per
fsync (every byte written), and the Flushes per simulated second after
ramp_time.  A Markdown table on stdout.
"""
import json
import sys


def row(d):
    with open(d + "/summary.json") as f:
        s = json.load(f)
    db = s["dbench"]
    w = s["device_bytes_written"]
    n = s["fs_fsync"]["nr_fsyncs"]
    meta = w["sb"] + w["meta"] + w["log"]
    dev = sum(w.values())
    per = (lambda x: x / n) if n else (lambda x: 0.0)
    return "| %d | %s | %.1f | %d | %.3f | %.3f | %.1f | %.1f | %.0f |" % (
        db["clients"], "on" if s["treelog"] else "off", db["mb_per_s"], n,
        per(s["fs_fsync"]["nr_commits"]),
        per(s["device_commands"]["flush"]), per(meta) / 1024,
        per(dev) / 1024, db["fsyncs_per_s"])


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    print("| clients | treelog | MB/s | fsyncs | commits/fsync | "
          "flushes/fsync | metadata KiB/fsync | device KiB/fsync | "
          "fsyncs/s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for d in argv[1:]:
        print(row(d.rstrip("/")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
