#!/usr/bin/env bash
# zcow set-up and entry point.
#   ./run.sh        install what is missing, build, run the default scenario
#                   on the simulator, write results/ and a plot
#                   (ZCOW_KERNEL_RUNS="DIR ...": VM dbench runs for the
#                   kernel side of the tree-log table)
#   ./run.sh test   install what is missing, build, run every test, the
#                   VM smoke run last (ZCOW_SKIP_VM=1 skips it; docs/vm.md)
#   ./run.sh gc     the reclaim experiments in full (minutes to hours;
#                   docs/reclaim-experiments.md), results in
#                   results/<UTC time>-gc/
#   ./run.sh vm [SCENARIO...]
#                   QEMU NVMe ZNS regression runs (smoke, conform,
#                   workload, peers, sblog, gc, replace, dbench: the
#                   kernel's btrfs under fsync load, tree-log on / off,
#                   compat, fuse: zcow's FUSE mount beside btrfs zoned),
#                   results in results/<UTC time>-vm-<scenario>/
set -euo pipefail
cd "$(dirname "$0")"

PACKAGES=(gcc make pkg-config check libzbd-dev libisal-dev nettle-dev
	libxxhash-dev gnuplot-nox python3 btrfs-progs dbench fio fio-examples
	libfuse3-dev fuse3 stress-ng rocksdb-tools git tar slurm-wlm munge parallel)

install_missing() {
	local missing=() p
	for p in "${PACKAGES[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q 'install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	echo "run.sh: installing ${missing[*]}" >&2
	local sudo=""
	[ "$(id -u)" -ne 0 ] && sudo="sudo"
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get update -qq >/dev/null ||
		echo "run.sh: apt-get update failed; trying the install anyway" >&2
	$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

build() {
	make -s -j"$(nproc)" WERROR="${WERROR:-1}" all
}

run_default() {
	local stamp out
	stamp=$(date -u +%Y%m%dT%H%M%SZ)
	out="results/${stamp}-default"
	mkdir -p "$out"
	echo "== zones of the default simulated device"
	./build/zcow zones "sim:zones=16,zone_size=64M,zone_cap=48M,conv=2,max_open=14,max_active=14" |
		tee "$out/zones.txt"
	echo "== simulator benchmark"
	./build/zcow bench-dev --csv "$out/bench-dev.csv" | tee "$out/bench-dev.txt"
	python3 harness/plot_bench.py "$out/bench-dev.csv" "$out/bench-dev"
	echo "results in $out (bench-dev.png, bench-dev.svg)"
	# The seed experiment (configs/README.md): zcow's fs target with Zone
	# Append on/off against the raw device, 4 KiB random writes, 1..32 jobs
	# on the simulated zn540, in the seed's layout (btrfs-5.12: one data
	# block group at a time) and zcow's (data_zones=4); then 128 KiB
	# sequential writes.
	echo "== seed experiment: 4 KiB random writes, zcow append/write vs raw device, layouts btrfs-5.12 and zcow"
	python3 harness/sweep.py --zcow ./build/zcow --results "$out/seed" \
		configs/seed-zone-append.scenario \
		--grid numjobs=1,2,4,8,16,32 zone_append=on,off \
		layout=btrfs-5.12,zcow >/dev/null
	python3 harness/sweep.py --zcow ./build/zcow --results "$out/seed" \
		configs/raw-randwrite-4k.scenario \
		--grid numjobs=1,2,4,8,16,32 >/dev/null
	python3 harness/sweep.py --zcow ./build/zcow --results "$out/seed" \
		configs/raw-zone-append.scenario \
		--grid numjobs=1,2,4,8,16,32 >/dev/null
	local old="layout=btrfs-5.12" cur="layout=zcow"
	python3 harness/plot.py --out "$out/seed-plot" --x numjobs \
		--series layout+label --panel layout --metric iops \
		--title "4 KiB random writes, simulated ZN540" \
		--ratio "zcow append, $old/zcow write, $old" \
		--ratio "zcow append, $cur/zcow write, $cur" \
		--ratio "zcow append, $cur/raw device" \
		--ratio "zcow write, $cur/raw device" \
		--ratio "zcow append, $cur/raw device append" \
		--anchor "zcow append, $old/zcow write, $old@16=1.36:seed: append +36%" \
		--ratio-at 16 "$out/seed"
	echo "== 128 KiB sequential writes, zcow vs raw device"
	python3 harness/sweep.py --zcow ./build/zcow --results "$out/seq" \
		configs/fs-seqwrite-128k.scenario --grid zone_append=on,off >/dev/null
	python3 harness/sweep.py --zcow ./build/zcow --results "$out/seq" \
		configs/raw-seqwrite-128k.scenario --grid numjobs=4 >/dev/null
	python3 harness/plot.py --out "$out/seq-plot" --x bs --series label \
		--metric bw_mib_per_s \
		--title "128 KiB sequential writes, simulated ZN540" \
		--ratio "zcow append/raw device" \
		--ratio "zcow write/raw device" "$out/seq"
	# The tree-log experiment (configs/README.md): clients creating,
	# writing and fsyncing small files, renaming and unlinking some,
	# tree-log on/off, 1..32 clients on the simulated zn540.
	echo "== seed-treelog experiment: fsync per file, tree-log on/off"
	python3 harness/sweep.py --zcow ./build/zcow --results "$out/treelog" \
		configs/seed-treelog.scenario \
		--grid numjobs=1,2,4,8,16,32 treelog=on,off >/dev/null
	python3 harness/plot.py --out "$out/treelog-plot" --x numjobs \
		--series treelog --metric syncs_per_s \
		--title "fsync per 8 KiB file, simulated ZN540: tree-log on/off" \
		--anchor "treelog/notreelog@32=6.7:seed 010 (notreelog 85% slower)" \
		"$out/treelog"
	echo "plots and tables in $out/seed-plot, $out/seq-plot and" \
		"$out/treelog-plot (iops.png/.svg or syncs_per_s.png/.svg," \
		"curve.md/.csv, table.md/.csv; treelog-plot/breakdown.md)"
	run_fsync_kernel "$out"
	run_reclaim "$out"
	run_replace "$out"
}

# The tree-log experiment beside the kernel (docs/timing.md, "The tree-log
# experiment beside the kernel"): the kernel's fio fsync job
# (configs/kernel-fsync.scenario) and dbench's loadfile
# (configs/dbench.scenario) at 1, 8 and 32 clients, tree-log on/off, on
# the zn540 profile (its scaled geometry) and the smr profile (a 7200 rpm
# host-managed drive's 256 MiB zones).  Simulated runtimes: the fio job
# 200 ms on zn540, where its runs make about as many fsyncs (files) as
# the kernel's 20 s runs in QEMU did (1500 to 15000; the metadata per
# commit grows with the file system), and the kernel's 20 s on smr;
# dbench its scenario's 2 s after 0.4 s on zn540, and on smr 120 s after
# 24 s (the kernel's T = 120 at 32 clients; in 30 s the 32 clients are
# still in the loadfile's first phase, without fsyncs).  About 30 s of
# wall time.  Then one table, the kernel beside zcow: the kernel's
# figures from configs/kernel-fsync-anchors.csv (measured in QEMU, each
# row citing its source), replaced by those of VM runs named in
# ZCOW_KERNEL_RUNS (results folders of ./run.sh vm dbench, separated by
# spaces) where given.
run_fsync_kernel() {
	local out="$1" p kernel=(--kernel configs/kernel-fsync-anchors.csv) r
	local smr="sim:zones=256,zone_size=256M"
	echo "== the tree-log experiment beside the kernel: fio fsync job and" \
		"dbench, 1/8/32 clients, tree-log on/off, zn540 and smr"
	for p in zn540 smr; do
		local fset=(--set profile=$p --set runtime=200ms)
		local dset=(--set profile=$p)
		if [ "$p" = smr ]; then
			fset=(--set profile=smr --set device=$smr)
			dset=(--set profile=smr --set device=$smr
				--set runtime=120s --set ramp_time=24s)
		fi
		python3 harness/sweep.py --zcow ./build/zcow \
			--results "$out/fsync/fio/$p" "${fset[@]}" \
			configs/kernel-fsync.scenario \
			--grid numjobs=1,8,32 treelog=on,off >/dev/null
		python3 harness/sweep.py --zcow ./build/zcow \
			--results "$out/fsync/dbench/$p" "${dset[@]}" \
			configs/dbench.scenario \
			--grid numjobs=1,8,32 treelog=on,off >/dev/null
	done
	for r in ${ZCOW_KERNEL_RUNS:-}; do
		kernel+=(--kernel "$r")
	done
	python3 harness/fsync_table.py "${kernel[@]}" \
		--zcow fio="$out/fsync/fio" --zcow dbench="$out/fsync/dbench" \
		--md "$out/fsync/table.md" --csv "$out/fsync/table.csv"
	cat "$out/fsync/table.md"
	echo "table in $out/fsync (table.md/.csv; runs under fio/ and dbench/)"
}

# The device replace experiment (docs/devices.md): IOPS over simulated
# time before, during and after a replace, and the replace's own figures.
run_replace() {
	local out="$1"
	echo "== device replace while 8 jobs overwrite their files"
	./build/zcow run configs/replace-during-write.scenario \
		--results "$out/replace" >/dev/null
	python3 harness/plot.py --out "$out/replace-plot" --iops-time \
		--title "device replace during 64 KiB random overwrites" \
		"$out/replace" >/dev/null
	cat "$out/replace-plot/replace.md"
	echo "plot and tables in $out/replace-plot (iops_time.png/.svg," \
		"replace.md/.csv)"
}

# The reclaim experiments (docs/reclaim-experiments.md): quick versions
# (run_reclaim OUT), or in full for ./run.sh gc (run_reclaim OUT full).
run_reclaim() {
	local out=$1 full=${2:-} runtime=20s quick=--quick
	if [ "$full" = full ]; then
		runtime=300s
		quick=
	fi
	echo "== write amplification against utilization, per policy," \
		"and hot/cold (harness/gc.py $quick)"
	python3 harness/gc.py $quick --zcow ./build/zcow \
		--results "$out/gc" >/dev/null
	echo "tables and plots in $out/gc (wa.md/.csv, wa.png/.svg against" \
		"the analytic curve; hotcold.md/.csv; wa_time.png/.svg)"
	echo "== small commits on 4 MiB zones; fill, delete, refill" \
		"(harness/gcsmall.py $quick)"
	ZCOW_BIN=./build/zcow python3 harness/gcsmall.py $quick "$out/gcsmall"
	echo "CSVs and plots in $out/gcsmall (commits-*.png/.svg: the" \
		"unusable share and the free zones over the run)"
	echo "== sustained seed experiment: 16 jobs of 4 KiB random writes" \
		"at 80% utilization, $runtime, append on/off"
	python3 harness/sweep.py --zcow ./build/zcow --results "$out/sustained" \
		configs/gc-sustained.scenario --set runtime="$runtime" \
		--grid zone_append=on,off >/dev/null
	python3 harness/plot.py --out "$out/sustained-plot" --x numjobs \
		--series zone_append --metric iops --iops-time --wa-time \
		--title "sustained 4 KiB random writes, 80% full, reclaim=greedy" \
		"$out/sustained" >/dev/null
	echo "plots in $out/sustained-plot (iops_time.png/.svg: the" \
		"throughput cliff when reclaim starts; wa_time.png/.svg)"
}

vm_skipped() {
	export ZCOW_VM=0 ZCOW_VM_WHY="$1"
	cat >&2 <<EOF
!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!
!!! VM SMOKE RUN SKIPPED: $1
!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!
EOF
}

# The VM smoke run is the Check test vm_suite (tests/test_vm.c), last of
# the suites, so Check's summary stays the last line; ZCOW_VM=1 enables it.
prepare_vm() {
	local why
	if [ "${ZCOW_SKIP_VM:-0}" = 1 ]; then
		vm_skipped "ZCOW_SKIP_VM=1"
		return 0
	fi
	if ! harness/qemu/vm.sh install; then
		vm_skipped "installing the VM packages failed (harness/qemu/vm.sh install)"
		return 0
	fi
	if ! why=$(harness/qemu/vm.sh check 2>&1); then
		vm_skipped "the VM cannot run here: $why"
		return 0
	fi
	export ZCOW_VM=1
}

run_tests() {
	prepare_vm
	make -s -j"$(nproc)" WERROR="${WERROR:-1}" test
}

install_missing
case "${1:-}" in
"")
	build
	run_default
	;;
test)
	build
	run_tests
	;;
gc)
	build
	out="results/$(date -u +%Y%m%dT%H%M%SZ)-gc"
	mkdir -p "$out"
	run_reclaim "$out" full
	;;
vm)
	shift
	harness/qemu/vm.sh "$@"
	;;
*)
	echo "usage: ./run.sh [test | gc | vm [SCENARIO...]]" >&2
	exit 2
	;;
esac
