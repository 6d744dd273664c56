#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Run a crash campaign as N shards (`zcow crash --shard I/N`), then merge
them (`zcow crash --merge`).

usage: campaign.py SCENARIO --shards N [--quick] [--crash-arg ARG ...]
                   [--zcow PATH] [--results DIR]
                   [--engine local|parallel|slurm] [-j N]
                   [--sshloginfile FILE] [--shared DIR] [--sbatch-arg ARG ...]
                   [--array-limit N] [--dry-run] [--wait]

Shard I runs `zcow crash SCENARIO --results DIR/<tag>-shard-I-of-N
--shard I/N [--quick] [ARG...]` (<tag>: the scenario's name, "-quick",
and "-args<hash>" when --crash-arg is given), on the engines of
harness/sweep.py (docs/cluster.md): here one after the other, through
GNU parallel, or as one Slurm array job of N tasks.  A shard is done
when its folder holds a complete shard.json; a rerun runs only the
shards not done.  Then the shards are merged into DIR/<UTC time>-<name>
(zcow crash --merge), the whole campaign's table printed; the merged
folder is recorded in DIR/.campaign-<tag>/merged, and a rerun merges
again and removes the previous merged folder.  Exit status: 0, 1 when the campaign
found violations (as zcow crash), 2 on an error.
Python 3 standard library only.
"""
import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True	# no harness/__pycache__
import sweep  # noqa: E402  (harness/sweep.py: the engines)


def shard_folder(parent):
    """The one results folder zcow crash wrote under @parent, or None."""
    try:
        subs = [os.path.join(parent, d) for d in sorted(os.listdir(parent))]
    except OSError:
        return None
    subs = [d for d in subs if os.path.isdir(d)]
    return subs[0] if len(subs) == 1 else None


def shard_done(parent):
    d = shard_folder(parent)
    if not d:
        return False
    try:
        with open(os.path.join(d, "shard.json")) as f:
            s = json.load(f)
    except (OSError, ValueError):
        return False
    return isinstance(s, dict) and s.get("complete") is True


def main():
    sweep.PROG = "campaign"
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("scenario")
    ap.add_argument("--shards", type=int, required=True, metavar="N")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--crash-arg", action="append", default=[],
                    metavar="ARG")
    ap.add_argument("--results", default="results/campaign")
    sweep.add_engine_args(ap)
    a = ap.parse_args()
    sweep.check_engine_args(ap, a)
    if a.shards < 1:
        ap.error("--shards must be at least 1")
    for c in a.crash_arg:
        if c in ("--shard", "--merge", "--results", "--no-results",
                 "--max", "--repro") or c.startswith("--shard="):
            ap.error("--crash-arg %s: campaign.py sets the shards and the "
                     "folders (and --max stops a whole campaign)" % c)

    tag = sweep.safe(sweep.scenario_name(a.scenario))
    if a.quick:
        tag += "-quick"
    if a.crash_arg:
        tag += "-args" + hashlib.sha1(
            "\n".join(a.crash_arg).encode()).hexdigest()[:8]
    n = a.shards
    tasks = []
    for i in range(1, n + 1):
        args = ["--shard", "%d/%d" % (i, n)]
        if a.quick:
            args.append("--quick")
        tasks.append({
            "folder": os.path.join(a.results,
                                   "%s-shard-%d-of-%d" % (tag, i, n)),
            "args": args + a.crash_arg,
        })
    job = sweep.Job("crash", "--results", shard_done, ok=(0, 1),
                    unit="shards")
    rc = sweep.run_tasks(a, job, tasks, tag, "campaign shard")
    if rc:
        return 2
    if a.pending:
        return 0
    work = os.path.join(a.results, ".campaign-" + tag)
    record = os.path.join(work, "merged")
    try:
        with open(record) as f:
            old = f.read().strip()
    except OSError:
        old = ""
    dirs = [shard_folder(t["folder"]) for t in tasks]
    cmd = [a.zcow, "crash", "--merge", "--results", a.results] + dirs
    p = subprocess.run(cmd, stdout=subprocess.PIPE, universal_newlines=True)
    sys.stdout.write(p.stdout)
    sys.stdout.flush()
    if p.returncode not in (0, 1):
        sys.stderr.write("campaign: the merge failed (exit status %d): %s\n"
                         % (p.returncode, " ".join(cmd)))
        return 2
    last = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
    if last.startswith("results: "):
        os.makedirs(work, exist_ok=True)
        merged = last[len("results: "):]
        with open(record, "w") as f:
            f.write(merged + "\n")
        # one merged folder: the previous merge of these shards goes
        if old and old != merged and os.path.isdir(old):
            shutil.rmtree(old)
    return p.returncode


if __name__ == "__main__":
    sys.exit(main())
