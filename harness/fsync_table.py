#!/usr/bin/env python3
"""The kernel's btrfs zoned beside zcow under fsync load: one table.

    harness/fsync_table.py --kernel VMRUN [--kernel VMRUN ...]
                           --zcow WORKLOAD=DIR [--zcow WORKLOAD=DIR ...]
                           [--md FILE] [--csv FILE]

VMRUN is a results folder of `harness/qemu/vm.sh dbench` (or its
summary.json): its "dbench" rows.  DIR is a folder of `zcow run` results
(searched for summary.json, e.g. a sweep of configs/seed-treelog.scenario
over numjobs and treelog); WORKLOAD names the kernel workload its rows
stand beside (dbench or fio).  One row per workload, client count and
tree-log setting:

  throughput        kernel: dbench's MB/s, the fio job's fsyncs/s; zcow:
                    MiB/s (total.bw_mib_per_s), for WORKLOAD fio its
                    fsyncs/s (total.syncs_per_s); the mean of the runs
  on/off            throughput with the tree-log / without it, per system
  commits/fsync     kernel: btrfs transaction commits (trace); zcow:
                    "commits"
  flushes/fsync     kernel: block stat flushes; zcow: device flush commands
  metadata KiB/fsync  kernel: bytes of regular writes (all but Zone Append
                    data); zcow: superblock + tree + tree-log bytes
  device KiB/fsync  everything written to the device

A later --kernel replaces the earlier ones' runs of each workload and
client count it has (a focused rerun, e.g. dbench 32 with a longer T,
over a full matrix).  Per-fsync figures divide the sums over a key's runs (fsyncs: the kernel's
fsync syscalls; zcow's fs_fsync.nr_fsyncs).  Clients of a zcow run = its
jobs.  --md / --csv write the table (default: markdown on stdout).
Exit status 2 on a usage error.  Standard library only.
"""
import argparse
import json
import os
import sys

COLUMNS = [("throughput", 1), ("on_off", 2), ("commits", 4),
           ("flushes", 4), ("metadata_kib", 1), ("device_kib", 1)]
HEAD = {"throughput": "throughput", "on_off": "on/off",
        "commits": "commits/fsync", "flushes": "flushes/fsync",
        "metadata_kib": "metadata KiB/fsync",
        "device_kib": "device KiB/fsync"}


class UsageError(Exception):
    pass


def load_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        raise UsageError(f"{path}: {e.strerror}") from e
    except ValueError as e:
        raise UsageError(f"{path}: not JSON ({e})") from e


def kernel_runs(arg):
    """The dbench rows of one VM run: (source, [run dicts])."""
    path = os.path.join(arg, "summary.json") if os.path.isdir(arg) else arg
    s = load_json(path)
    d = s.get("dbench")
    if not isinstance(d, dict) or not isinstance(d.get("rows"), list):
        raise UsageError(f"{path}: no dbench rows (not a summary of "
                         f"harness/qemu/vm.sh dbench)")
    runs = []
    for r in d["rows"]:
        if r.get("rc") != 0 or not r.get("fsyncs"):
            continue
        runs.append({"workload": r["workload"], "clients": r["clients"],
                     "treelog": r["treelog"], "throughput": r["throughput"],
                     "fsyncs": r["fsyncs"], "commits": r.get("commits"),
                     "flushes": r.get("flushes"),
                     "metadata_bytes": r.get("metadata_bytes"),
                     "device_bytes": r.get("device_bytes")})
    return f"{s.get('guest_kernel', '?')} ({path})", runs


def zcow_summaries(folder):
    found = []
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        if "summary.json" in files:
            found.append(os.path.join(root, "summary.json"))
    return found


def zcow_run(workload, path):
    z = load_json(path)
    if "fs_fsync" not in z or "device_bytes_written" not in z:
        raise UsageError(f"{path}: not a summary of a zcow run of the fs "
                         f"target (no fs_fsync / device_bytes_written)")
    dev = z["device_bytes_written"]
    total = z.get("total") or {}
    tp = total.get("syncs_per_s") if workload == "fio" else \
        total.get("bw_mib_per_s")
    return {"workload": workload, "clients": len(z.get("jobs") or []),
            "treelog": "on" if z.get("treelog") else "off",
            "throughput": tp,
            "fsyncs": z["fs_fsync"].get("nr_fsyncs") or total.get("syncs"),
            "commits": z.get("commits"),
            "flushes": (z.get("device_commands") or {}).get("flush"),
            "metadata_bytes": sum(dev.get(k, 0)
                                  for k in ("sb", "meta", "log")),
            "device_bytes": (z.get("write_amplification_breakdown") or {})
            .get("device_bytes_written_total", sum(dev.values())),
            "scenario": z.get("scenario")}


def aggregate(runs):
    """{(workload, clients, treelog): figures} over the runs of each key."""
    keys = {}
    for r in runs:
        keys.setdefault((r["workload"], r["clients"], r["treelog"]),
                        []).append(r)
    out = {}
    for k, rs in keys.items():
        f = sum(r["fsyncs"] or 0 for r in rs)
        tps = [r["throughput"] for r in rs if r["throughput"] is not None]

        def per(name, scale=1):
            v = [r[name] for r in rs]
            if not f or any(x is None for x in v):
                return None
            return sum(v) / scale / f

        out[k] = {"runs": len(rs), "fsyncs": f,
                  "throughput": sum(tps) / len(tps) if tps else None,
                  "commits": per("commits"), "flushes": per("flushes"),
                  "metadata_kib": per("metadata_bytes", 1024),
                  "device_kib": per("device_bytes", 1024)}
    for (wl, n, mode), v in out.items():
        on, off = out.get((wl, n, "on")), out.get((wl, n, "off"))
        v["on_off"] = on["throughput"] / off["throughput"] \
            if on and off and on["throughput"] and off["throughput"] \
            else None
    return out


def fmt(v, digits):
    return "" if v is None else f"{v:.{digits}f}"


def table(kernel, zcow, order):
    keys = sorted(set(kernel) | set(zcow),
                  key=lambda k: (order.get(k[0], len(order)), k[0], k[1],
                                 k[2] != "on"))
    head = ["workload", "clients", "tree-log"]
    for c, _ in COLUMNS:
        head += [f"{HEAD[c]} kernel", f"{HEAD[c]} zcow"]
    head += ["runs kernel", "runs zcow"]
    rows = []
    for k in keys:
        row = [k[0], str(k[1]), k[2]]
        for c, digits in COLUMNS:
            for side in (kernel, zcow):
                row.append(fmt(side[k][c], digits) if k in side else "")
        row += [str(kernel[k]["runs"]) if k in kernel else "",
                str(zcow[k]["runs"]) if k in zcow else ""]
        rows.append(row)
    return head, rows


def markdown(head, rows, sources):
    lines = [f"kernel: {s}" for s in sources["kernel"]]
    lines += [f"zcow: {s}" for s in sources["zcow"]]
    lines += ["", "| " + " | ".join(head) + " |",
              "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def csv_text(head, rows):
    names = ["workload", "clients", "treelog"]
    for c, _ in COLUMNS:
        names += [f"{c}_kernel", f"{c}_zcow"]
    names += ["runs_kernel", "runs_zcow"]
    return "\n".join(",".join(r) for r in [names] + rows) + "\n"


def main(argv):
    ap = argparse.ArgumentParser(
        description="kernel btrfs zoned vs zcow under fsync load")
    ap.add_argument("--kernel", action="append", default=[],
                    metavar="VMRUN")
    ap.add_argument("--zcow", action="append", default=[],
                    metavar="WORKLOAD=DIR")
    ap.add_argument("--md")
    ap.add_argument("--csv")
    a = ap.parse_args(argv)
    try:
        if not a.kernel and not a.zcow:
            raise UsageError("nothing to compare: give --kernel and/or "
                             "--zcow")
        sources = {"kernel": [], "zcow": []}
        kruns, zruns, order = [], [], {}
        for arg in a.kernel:
            src, runs = kernel_runs(arg)
            sources["kernel"].append(src)
            # A later VM run replaces the earlier ones' runs of its keys.
            keys = {(r["workload"], r["clients"]) for r in runs}
            kruns = [r for r in kruns
                     if (r["workload"], r["clients"]) not in keys] + runs
        for arg in a.zcow:
            wl, sep, folder = arg.partition("=")
            if not sep or not wl or not folder:
                raise UsageError(f"--zcow {arg}: expected WORKLOAD=DIR")
            paths = zcow_summaries(folder)
            if not paths:
                raise UsageError(f"--zcow {arg}: no summary.json under "
                                 f"{folder}")
            runs = [zcow_run(wl, p) for p in paths]
            names = sorted({r["scenario"] or "?" for r in runs})
            sources["zcow"].append(f"{wl} = {', '.join(names)} "
                                   f"({len(runs)} runs)")
            zruns += runs
        for r in kruns + zruns:
            order.setdefault(r["workload"], len(order))
    except UsageError as e:
        print(f"fsync_table.py: {e}", file=sys.stderr)
        return 2
    head, rows = table(aggregate(kruns), aggregate(zruns), order)
    md = markdown(head, rows, sources)
    if a.md:
        with open(a.md, "w", encoding="utf-8") as f:
            f.write(md)
    if a.csv:
        with open(a.csv, "w", encoding="utf-8") as f:
            f.write(csv_text(head, rows))
    if not a.md and not a.csv:
        sys.stdout.write(md)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
