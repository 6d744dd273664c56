#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Garbage-collection write amplification against utilization and under
hot/cold overwrites (docs/reclaim-experiments.md).

usage: gc.py [--quick] [--results DIR] [--device SPEC] [--rho LIST]
             [--policy LIST (POLICY, POLICY@N: with reclaim_high=N,
                             POLICY+hotcold: with hotcold=on,
                             POLICY+age: with hotcold=age)]
             [--fills N] [--hotcold-rho LIST]
             [--no-uniform] [--no-hotcold] [--jobs N] [--zcow PATH]
             [--cleaner writer|background (who cleans, default writer)]
             [--seed N (the runs' [zcow] seed, default 1)]
       gc.py --analytic RHO...
       gc.py --model RHO... [--zones N --zone-blocks B --data-zones D
                             --low L --high H --model-seed S
                             --model-hot W/B [--model-separate]]

Per device and policy a calibration run writes one file sequentially in
4 KiB writes until ENOSPC: C, the space data can use, is the offset of
the write that failed.  A point (rho, policy, distribution) then runs
configs/gc-uniform.fio (or gc-hotcold.fio) with the file at rho x C
(4 KiB aligned): a sequential fill, then 4 KiB random overwrites,
ceil(fills / rho) passes over the file (at least `fills` device fills of
C).  From intervals.csv, the overwrite phase's intervals (those starting
at or after the overwrite job's start) and their last third give the
steady write amplification (the utilization the data cycles through,
zcow's own measure, beside the analytic curve and the --model greedy
cleaner at it: textbook greedy on as many zones as C fills):

  GC WA    = (device bytes of class data + reloc) / host bytes
  total WA = device bytes of every class / host bytes

The hot/cold points (zipf:1.2 and zoned:80/20:20/80) run the --policy
list when one is given, else greedy and cost-benefit; --seed sets the
runs' [zcow] seed (compare policies over several: one run of a point
moves by up to 10 % between seeds).

Writes DIR/wa.csv, wa.md, wa.png, wa.svg (steady GC WA against rho per
policy with the analytic curve), hotcold.csv, hotcold.md,
calibration.csv, wa_time.png/.svg/.csv (per-interval GC WA of the
uniform greedy points), and the runs under DIR/runs/.

--analytic prints the analytic WA of greedy/FIFO cleaning under uniform
random writes: WA = 1 / (1 - x), x the root in (0, rho) of
x - 1 = rho ln x.  --model runs a small idealized greedy cleaner (zones
of B blocks, uniform random single-block overwrites of rho x D zones of
live blocks, cleaning from `low` free zones up to `high`) and prints its
steady WA: with low 1 and high 2 it is the textbook greedy, with zcow's
watermarks it shows what they cost.  --model-hot W/B sends W % of the
overwrites to the first B % of the blocks; --model-separate writes those
hot blocks into an open zone of their own (a separation that knows the
hot set exactly: the most any age-based guess could give).  Python 3 standard library only;
gnuplot on PATH for the plots.
"""
import argparse
import concurrent.futures
import csv
import json
import math
import os
import random
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CONFIGS = os.path.join(ROOT, "configs")
BS = 4096

FULL = {
    "device": "sim:zones=64,zone_size=8M",
    "rho": [0.5, 0.6, 0.7, 0.8, 0.9, 0.95],
    "policy": ["greedy", "greedy@6", "cost-benefit", "threshold", "off"],
    "hotcold_rho": [0.7, 0.8, 0.9],
    "fills": 4,
}
QUICK = {
    "device": "sim:zones=64,zone_size=4M",
    "rho": [0.5, 0.7],
    "policy": ["greedy", "cost-benefit"],
    "hotcold_rho": [0.7],
    "fills": 2,
}
HOTCOLD = [("zipf:1.2", "zipf1.2"), ("zoned:80/20:20/80", "zoned80-20")]
HOTCOLD_POLICIES = ["greedy", "cost-benefit", "hotcold-greedy+hotcold"]


# ---- the analytic curve and the idealized cleaner ------------------------

def analytic_wa(rho):
    """WA = 1/(1-x), x in (0, rho) the root of x - 1 = rho ln x."""
    if not 0 < rho < 1:
        raise ValueError("rho must be in (0, 1)")
    f = lambda x: x - 1 - rho * math.log(x)   # > 0 near 0, < 0 at rho
    lo, hi = 1e-300, rho
    for _ in range(200):
        mid = (lo + hi) / 2
        if f(mid) > 0:
            lo = mid
        else:
            hi = mid
    return 1.0 / (1.0 - (lo + hi) / 2)


def model_wa(rho, data_zones, zone_blocks, zones, low, high, fills=4,
             seed=1, hot=None, separate=False):
    """Idealized greedy: @zones zones of @zone_blocks blocks, live blocks
    rho x data_zones x zone_blocks written sequentially, then random
    single-block overwrites, fills x live of them: uniform, or with
    @hot = (W, B) W percent of them to the first B percent of the blocks
    (fio's zoned:W/B:(100-W)/(100-B)).  When a zone fills and at most
    @low zones are free, the least-live full zones are cleaned (live
    blocks copied to a separate relocation zone) until @high zones are
    free or a victim frees nothing.  @separate: overwrites of the hot
    blocks go to a zone of their own (a separation that knows the hot
    set).  Returns the WA over the last third of the overwrites:
    (host + copied) / host."""
    rnd = random.Random(seed)
    live = int(rho * data_zones * zone_blocks)
    nhot = live * hot[1] // 100 if hot else 0
    zl = [0] * zones
    zb = [[] for _ in range(zones)]
    where = [0] * live
    free = list(range(zones))
    full = set()
    # open zones: user (cold), hot, relocation: [zone, next block]
    slot = {"user": [None, zone_blocks], "hot": [None, zone_blocks],
            "reloc": [None, zone_blocks]}

    def put(b, z):
        where[b] = z
        zl[z] += 1
        zb[z].append(b)

    def take(name):
        o = slot[name]
        if o[1] == zone_blocks:
            if o[0] is not None:
                full.add(o[0])
            o[0], o[1] = free.pop(), 0
        o[1] += 1
        return o[0]

    def clean():
        while len(free) <= low or len(free) < high:
            v = min(full, key=lambda z: zl[z]) if full else None
            if v is None or (zl[v] >= zone_blocks - 1 and free):
                break       # frees (almost) nothing
            full.discard(v)
            for b in zb[v]:
                if where[b] == v:
                    put(b, take("reloc"))
                    stats[1] += 1
            zl[v] = 0
            zb[v] = []
            free.insert(0, v)

    stats = [0, 0]      # host, copied
    for b in range(live):
        put(b, take("user"))
    n = int(fills * live)
    h0 = c0 = 0
    for i in range(n):
        if hot and rnd.random() < hot[0] / 100.0:
            b = rnd.randrange(nhot)
        elif hot:
            b = nhot + rnd.randrange(live - nhot)
        else:
            b = rnd.randrange(live)
        name = "hot" if separate and b < nhot else "user"
        o = slot[name]
        if o[1] == zone_blocks and o[0] is not None:
            full.add(o[0])      # full: a candidate before the next is taken
            o[0] = None
            if len(free) <= low:
                clean()
        zl[where[b]] -= 1
        put(b, take(name))
        stats[0] += 1
        if i == n * 2 // 3:
            h0, c0 = stats
    return 1.0 + (stats[1] - c0) / max(1, stats[0] - h0)


# ---- running zcow --------------------------------------------------------

def zone_geometry(device):
    m = re.search(r"zone_size=(\d+)([kKmMgG]?)", device)
    mult = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    size = int(m.group(1)) * mult[m.group(2).lower()] if m else 64 << 20
    z = re.search(r"zones=(\d+)", device)
    return (int(z.group(1)) if z else 64), size


def textbook_greedy(device, C, rho):
    """The --model cleaner (textbook greedy: cleaning at the last free
    zone, no metadata) at utilization @rho of as many of @device's zones
    as the space data can use (C) fills, two zones spare: what greedy
    costs at the utilization zcow's data really cycles through."""
    _, zsize = zone_geometry(device)
    data_zones = max(4, round(C / zsize))
    return model_wa(rho, data_zones, zsize // BS, data_zones + 2, 1, 2)


def point_fio(template, size, loops, dest, dist=None):
    """@template with size= in [global] and loops= in [overwrite] set,
    and with @dist its random_distribution= (so that the saved scenario
    runs the point as it was measured)."""
    out, section = [], None
    with open(template) as f:
        for line in f:
            s = line.strip()
            if s.startswith("["):
                section = s[1:-1]
            elif section == "global" and s.startswith("size="):
                line = "size=%d\n" % size
            elif section == "overwrite" and s.startswith("loops="):
                line = "loops=%d\n" % loops
            elif (section == "overwrite" and dist and
                  s.startswith("random_distribution=")):
                line = "random_distribution=%s\n" % dist
            out.append(line)
    with open(dest, "w") as f:
        f.writelines(out)


def write_scenario(path, fio, name, device, policy, seed=1,
                   cleaner="writer"):
    """A scenario for @policy: a policy name, POLICY@N for the policy
    with reclaim_high=N (the zones, free or pending, the cleaner keeps),
    either with +hotcold for hotcold=on (writes placed by how often
    their range is written, hot survivors of relocation kept hot) or
    +age for hotcold=age (writes placed by the age of what they
    replace)."""
    policy, plus, flag = policy.partition("+")
    if plus and flag not in ("hotcold", "age"):
        raise ValueError("policy %s+%s: only +hotcold or +age" %
                         (policy, flag))
    pol, _, high = policy.partition("@")
    with open(path, "w") as f:
        f.write("; generated by harness/gc.py\ninclude %s\n\n[zcow]\n"
                "profile=zn540\ndevice=%s\nreclaim=%s\nseed=%d\n"
                "scenario=%s\n" % (os.path.basename(fio), device, pol,
                                   seed, name))
        if high:
            f.write("reclaim_high=%s\n" % high)
        if plus:
            f.write("hotcold=%s\n" % ("on" if flag == "hotcold" else "age"))
        f.write("cleaner=%s\n" % cleaner)


def zcow_run(zcow, scen, results, sets=()):
    cmd = [zcow, "run", scen, "--results", results, "--quiet"]
    for s in sets:
        cmd += ["--set", s]
    t0 = time.time()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    return p.returncode, p.stdout.strip(), p.stderr.strip(), \
        time.time() - t0


def calibrate(a, policy, work):
    """C for @policy on a.device: the offset of the sequential 4 KiB
    write that met ENOSPC."""
    fio = os.path.join(work, "calibrate.fio")
    with open(fio, "w") as f:
        f.write("; generated by harness/gc.py: fill one file to ENOSPC\n"
                "[global]\nioengine=psync\nfilename=gc.dat\nbs=4k\n\n"
                "[fill]\nrw=write\nsize=%d\n" % (2 * a.dev_bytes))
    scen = os.path.join(work, "calibrate-%s.scenario" % policy)
    write_scenario(scen, fio, "gc-calibrate-%s" % policy, a.device, policy,
                   cleaner=a.cleaner)
    rc, _, err, wall = zcow_run(a.zcow, scen, os.path.join(a.results, "runs"))
    m = re.search(r"write of \d+ at (\d+) in .*No space left", err)
    if rc == 0 or not m:
        raise RuntimeError("calibration (%s) did not end in ENOSPC: %s"
                           % (policy, err))
    return int(m.group(1)), wall


def steady(folder):
    """(host, gc, total, n) of the overwrite phase, whole and last third."""
    with open(os.path.join(folder, "summary.json")) as f:
        s = json.load(f)
    start = [j for j in s["jobs"] if j["name"] == "overwrite"][0]
    t0 = start["start_ns"] / 1e9
    with open(os.path.join(folder, "intervals.csv"), newline="") as f:
        rows = [r for r in csv.DictReader(f)
                if float(r["t_start_s"]) >= t0 - 1e-12]

    def agg(rs):
        h = sum(int(r["host_bytes_written"]) for r in rs)
        g = sum(int(r["device_bytes_written_data"]) +
                int(r["device_bytes_written_reloc"]) for r in rs)
        t = sum(int(r["device_bytes_written"]) for r in rs)
        return h, (g / h if h else None), (t / h if h else None)

    whole = agg(rows)
    tail = rows[len(rows) - len(rows) // 3:]
    last = agg(tail)
    util = [float(r["data_utilization"]) for r in tail
            if r.get("data_utilization")]
    series = []
    for r in rows:
        h = int(r["host_bytes_written"])
        if h:
            series.append((float(r["t_start_s"]),
                           (int(r["device_bytes_written_data"]) +
                            int(r["device_bytes_written_reloc"])) / h))
    return {"host": whole[0], "gc_all": whole[1], "total_all": whole[2],
            "gc": last[1], "total": last[2], "intervals": len(rows),
            "series": series, "reclaim": s.get("reclaim", {}),
            "rho_eff": sum(util) / len(util) if util else None,
            "meta_per_host": s.get("gc", {}).get("meta_per_host"),
            "commits_per_gib": s.get("gc", {}).get("commits_per_gib"),
            "sim_s": s["runs"][0]["sim_time_s"]}


def run_point(a, work, rho, policy, dist, C):
    tag = dist[1] if dist else "uniform"
    name = "gc-r%02d-%s-%s" % (round(rho * 100), policy, tag)
    size = int(rho * C) // BS * BS
    loops = math.ceil(a.fills / rho - 1e-9)
    tmpl = os.path.join(CONFIGS, "gc-hotcold.fio" if dist else
                        "gc-uniform.fio")
    fio = os.path.join(work, name + ".fio")
    point_fio(tmpl, size, loops, fio, dist[0] if dist else None)
    scen = os.path.join(work, name + ".scenario")
    write_scenario(scen, fio, name, a.device, policy, a.seed, a.cleaner)
    rc, out, err, wall = zcow_run(a.zcow, scen,
                                  os.path.join(a.results, "runs"))
    r = {"rho": rho, "policy": policy, "distribution": dist[0] if dist
         else "random", "C": C, "file_size": size, "loops": loops,
         "fills": loops * size / C, "enospc": False, "wall_s": wall,
         "folder": "", "error": ""}
    if rc != 0:
        r["enospc"] = "No space left" in err
        r["error"] = err.splitlines()[-1] if err else "exit %d" % rc
        return r
    r["folder"] = out.splitlines()[-1]
    r.update(steady(r["folder"]))
    return r


# ---- tables and plots ----------------------------------------------------

def fmt(v, nd=3):
    if v is None or v == "":
        return ""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return "%.*f" % (nd, v)
    return str(v)


COLS = [("rho", "rho"), ("policy", "policy"), ("distribution",
        "distribution"), ("C", "C (bytes)"), ("file_size", "file (bytes)"),
        ("host", "host bytes (overwrite)"), ("fills", "device fills"),
        ("gc", "GC WA steady"), ("total", "total WA steady"),
        ("gc_all", "GC WA overwrite"), ("analytic", "analytic WA"),
        ("ratio", "measured/analytic"), ("within", "within 15%"),
        ("rho_eff", "utilization data cycles through"),
        ("analytic_eff", "analytic WA at it"),
        ("ratio_eff", "measured/analytic at it"),
        ("within_eff", "within 10% at it"),
        ("greedy_eff", "textbook greedy at it"),
        ("ratio_greedy_eff", "measured/textbook greedy at it"),
        ("meta_per_host", "metadata / host bytes"),
        ("commits_per_gib", "commits per GiB"),
        ("enospc", "ENOSPC"), ("wall_s", "wall (s)")]


def write_tables(path, rows, cols):
    with open(path + ".csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow([k for k, _ in cols])
        for r in rows:
            w.writerow([fmt(r.get(k)) for k, _ in cols])
    with open(path + ".md", "w") as f:
        f.write("| " + " | ".join(h for _, h in cols) + " |\n")
        f.write("|" + "---|" * len(cols) + "\n")
        for r in rows:
            f.write("| " + " | ".join(fmt(r.get(k)) for k, _ in cols) +
                    " |\n")


def gnuplot(out, name, lines, plots):
    for term, ext in (("pngcairo size 800,500", "png"),
                      ("svg size 800,500", "svg")):
        script = "\n".join(["set terminal %s" % term,
                            "set output '%s'" % os.path.join(
                                out, "%s.%s" % (name, ext))] + lines +
                           ["plot " + plots, ""])
        p = subprocess.run(["gnuplot"], input=script, universal_newlines=True,
                           stderr=subprocess.PIPE)
        if p.returncode != 0 and ext == "png":
            p = subprocess.run(["gnuplot"],
                               input=script.replace("pngcairo", "png"),
                               universal_newlines=True, stderr=subprocess.PIPE)
        if p.returncode != 0:
            sys.stderr.write("gc: gnuplot failed: %s\n" % p.stderr)
            return 1
    return 0


def plot_wa(out, rows):
    data = os.path.join(out, "wa.dat")
    pols = []
    with open(data, "w") as f:
        f.write("# analytic\n")
        r = 0.30
        while r < 0.9701:
            f.write("%.3f %.6f\n" % (r, analytic_wa(r)))
            r += 0.005
        f.write("\n\n")
        for pol in dict.fromkeys(x["policy"] for x in rows):
            pts = [x for x in rows if x["policy"] == pol and
                   x.get("gc") is not None]
            if not pts:
                continue
            pols.append(pol)
            f.write("# %s at nominal rho\n" % pol)
            for x in pts:
                f.write("%.3f %.6f\n" % (x["rho"], x["gc"]))
            f.write("\n\n")
            f.write("# %s at the utilization data cycles through\n" % pol)
            for x in pts:
                if x.get("rho_eff") is not None:
                    f.write("%.3f %.6f\n" % (x["rho_eff"], x["gc"]))
            f.write("\n\n")
    plots = ["'%s' index 0 using 1:2 with lines lw 2 title "
             "'analytic greedy/FIFO 1/(1-x)'" % data]
    for i, pol in enumerate(pols):
        plots.append("'%s' index %d using 1:2 with linespoints pt %d "
                     "title '%s at nominal rho'" % (data, 2 * i + 1, i + 5,
                                                    pol))
        plots.append("'%s' index %d using 1:2 with points pt %d ps 1.5 "
                     "title '%s at the utilization data cycles through'"
                     % (data, 2 * i + 2, i + 5, pol))
    return gnuplot(out, "wa", [
        "set title 'GC write amplification, uniform 4 KiB random "
        "overwrite (steady: last third)' noenhanced",
        "set xlabel 'utilization rho (file / space data can use)' "
        "noenhanced",
        "set ylabel '(data + reloc) / host bytes' noenhanced",
        "set grid", "set key left top noenhanced", "set logscale y",
        "set xrange [0.3:1.0]"], ", ".join(plots))


def plot_wa_time(out, rows):
    runs = [r for r in rows if r.get("series")]
    if not runs:
        return 0
    data = os.path.join(out, "wa_time.dat")
    with open(data, "w") as f, \
            open(os.path.join(out, "wa_time.csv"), "w", newline="") as c:
        w = csv.writer(c)
        w.writerow(["run", "t_start_s", "gc_wa"])
        for r in runs:
            f.write("# rho %.2f %s\n" % (r["rho"], r["policy"]))
            for t, v in r["series"]:
                f.write("%.3f %.6f\n" % (t, v))
                w.writerow(["rho=%.2f %s" % (r["rho"], r["policy"]),
                            "%.3f" % t, "%.6f" % v])
            f.write("\n\n")
    plots = ", ".join("'%s' index %d using 1:2 with lines title "
                      "'rho %.2f %s'" % (data, i, r["rho"], r["policy"])
                      for i, r in enumerate(runs))
    return gnuplot(out, "wa_time", [
        "set title 'GC write amplification per interval (overwrite "
        "phase)' noenhanced",
        "set xlabel 'simulated time (s)' noenhanced",
        "set ylabel '(data + reloc) / host bytes' noenhanced",
        "set grid", "set key right top noenhanced", "set logscale y"],
        plots)


# ---- main ----------------------------------------------------------------

def floats(s):
    return [float(x) for x in s.split(",") if x]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--results", default="results/gc")
    ap.add_argument("--zcow", default=os.environ.get(
        "ZCOW_BIN", os.path.join(ROOT, "build", "zcow")))
    ap.add_argument("--device")
    ap.add_argument("--rho", type=floats)
    ap.add_argument("--policy", type=lambda s: s.split(","))
    ap.add_argument("--fills", type=float)
    ap.add_argument("--hotcold-rho", type=floats)
    ap.add_argument("--no-uniform", action="store_true")
    ap.add_argument("--no-hotcold", action="store_true")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cleaner", choices=("background", "writer"),
                    default="writer")
    ap.add_argument("--analytic", type=float, nargs="+", metavar="RHO")
    ap.add_argument("--model", type=float, nargs="+", metavar="RHO")
    ap.add_argument("--zones", type=int, default=52)
    ap.add_argument("--zone-blocks", type=int, default=2048)
    ap.add_argument("--data-zones", type=int, default=50)
    ap.add_argument("--low", type=int, default=1)
    ap.add_argument("--high", type=int, default=2)
    ap.add_argument("--model-hot", metavar="W/B")
    ap.add_argument("--model-separate", action="store_true")
    ap.add_argument("--model-seed", type=int, default=1)
    a = ap.parse_args()

    if a.analytic:
        for rho in a.analytic:
            print("%.2f %.2f" % (rho, analytic_wa(rho)))
        return 0
    if a.model:
        hot = None
        if a.model_hot:
            m = re.fullmatch(r"(\d+)/(\d+)", a.model_hot)
            if not m or not (0 < int(m.group(1)) < 100 and
                             0 < int(m.group(2)) < 100):
                ap.error("--model-hot %s: need W/B, percentages in 1..99"
                         % a.model_hot)
            hot = (int(m.group(1)), int(m.group(2)))
        elif a.model_separate:
            ap.error("--model-separate needs --model-hot")
        for rho in a.model:
            print("%.2f %.3f %.3f" % (rho, model_wa(
                rho, a.data_zones, a.zone_blocks, a.zones, a.low, a.high,
                seed=a.model_seed, hot=hot, separate=a.model_separate),
                analytic_wa(rho)))
        return 0

    base = QUICK if a.quick else FULL
    a.device = a.device or base["device"]
    a.rho = a.rho or base["rho"]
    a.fills = a.fills or base["fills"]
    a.hotcold_rho = a.hotcold_rho or base["hotcold_rho"]
    nz, zs = zone_geometry(a.device)
    a.dev_bytes = nz * zs
    a.zone_size = zs
    if not os.access(a.zcow, os.X_OK):
        sys.stderr.write("gc: %s is not executable (make, or --zcow)\n"
                         % a.zcow)
        return 1
    os.makedirs(os.path.join(a.results, "runs"), exist_ok=True)
    work = os.path.join(a.results, "scenarios")
    os.makedirs(work, exist_ok=True)
    t_start = time.time()

    # The hot/cold points run the policies asked for, else the two.
    hc_pols = a.policy if a.policy else HOTCOLD_POLICIES
    a.policy = a.policy or base["policy"]
    pols = set() if a.no_uniform else set(a.policy)
    if not a.no_hotcold:
        pols |= set(hc_pols)
    cal = {}
    with open(os.path.join(a.results, "calibration.csv"), "w",
              newline="") as f:
        w = csv.writer(f)
        w.writerow(["device", "policy", "C_bytes", "C_MiB", "device_bytes",
                    "share", "wall_s"])
        for pol in sorted(pols):
            cal[pol], wall = calibrate(a, pol, work)
            w.writerow([a.device, pol, cal[pol], "%.1f" % (cal[pol] / 2**20),
                        a.dev_bytes, "%.3f" % (cal[pol] / a.dev_bytes),
                        "%.1f" % wall])
            print("calibration %s: C = %d (%.1f MiB)" % (pol, cal[pol],
                  cal[pol] / 2**20), flush=True)

    points = []
    if not a.no_uniform:
        points += [(rho, pol, None) for rho in a.rho for pol in a.policy]
    if not a.no_hotcold:
        points += [(rho, pol, d) for rho in a.hotcold_rho
                   for d in HOTCOLD for pol in hc_pols]
    with concurrent.futures.ThreadPoolExecutor(max(1, a.jobs)) as ex:
        futs = [ex.submit(run_point, a, work, rho, pol, d, cal[pol])
                for rho, pol, d in points]
        rows = []
        for fu, (rho, pol, d) in zip(futs, points):
            r = fu.result()
            r["analytic"] = analytic_wa(rho)
            # The utilization the data really cycles through: its live
            # bytes over the space it could use (the data groups and the
            # zones data may open, pending ones counted, less what the
            # metadata's next commits need), sampled per interval by
            # zcow (intervals.csv data_utilization), the last third.
            if r.get("rho_eff") is not None and r["rho_eff"] < 1:
                r["analytic_eff"] = analytic_wa(r["rho_eff"])
                if d is None:
                    r["greedy_eff"] = textbook_greedy(a.device, C=r["C"],
                                                      rho=r["rho_eff"])
            if r.get("gc") is not None:
                r["ratio"] = r["gc"] / r["analytic"]
                r["within"] = abs(r["ratio"] - 1) <= 0.15
                if r.get("analytic_eff"):
                    r["ratio_eff"] = r["gc"] / r["analytic_eff"]
                    r["within_eff"] = abs(r["ratio_eff"] - 1) <= 0.10
                if r.get("greedy_eff"):
                    r["ratio_greedy_eff"] = r["gc"] / r["greedy_eff"]
            rows.append(r)
            print("rho %.2f %-12s %-18s GC WA %s total %s analytic %.2f%s"
                  " (%.0f s)" % (rho, pol, r["distribution"],
                                 fmt(r.get("gc")), fmt(r.get("total")),
                                 r["analytic"],
                                 " ENOSPC" if r["enospc"] else
                                 (" " + r["error"] if r["error"] else ""),
                                 r["wall_s"]), flush=True)
    uni = [r for r in rows if r["distribution"] == "random"]
    hc = [r for r in rows if r["distribution"] != "random"]
    if uni:
        write_tables(os.path.join(a.results, "wa"), uni, COLS)
        plot_wa(a.results, uni)
        plot_wa_time(a.results, [r for r in uni
                                 if r["policy"] == "greedy"])
    if hc:
        write_tables(os.path.join(a.results, "hotcold"), hc, COLS[:10] +
                     [("enospc", "ENOSPC"), ("wall_s", "wall (s)")])
    with open(os.path.join(a.results, "wall.txt"), "w") as f:
        f.write("device %s, %d points, wall %.0f s\n"
                % (a.device, len(rows), time.time() - t_start))
    print("gc: %d points, %.0f s wall, results in %s"
          % (len(rows), time.time() - t_start, a.results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
