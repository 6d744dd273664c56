#!/usr/bin/env python3
"""Summarize one VM run directory (harness/qemu/vm.sh) into summary.json.

Reads OUT/guest/ (what the guest archived: guest-info.txt, steps.txt, rc,
conform*.txt, peers files) and writes OUT/summary.json, copies the
conformance output to OUT/, for the peers scenario writes
OUT/peers.md (the table) and OUT/peers.svg (gnuplot, when installed) from
the fio JSON and zone reports, and for the gc scenario OUT/gc.md and
OUT/gc.csv (the kernel's btrfs beside zcow under sustained overwrite).
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


def peers(out, guest):
    rows = []
    for peer in ("raw", "btrfs", "zcow"):
        if peer == "zcow":
            job = zcow_job(os.path.join(guest, "zcow-summary.json"))
        else:
            job = fio_job(os.path.join(guest, f"fio-{peer}.txt"))
        if job is None:
            rows.append({"peer": peer, "status": "failed"})
            continue
        before = written_bytes(os.path.join(guest, f"zones-{peer}-before.txt"))
        after = written_bytes(os.path.join(guest, f"zones-{peer}-after.txt"))
        resets = read(os.path.join(guest, f"resets-{peer}.txt")).strip()
        dev_bytes = after - before
        rows.append({"peer": peer, "status": "ok",
                     "MiB_s": round(job["bw"] / 2**20, 1),
                     "iops": round(job["iops"]),
                     "p50_us": round(job["p50_us"]),
                     "p99_us": round(job["p99_us"]),
                     "p999_us": round(job["p999_us"]),
                     "job_bytes": job["bytes"],
                     "device_bytes": dev_bytes,
                     "write_amplification":
                         round(dev_bytes / job["bytes"], 3)
                         if job["bytes"] else None,
                     "zone_resets": resets or None})
        if "zcow" in job:
            rows[-1]["zcow_run"] = job["zcow"]
    lines = ["| peer | MiB/s | IOPS | p50 us | p99 us | p99.9 us | job MiB"
             " | device MiB (wp sum) | WA | zone resets |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["status"] != "ok":
            lines.append(f"| {r['peer']} | {r['status']} |||||||||")
            continue
        wa = r["write_amplification"]
        lines.append(
            f"| {r['peer']} | {r['MiB_s']} | {r['iops']} | {r['p50_us']} | "
            f"{r['p99_us']} | {r['p999_us']} | {r['job_bytes'] / 2**20:.1f} | "
            f"{r['device_bytes'] / 2**20:.1f} | "
            f"{'' if wa is None else wa} | {r['zone_resets'] or ''} |")
    with open(os.path.join(out, "peers.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    plot_peers(out, [r for r in rows if r["status"] == "ok"])
    return rows


def plot_peers(out, rows):
    """peers.svg: throughput and latency percentiles per peer (gnuplot)."""
    if not rows or not shutil.which("gnuplot"):
        return
    dat = os.path.join(out, "peers.dat")
    with open(dat, "w", encoding="utf-8") as f:
        f.write("peer MiB_s p50_ms p99_ms p999_ms WA\n")
        for r in rows:
            f.write(f"{r['peer']} {r['MiB_s']} {r['p50_us'] / 1000} "
                    f"{r['p99_us'] / 1000} {r['p999_us'] / 1000} "
                    f"{r['write_amplification'] or 0}\n")
    script = f"""
set terminal svg size 900,360 font "sans,11" noenhanced
set output "{os.path.join(out, 'peers.svg')}"
set multiplot layout 1,2 title "same fio job, one VM boot (QEMU ZNS, TCG)"
set style data histograms
set style fill solid 0.6 border -1
set boxwidth 0.8
set key autotitle columnheader top left
set yrange [0:*]
set title "throughput (MiB/s)"
plot "{dat}" using 2:xtic(1) notitle
set style histogram clustered gap 1
set title "write completion latency (ms)"
set logscale y
set yrange [*:*]
plot "{dat}" using 3:xtic(1), "" using 4, "" using 5
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


def int_or_none(s):
    try:
        return int(s)
    except (TypeError, ValueError):
        return None


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
    if system == "btrfs":
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
        own = (f"{r['zcow_wa']} / {r['zcow_gc_wa']}"
               if r.get("zcow_wa") is not None else "")
        if not r["finished"]:
            stop = r.get("error") or ""
        elif not r["complete"]:
            stop = f"runtime limit ({runtime} s)"
        else:
            stop = ""
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
    with open(os.path.join(out, "gc.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
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
    if os.path.exists(os.path.join(guest, "fio-raw.txt")):
        summary["peers"] = peers(a.out, guest)
    if os.path.exists(os.path.join(guest, "gc-setup.txt")):
        summary["gc"] = gc(a.out, guest)
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
