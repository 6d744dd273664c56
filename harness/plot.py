#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Turn zcow result folders into gnuplot plots (PNG and SVG) and tables.

usage: plot.py [--out DIR] [--x KEY] [--series KEY] [--metric M]
               [--ratio A/B] [--anchor A/B@X=VALUE[:NOTE]] FOLDER...

A FOLDER is a result folder (with summary.json and config.fio) or a folder
of them (a sweep).  KEY names a [zcow] or job option as written in the
resolved config.fio (numjobs, zone_append, bs, ...).  Metrics: iops,
bw_mib_per_s, lat_mean_us, lat_p99_us.  Writes DIR/<metric>.png,
DIR/<metric>.svg, DIR/table.md, DIR/table.csv, and the curve table
DIR/curve.md, DIR/curve.csv (one row per x, one column per series).
--series label overlays the targets: "zcow append" / "zcow write" (fs
target, zone_append on/off) and "raw device" / "raw device append" (raw
target); KEY1+KEY2 joins several keys.  --ratio "zcow append/zcow write"
adds a column with the ratio of two series to the curve table (repeat
for more); --ratio-at X also writes DIR/ratio_at.md and .csv, every
ratio at x = X.  --panel KEY draws one panel per value of KEY side by
side on one y scale (runs without KEY, e.g. the raw device, in every
panel; anchors in the panel of their B).  --series layout+label names the fs target's series
"zcow append, layout=btrfs-5.12" (the raw target's just "raw device").  --series treelog names the fs target's tree-log modes
"treelog" / "notreelog".  --anchor "treelog/notreelog@32=6.7:seed" adds
a published reference value of a ratio at one x to the curve table
(column "A / B anchor"), prints it next to the measured ratio and
marks it in the plot: a point at X where A would be at that ratio to B.
DIR/breakdown.md and .csv list per run where the device time goes:
syncs, commits, the fs's fsync counters, device commands and bytes
written per I/O class.  Metrics: also syncs_per_s (fsync/fdatasync
calls per second).  --wa-time also plots each run's write amplification
over time from its intervals.csv (DIR/wa_time.png, .svg and .csv: one
column per run, "series x=value scenario"; an interval without host writes has
no point); --iops-time the same for IOPS (DIR/iops_time.*), a device
replace's window shaded.  A run with a device replace (summary.json
"replace") adds DIR/replace.md and .csv: its start, duration, bytes
copied, zero-filled and cloned, and the IOPS before, during and after.  Python 3 standard library only; gnuplot must be on PATH for
the plots.
"""
import argparse
import csv
import json
import os
import subprocess
import sys

LABELS = {
    "iops": "throughput (IOPS, simulated time)",
    "bw_mib_per_s": "bandwidth (MiB/s, simulated time)",
    "lat_mean_us": "mean latency (us, simulated time)",
    "lat_p99_us": "p99 latency (us, simulated time)",
    "syncs_per_s": "fsyncs per second (simulated time)",
}
CLASSES = ("sb", "meta", "log", "data", "flush")


def config_of(folder):
    """The resolved options: the [zcow] keys and the first job's."""
    opts, section = {}, None
    with open(os.path.join(folder, "config.fio")) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith(";"):
                continue
            if line.startswith("["):
                if section is not None and section != "zcow":
                    break
                section = line[1:-1]
                continue
            k, _, v = line.partition("=")
            opts.setdefault(k, v)
    return opts


def row_of(folder):
    with open(os.path.join(folder, "summary.json")) as f:
        s = json.load(f)
    t = s["total"]
    c = config_of(folder)
    r = dict(c)
    r.update({
        "folder": folder, "scenario": s["scenario"], "target": s["target"],
        "iops": t["iops"], "bw_mib_per_s": t["bw_mib_per_s"],
        "lat_mean_us": t["lat_ns"]["mean"] / 1000.0,
        "lat_p99_us": t["lat_ns"]["p99"] / 1000.0,
        "write_amplification": s["write_amplification"],
        "zone_resets": s["zone_resets"],
        "syncs": t.get("syncs", 0),
        "syncs_per_s": t.get("syncs_per_s", 0.0),
        "sync_lat_mean_us": t.get("sync_lat_ns", {}).get("mean", 0) / 1000.0,
        "commits": s.get("commits", 0),
        "replace": s.get("replace"),
    })
    for k, v in s.get("fs_fsync", {}).items():
        r["fs_" + k] = v
    for c in CLASSES:
        cmds = s.get("device_commands_by_class", {}).get(c, {})
        r["cmds_" + c] = sum(cmds.values())
        r["bytes_" + c] = s.get("device_bytes_written", {}).get(c, 0)
    return r


def folders(args):
    out = []
    for a in args:
        if os.path.exists(os.path.join(a, "summary.json")):
            out.append(a)
            continue
        for d in sorted(os.listdir(a)):
            p = os.path.join(a, d)
            if os.path.exists(os.path.join(p, "summary.json")):
                out.append(p)
    return out


NAMED = ("label", "treelog")


def series_of(r, key):
    parts = key.split("+")
    if len(parts) > 1 and any(k in NAMED for k in parts):
        # "layout+label": "zcow append, layout=btrfs-5.12"; a key the
        # run's config does not have (the raw target's layout) is left out
        names = [series_of(r, k) for k in parts if k in NAMED]
        names += ["%s=%s" % (k, r[k]) for k in parts
                  if k not in NAMED and r.get(k, "") != ""]
        return ", ".join(names)
    if key == "label":
        on = str(r.get("zone_append", "off")) in ("on", "true", "1")
        if r.get("target") == "fs":
            return "zcow append" if on else "zcow write"
        return "raw device append" if on else "raw device"
    if key == "treelog":
        on = str(r.get("treelog", "on")) in ("on", "true", "1")
        return "treelog" if on else "notreelog"
    return "+".join(str(r.get(k, "")) for k in key.split("+"))


def num(v):
    try:
        return float(v)
    except ValueError:
        return v


def gnuplot(out, name, lines, plots):
    """Draw DIR/name.png and .svg with gnuplot: @lines set the axes,
    @plots is the plot command's list, or a list of panels side by side,
    each (its own lines, its plot list).  Returns 0 or 1 (reported)."""
    if isinstance(plots, str):
        body, width = ["plot " + plots], 800
    else:
        body, width = ["set multiplot layout 1,%d" % len(plots)], \
            700 * len(plots)
        for plines, pplots in plots:
            body += plines + ["plot " + pplots, "unset label"]
        body.append("unset multiplot")
    for term, ext in (("pngcairo size %d,500" % width, "png"),
                      ("svg size %d,500" % width, "svg")):
        script = "\n".join([
            "set terminal %s" % term,
            "set output '%s'" % os.path.join(out, "%s.%s" % (name, ext))] +
            lines + body + [""])
        p = subprocess.run(["gnuplot"], input=script, universal_newlines=True,
                           stderr=subprocess.PIPE)
        if p.returncode != 0 and ext == "png":
            # No cairo: fall back to the plain png terminal.
            script = script.replace("pngcairo", "png")
            p = subprocess.run(["gnuplot"], input=script,
                               universal_newlines=True, stderr=subprocess.PIPE)
        if p.returncode != 0:
            sys.stderr.write("plot: gnuplot failed: %s\n" % p.stderr)
            return 1
    return 0


TIME_PLOTS = {
    # column of intervals.csv: (file name, title, y label)
    "wa": ("wa_time", "write amplification per interval",
           "device bytes / host bytes written"),
    "iops": ("iops_time", "throughput per interval",
             "IOPS (simulated time)"),
}


def over_time(out, rows, x, series, column):
    """Each run's intervals.csv @column against time: DIR/<name>.csv,
    .dat, .png, .svg (TIME_PLOTS).  Returns 0 or 1."""
    name, title, ylabel = TIME_PLOTS[column]
    runs = []
    for r in rows:
        path = os.path.join(r["folder"], "intervals.csv")
        if not os.path.exists(path):
            continue
        with open(path, newline="") as f:
            rd = csv.DictReader(f)
            if column not in (rd.fieldnames or []):
                continue
            pts = [(float(i["t_start_s"]), float(i[column]))
                   for i in rd if i[column] != ""]
        runs.append(("%s=%s %s=%s %s" % (series, r["series"], x,
                                         r.get(x, ""), r["scenario"]), pts))
    if not runs:
        sys.stderr.write("plot: --%s-time: no intervals.csv with a %s "
                         "column\n" % (column, column))
        return 1
    ts = sorted({t for _, pts in runs for t, _ in pts})
    by_t = [dict(pts) for _, pts in runs]
    with open(os.path.join(out, name + ".csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["t_start_s"] + [n for n, _ in runs])
        for t in ts:
            w.writerow([t] + ["%.6f" % v[t] if t in v else ""
                              for v in by_t])
    data = os.path.join(out, name + ".dat")
    with open(data, "w") as f:
        for n, pts in runs:
            f.write("# %s\n" % n)
            for t, v in pts:
                f.write("%s %s\n" % (t, v))
            f.write("\n\n")
    plots = ", ".join("'%s' index %d using 1:2 with lines title '%s'"
                      % (data, i, n.replace("'", ""))
                      for i, (n, _) in enumerate(runs))
    # A device replace during a run: its window shaded and named.
    marks = []
    for r in rows:
        rp = r.get("replace")
        if rp and rp.get("finished"):
            marks.append("set object %d rect from %f, graph 0 to %f, graph 1"
                         " fc rgb '#d8d8f0' fs solid 0.6 noborder behind"
                         % (len(marks) + 1, rp["start_s"], rp["end_s"]))
            marks.append("set label %d 'replace (%.2f s)' at %f, graph 0.05"
                         " noenhanced" % (len(marks), rp["duration_s"],
                                          rp["start_s"]))
    return gnuplot(out, name, [
        "set title '%s' noenhanced" % title,
        "set xlabel 'time (s)' noenhanced",
        "set ylabel '%s' noenhanced" % ylabel,
        "set grid", "set key right top noenhanced", "set yrange [0:*]"] +
        marks, plots)


def replace_table(out, rows):
    """DIR/replace.md and .csv: per run with a device replace, when it
    ran, what it copied, and the jobs' IOPS before, during and after it
    (mean over the intervals.csv intervals inside each window; before and
    after are windows as long as the replace, clipped to the jobs' last
    phase).  Returns the rows written."""
    out_rows = []
    for r in rows:
        rp = r.get("replace")
        if not rp or not rp.get("finished"):
            continue
        with open(os.path.join(r["folder"], "summary.json")) as f:
            s = json.load(f)
        jobs = s.get("jobs", [])
        last = max(j.get("phase", 0) for j in jobs) if jobs else 0
        t0 = min((j["start_ns"] for j in jobs if j.get("phase", 0) == last),
                 default=0) / 1e9
        t1 = max((j["end_ns"] for j in jobs), default=0) / 1e9
        d = rp["duration_s"]
        wins = {"before": (max(t0, rp["start_s"] - d), rp["start_s"]),
                "during": (rp["start_s"], rp["end_s"]),
                "after": (rp["end_s"], min(t1, rp["end_s"] + d))}
        iops = {k: [] for k in wins}
        with open(os.path.join(r["folder"], "intervals.csv"),
                  newline="") as f:
            for i in csv.DictReader(f):
                a, b = float(i["t_start_s"]), float(i["t_end_s"])
                for k, (w0, w1) in wins.items():
                    if a >= w0 and b <= w1 + 1e-9:
                        iops[k].append(float(i["iops"]))
        mean = {k: (sum(v) / len(v) if v else None) for k, v in iops.items()}
        out_rows.append({
            "scenario": r["scenario"], "series": r["series"],
            "start_s": rp["start_s"], "end_s": rp["end_s"],
            "duration_s": d, "groups_copied": rp["groups_copied"],
            "groups_to_copy": rp["groups_to_copy"],
            "mib_copied": rp["bytes_copied"] / 2**20,
            "mib_zeroed": rp["bytes_zeroed"] / 2**20,
            "mib_cloned": rp["bytes_cloned"] / 2**20,
            "iops_before": mean["before"], "iops_during": mean["during"],
            "iops_after": mean["after"],
            "during_over_before": (mean["during"] / mean["before"]
                                   if mean["during"] is not None and
                                   mean["before"] else None),
        })
    if not out_rows:
        return out_rows
    cols = list(out_rows[0])
    with open(os.path.join(out, "replace.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for r in out_rows:
            w.writerow([r[c] for c in cols])
    with open(os.path.join(out, "replace.md"), "w") as f:
        f.write("| " + " | ".join(cols) + " |\n")
        f.write("|" + "---|" * len(cols) + "\n")
        for r in out_rows:
            f.write("| " + " | ".join(
                "-" if r[c] is None else
                "%.3f" % r[c] if isinstance(r[c], float) else str(r[c])
                for c in cols) + " |\n")
    return out_rows


def ratio_at(out, ccols, crow, x, first, nr, xname):
    """DIR/ratio_at.md and .csv: the nr ratio columns of the curve
    (from column @first) at x = @x, one row per ratio; printed."""
    row = next((r for r in crow if r[0] == x), None)
    rows = [(ccols[first + i], row[first + i] if row else None)
            for i in range(nr)]
    head = ["ratio", "%s=%s" % (xname, x if not isinstance(x, float) or
                                x != int(x) else int(x))]
    with open(os.path.join(out, "ratio_at.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(head)
        w.writerows([[n, "" if v is None else "%.3f" % v]
                     for n, v in rows])
    with open(os.path.join(out, "ratio_at.md"), "w") as f:
        f.write("| %s | %s |\n|---|---|\n" % tuple(head))
        for n, v in rows:
            f.write("| %s | %s |\n" % (n, "-" if v is None else
                                        "%.3f" % v))
    with open(os.path.join(out, "ratio_at.md")) as f:
        sys.stdout.write(f.read())


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("folders", nargs="+")
    ap.add_argument("--out", default="results/plot")
    ap.add_argument("--x", default="numjobs")
    ap.add_argument("--series", default="zone_append")
    ap.add_argument("--metric", default="iops", choices=sorted(LABELS))
    ap.add_argument("--title", default=None)
    ap.add_argument("--ratio", action="append", default=[],
                    metavar="A/B")
    ap.add_argument("--anchor", action="append", default=[],
                    metavar="A/B@X=VALUE[:NOTE]")
    ap.add_argument("--panel", default=None, metavar="KEY",
                    help="one plot panel per value of KEY, side by side "
                    "(runs without KEY in every panel)")
    ap.add_argument("--ratio-at", default=None, metavar="X",
                    help="write DIR/ratio_at.md/.csv: every --ratio at "
                    "x=X")
    ap.add_argument("--wa-time", action="store_true",
                    help="plot each run's write amplification over time")
    ap.add_argument("--iops-time", action="store_true",
                    help="plot each run's IOPS over time")
    a = ap.parse_args()
    anchors = []
    for q in a.anchor:
        try:
            ratio, rest = q.split("@", 1)
            x, rest = rest.split("=", 1)
            value, _, note = rest.partition(":")
            anchors.append((ratio, num(x), float(value), note))
        except ValueError:
            ap.error("bad --anchor %r (want A/B@X=VALUE[:NOTE])" % q)
        if ratio not in a.ratio:
            a.ratio.append(ratio)

    rows = [row_of(f) for f in folders(a.folders)]
    if not rows:
        sys.stderr.write("plot: no result folders\n")
        return 1
    os.makedirs(a.out, exist_ok=True)
    for r in rows:
        r["series"] = series_of(r, a.series)
    rows.sort(key=lambda r: (r["series"], num(r.get(a.x, 0))))
    cols = [a.x, "series", "scenario", "target", "iops", "bw_mib_per_s",
            "lat_mean_us", "lat_p99_us", "write_amplification", "zone_resets"]
    with open(os.path.join(a.out, "table.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for r in rows:
            w.writerow([r.get(c, "") for c in cols])
    with open(os.path.join(a.out, "table.md"), "w") as f:
        f.write("| " + " | ".join(cols) + " |\n")
        f.write("|" + "---|" * len(cols) + "\n")
        for r in rows:
            cells = []
            for c in cols:
                v = r.get(c, "")
                cells.append("%.1f" % v if isinstance(v, float) else str(v))
            f.write("| " + " | ".join(cells) + " |\n")

    series = {}
    for r in rows:
        series.setdefault(r["series"], []).append(
            (num(r.get(a.x, 0)), r[a.metric]))
    # The curve: one row per x, one column per series, then ratios.
    xs = sorted({x for pts in series.values() for x, _ in pts})
    names = sorted(series)
    ratios = [q.split("/", 1) for q in a.ratio if "/" in q]
    ccols = [a.x] + ["%s %s" % (n, a.metric) for n in names] + \
        ["%s / %s" % (p, q) for p, q in ratios] + \
        ["%s anchor" % r.replace("/", " / ") for r, _, _, _ in anchors]
    crow = []
    measured = []
    for x in xs:
        v = {n: dict(series[n]).get(x) for n in names}
        row = [x] + [v[n] for n in names]
        got = {}
        for p, q in ratios:
            got["%s/%s" % (p, q)] = \
                v[p] / v[q] if v.get(p) and v.get(q) else None
            row.append(got["%s/%s" % (p, q)])
        for ratio, ax, value, note in anchors:
            row.append(value if ax == x else None)
            if ax == x:
                measured.append((ratio, x, got.get(ratio), value, note))
        crow.append(row)

    def fmt(c):
        if c is None:
            return ""
        if isinstance(c, float):
            return "%.0f" % c if abs(c) >= 100 or c == int(c) else "%.3f" % c
        return str(c)
    with open(os.path.join(a.out, "curve.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(ccols)
        w.writerows([[fmt(c) for c in row] for row in crow])
    with open(os.path.join(a.out, "curve.md"), "w") as f:
        f.write("| " + " | ".join(ccols) + " |\n")
        f.write("|" + "---|" * len(ccols) + "\n")
        for row in crow:
            f.write("| " + " | ".join(fmt(c) for c in row) + " |\n")
    bcols = [a.x, "series", "syncs", "syncs_per_s", "sync_lat_mean_us",
             "commits", "fs_nr_fsyncs", "fs_nr_log_syncs",
             "fs_nr_log_fallbacks", "fs_nr_commits"] + \
        ["cmds_" + c for c in CLASSES] + ["bytes_" + c for c in CLASSES]
    with open(os.path.join(a.out, "breakdown.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(bcols)
        for r in rows:
            w.writerow([fmt(r.get(c, "")) if isinstance(r.get(c), float)
                        else r.get(c, "") for c in bcols])
    with open(os.path.join(a.out, "breakdown.md"), "w") as f:
        f.write("| " + " | ".join(bcols) + " |\n")
        f.write("|" + "---|" * len(bcols) + "\n")
        for r in rows:
            f.write("| " + " | ".join(fmt(r.get(c)) if r.get(c) is not None
                                      else "" for c in bcols) + " |\n")
    data = os.path.join(a.out, "%s.dat" % a.metric)
    with open(data, "w") as f:
        for name, pts in sorted(series.items()):
            f.write("# %s\n" % name)
            for x, y in sorted(pts, key=lambda p: p[0]):
                f.write("%s %s\n" % (x, y))
            f.write("\n\n")
    title = a.title or "%s: %s by %s" % (rows[0]["scenario"], a.metric, a.x)
    named = any(k in NAMED for k in a.series.split("+"))
    order = sorted(series)
    panel_of = {r["series"]: str(r.get(a.panel, "")) for r in rows} \
        if a.panel else {}
    panels = sorted({v for v in panel_of.values() if v}) or [None]

    def curves(p):
        """The plot list of panel @p (None: every series): its own
        series and those without the panel key (the raw baselines)."""
        cut = ", %s=%s" % (a.panel, p) if p is not None else ""
        return ", ".join(
            "'%s' index %d using 1:2 with linespoints title '%s'"
            % (data, i, (name.replace(cut, "") if named else
                         "%s=%s" % (a.series, name)).replace("'", ""))
            for i, name in enumerate(order)
            if p is None or panel_of.get(name) in ("", p))

    def marks(p):
        """An anchor A/B@X=V is marked where A would be at that ratio:
        at (X, V x B's value at X), with its note, in B's panel."""
        out = []
        for ratio, ax, value, note in anchors:
            q = ratio.split("/", 1)[1]
            base = dict(series.get(q, [])).get(ax)
            if base is None or (p is not None and panel_of.get(q) != p):
                continue
            out.append("set label %d '%s' at %s, %s right point "
                       "pointtype 7 pointsize 1.5 offset -1, 0 noenhanced"
                       % (len(out) + 1, (note or ratio).replace("'", ""),
                          ax, value * base))
        return out
    common = [
        "set xlabel '%s (count)' noenhanced" % a.x,
        "set ylabel '%s' noenhanced" % LABELS[a.metric],
        "set grid", "set key left top noenhanced", "set yrange [0:*]",
        "set logscale x 2" if a.x == "numjobs" else ""]
    if a.panel:
        top = max((y for pts in series.values() for _, y in pts),
                  default=0) * 1.15
        # one scale for all panels; the key below the curves' plateaus
        common[3] = "set key right bottom noenhanced"
        common[4] = "set yrange [0:%f]" % top
        if gnuplot(a.out, a.metric, common, [
                (["set title '%s: %s=%s' noenhanced"
                  % (title.replace("'", ""), a.panel, p)] + marks(p),
                 curves(p)) for p in panels]):
            return 1
    elif gnuplot(a.out, a.metric, [
            "set title '%s' noenhanced" % title.replace("'", "")] +
            common + marks(None), curves(None)):
        return 1
    if a.wa_time and over_time(a.out, rows, a.x, a.series, "wa"):
        return 1
    if a.iops_time and over_time(a.out, rows, a.x, a.series, "iops"):
        return 1
    with open(os.path.join(a.out, "curve.md")) as f:
        sys.stdout.write(f.read())
    if a.ratio_at is not None:
        ratio_at(a.out, ccols, crow, num(a.ratio_at), len(names) + 1,
                 len(ratios), a.x)
    if replace_table(a.out, rows):
        with open(os.path.join(a.out, "replace.md")) as f:
            sys.stdout.write(f.read())
    for ratio, x, got, value, note in measured:
        sys.stdout.write("anchor: %s at %s=%s: measured %s, %s %s\n" % (
            ratio, a.x, fmt(x), "%.3f" % got if got is not None else "n/a",
            note or "reference", "%.3f" % value))
    return 0


if __name__ == "__main__":
    sys.exit(main())
