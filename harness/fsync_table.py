#!/usr/bin/env python3
"""The kernel's btrfs zoned beside zcow under fsync load: one table.

    harness/fsync_table.py --kernel SOURCE [--kernel SOURCE ...]
                           --zcow WORKLOAD=DIR [--zcow WORKLOAD=DIR ...]
                           [--md FILE] [--csv FILE]

SOURCE is either a results folder of `harness/qemu/vm.sh dbench` (or its
summary.json): its "dbench" rows, or a reference file of the kernel's
measured per-fsync figures (a name ending in .csv, e.g.
configs/kernel-fsync-anchors.csv; format below).  DIR is a folder of
`zcow run` results (searched for summary.json, e.g. a sweep of
configs/kernel-fsync.scenario over numjobs, treelog and profile);
WORKLOAD names the kernel workload its rows stand beside (dbench or
fio).  One row per workload, client count, tree-log setting and zcow
profile (the kernel's figures, measured on one device, stand beside
every profile):

  throughput        kernel: dbench's MB/s, the fio job's fsyncs/s; zcow:
                    MiB/s (total.bw_mib_per_s), for WORKLOAD fio its
                    fsyncs/s (total.syncs_per_s); the mean of the runs
  on/off            throughput with the tree-log / without it, per system
  commits/fsync     kernel: btrfs transaction commits (trace); zcow:
                    "commits"
  flushes/fsync     kernel: block stat flushes; zcow: device flush commands
  metadata KiB/fsync  kernel: bytes of regular writes (all but Zone Append
                    data); zcow: superblock + tree + tree-log bytes
  log KiB/fsync     the tree-log's share of the metadata: zcow's tree-log
                    bytes; the kernel's only from a reference file (its
                    device trace does not tell log blocks from others)
  device KiB/fsync  everything written to the device
  beyond 25%        the counts the goal names (commits, flushes, metadata,
                    log per fsync) where zcow lies more than 25% from the
                    kernel's figure or range, with zcow's deviation from
                    its nearer end

A later --kernel replaces the earlier ones' figures of each workload and
client count it has (a VM run over the reference file, a focused rerun
over a full matrix).  Per-fsync figures of a VM run divide the sums over
a key's runs (fsyncs: the kernel's fsync syscalls); zcow's divide by
fs_fsync.nr_fsyncs.  Clients of a zcow run = its jobs.

The reference file: CSV with the header
  source,workload,clients,treelog,throughput,on_off,commits,flushes,
  metadata_kib,device_kib,log_kib
one measurement per line (lines starting with # are comments); each
figure is a number, a range LO-HI, or empty (not measured); throughput
in the workload's unit (dbench MB/s, fio fsyncs/s); source names the
measurement (date and set-up).  The rows of one workload, client count
and tree-log setting make one kernel figure: the range from the lowest
to the highest of them.

--md / --csv write the table (default: markdown on stdout).  Exit
status 2 on a usage error.  Standard library only.
"""
import argparse
import csv
import json
import os
import sys

COLUMNS = [("throughput", 1), ("on_off", 2), ("commits", 4),
           ("flushes", 4), ("metadata_kib", 1), ("log_kib", 1),
           ("device_kib", 1)]
HEAD = {"throughput": "throughput", "on_off": "on/off",
        "commits": "commits/fsync", "flushes": "flushes/fsync",
        "metadata_kib": "metadata KiB/fsync", "log_kib": "log KiB/fsync",
        "device_kib": "device KiB/fsync"}
# The counts held to the goal (within 25% of the kernel's).
GOAL = [("commits", "commits"), ("flushes", "flushes"),
        ("metadata_kib", "metadata"), ("log_kib", "log")]
TOLERANCE = 0.25
REF_FIELDS = ["source", "workload", "clients", "treelog", "throughput",
              "on_off", "commits", "flushes", "metadata_kib",
              "device_kib", "log_kib"]


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
                     "log_bytes": None,
                     "device_bytes": r.get("device_bytes")})
    return f"{s.get('guest_kernel', '?')} ({path})", runs


def parse_figure(text, where):
    """'' -> None, 'X' -> (X, X), 'LO-HI' -> (LO, HI)."""
    text = text.strip()
    if not text:
        return None
    lo, sep, hi = text.partition("-")
    try:
        v = (float(lo), float(hi) if sep else float(lo))
    except ValueError:
        raise UsageError(f"{where}: '{text}' is not a number or a range "
                         f"LO-HI") from None
    if v[0] > v[1]:
        raise UsageError(f"{where}: range '{text}' runs backwards")
    return v


def kernel_reference(path):
    """The rows of a reference CSV: (source, {key: figures})."""
    try:
        with open(path, encoding="utf-8", newline="") as f:
            lines = [(n, l) for n, l in enumerate(f, 1)
                     if l.strip() and not l.lstrip().startswith("#")]
    except OSError as e:
        raise UsageError(f"{path}: {e.strerror}") from e
    if not lines:
        raise UsageError(f"{path}: no header line")
    rows = list(csv.reader([l for _, l in lines]))
    if rows[0] != REF_FIELDS:
        raise UsageError(f"{path}:{lines[0][0]}: header must be "
                         f"{','.join(REF_FIELDS)}")
    merged = {}
    for (n, _), r in zip(lines[1:], rows[1:]):
        where = f"{path}:{n}"
        if len(r) != len(REF_FIELDS):
            raise UsageError(f"{where}: {len(r)} fields, expected "
                             f"{len(REF_FIELDS)}")
        row = dict(zip(REF_FIELDS, r))
        if row["treelog"] not in ("on", "off"):
            raise UsageError(f"{where}: treelog '{row['treelog']}' is not "
                             f"on or off")
        try:
            clients = int(row["clients"])
        except ValueError:
            raise UsageError(f"{where}: clients '{row['clients']}' is not "
                             f"a number") from None
        key = (row["workload"], clients, row["treelog"])
        cur = merged.setdefault(key, {"runs": 0, "fsyncs": None})
        cur["runs"] += 1
        for c, _ in COLUMNS:
            v = parse_figure(row[c], f"{where}: {c}")
            if v is None:
                cur.setdefault(c, None)
                continue
            old = cur.get(c)
            cur[c] = v if old is None else (min(old[0], v[0]),
                                            max(old[1], v[1]))
    return f"reference {path}", merged


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
            "profile": z.get("profile") or "?",
            "throughput": tp,
            "fsyncs": z["fs_fsync"].get("nr_fsyncs") or total.get("syncs"),
            "commits": z.get("commits"),
            "flushes": (z.get("device_commands") or {}).get("flush"),
            "metadata_bytes": sum(dev.get(k, 0)
                                  for k in ("sb", "meta", "log")),
            "log_bytes": dev.get("log", 0),
            "device_bytes": (z.get("write_amplification_breakdown") or {})
            .get("device_bytes_written_total", sum(dev.values())),
            "scenario": z.get("scenario")}


def aggregate(runs, keyf):
    """{key: figures} over the runs of each key; a figure is (v, v)."""
    keys = {}
    for r in runs:
        keys.setdefault(keyf(r), []).append(r)
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
                  "log_kib": per("log_bytes", 1024),
                  "device_kib": per("device_bytes", 1024)}
    for k, v in out.items():
        on = out.get(k[:2] + ("on",) + k[3:])
        off = out.get(k[:2] + ("off",) + k[3:])
        v["on_off"] = on["throughput"] / off["throughput"] \
            if on and off and on["throughput"] and off["throughput"] \
            else None
    for v in out.values():
        for c, _ in COLUMNS:
            if v[c] is not None:
                v[c] = (v[c], v[c])
    return out


def fmt(v, digits):
    if v is None:
        return ""
    if v[0] == v[1]:
        return f"{v[0]:.{digits}f}"
    return f"{v[0]:.{digits}f}-{v[1]:.{digits}f}"


def deviation(z, k):
    """zcow's value @z against the kernel's range @k: 0 inside it, else
    the relative distance from the nearer end (None: not comparable)."""
    if z is None or k is None:
        return None
    if k[0] <= z <= k[1]:
        return 0.0
    end = k[1] if z > k[1] else k[0]
    if end == 0:
        return None
    return (z - end) / end


def beyond(kf, zf):
    out = []
    for c, name in GOAL:
        d = deviation(zf[c][0] if zf[c] else None, kf.get(c))
        if d is not None and abs(d) > TOLERANCE:
            out.append(f"{name} {d * 100:+.0f}%")
    return ", ".join(out)


def table(kernel, zcow, order):
    """Rows: every zcow key, and kernel keys no zcow run stands beside."""
    keys = list(zcow)
    seen = {k[:3] for k in zcow}
    keys += [k + ("",) for k in kernel if k not in seen]
    keys.sort(key=lambda k: (order.get(k[0], len(order)), k[0], k[1],
                             k[2] != "on", k[3]))
    head = ["workload", "clients", "tree-log", "zcow profile"]
    for c, _ in COLUMNS:
        head += [f"{HEAD[c]} kernel", f"{HEAD[c]} zcow"]
    head += ["runs kernel", "runs zcow", "beyond 25%"]
    rows = []
    for k in keys:
        kf, zf = kernel.get(k[:3]), zcow.get(k)
        row = [k[0], str(k[1]), k[2], k[3]]
        for c, digits in COLUMNS:
            row.append(fmt(kf.get(c), digits) if kf else "")
            row.append(fmt(zf[c], digits) if zf else "")
        row += [str(kf["runs"]) if kf else "",
                str(zf["runs"]) if zf else "",
                beyond(kf, zf) if kf and zf else ""]
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
    names = ["workload", "clients", "treelog", "profile"]
    for c, _ in COLUMNS:
        names += [f"{c}_kernel", f"{c}_zcow"]
    names += ["runs_kernel", "runs_zcow", "beyond_25pct"]
    out = []
    for r in [names] + rows:
        out.append(",".join(f'"{x}"' if "," in x else x for x in r))
    return "\n".join(out) + "\n"


def main(argv):
    ap = argparse.ArgumentParser(
        description="kernel btrfs zoned vs zcow under fsync load")
    ap.add_argument("--kernel", action="append", default=[],
                    metavar="SOURCE")
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
        kernel, zruns, order = {}, [], {}
        for arg in a.kernel:
            if arg.endswith(".csv"):
                src, figs = kernel_reference(arg)
            else:
                src, runs = kernel_runs(arg)
                figs = aggregate(runs, lambda r: (r["workload"],
                                                  r["clients"],
                                                  r["treelog"]))
            sources["kernel"].append(src)
            # A later source replaces the earlier ones' figures of its
            # workloads and client counts.
            wc = {k[:2] for k in figs}
            kernel = {k: v for k, v in kernel.items() if k[:2] not in wc}
            kernel.update(figs)
            for k in figs:
                order.setdefault(k[0], len(order))
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
            order.setdefault(wl, len(order))
    except UsageError as e:
        print(f"fsync_table.py: {e}", file=sys.stderr)
        return 2
    zcow = aggregate(zruns, lambda r: (r["workload"], r["clients"],
                                       r["treelog"], r["profile"]))
    head, rows = table(kernel, zcow, order)
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
