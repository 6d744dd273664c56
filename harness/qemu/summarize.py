#!/usr/bin/env python3
"""Summarize one VM run directory (harness/qemu/vm.sh) into summary.json.

Reads OUT/guest/ (what the guest archived: guest-info.txt, steps.txt, rc,
conform*.txt, peers files) and writes OUT/summary.json, copies the
conformance output to OUT/, for the peers scenario writes
OUT/peers.md (one table per workload) and OUT/peers-<workload>.svg
(gnuplot, when installed) from the fio JSON, zcow's summary.json, the
SMART logs and zone reports, and for the gc scenario OUT/gc.md and
OUT/gc.csv (the kernel's btrfs beside zcow under sustained overwrite), and
for the dbench scenario OUT/dbench.md (fsync load, tree-log on / off: per
run throughput and per-fsync commits, flushes, metadata and device bytes),
and for the compat scenario OUT/compat.md (each step of the kernel / zcow
round trips: what, pass or fail, seconds; the end of each failed step's
output).
Standard library only.
"""
import argparse
import json
import os
import re
import shutil
import subprocess


def read(path, default=""):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return default


def write_table(out, name, lines, echo=True):
    """Write the markdown @lines to OUT/NAME; print them too with @echo."""
    with open(os.path.join(out, name), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    if echo:
        print("\n".join(lines))


def kv_file(path):
    out = {}
    for line in read(path).splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def steps(path):
    out = []
    for line in read(path).splitlines():
        parts = line.split()
        if len(parts) == 3:
            out.append({"step": parts[0], "rc": int(parts[1]),
                        "seconds": float(parts[2])})
    return out


def conformance(path):
    text = read(path)
    if not text:
        return None
    rules = []
    for m in re.finditer(r"^rule (\S+): (expected (\S+) got (\S+) (ok|DIFFER)"
                         r"|skipped \((.*)\))", text, re.M):
        if m.group(6) is not None:
            rules.append({"rule": m.group(1), "result": "skipped",
                          "why": m.group(6)})
        else:
            rules.append({"rule": m.group(1), "expected": m.group(3),
                          "got": m.group(4),
                          "result": "ok" if m.group(5) == "ok" else "differ"})
    summary = re.search(r"^conform: \d+ rules.*$", text, re.M)
    return {"rules": rules,
            "summary": summary.group(0) if summary else None,
            "agreed": sum(r["result"] == "ok" for r in rules),
            "differed": sum(r["result"] == "differ" for r in rules),
            "skipped": sum(r["result"] == "skipped" for r in rules)}


# blkzone report line: start, len, cap, wptr in 512-byte sectors.
ZONE_RE = re.compile(r"start: (0x[0-9a-f]+), len (0x[0-9a-f]+), "
                     r"cap (0x[0-9a-f]+), wptr (0x[0-9a-f]+).*zcond:\s*(\d+)")


def written_bytes(path):
    """Sum of wp advances in a blkzone report (full zones count capacity)."""
    total = 0
    for m in ZONE_RE.finditer(read(path)):
        length, cap, wp, cond = (int(m.group(2), 16), int(m.group(3), 16),
                                 int(m.group(4), 16), int(m.group(5)))
        total += (cap if cond == 14 else min(wp, cap)) * 512
    return total


def fio_job(path):
    # fio --output-format=normal,json: the JSON object sits among the
    # normal text, each starting on its own line.
    text = read(path)
    m = re.search(r"^\{", text, re.M)
    if not m:
        return None
    try:
        data, _ = json.JSONDecoder().raw_decode(text[m.start():])
    except ValueError:
        return None
    jobs = data.get("jobs") or []
    if not jobs:
        return None
    w = {"bytes": 0, "bw": 0.0, "iops": 0.0}
    pct = {}
    for job in jobs:
        wr = job.get("write", {})
        w["bytes"] += wr.get("io_bytes", 0)
        w["bw"] += wr.get("bw_bytes", 0)
        w["iops"] += wr.get("iops", 0.0)
        clat = wr.get("clat_ns", {}).get("percentile", {})
        for k in ("50.000000", "99.000000", "99.900000"):
            if k in clat:
                pct[k] = max(pct.get(k, 0), clat[k])
    w["p50_us"] = pct.get("50.000000", 0) / 1000
    w["p99_us"] = pct.get("99.000000", 0) / 1000
    w["p999_us"] = pct.get("99.900000", 0) / 1000
    return w


def zcow_job(path):
    """The job totals of `zcow run`'s summary.json, as fio_job() gives."""
    try:
        with open(path, encoding="utf-8") as f:
            z = json.load(f)
    except (OSError, ValueError):
        return None
    t = z.get("total") or {}
    lat = t.get("lat_ns") or {}
    return {"bytes": t.get("write_bytes", 0),
            "bw": t.get("bw_bytes_per_s", 0.0),
            "iops": t.get("iops", 0.0),
            "p50_us": lat.get("p50", 0) / 1000,
            "p99_us": lat.get("p99", 0) / 1000,
            "p999_us": lat.get("p99.9", 0) / 1000,
            "zcow": {"rate_basis": t.get("rate_basis"),
                     "wall_time_s": z.get("wall_time_s"),
                     "zone_append": z.get("zone_append"),
                     "own_write_amplification":
                         z.get("write_amplification"),
                     "own_zone_resets": z.get("zone_resets"),
                     "device_bytes_written":
                         z.get("device_bytes_written"),
                     "commits": z.get("commits"),
                     "block_groups": z.get("block_groups")}}


# peers scenario (docs/vm.md, "Peers"): workloads in their order, peers in
# theirs; result-WORKLOAD-PEER.txt per run.
PEER_NAMES = {"raw": "raw (fio zonemode=zbd, psync)",
              "raw-uring": "raw (fio zonemode=zbd, io_uring_cmd)",
              "btrfs": "kernel btrfs (zoned)",
              "zcow": "zcow (`zcow run`, fs target)",
              "fuse": "zcow through FUSE (`zcow fuse`)"}
PEER_WORKLOADS = {
    "seq128k": "one job, 128 KiB sequential writes (psync, direct=1, "
               "end_fsync=1)",
    "rand4k": "4 KiB random writes (psync, direct=1, time-based, "
              "end_fsync=1)",
    "fsync": "the kernel fsync job (configs/kernel-fsync.fio: 8 KiB files, "
             "an fsync after every 4 KiB write)",
    "rho": "uniform 4 KiB overwrite at rho (configs/vm-gc-rhoNN.fio, "
           "fsync=1024) until ENOSPC, the device fills or the time limit"}


def first_int(path):
    """The first word of a file as an int (resets-TAG.txt), else None."""
    words = read(path).split()
    return int_or_none(words[0]) if words else None


def peer_fsyncs(path):
    """fio JSON: fsyncs, their latency percentiles (us) over all jobs."""
    data = fio_json(path)
    if data is None:
        return None
    n, pct = 0, {}
    for job in data.get("jobs") or []:
        sync = job.get("sync", {})
        n += sync.get("total_ios", 0)
        for k, v in (sync.get("lat_ns", {}).get("percentile") or {}).items():
            pct[k] = max(pct.get(k, 0), v)
    return {"fsyncs": n, "p50_us": pct.get("50.000000", 0) / 1000,
            "p99_us": pct.get("99.000000", 0) / 1000}


def peer_row(guest, tag):
    """One run of a non-rho workload: rates, latencies, device bytes."""
    r = kv_file(os.path.join(guest, f"result-{tag}.txt"))
    g = lambda name: os.path.join(guest, name)
    row = {"peer": r.get("peer"), "workload": r.get("workload"),
           "engine": r.get("engine"), "rc": int_or_none(r.get("rc")),
           "umount_rc": int_or_none(r.get("umount_rc")),
           "check_rc": int_or_none(r.get("check_rc")),
           "job_seconds": float_or_none(r.get("job_seconds"))}
    if r.get("status") == "n/a":
        row.update(status="n/a", why=r.get("why"))
        return row
    zpath = g(f"zcow-summary-{tag}.json")
    if row["peer"] == "zcow":
        job = zcow_job(zpath)
        try:
            with open(zpath, encoding="utf-8") as f:
                z = json.load(f)
        except (OSError, ValueError):
            z = {}
        t = z.get("total") or {}
        sl = t.get("sync_lat_ns") or {}
        sync = {"fsyncs": t.get("syncs"), "p50_us": sl.get("p50", 0) / 1000,
                "p99_us": sl.get("p99", 0) / 1000,
                "per_s": t.get("syncs_per_s")}
        row["commits"] = z.get("commits")
        # One thread issues every job's calls, one at a time: the run's
        # wall time over its calls is what one call costs on average
        # (mkfs and the unmount's commit included); the jobs' clocks
        # (end_ns) advance by their own calls and the waits a commit
        # imposes, so with N jobs they end long before the wall time.
        lat = t.get("lat_ns") or {}
        wall = z.get("wall_time_s")
        ncalls = (t.get("ios") or 0) + (t.get("syncs") or 0)
        row["zcow_time"] = {
            "wall_s": wall,
            "jobs_end_s": round(max((j.get("end_ns", 0)
                                     for j in z.get("jobs") or []),
                                    default=0) / 1e9, 2),
            "write_calls": t.get("ios"), "fsync_calls": t.get("syncs"),
            "wall_us_per_call": round(wall * 1e6 / ncalls, 1)
            if wall and ncalls else None,
            "write_mean_us": round(lat.get("mean", 0) / 1000, 1),
            "fsync_mean_us": round(sl.get("mean", 0) / 1000, 1),
            "device_commands": z.get("device_commands")}
    else:
        job = fio_job(g(f"fio-{tag}.txt"))
        sync = peer_fsyncs(g(f"fio-{tag}.txt"))
        rate = fio_fsyncs(g(f"fio-{tag}.txt"))[0]
        if sync is not None:
            sync["per_s"] = rate
    ok = job is not None and row["rc"] == 0 and \
        row["umount_rc"] in (None, 0) and row["check_rc"] in (None, 0)
    row["status"] = "ok" if ok else (
        f"failed (rc {row['rc']}, umount {row['umount_rc']}, "
        f"check {row['check_rc']})")
    if job is None:
        return row
    s0 = smart_written(g(f"smart-{tag}-before.json"))
    s1 = smart_written(g(f"smart-{tag}-after.json"))
    b0, b1 = block_stat(g(f"stat-{tag}-before.txt")), \
        block_stat(g(f"stat-{tag}-after.txt"))
    dev = (s1 - s0) * 512000 if s0 is not None and s1 is not None else None
    row.update(
        MiB_s=round(job["bw"] / 2**20, 1), iops=round(job["iops"]),
        p50_us=round(job["p50_us"]), p99_us=round(job["p99_us"]),
        p999_us=round(job["p999_us"]), job_bytes=job["bytes"],
        device_bytes_smart=dev,
        device_bytes_wp=written_bytes(g(f"zones-{tag}-after.txt"))
        - written_bytes(g(f"zones-{tag}-before.txt")),
        device_bytes_stat=(b1[6] - b0[6]) * 512
        if len(b0) >= 7 and len(b1) >= 7 else None,
        write_amplification=round(dev / job["bytes"], 3)
        if dev is not None and job["bytes"] else None,
        zone_resets=first_int(g(f"resets-{tag}.txt")))
    if sync:
        row.update(fsyncs=sync["fsyncs"], fsyncs_per_s=sync.get("per_s"),
                   fsync_p50_us=round(sync["p50_us"]),
                   fsync_p99_us=round(sync["p99_us"]))
    if "zcow" in job:
        row["zcow_run"] = job["zcow"]
    return row


def peers(out, guest):
    """The peers scenario: one table and one plot per workload."""
    setup = kv_file(os.path.join(guest, "peers-setup.txt"))
    workloads = setup.get("workloads", "").split()
    names = setup.get("peers", "").split()
    rho_zone = int_or_none(setup.get("rho_zone_bytes")) or 0
    rho_dev = int_or_none(setup.get("rho_device_bytes"))

    def num(v):
        return "" if v is None else str(v)

    def mib(v):
        return "" if v is None else f"{v / 2**20:.1f}"

    lines, result = [], {"setup": setup, "workloads": {}}
    for w in workloads:
        tags = [f"{w}-{p}" for p in names
                if os.path.exists(os.path.join(guest, f"result-{w}-{p}.txt"))]
        kind = re.sub(r"[-0-9]+$", "", w)
        lines += ["", f"### {w}: {PEER_WORKLOADS.get(kind, w)}", ""]
        if kind == "rho":
            rows = []
            for t in tags:
                r = kv_file(os.path.join(guest, f"result-{t}.txt"))
                if r.get("status") == "n/a":
                    rows.append({"peer": r.get("peer"), "status": "n/a",
                                 "why": r.get("why")})
                    continue
                row = gc_row(guest, t, rho_zone)
                row["peer"] = r.get("peer")
                row["status"] = "ok" if row["finished"] else "stopped"
                # killed by the scenario's job limit (timeout: SIGTERM)
                rc = r.get("zcow_rc") if row["peer"] == "zcow" \
                    else r.get("fio_rc")
                if rc in ("124", "143") or "signal 15" in r.get("error", ""):
                    limit = setup.get("rho_fuse_timeout") \
                        if row["peer"] == "fuse" \
                        else setup.get("rho_job_timeout")
                    h = row.get("host_bytes")
                    where = "" if h is None else (
                        " in the fill" if h < (row["file_bytes"] or 0)
                        else " in the overwrite")
                    row["error"] = f"the job's time limit ({limit} s){where}"
                h = row.get("host_bytes")
                row["device_fills"] = round(h / rho_dev, 3) \
                    if h and rho_dev else None
                row["MiB_s"] = round(h / 2**20 / row["job_seconds"], 2) \
                    if h and row.get("job_seconds") else None
                rows.append(row)
            lines += ["| peer | finished? | D MiB | file MiB | host MiB | "
                      "host / capacity | MiB/s (host / job s) | device MiB "
                      "(SMART) | WA (SMART) | zone resets | zcow's own WA: "
                      "total / GC | job s | stopped by |",
                      "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
            for r in rows:
                if r["status"] == "n/a":
                    lines.append(f"| {PEER_NAMES.get(r['peer'], r['peer'])}"
                                 f" | n/a: {r['why']} |||||||||||")
                    continue
                own, stop = own_wa_and_stop(
                    r, f"time limit ({setup.get('rho_runtime')} s)")
                fin = ("yes" if r["complete"] else
                       "yes (time limit)" if r["finished"] else "no")
                lines.append(
                    f"| {PEER_NAMES.get(r['peer'], r['peer'])} | {fin} | "
                    f"{mib(r['data_space_bytes'])} | {mib(r['file_bytes'])}"
                    f" | {mib(r.get('host_bytes'))} | "
                    f"{num(r['device_fills'])} | {num(r['MiB_s'])} | "
                    f"{mib(r['device_bytes_smart'])} | "
                    f"{num(r['wa_smart'])} | {num(r['zone_resets'])} | "
                    f"{own} | {num(r['job_seconds'])} | {stop} |")
        else:
            rows = [peer_row(guest, t) for t in tags]
            fs = kind == "fsync"
            lat = "fsync" if fs else "write"
            lines += [f"| peer | MiB/s | IOPS | fsyncs/s | {lat} p50 us | "
                      f"{lat} p99 us | p99.9 us | job MiB | device MiB "
                      "(SMART) | WA (SMART) | device MiB (wp sum) | device "
                      "MiB (block stat) | zone resets | commits | job s | "
                      "status |",
                      "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
                      "---|---|---|"]
            for r in rows:
                name = PEER_NAMES.get(r["peer"], r["peer"])
                if r["status"] == "n/a":
                    lines.append(f"| {name} | n/a: {r['why']} "
                                 "||||||||||||||")
                    continue
                if "MiB_s" not in r:
                    lines.append(f"| {name} | {r['status']} ||||||||||||||")
                    continue
                p50 = r.get("fsync_p50_us") if fs else r["p50_us"]
                p99 = r.get("fsync_p99_us") if fs else r["p99_us"]
                lines.append(
                    f"| {name} | {r['MiB_s']} | {r['iops']} | "
                    f"{num(r.get('fsyncs_per_s')) if fs else ''} | "
                    f"{num(p50)} | {num(p99)} | "
                    f"{'' if fs else r['p999_us']} | "
                    f"{mib(r['job_bytes'])} | "
                    f"{mib(r['device_bytes_smart'])} | "
                    f"{num(r['write_amplification'])} | "
                    f"{mib(r['device_bytes_wp'])} | "
                    f"{mib(r['device_bytes_stat'])} | "
                    f"{num(r['zone_resets'])} | {num(r.get('commits'))} | "
                    f"{num(r['job_seconds'])} | {r['status']} |")
            for r in rows:
                zt = r.get("zcow_time")
                if not zt or zt["wall_s"] is None:
                    continue
                lines += ["", f"zcow run (one thread): {zt['wall_s']} s of "
                          f"wall time for {zt['write_calls']} writes and "
                          f"{zt['fsync_calls']} fsyncs, "
                          f"{zt['wall_us_per_call']} us of wall time per "
                          f"call (mkfs and unmount included); mean "
                          f"latency {zt['write_mean_us']} us per write, "
                          f"{zt['fsync_mean_us']} us per fsync; the jobs' "
                          f"clocks ended at {zt['jobs_end_s']} s."]
        result["workloads"][w] = rows
        plot_peers(out, w, kind, [r for r in rows
                                  if r.get("MiB_s") is not None])
    write_table(out, "peers.md", lines[1:])
    return result


def plot_peers(out, workload, kind, rows):
    """peers-WORKLOAD.svg (gnuplot): throughput and latency percentiles per
    peer; the rho workloads: throughput and write amplification."""
    if not rows or not shutil.which("gnuplot"):
        return
    dat = os.path.join(out, f"peers-{workload}.dat")
    with open(dat, "w", encoding="utf-8") as f:
        if kind == "rho":
            f.write("peer MiB_s WA_SMART\n")
            for r in rows:
                f.write(f"{r['peer']} {r['MiB_s']} {r['wa_smart'] or 0}\n")
        else:
            fs = kind == "fsync"
            f.write("peer " + ("fsyncs_s p50_ms p99_ms\n" if fs else
                               "MiB_s p50_ms p99_ms p999_ms\n"))
            for r in rows:
                if fs:
                    f.write(f"{r['peer']} {r.get('fsyncs_per_s') or 0} "
                            f"{(r.get('fsync_p50_us') or 0) / 1000} "
                            f"{(r.get('fsync_p99_us') or 0) / 1000}\n")
                else:
                    f.write(f"{r['peer']} {r['MiB_s']} {r['p50_us'] / 1000} "
                            f"{r['p99_us'] / 1000} "
                            f"{r['p999_us'] / 1000}\n")
    if kind == "rho":
        right = ('set title "write amplification (SMART bytes / host bytes)"'
                 f'\nplot "{dat}" using 3:xtic(1) notitle')
        left = "throughput, host MiB / job s (fill + overwrite)"
    elif kind == "fsync":
        right = ('set style histogram clustered gap 1\n'
                 'set title "fsync latency (ms)"\nset logscale y\n'
                 f'set yrange [*:*]\nplot "{dat}" using 3:xtic(1), "" using 4')
        left = "fsyncs per second"
    else:
        right = ('set style histogram clustered gap 1\n'
                 'set title "write completion latency (ms)"\n'
                 'set logscale y\nset yrange [*:*]\n'
                 f'plot "{dat}" using 3:xtic(1), "" using 4, "" using 5')
        left = "throughput (MiB/s)"
    script = f"""
set terminal svg size 900,360 font "sans,11" noenhanced
set output "{os.path.join(out, f'peers-{workload}.svg')}"
set multiplot layout 1,2 title "{workload}: one VM boot (QEMU ZNS, TCG)"
set style data histograms
set style fill solid 0.6 border -1
set boxwidth 0.8
set key autotitle columnheader top left
set yrange [0:*]
set title "{left}"
plot "{dat}" using 2:xtic(1) notitle
{right}
unset multiplot
"""
    subprocess.run(["gnuplot"], input=script, text=True, check=False,
                   timeout=60)


def fio_jobs(path):
    """Every job of a fio --output-format=normal,json file: name, bytes
    written, error code."""
    text = read(path)
    m = re.search(r"^\{", text, re.M)
    if not m:
        return None
    try:
        data, _ = json.JSONDecoder().raw_decode(text[m.start():])
    except ValueError:
        return None
    return [{"name": j.get("jobname"),
             "write_bytes": j.get("write", {}).get("io_bytes", 0),
             "error": j.get("error", 0)} for j in data.get("jobs") or []]


def smart_written(path):
    """SMART data units written (1000 x 512 bytes each, rounded up)."""
    try:
        with open(path, encoding="utf-8") as f:
            v = json.load(f).get("data_units_written")
    except (OSError, ValueError):
        return None
    return None if v is None else int(v)


def float_or_none(s):
    return float(s) if s else None


def int_or_none(s):
    try:
        return int(s)
    except (TypeError, ValueError):
        return None


def own_wa_and_stop(r, limit):
    """A gc row's zcow WA cell ("total / GC") and why it stopped: its
    error, @limit when it ran out of time, "" when it completed."""
    own = (f"{r['zcow_wa']} / {r['zcow_gc_wa']}"
           if r.get("zcow_wa") is not None else "")
    if not r["finished"]:
        return own, r.get("error") or ""
    if not r["complete"]:
        return own, limit
    return own, ""


def gc_row(guest, tag, zone_bytes):
    r = kv_file(os.path.join(guest, f"result-{tag}.txt"))
    system, rho = r.get("system"), int_or_none(r.get("rho"))
    calib = kv_file(os.path.join(guest, f"calib-data-{system}.txt"))
    data_bytes = int_or_none(calib.get("data_bytes"))
    file_bytes = int_or_none(r.get("file_bytes"))
    row = {"rho": rho / 100 if rho is not None else None,
           "system": system,
           "data_space_bytes": data_bytes,
           "file_bytes": file_bytes,
           "rho_effective": round(file_bytes / data_bytes, 4)
           if file_bytes and data_bytes else None,
           "loops": int_or_none(r.get("loops")),
           "job_seconds": float(r["job_seconds"])
           if r.get("job_seconds") else None}
    resets = read(os.path.join(guest, f"resets-{tag}.txt")).split()
    row["zone_resets"] = int_or_none(resets[0]) if resets else None
    overrun = [int_or_none(x.split("=", 1)[1]) for x in resets
               if x.startswith("overrun=")]
    row["trace_overrun"] = overrun[0] if overrun else None
    before = written_bytes(os.path.join(guest, f"zones-{tag}-before.txt"))
    after = written_bytes(os.path.join(guest, f"zones-{tag}-after.txt"))
    row["device_bytes_wp"] = (after - before
                              + zone_bytes * (row["zone_resets"] or 0))
    s0 = smart_written(os.path.join(guest, f"smart-{tag}-before.json"))
    s1 = smart_written(os.path.join(guest, f"smart-{tag}-after.json"))
    row["device_bytes_smart"] = (s1 - s0) * 512000 \
        if s0 is not None and s1 is not None else None
    if system != "zcow":  # btrfs, or zcow through FUSE: fio's job
        jobs = fio_jobs(os.path.join(guest, f"fio-{tag}.txt")) or []
        row["host_bytes"] = sum(j["write_bytes"] for j in jobs)
        errs = [j for j in jobs if j["error"]]
        fio_rc = int_or_none(r.get("fio_rc"))
        row["finished"] = bool(jobs) and not errs and fio_rc == 0
        if errs:
            row["error"] = (f"{errs[0]['name']}: errno {errs[0]['error']} "
                            f"({os.strerror(errs[0]['error'])})")
        else:
            row["error"] = None if row["finished"] else (
                r.get("error") or f"fio rc {fio_rc}")
        # fio's own message: the failing operation and its offset.
        row["fio_message"] = r.get("error") or None
        row["read_only"] = r.get("read_only") == "yes"
        row["fio_rc"] = fio_rc
        row["sync_rc"] = int_or_none(r.get("sync_rc"))
        row["umount_rc"] = int_or_none(r.get("umount_rc"))
        row["jobs"] = jobs
        row["sysfs_after"] = kv_file(os.path.join(
            guest, f"sysfs-{tag}-after.txt"))
        row["dmesg"] = [ln for ln in read(os.path.join(
            guest, f"dmesg-{tag}.txt")).splitlines()
            if re.search(r"BTRFS|btrfs|nvme", ln)][-30:]
    else:
        z = None
        try:
            with open(os.path.join(guest, f"zcow-summary-{tag}.json"),
                      encoding="utf-8") as f:
                z = json.load(f)
        except (OSError, ValueError):
            pass
        row["finished"] = z is not None and r.get("zcow_rc") == "0"
        row["error"] = None if row["finished"] else (r.get("error") or
                                                     "no summary.json")
        row["read_only"] = False
        row["check_rc"] = int_or_none(r.get("check_rc"))
        if z:
            b = z.get("write_amplification_breakdown") or {}
            host = b.get("host_bytes_written") or 0
            dev = b.get("device_bytes_written") or {}
            row["host_bytes"] = host
            row["zcow_device_bytes"] = b.get("device_bytes_written_total")
            row["zcow_wa"] = b.get("write_amplification")
            # The data WA of cleaning (what the analytic curve models):
            # (data + relocated data) / host.
            row["zcow_gc_wa"] = round((dev.get("data", 0) +
                                       dev.get("reloc", 0)) / host, 4) \
                if host else None
            row["zcow_ratio_to_host"] = b.get("ratio_to_host")
            row["zcow_reclaim"] = z.get("reclaim")
            row["zcow_wall_time_s"] = z.get("wall_time_s")
        else:
            row["host_bytes"] = None
    h = row.get("host_bytes")
    # finished: the job ran to its end without an error; complete: it
    # wrote the fill and every loop (not stopped by its runtime limit).
    planned = file_bytes * (1 + (row["loops"] or 0)) if file_bytes else None
    row["planned_host_bytes"] = planned
    row["complete"] = bool(row["finished"] and h and planned and
                           h >= planned)
    for k in ("smart", "wp"):
        d = row.get(f"device_bytes_{k}")
        row[f"wa_{k}"] = round(d / h, 4) if d is not None and h else None
    return row


def gc(out, guest):
    setup = kv_file(os.path.join(guest, "gc-setup.txt"))
    zone_bytes = int_or_none(setup.get("zone_bytes")) or 0
    tags = sorted((n[len("result-"):-len(".txt")]
                   for n in os.listdir(guest)
                   if n.startswith("result-") and n.endswith(".txt")),
                  key=lambda t: (int_or_none(t.split("-")[-1]) or 0, t))
    rows = [gc_row(guest, t, zone_bytes) for t in tags]
    dev_bytes = int_or_none(setup.get("device_bytes"))
    for r in rows:
        r["device_fills"] = round(r["host_bytes"] / dev_bytes, 3) \
            if r.get("host_bytes") and dev_bytes else None

    def mib(v):
        return "" if v is None else f"{v / 2**20:.1f}"

    def num(v):
        return "" if v is None else str(v)

    lines = ["| rho | system | finished? | D MiB | file MiB | host MiB "
             "| host / capacity | device MiB (SMART) | WA (SMART) "
             "| device MiB (wp + resets) | WA (wp) | zone resets "
             "| zcow's own WA: total / GC | stopped by |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    cols = ["rho", "system", "finished", "complete", "data_space_bytes",
            "file_bytes", "rho_effective", "loops", "host_bytes",
            "planned_host_bytes", "device_fills", "device_bytes_smart",
            "wa_smart", "device_bytes_wp", "wa_wp", "zone_resets",
            "zcow_wa", "zcow_gc_wa", "read_only", "error", "job_seconds"]
    runtime = setup.get("runtime")
    for r in rows:
        own, stop = own_wa_and_stop(r, f"runtime limit ({runtime} s)")
        if r.get("read_only"):
            stop = (stop + "; read-only").lstrip("; ")
        fin = ("yes" if r["complete"] else
               "yes (time limit)" if r["finished"] else "no")
        lines.append(
            f"| {num(r['rho'])} | {r['system']} | {fin} | "
            f"{mib(r['data_space_bytes'])} | {mib(r['file_bytes'])} | "
            f"{mib(r.get('host_bytes'))} | {num(r['device_fills'])} | "
            f"{mib(r['device_bytes_smart'])} | {num(r['wa_smart'])} | "
            f"{mib(r['device_bytes_wp'])} | {num(r['wa_wp'])} | "
            f"{num(r['zone_resets'])} | {own} | {stop} |")
    write_table(out, "gc.md", lines, echo=False)
    with open(os.path.join(out, "gc.csv"), "w", encoding="utf-8") as f:
        f.write(",".join(cols) + "\n")
        for r in rows:
            f.write(",".join('"' + str(r.get(c)).replace('"', "'") + '"'
                             if isinstance(r.get(c), str)
                             else ("" if r.get(c) is None else str(r.get(c)))
                             for c in cols) + "\n")
    print("\n".join(lines))
    return {"device_bytes": int_or_none(setup.get("device_bytes")),
            "zone_bytes": zone_bytes,
            "fills": setup.get("fills"),
            "runtime_s": int_or_none(runtime),
            "rows": rows}


# dbench scenario: one run per result-<tag>.txt (docs/vm.md).
HIST_HITS_RE = re.compile(r"^\s*Hits:\s*(\d+)", re.M)
HIST_RQ_RE = re.compile(r"rwbs:\s*(\S+)\s*\}\s*hitcount:\s*(\d+)"
                        r"\s+bytes:\s*(\d+)")


def hist_hits(path):
    """Total hits of a trace hist trigger's output, None when missing."""
    m = HIST_HITS_RE.search(read(path))
    return int(m.group(1)) if m else None


def hist_requests(path):
    """Block requests issued by kind (rwbs): {rwbs: [count, bytes]}."""
    out = {}
    for m in HIST_RQ_RE.finditer(read(path)):
        c = out.setdefault(m.group(1), [0, 0])
        c[0] += int(m.group(2))
        c[1] += int(m.group(3))
    return out


def block_stat(path):
    """/sys/block/<dev>/stat as a list of ints (Documentation/block/stat)."""
    return [int(x) for x in read(path).split()]


def commit_stats_commits(path):
    m = re.search(r"^commits (\d+)", read(path), re.M)
    return int(m.group(1)) if m else None


def dbench_throughput(text):
    """dbench's "Throughput X MB/sec" line and its per-op counts."""
    m = re.search(r"^Throughput ([0-9.]+) MB/sec", text, re.M)
    ops = {o: int(c) for o, c in
           re.findall(r"^ (\w+)\s+(\d+)\s+[0-9.]+\s+[0-9.]+$", text, re.M)}
    return (float(m.group(1)) if m else None), ops


def fio_json(path):
    """The JSON object of a fio output file (text before it skipped), or
    None."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        m = re.search(r"^\{", text, re.M)
        data, _ = json.JSONDecoder().raw_decode(text[m.start():])
    except (OSError, ValueError, AttributeError):
        return None
    return data


def fio_fsyncs(path):
    """fio JSON: fsyncs per second (each job's fsyncs over its runtime,
    summed), fsyncs fio counted, job errors."""
    data = fio_json(path)
    if data is None:
        return None, None, None
    rate, count, errors = 0.0, 0, 0
    for job in data.get("jobs") or []:
        n = job.get("sync", {}).get("total_ios", 0)
        count += n
        if job.get("job_runtime"):
            rate += n / (job["job_runtime"] / 1000)
        errors += 1 if job.get("error") else 0
    return round(rate, 1), count, errors


def per_fsync(v, fsyncs, scale=1):
    return round(v / scale / fsyncs, 4) if v is not None and fsyncs else None


def dbench_row(guest, tag):
    r = kv_file(os.path.join(guest, f"result-{tag}.txt"))
    path = lambda name: os.path.join(guest, f"{tag}-{name}.txt")
    row = {"workload": r.get("workload"),
           "clients": int_or_none(r.get("clients")),
           "treelog": r.get("treelog"),
           "pair": int_or_none(r.get("pair")),
           "rc": int_or_none(r.get("rc")),
           "workload_seconds": float_or_none(r.get("workload_seconds"))}
    if row["workload"] == "fio":
        rate, counted, errors = fio_fsyncs(path("out"))
        row.update(throughput=rate, throughput_unit="fsync/s",
                   fsyncs_reported=counted, job_errors=errors)
    else:
        mbs, ops = dbench_throughput(read(path("out")))
        row.update(throughput=mbs, throughput_unit="MB/s",
                   fsyncs_reported=ops.get("Flush"), ops=ops)
    fs = hist_hits(path("hist-sys_enter_fsync"))
    fds = hist_hits(path("hist-sys_enter_fdatasync"))
    row["fsyncs"] = None if fs is None else fs + (fds or 0)
    row["commits"] = hist_hits(path("hist-btrfs_transaction_commit"))
    g0 = int_or_none(read(path("gen-before")).strip())
    g1 = int_or_none(read(path("gen-after")).strip())
    row["commits_generation"] = g1 - g0 \
        if g0 is not None and g1 is not None else None
    c0 = commit_stats_commits(path("commit-stats-before"))
    c1 = commit_stats_commits(path("commit-stats-after"))
    row["commits_commit_stats"] = c1 - c0 \
        if c0 is not None and c1 is not None else None
    s0, s1 = block_stat(path("stat-before")), block_stat(path("stat-after"))
    if len(s0) >= 17 and len(s1) >= 17:
        # Fields 7 (sectors written, 512 bytes each, Zone Append included)
        # and 16 (flush requests).
        row["device_bytes"] = (s1[6] - s0[6]) * 512
        row["flushes"] = s1[15] - s0[15]
    else:
        row["device_bytes"] = row["flushes"] = None
    rq = hist_requests(path("hist-block_rq_issue"))
    row["requests"] = {k: {"count": c, "bytes": b} for k, (c, b) in
                       sorted(rq.items())}
    # btrfs zoned (6.1) writes file data by Zone Append (rwbs N...) and
    # everything else (tree blocks, tree-log, superblocks) by regular
    # writes (W): metadata = the bytes of regular writes.
    row["metadata_bytes"] = sum(b for k, (c, b) in rq.items() if "W" in k) \
        if rq else None
    row["data_bytes"] = row["device_bytes"] - row["metadata_bytes"] \
        if rq and row["device_bytes"] is not None else None
    f = row["fsyncs"]
    row["per_fsync"] = {
        "commits": per_fsync(row["commits"], f),
        "flushes": per_fsync(row["flushes"], f),
        "metadata_kib": per_fsync(row["metadata_bytes"], f, 1024),
        "device_kib": per_fsync(row["device_bytes"], f, 1024)}
    return row


def dbench_ratios(rows):
    """Tree-log on / off throughput per workload and client count, over
    the mean of its pairs."""
    keys = []
    for r in rows:
        k = (r["workload"], r["clients"])
        if k not in keys:
            keys.append(k)
    out = []
    for wl, n in keys:
        mean = {}
        for mode in ("on", "off"):
            v = [r["throughput"] for r in rows if r["workload"] == wl and
                 r["clients"] == n and r["treelog"] == mode and
                 r["throughput"] is not None]
            mean[mode] = round(sum(v) / len(v), 3) if v else None
        out.append({"workload": wl, "clients": n,
                    "throughput_on": mean["on"],
                    "throughput_off": mean["off"],
                    "on_off": round(mean["on"] / mean["off"], 3)
                    if mean["on"] and mean["off"] else None})
    return out


def dbench(out, guest):
    setup = kv_file(os.path.join(guest, "dbench-setup.txt"))
    tags = [n[len("result-"):-len(".txt")] for n in sorted(os.listdir(guest))
            if n.startswith("result-") and n.endswith(".txt")]
    rows = [dbench_row(guest, t) for t in tags]
    order = {"dbench": 0, "fio": 1}
    rows.sort(key=lambda r: (order.get(r["workload"], 2), r["workload"] or "",
                             r["clients"] or 0, r["pair"] or 0,
                             r["treelog"] != "on"))
    ratios = dbench_ratios(rows)
    ratio = {(x["workload"], x["clients"]): x["on_off"] for x in ratios}

    def num(v):
        return "" if v is None else str(v)

    lines = ["| workload | clients | pair | tree-log | throughput | fsyncs "
             "(syscalls) | fsyncs (tool) | commits (trace / generation) "
             "| commits / fsync | flushes / fsync | metadata KiB / fsync "
             "| device KiB / fsync | data MiB | metadata MiB |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        p = r["per_fsync"]
        mib = lambda v: "" if v is None else f"{v / 2**20:.1f}"
        tp = "" if r["throughput"] is None else \
            f"{r['throughput']} {r['throughput_unit']}"
        if r["rc"] != 0:
            tp = f"failed (rc {r['rc']})"
        lines.append(
            f"| {r['workload']} | {num(r['clients'])} | {num(r['pair'])} | "
            f"{r['treelog']} | {tp} | {num(r['fsyncs'])} | "
            f"{num(r['fsyncs_reported'])} | {num(r['commits'])} / "
            f"{num(r['commits_generation'])} | {num(p['commits'])} | "
            f"{num(p['flushes'])} | {num(p['metadata_kib'])} | "
            f"{num(p['device_kib'])} | {mib(r['data_bytes'])} | "
            f"{mib(r['metadata_bytes'])} |")
    lines += ["", "| workload | clients | throughput on | throughput off "
              "| on / off |", "|---|---|---|---|---|"]
    for x in ratios:
        lines.append(f"| {x['workload']} | {x['clients']} | "
                     f"{num(x['throughput_on'])} | {num(x['throughput_off'])}"
                     f" | {num(ratio[(x['workload'], x['clients'])])} |")
    write_table(out, "dbench.md", lines)
    return {"setup": setup, "rows": rows, "ratios": ratios}


def fio_write(path):
    """fio JSON: write MiB/s and bytes written (summed over jobs), job
    errors; None when the output holds no JSON."""
    data = fio_json(path)
    if data is None:
        return None, None, None
    bw = sum(j.get("write", {}).get("bw", 0) for j in data.get("jobs") or [])
    nbytes = sum(j.get("write", {}).get("io_bytes", 0)
                 for j in data.get("jobs") or [])
    errors = sum(1 for j in data.get("jobs") or [] if j.get("error"))
    return round(bw / 1024, 2), nbytes, errors


def fuse_row(guest, tag):
    r = kv_file(os.path.join(guest, f"result-{tag}.txt"))
    path = lambda name: os.path.join(guest, f"{tag}-{name}.txt")
    row = {"peer": r.get("peer"), "workload": r.get("workload"),
           "clients": int_or_none(r.get("clients")),
           "rc": int_or_none(r.get("rc")),
           "umount_rc": int_or_none(r.get("umount_rc")),
           "workload_seconds": float_or_none(r.get("workload_seconds")),
           "sync_seconds": float_or_none(r.get("sync_seconds"))}
    if row["workload"] == "fio":
        mibs, nbytes, errors = fio_write(path("out"))
        row.update(throughput=mibs, throughput_unit="MiB/s",
                   app_bytes=nbytes, job_errors=errors)
    else:
        mbs, ops = dbench_throughput(read(path("out")))
        row.update(throughput=mbs, throughput_unit="MB/s", app_bytes=None,
                   ops=ops, nr_ops=sum(ops.values()) if ops else None)
    s0, s1 = block_stat(path("stat-before")), block_stat(path("stat-after"))
    row["device_bytes"] = (s1[6] - s0[6]) * 512 \
        if len(s0) >= 7 and len(s1) >= 7 else None
    row["device_per_app"] = round(row["device_bytes"] / row["app_bytes"], 3) \
        if row["device_bytes"] is not None and row["app_bytes"] else None
    row["device_kib_per_op"] = \
        round(row["device_bytes"] / 1024 / row["nr_ops"], 2) \
        if row["device_bytes"] is not None and row.get("nr_ops") else None
    if row["peer"] == "zcow":
        row["check"] = read(path("check")).strip().splitlines()[-1:] or None
    return row


def fuse(out, guest):
    """The fuse scenario: zcow's FUSE mount and the kernel's btrfs zoned,
    the same jobs in one boot; fuse.md is the peer table."""
    setup = kv_file(os.path.join(guest, "fuse-setup.txt"))
    tags = [n[len("result-"):-len(".txt")] for n in sorted(os.listdir(guest))
            if n.startswith("result-") and n.endswith(".txt")]
    rows = [fuse_row(guest, t) for t in tags]
    rows.sort(key=lambda r: (r["workload"] or "", r["peer"] != "zcow"))

    def num(v):
        return "" if v is None else str(v)

    lines = ["| workload | peer | clients | throughput | seconds | dbench "
             "ops | device MiB written | device KiB / dbench op | device / "
             "fio bytes | status |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ok = r["rc"] == 0 and r["umount_rc"] == 0
        tp = "" if r["throughput"] is None else \
            f"{r['throughput']} {r['throughput_unit']}"
        dev = "" if r["device_bytes"] is None else \
            f"{r['device_bytes'] / 2**20:.1f}"
        lines.append(
            f"| {r['workload']} | {r['peer']} | {num(r['clients'])} | {tp} | "
            f"{num(r['workload_seconds'])} | {num(r.get('nr_ops'))} | "
            f"{dev} | {num(r['device_kib_per_op'])} | "
            f"{num(r['device_per_app'])} | "
            f"{'ok' if ok else 'failed (rc %s, umount %s)' % (r['rc'], r['umount_rc'])} |")
    write_table(out, "fuse.md", lines)
    return {"setup": setup, "rows": rows}


COMPAT_OUTPUT_LINES = 60


def compat(out, guest):
    """The compat scenario's steps in their order (compat-steps.txt: name,
    tab, what), each with its result from steps.txt and the last
    COMPAT_OUTPUT_LINES lines of its output (all of it: guest/NAME.txt).
    A step that never ran (the guest stopped) is "not run"."""
    setup = kv_file(os.path.join(guest, "compat-setup.txt"))
    ran = {s["step"]: s for s in steps(os.path.join(guest, "steps.txt"))}
    rows = []
    for line in read(os.path.join(guest, "compat-steps.txt")).splitlines():
        name, _, what = line.partition("\t")
        s = ran.get(name)
        lines = read(os.path.join(guest, f"{name}.txt")).splitlines()
        rows.append({
            "step": name, "what": what,
            "status": "not run" if s is None else
                      "pass" if s["rc"] == 0 else "fail",
            "rc": None if s is None else s["rc"],
            "seconds": None if s is None else s["seconds"],
            "output_file": f"guest/{name}.txt",
            "output": "\n".join(lines[-COMPAT_OUTPUT_LINES:]),
        })
    passed = sum(r["status"] == "pass" for r in rows)
    md = ["| step | what | result | seconds |", "|---|---|---|---|"]
    for r in rows:
        secs = "" if r["seconds"] is None else f"{r['seconds']:.2f}"
        res = r["status"] if r["rc"] in (None, 0) else \
            f"fail (rc {r['rc']})"
        md.append(f"| {r['step']} | {r['what']} | {res} | {secs} |")
    md += ["", f"{passed} of {len(rows)} steps pass."]
    for r in rows:
        if r["status"] == "fail":
            md += ["", f"### {r['step']}: output (end)", "", "```",
                   r["output"], "```"]
    write_table(out, "compat.md", md, echo=False)
    return {"setup": setup, "passed": passed, "steps": len(rows),
            "rows": rows}


LIMITS_QUEUE = ("logical_block_size", "physical_block_size",
                "max_hw_sectors_kb", "max_sectors_kb", "max_segments",
                "max_segment_size", "dma_alignment", "virt_boundary_mask",
                "zone_append_max_bytes", "max_open_zones",
                "max_active_zones", "scheduler")
LIMITS_CMD = re.compile(r"^  (append passthru|append emulated|write|read)"
                        r"\s+(\S+)\s+(.*)$", re.M)
LIMITS_MAX_APPEND = re.compile(r"^zone append: (.*), at most (\d+) bytes",
                               re.M)


def zcow_limits(path):
    """What `zcow zones --limits` says zcow puts in one command of each
    kind, and the append path with its max_append."""
    text = read(path)
    cmds = [{"command": m.group(1),
             "bytes": int(m.group(2)) if m.group(2).isdigit() else 0,
             "bound": m.group(3).strip()}
            for m in LIMITS_CMD.finditer(text)]
    m = LIMITS_MAX_APPEND.search(text)
    return {"commands": cmds,
            "append_path": m.group(1) if m else None,
            "max_append": int(m.group(2)) if m else None}


def limits(out, guest, geometry):
    """The limits scenario: the guest's queue limits, what zcow sized each
    command to (both append paths), the appends done and every step;
    limits.md is the table."""
    setup = kv_file(os.path.join(guest, "limits-setup.txt"))
    queue = kv_file(os.path.join(guest, "queue-limits.txt"))
    passthru = zcow_limits(os.path.join(guest, "zones-limits.txt"))
    emulated = zcow_limits(os.path.join(guest, "zones-limits-emulate.txt"))
    ran = steps(os.path.join(guest, "steps.txt"))
    text = read(os.path.join(guest, "stress.txt"))
    m = re.search(r"^stress: (\d+) appends of at most (\d+) bytes", text,
                  re.M)
    stress = {"appends": int(m.group(1)) if m else None,
              "bytes": int(m.group(2)) if m else None,
              "last_file_identical": "last file identical" in text}
    tests = {}
    for name in ("append-test", "append-test-emulate"):
        t = read(os.path.join(guest, f"{name}.txt"))
        m = re.search(r"^append test: (\d+) appends of (\d+) bytes \((\d+)"
                      r" from page-aligned buffers, (\d+) from buffers", t,
                      re.M)
        tests[name] = {"appends": int(m.group(1)), "bytes": int(m.group(2)),
                       "aligned": int(m.group(3)),
                       "unaligned": int(m.group(4))} if m else None
    rc = {s["step"]: s for s in ran}

    def result(step):
        s = rc.get(step)
        return "not run" if s is None else \
            "pass" if s["rc"] == 0 else f"fail (rc {s['rc']})"

    geo = " ".join(f"{k}={geometry[k]}" for k in ("lbs", "zasl", "mdts")
                   if k in geometry)
    md = [f"Geometry: {geo}", "",
          "| queue limit | value |", "|---|---|"]
    md += [f"| `{k}` | {queue.get(k, 'absent')} |" for k in LIMITS_QUEUE]
    md += ["", "| command (zcow zones --limits) | bytes | decided by |",
           "|---|---|---|"]
    md += [f"| {c['command']} | {c['bytes']} | {c['bound']} |"
           for c in passthru["commands"]]
    md += ["", "| append path | max_append (bytes) |", "|---|---|",
           f"| {passthru['append_path']} | {passthru['max_append']} |",
           f"| {emulated['append_path']} (`?append=emulate`) | "
           f"{emulated['max_append']} |"]
    md += ["", "| step | what | appends | bytes each | result | seconds |",
           "|---|---|---|---|---|---|"]
    whats = {
        "put": (f"zcow put of {setup.get('mb', '?')} MiB", None, None),
        "cmp": ("get + cmp: identical", None, None),
        "stress": ("zcow put / rm of files, the last read back",
                   stress["appends"], stress["bytes"]),
        "check-2": ("zcow check after the stress", None, None),
    }
    for name, label in (("append-test", "passthrough"),
                        ("append-test-emulate", "emulated")):
        t = tests[name]
        whats[name] = (
            f"zcow zones --append-test, {label}" +
            (f" ({t['aligned']} page-aligned, {t['unaligned']} unaligned"
             " buffers), each read back" if t else ""),
            t["appends"] if t else None, t["bytes"] if t else None)
    for s in ran:
        what, n, b = whats.get(s["step"], ("", None, None))
        md.append(f"| {s['step']} | {what} | {'' if n is None else n} | "
                  f"{'' if b is None else b} | {result(s['step'])} | "
                  f"{s['seconds']:.1f} |")
    write_table(out, "limits.md", md)
    return {"setup": setup, "queue": queue, "zcow": passthru,
            "zcow_emulated": emulated, "stress": stress,
            "append_tests": tests, "steps": ran}


# The experiments scenario: its rows in order, what each ran.
EXPERIMENTS = [
    ("gc-uniform", "reclaim: uniform overwrite (rho 0.64)"),
    ("gc-hotcold", "reclaim: hot/cold overwrite, zipf:1.2 (rho 0.8)"),
    ("vm-gc-rho60", "reclaim: uniform overwrite, fsync=1024 (rho 0.6)"),
    ("vm-gc-rho80", "reclaim: uniform overwrite, fsync=1024 (rho 0.8)"),
    ("gc-sustained", "reclaim: 16 jobs of 4 KiB random writes (rho 0.8)"),
    ("commits-empty", "small commits: {empty file, commit}"),
    ("commits-4k-fsync", "small commits: {4 KiB file, fsync}"),
    ("refill", "fill, delete every other file, refill"),
    ("seed-append-on", "seed: 16 jobs of 4 KiB random writes, Zone Append"),
    ("seed-append-off", "seed: the same with plain writes"),
    ("seed-treelog-on", "seed: fsync per 8 KiB file, tree-log on"),
    ("seed-treelog-off", "seed: the same, tree-log off"),
    ("crash-record", "crash: seed-treelog.fio by fio on zcow fuse --record"),
    ("crash-campaign", "crash: zcow crash --ops of that recording (sim)"),
]

# bench-commits: "completed N of M ops ...; commits C; wall W s";
# bench-refill: "round K: ... filled F files (X MiB, ...".
BENCH_OPS_RE = re.compile(r"^(completed|stopped|failed)\D*(\d+) of (\d+)")
BENCH_SIZE_RE = re.compile(r"\(\w[\w-]*, size (\d+),")
BENCH_COMMITS_RE = re.compile(r"; commits (\d+);")
BENCH_RESETS_RE = re.compile(r"zones reset (\d+)")
REFILL_RE = re.compile(r"^round \d+: .* filled \d+ files \(([\d.]+) MiB",
                       re.M)


def fio_section(path, name):
    """The options of section [name] of a resolved config.fio."""
    out, cur = {}, None
    for line in read(path).splitlines():
        line = line.strip()
        if line.startswith("["):
            cur = line.strip("[]")
        elif cur == name and "=" in line:
            k, v = line.split("=", 1)
            out[k] = v
    return out


def experiment_row(guest, tag, what, zone_bytes):
    r = kv_file(os.path.join(guest, f"result-{tag}.txt"))
    row = {"experiment": tag, "what": what, "kind": r.get("kind"),
           "config": r.get("config"), "sets": r.get("sets") or "",
           "rc": int_or_none(r.get("rc")),
           "seconds": float_or_none(r.get("seconds")),
           "error": r.get("error") or None,
           "check_rc": int_or_none(r.get("check_rc")),
           "check": r.get("check"), "notes": []}
    if not r:
        row["status"] = "not run"
        return row
    resets = read(os.path.join(guest, f"resets-{tag}.txt")).split()
    row["device_resets"] = int_or_none(resets[0]) if resets else None
    zb = os.path.join(guest, f"zones-{tag}-before.txt")
    za = os.path.join(guest, f"zones-{tag}-after.txt")
    if os.path.exists(zb) and os.path.exists(za):
        row["device_bytes_wp"] = (written_bytes(za) - written_bytes(zb)
                                  + zone_bytes * (row["device_resets"] or 0))
    s0 = smart_written(os.path.join(guest, f"smart-{tag}-before.json"))
    s1 = smart_written(os.path.join(guest, f"smart-{tag}-after.json"))
    row["device_bytes_smart"] = (s1 - s0) * 512000 \
        if s0 is not None and s1 is not None else None
    host = None
    if row["kind"] == "run":
        try:
            with open(os.path.join(guest, f"zcow-{tag}.json"),
                      encoding="utf-8") as f:
                z = json.load(f)
        except (OSError, ValueError):
            z = None
        if z:
            t = z.get("total", {})
            host = t.get("write_bytes")
            row.update({"MiB_s": t.get("bw_mib_per_s"),
                        "iops": t.get("iops"),
                        "syncs_per_s": t.get("syncs_per_s"),
                        "rate_basis": t.get("rate_basis"),
                        "wall_time_s": z.get("wall_time_s"),
                        "write_amplification": z.get("write_amplification"),
                        "gc_data_wa": (z.get("gc") or {}).get("data_wa"),
                        "zcow_resets": z.get("zone_resets"),
                        "commits": z.get("commits"),
                        "groups_relocated":
                            (z.get("reclaim") or {}).get("groups_relocated")})
            if t.get("syncs"):
                row["notes"].append("%d fsyncs, %.1f fsyncs/s"
                                    % (t["syncs"], t.get("syncs_per_s") or 0))
            cfg = os.path.join(guest, r.get("dir", "-"), "config.fio")
            fill = fio_section(cfg, "fill")
            jobs = {j.get("name"): j for j in z.get("jobs", [])}
            if fill.get("size") and "fill" in jobs:
                want = int(fill["size"])
                got = jobs["fill"].get("write_bytes") or 0
                row["fill_complete"] = got >= want
                if got < want:
                    row["notes"].append("fill cut at %.1f of %.1f MiB"
                                        % (got / 2**20, want / 2**20))
            for j in z.get("jobs", []):
                if j.get("ended_by"):
                    row["notes"].append("%s: %s" % (j["name"], j["ended_by"]))
    elif row["kind"] == "bench":
        text = read(os.path.join(guest, f"run-{tag}.txt"))
        v = r.get("verdict") or ""
        row["verdict"] = v or None
        m = BENCH_OPS_RE.match(v)
        if " round" in v:
            host = int(sum(float(x) for x in REFILL_RE.findall(text))
                       * 2**20)
            row["notes"].append("; ".join(part.strip() for i, part in
                                          enumerate(v.split(";"))
                                          if i in (0, 2)))
        elif m:
            ms = BENCH_SIZE_RE.search(v)
            host = int(m.group(2)) * int(ms.group(1)) if ms else None
            mc = BENCH_COMMITS_RE.search(v)
            row["commits"] = int(mc.group(1)) if mc else None
            mr = BENCH_RESETS_RE.search(v)
            row["zcow_resets"] = int(mr.group(1)) if mr else None
            row["notes"].append("%s %s of %s ops" % m.group(1, 2, 3))
            if row["seconds"]:
                row["notes"].append("%.0f ops/s" % (int(m.group(2))
                                                    / row["seconds"]))
        elif v:
            row["notes"].append(v)
        if host and row["seconds"]:
            row["MiB_s"] = round(host / 2**20 / row["seconds"], 2)
    elif row["kind"] == "record":
        row["notes"].append("%s ops lines; fio rc %s, zcow fuse rc %s"
                            % (r.get("ops_lines"), r.get("fio_rc"),
                               r.get("daemon_rc")))
        fj = fio_json(os.path.join(guest, "crash-fio.json"))
        if fj:
            host = sum(j.get("write", {}).get("io_bytes", 0)
                       for j in fj.get("jobs", []))
    elif row["kind"] == "crash":
        row["notes"].append("states %s; %s violations"
                            % (r.get("states", "").strip() or "?",
                               r.get("violations", "?")))
    row["host_bytes"] = host
    if host and row.get("device_bytes_smart"):
        row["device_wa_smart"] = round(row["device_bytes_smart"] / host, 3)
    ok = row["rc"] == 0 and row["check_rc"] in (None, 0)
    row["status"] = "pass" if ok else "fail"
    return row


def experiments(out, guest):
    """The experiments scenario: experiments.md (one row per experiment)
    and summary.json's `experiments`."""
    setup = kv_file(os.path.join(guest, "experiments-setup.txt"))
    zone_bytes = int_or_none(setup.get("zone_bytes")) or 0
    ran = setup.get("experiments", "").split()
    rows = [experiment_row(guest, tag, what, zone_bytes)
            for tag, what in EXPERIMENTS if tag in ran]

    def mib(v):
        return "%.1f" % (v / 2**20) if v is not None else ""

    def num(v, fmt="%.1f"):
        return fmt % v if v is not None else ""

    lines = ["| experiment | what | ran (besides device=) | result | host MiB"
             " | MiB/s | IOPS | zcow WA: total / GC data | device MiB (wp"
             " + resets) | device MiB (SMART) | WA (SMART) | zone resets:"
             " device / zcow | commits | zcow check | s | notes |",
             "|" + "---|" * 16]
    for r in rows:
        if r["status"] == "not run":
            lines.append("| %s | %s | | not run | | | | | | | | | | | | |"
                         % (r["experiment"], r["what"]))
            continue
        result = r["status"]
        if r["rc"] not in (0, None):
            result += " (rc %s)" % r["rc"]
        if r["error"]:
            result += ": `%s`" % r["error"].replace("|", "\\|")
        wa = ""
        if r.get("write_amplification") is not None:
            wa = "%.3f" % r["write_amplification"]
            if r.get("gc_data_wa") is not None:
                wa += " / %.3f" % r["gc_data_wa"]
        check = ""
        if r["check_rc"] is not None:
            check = "clean" if r["check_rc"] == 0 else \
                "rc %d: %s" % (r["check_rc"], r["check"] or "")
        resets = ""
        if r.get("device_resets") is not None or r.get("zcow_resets") \
                is not None:
            resets = "%s / %s" % (num(r.get("device_resets"), "%d"),
                                  num(r.get("zcow_resets"), "%d"))
        ran = "`%s`" % r["config"] if r["config"] else ""
        if r["sets"]:
            ran += " `%s`" % r["sets"]
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |"
                     " %s | %s | %s | %s | %s | %s |" % (
                         r["experiment"], r["what"], ran, result,
                         mib(r.get("host_bytes")), num(r.get("MiB_s")),
                         num(r.get("iops"), "%.0f"), wa,
                         mib(r.get("device_bytes_wp")),
                         mib(r.get("device_bytes_smart")),
                         num(r.get("device_wa_smart"), "%.3f"), resets,
                         num(r.get("commits"), "%d"), check,
                         num(r["seconds"], "%.1f"),
                         "; ".join(r["notes"]).replace("|", "\\|")))
    write_table(out, "experiments.md", lines)
    return {"setup": setup, "rows": rows,
            "passed": sum(r["status"] == "pass" for r in rows),
            "failed": [r["experiment"] for r in rows
                       if r["status"] != "pass"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--scenario", required=True)
    ap.add_argument("--status", required=True)
    ap.add_argument("--qemu", default="")
    ap.add_argument("--host-kernel", default="")
    ap.add_argument("--qemu-rc", type=int, default=0)
    ap.add_argument("--t0", type=float, required=True)
    ap.add_argument("--t-up", type=float, default=0)
    ap.add_argument("--t1", type=float, required=True)
    ap.add_argument("--geometry", default="")
    a = ap.parse_args()

    guest = os.path.join(a.out, "guest")
    info = kv_file(os.path.join(guest, "guest-info.txt"))
    summary = {
        "device": "qemu-zns",
        "scenario": a.scenario,
        "status": a.status,
        "qemu_version": a.qemu,
        "guest_kernel": info.get("kernel") or a.host_kernel,
        "geometry": dict(kv.split("=", 1) for kv in a.geometry.split()),
        "guest_queue": {k: v for k, v in info.items()
                        if k not in ("kernel", "uptime_at_run",
                                     "run_seconds")},
        "qemu_exit": a.qemu_rc,
        "guest_rc": read(os.path.join(guest, "rc")).strip() or None,
        "wall_seconds": {
            "boot_to_userspace_ready":
                round(a.t_up - a.t0, 2) if a.t_up else None,
            "scenario_in_guest": float(info["run_seconds"])
                if "run_seconds" in info else None,
            "total": round(a.t1 - a.t0, 2),
        },
        "guest_uptime_at_run": info.get("uptime_at_run"),
        "steps": steps(os.path.join(guest, "steps.txt")),
    }
    for name in ("conform", "conform-emulate"):
        src = os.path.join(guest, f"{name}.txt")
        if os.path.exists(src):
            shutil.copy(src, os.path.join(a.out, f"{name}.txt"))
            summary[name.replace("-", "_")] = conformance(src)
    if os.path.exists(os.path.join(guest, "peers-setup.txt")):
        summary["peers"] = peers(a.out, guest)
    if os.path.exists(os.path.join(guest, "gc-setup.txt")):
        summary["gc"] = gc(a.out, guest)
    if os.path.exists(os.path.join(guest, "dbench-setup.txt")):
        summary["dbench"] = dbench(a.out, guest)
    if os.path.exists(os.path.join(guest, "fuse-setup.txt")):
        summary["fuse"] = fuse(a.out, guest)
    if os.path.exists(os.path.join(guest, "compat-steps.txt")):
        summary["compat"] = compat(a.out, guest)
    if os.path.exists(os.path.join(guest, "limits-setup.txt")):
        summary["limits"] = limits(a.out, guest, summary["geometry"])
    if os.path.exists(os.path.join(guest, "experiments-setup.txt")):
        summary["experiments"] = experiments(a.out, guest)
    zruns = []
    zdir = os.path.join(guest, "zrun")
    for name in sorted(os.listdir(zdir)) if os.path.isdir(zdir) else []:
        try:
            with open(os.path.join(zdir, name, "summary.json"),
                      encoding="utf-8") as f:
                z = json.load(f)
        except (OSError, ValueError):
            zruns.append({"run": name, "summary": None})
            continue
        total = z.get("total", {})
        zruns.append({"run": name, "scenario": z.get("scenario"),
                      "target": z.get("target"),
                      "device": z.get("device"),
                      "zone_append": z.get("zone_append"),
                      "wall_time_s": z.get("wall_time_s"),
                      "rate_basis": total.get("rate_basis"),
                      "ios": total.get("ios"),
                      "write_bytes": total.get("write_bytes"),
                      "MiB_s": total.get("bw_mib_per_s"),
                      "iops": total.get("iops"),
                      "lat_ns": total.get("lat_ns"),
                      "write_amplification": z.get("write_amplification"),
                      "zone_resets": z.get("zone_resets"),
                      "commits": z.get("commits")})
    if zruns:
        summary["zcow_run"] = zruns
    sblog = kv_file(os.path.join(guest, "sblog-result.txt"))
    if sblog:
        summary["sblog"] = sblog
    with open(os.path.join(a.out, "summary.json"), "w",
              encoding="utf-8") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
