#!/usr/bin/env python3
"""Plot a `zcow bench-dev --csv` result with gnuplot (PNG and SVG).

usage: plot_bench.py BENCH.csv OUT_PREFIX

The CSV has the columns benchmark,metric,value,target (one row per
benchmark).  The plot shows each figure as a share of its target, so the
two benchmarks, which have different units, share one axis.
"""
import csv
import shutil
import subprocess
import sys


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    src, prefix = argv[1], argv[2]
    with open(src, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        print(f"plot_bench: {src}: no rows", file=sys.stderr)
        return 1
    data = prefix + ".dat"
    with open(data, "w") as f:
        for r in rows:
            share = 100.0 * float(r["value"]) / float(r["target"])
            label = f'{r["benchmark"]}\\n{float(r["value"]):.3g} {r["metric"]}'
            f.write(f'"{label}" {share:.1f}\n')
    if not shutil.which("gnuplot"):
        print("plot_bench: gnuplot not found; wrote only " + data,
              file=sys.stderr)
        return 1
    for term, ext in (("pngcairo size 800,500", "png"),
                      ("svg size 800,500", "svg")):
        script = f"""
set terminal {term}
set output '{prefix}.{ext}'
set title 'zcow simulator throughput (in-memory, 1 thread)'
set ylabel 'share of target (%)'
set yrange [0:*]
set style fill solid 0.6
set boxwidth 0.5
set grid ytics
set arrow from graph 0, first 100 to graph 1, first 100 nohead dt 2
plot '{data}' using 0:2:xtic(1) with boxes notitle, \\
     '' using 0:2:(sprintf('%.0f%%', $2)) with labels offset 0,1 notitle
"""
        r = subprocess.run(["gnuplot"], input=script, text=True)
        if r.returncode:
            # pngcairo is missing from some gnuplot builds: fall back.
            if ext == "png":
                script = script.replace(term, "png size 800,500")
                r = subprocess.run(["gnuplot"], input=script, text=True)
            if r.returncode:
                return r.returncode
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
