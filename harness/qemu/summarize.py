#!/usr/bin/env python3
"""Summarize one VM run directory (harness/qemu/vm.sh) into summary.json.

Reads OUT/guest/ (what the guest archived: guest-info.txt, steps.txt, rc,
conform*.txt, peers files) and writes OUT/summary.json, copies the
conformance output to OUT/, and for the peers scenario writes
OUT/peers.md (the table) and OUT/peers.svg (gnuplot, when installed) from
the fio JSON and zone reports.
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
