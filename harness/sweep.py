#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Run a scenario over a parameter grid with `zcow run --set`.

usage: sweep.py SCENARIO --grid key=v1,v2 [key=...] [--set key=value ...]
                [--zcow PATH] [--results DIR]
                [--engine local|parallel|slurm] [-j N] [--sshloginfile FILE]
                [--shared DIR] [--sbatch-arg ARG ...] [--array-limit N]
                [--dry-run] [--wait]

Every point of the cross product runs once, into its own folder
DIR/<scenario>-<key>=<value>-... (plus "-set<hash>" when --set is given),
written by `zcow run --dir`: the name depends only on the scenario, the
--set values and the point, so every engine writes the same folders.
A point whose folder holds a complete summary.json is skipped (a rerun
resumes a sweep, e.g. after a failed node); an incomplete folder is
removed and its point run again.  The folders are listed in
DIR/sweep.csv (point values, folder) and printed, one per line, once
every point is done.

Engines (docs/cluster.md):
  local     one point after the other here; a progress line on stderr
            (points done/total, ETA)
  parallel  GNU parallel, -j N points at a time (--sshloginfile FILE: on
            those hosts too, which must see the same paths); each point
            one `zcow run` command
  slurm     one `sbatch --array=0-(K-1)` job, one array task per pending
            point: task I runs line I of the points file written into
            DIR/.sweep-<tag>/; the zcow binary and the scenario's folder
            are copied into --shared DIR (DIR/bin/zcow, DIR/<the
            scenario's folder name>/; a file system the nodes see,
            as DIR must be); --sbatch-arg passes an option to sbatch
            (partition, time, account: repeat it); --array-limit N
            runs at most N tasks at a time (--array=...%N); --dry-run prints the
            batch script and submits nothing; --wait waits for the array
            (polls squeue every 2 s), else rerun the same command once
            the job is done to list the folders.
Python 3 standard library only.
"""
import argparse
import csv
import hashlib
import itertools
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time


def complete(folder):
    """A point is done when its summary.json parses and has the totals
    plot.py reads."""
    try:
        with open(os.path.join(folder, "summary.json")) as f:
            s = json.load(f)
    except (OSError, ValueError):
        return False
    return isinstance(s, dict) and "total" in s and \
        "write_amplification" in s


def safe(text):
    return re.sub(r"[^A-Za-z0-9._,=+-]", "_", text)


def scenario_name(path):
    base = os.path.basename(path)
    for ext in (".scenario", ".fio"):
        if base.endswith(ext):
            return base[:-len(ext)]
    return base


def fmt_eta(s):
    s = int(s + 0.5)
    return "%d:%02d:%02d" % (s // 3600, s // 60 % 60, s % 60)


class Progress:
    """@unit done/total and an ETA from the ones run so far."""

    def __init__(self, total, skipped, unit="points"):
        self.total, self.skipped, self.unit = total, skipped, unit
        self.t0 = time.monotonic()

    def show(self, done):
        ran = done - self.skipped
        left = self.total - done
        if ran > 0 and left > 0:
            eta = fmt_eta((time.monotonic() - self.t0) / ran * left)
        elif left == 0:
            eta = "0:00:00"
        else:
            eta = "unknown"
        sys.stderr.write("%s: %d/%d %s done (%d skipped), ETA %s\n"
                         % (PROG, done, self.total, self.unit, self.skipped,
                            eta))
        sys.stderr.flush()


PROG = "sweep"


class Job:
    """What the engines run: one zcow command per task,
    ZCOW SUB SCENARIO FOLDER_OPT FOLDER ARGS..., a task done when
    done(folder); exit statuses in @ok are not failures."""

    def __init__(self, sub, folder_opt, done, ok=(0,), unit="points"):
        self.sub, self.folder_opt, self.done = sub, folder_opt, done
        self.ok, self.unit = ok, unit

    def cmd(self, zcow, scenario, task):
        return ([zcow, self.sub, scenario, self.folder_opt, task["folder"]]
                + task["args"])


def run_local(a, job, todo, prog):
    done = prog.skipped
    for t in todo:
        cmd = job.cmd(a.zcow, a.scenario, t)
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL)
        if r.returncode not in job.ok:
            sys.stderr.write("%s: failed (exit status %d): %s\n"
                             % (PROG, r.returncode, shlex.join(cmd)))
            return 1
        done += 1
        prog.show(done)
    return 0


def watch(proc, job, tasks, prog, every=2.0):
    """Wait for @proc, printing progress whenever a task completes."""
    last = -1
    while True:
        try:
            rc = proc.wait(timeout=every)
        except subprocess.TimeoutExpired:
            rc = None
        done = sum(1 for t in tasks if job.done(t["folder"]))
        if done != last:
            prog.show(done)
            last = done
        if rc is not None:
            return rc


def joblog_failures(path, ok):
    """The commands of GNU parallel's job log that exited outside @ok."""
    bad = []
    with open(path) as f:
        for row in csv.reader(f, delimiter="\t"):
            if len(row) < 9 or not row[6].lstrip("-").isdigit():
                continue	# the header
            if int(row[6]) not in ok or row[7] != "0":
                bad.append("exit %s signal %s: %s" % (row[6], row[7], row[8]))
    return bad


def run_parallel(a, job, tasks, todo, prog, work):
    if not shutil.which("parallel"):
        sys.stderr.write("%s: GNU parallel is not on PATH "
                         "(apt-get install parallel)\n" % PROG)
        return 1
    cmds = os.path.join(work, "commands")
    log = os.path.join(work, "joblog")
    with open(cmds, "w") as f:
        for t in todo:
            f.write(shlex.join(job.cmd(a.zcow, a.scenario, t)) +
                    " >/dev/null\n")
    if os.path.exists(log):
        os.remove(log)
    cmd = ["parallel", "-j", str(a.jobs), "--joblog", log]
    if a.sshloginfile:
        cmd += ["--sshloginfile", a.sshloginfile]
    cmd += ["::::", cmds]
    proc = subprocess.Popen(cmd)
    watch(proc, job, tasks, prog)
    bad = joblog_failures(log, job.ok) if os.path.exists(log) else ["no job log"]
    if len(bad) or not os.path.exists(log):
        sys.stderr.write("%s: failed (GNU parallel's job log %s):\n%s\n"
                         % (PROG, log, "\n".join(bad)))
        return 1
    return 0


BATCH = """#!/bin/bash
#SBATCH --job-name=zcow-{tag}
#SBATCH --array=0-{last}{limit}
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=1
#SBATCH --output={work}/slurm-%A_%a.out
# One {what} per array task: the task's line of the points file
# (index, folder, then the command's arguments; tab-separated).
set -uo pipefail
points={points}
line=$(awk -F'\t' -v i="$SLURM_ARRAY_TASK_ID" '$1 == i' "$points")
if [ -z "$line" ]; then
	echo "no line $SLURM_ARRAY_TASK_ID in $points" >&2
	exit 1
fi
IFS=$'\t' read -r -a f <<<"$line"
dir=${{f[1]}}
# a requeued task starts over
if [ -e "$dir" ]; then
	rm -rf -- "$dir"
fi
{prefix} "$dir" "${{f[@]:2}}"
rc=$?
case $rc in
{ok}) exit 0 ;;
esac
# for sweep.py --wait: which task failed, how
printf '%s\\t%s\\n' "$rc" "$dir" \\
	>"{work}/failed-$SLURM_ARRAY_JOB_ID.$SLURM_ARRAY_TASK_ID"
exit $rc
"""


def stage(a):
    """Copy the zcow binary and the scenario's folder into --shared."""
    shared = os.path.abspath(a.shared)
    os.makedirs(os.path.join(shared, "bin"), exist_ok=True)
    zcow = os.path.join(shared, "bin", "zcow")
    if os.path.realpath(a.zcow) != os.path.realpath(zcow):
        tmp = zcow + ".new"
        shutil.copy2(a.zcow, tmp)
        os.replace(tmp, zcow)
    src = os.path.dirname(os.path.abspath(a.scenario))
    dst = os.path.join(shared, os.path.basename(src))
    if os.path.realpath(src) != os.path.realpath(dst):
        shutil.copytree(src, dst, dirs_exist_ok=True)
    return zcow, os.path.join(dst, os.path.basename(a.scenario))


def run_slurm(a, job, tasks, todo, prog, work, tag, what):
    if a.dry_run:
        zcow = os.path.join(os.path.abspath(a.shared), "bin", "zcow")
        scen = os.path.join(os.path.abspath(a.shared),
                            os.path.basename(os.path.dirname(
                                os.path.abspath(a.scenario))),
                            os.path.basename(a.scenario))
    else:
        zcow, scen = stage(a)
    pfile = os.path.join(work, "points")
    limit = "%%%d" % a.array_limit if a.array_limit else ""
    prefix = shlex.join([zcow, job.sub, scen, job.folder_opt])
    script = BATCH.format(tag=tag, last=len(todo) - 1, limit=limit,
                          work=work, what=what, points=shlex.quote(pfile),
                          prefix=prefix,
                          ok="|".join(str(c) for c in job.ok))
    lines = []
    for i, t in enumerate(todo):
        for s in t["args"] + [t["folder"]]:
            if "\t" in s or "\n" in s:
                sys.stderr.write("%s: %r: a tab or newline cannot go in "
                                 "the points file\n" % (PROG, s))
                return 1
        lines.append("\t".join([str(i), t["folder"]] + t["args"]) + "\n")
    sfile = os.path.join(work, "job.sbatch")
    cmd = ["sbatch", "--parsable"] + a.sbatch_arg + [sfile]
    if a.dry_run:
        sys.stdout.write(script)
        sys.stdout.write("# submit: %s\n" % shlex.join(cmd))
        sys.stdout.write("# points file %s:\n" % pfile)
        for ln in lines:
            sys.stdout.write("#   " + ln)
        return 0
    with open(pfile, "w") as f:
        f.writelines(lines)
    with open(sfile, "w") as f:
        f.write(script)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, universal_newlines=True)
    jid = r.stdout.strip().split(";")[0]
    if r.returncode != 0 or not jid:
        sys.stderr.write("%s: sbatch failed: %s\n" % (PROG, shlex.join(cmd)))
        return 1
    if not a.wait:
        sys.stderr.write("%s: submitted job %s (%d array tasks); rerun "
                         "this command when it is done\n"
                         % (PROG, jid, len(todo)))
        return 0
    # --wait: poll squeue (sbatch --wait's own polling backs off to
    # tens of seconds) until the array has left the queue
    last = -1
    while True:
        q = subprocess.run(["squeue", "-h", "-j", jid, "-o", "%i"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           universal_newlines=True)
        done = sum(1 for t in tasks if job.done(t["folder"]))
        if done != last:
            prog.show(done)
            last = done
        if not q.stdout.strip():
            break
        time.sleep(2.0)
    failed = []
    for name in sorted(os.listdir(work)):
        if name.startswith("failed-%s." % jid):
            with open(os.path.join(work, name)) as f:
                failed.append("task %s: exit %s"
                              % (name.split(".")[-1],
                                 f.read().strip().replace("\t", ": ")))
    missing = [t["folder"] for t in todo if not job.done(t["folder"])]
    if missing or failed:
        sys.stderr.write("%s: job %s ended with %d task(s) failed and %d "
                         "not done (task logs %s/slurm-%s_*.out):\n%s\n"
                         % (PROG, jid, len(failed), len(missing), work,
                            jid, "\n".join(failed + ["not done: " + m
                                                     for m in missing])))
        return 1
    return 0


def queued(name):
    """The ids of this user's Slurm jobs named @name (squeue)."""
    try:
        r = subprocess.run(["squeue", "-h", "--me", "-o", "%F", "-n", name],
                           stdout=subprocess.PIPE, universal_newlines=True)
    except OSError:
        return []
    return sorted(set(r.stdout.split())) if r.returncode == 0 else []


def add_engine_args(ap):
    ap.add_argument("--zcow", default=os.environ.get("ZCOW_BIN", "build/zcow"))
    ap.add_argument("--engine", choices=("local", "parallel", "slurm"),
                    default="local")
    ap.add_argument("-j", "--jobs", type=int,
                    help="parallel: tasks at a time (default: cores)")
    ap.add_argument("--sshloginfile", metavar="FILE")
    ap.add_argument("--shared", metavar="DIR")
    ap.add_argument("--sbatch-arg", action="append", default=[],
                    metavar="ARG")
    ap.add_argument("--array-limit", type=int, metavar="N",
                    help="slurm: at most N array tasks at a time")
    ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("--wait", action="store_true")


def check_engine_args(ap, a):
    if a.engine != "parallel" and (a.jobs is not None or a.sshloginfile):
        ap.error("-j and --sshloginfile are for --engine parallel")
    if a.engine != "slurm" and (a.shared or a.sbatch_arg or a.dry_run or
                                a.wait or a.array_limit is not None):
        ap.error("--shared, --sbatch-arg, --array-limit, --dry-run and "
                 "--wait are for --engine slurm")
    if a.engine == "slurm" and not a.shared:
        ap.error("--engine slurm needs --shared DIR (the zcow binary and "
                 "the configs for the nodes)")
    if (a.jobs is not None and a.jobs < 1) or (a.array_limit is not None and
                                                a.array_limit < 1):
        ap.error("-j and --array-limit must be at least 1")
    if a.engine == "parallel" and a.jobs is None:
        a.jobs = os.cpu_count() or 1
    if not os.path.isfile(a.scenario):
        ap.error("no scenario %s" % a.scenario)
    a.given = a.results
    if a.engine != "local":
        # other hosts and array tasks start elsewhere
        a.zcow = os.path.abspath(a.zcow)
        a.scenario = os.path.abspath(a.scenario)
        a.results = os.path.abspath(a.results)


def run_tasks(a, job, tasks, tag, what):
    """Run the tasks not done yet on a.engine.  Returns 0 when every task
    is done (or a dry run or a submission without --wait: then
    a.pending is True), else 1."""
    todo = [t for t in tasks if not job.done(t["folder"])]
    a.pending = False
    if todo and a.engine == "slurm" and not a.dry_run:
        ids = queued("zcow-" + tag)
        if ids:
            sys.stderr.write("%s: job %s (zcow-%s) is still queued or "
                             "running: rerun when it is done (or scancel "
                             "it)\n" % (PROG, ", ".join(ids), tag))
            return 1
    if not a.dry_run:
        os.makedirs(a.results, exist_ok=True)
        for t in todo:
            if os.path.lexists(t["folder"]):
                shutil.rmtree(t["folder"])
    prog = Progress(len(tasks), len(tasks) - len(todo), job.unit)
    work = os.path.join(a.results, ".%s-%s" % (PROG, tag))
    if not todo:
        prog.show(len(tasks))
        return 0
    if not a.dry_run:
        os.makedirs(work, exist_ok=True)
    if a.engine == "local":
        rc = run_local(a, job, todo, prog)
    elif a.engine == "parallel":
        rc = run_parallel(a, job, tasks, todo, prog, work)
    else:
        rc = run_slurm(a, job, tasks, todo, prog, work, tag, what)
        a.pending = a.dry_run or not a.wait
    if rc or a.pending:
        return rc
    missing = [t["folder"] for t in tasks if not job.done(t["folder"])]
    if missing:
        sys.stderr.write("%s: not done: %s\n" % (PROG, ", ".join(missing)))
        return 1
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("scenario")
    ap.add_argument("--grid", nargs="+", required=True, metavar="KEY=V1,V2")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VAL")
    ap.add_argument("--results", default="results/sweep")
    add_engine_args(ap)
    a = ap.parse_args()
    check_engine_args(ap, a)

    keys, values = [], []
    for g in a.grid:
        if "=" not in g:
            ap.error("bad --grid item %r (want key=v1,v2)" % g)
        k, v = g.split("=", 1)
        keys.append(k)
        values.append(v.split(","))
    for s in a.set:
        if "=" not in s:
            ap.error("bad --set item %r (want key=value)" % s)
    tag = safe(scenario_name(a.scenario))
    if a.set:
        tag += "-set" + hashlib.sha1("\n".join(a.set).encode()).hexdigest()[:8]
    points, names = [], set()
    for point in itertools.product(*values):
        name = "-".join([tag] + [safe("%s=%s" % kv)
                                 for kv in zip(keys, point)])
        if name in names:
            ap.error("two points share the folder name %s" % name)
        names.add(name)
        args = ["--quiet"]
        for s in a.set + ["%s=%s" % kv for kv in zip(keys, point)]:
            args += ["--set", s]
        points.append({
            "values": list(point),
            "folder": os.path.join(a.results, name),
            "shown": os.path.join(a.given, name),
            "args": args,
        })
    job = Job("run", "--dir", complete)
    rc = run_tasks(a, job, points, tag, "sweep point")
    if rc or a.pending:
        return rc
    with open(os.path.join(a.results, "sweep.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(keys + ["folder"])
        for p in points:
            w.writerow(p["values"] + [p["shown"]])
    for p in points:
        print(p["shown"], flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
