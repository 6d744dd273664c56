# experiments: every shipped experiment of zcow on the real namespace
# (docs/vm.md, "Every shipped experiment on the namespace").  Each runs
# from reset zones with `device=/dev/nvme0n1` as its only change of
# setting but the sizes and run lengths below, and leaves its figures in
# result-<name>.txt:
#   gc-uniform, gc-hotcold     configs/gc-*.scenario, size= the file at
#                              the rho the config states (0.64 and 0.8 of
#                              the space data can use here, 800 MiB)
#   vm-gc-rho60, vm-gc-rho80   configs/vm-gc-rhoNN.scenario as shipped
#                              (made for this geometry)
#   gc-sustained               configs/gc-sustained.scenario, size=40m
#                              (16 files, 0.8 of that space),
#                              runtime=SUSTAINED_RUNTIME (./run.sh's 20 s)
#     the four before it: runtime=RUNTIME (wall time, every job: the
#     fill ends before it, the overwrite is stopped by it)
#   commits-empty, commits-4k-fsync, refill
#                              the small-commit experiments of
#                              harness/gcsmall.py (zcow bench-commits,
#                              bench-refill) with --ops OPS (OPS / 2 for
#                              the fsync one) and --rounds ROUNDS
#   seed-append-on, seed-append-off
#                              configs/seed-zone-append.scenario,
#                              zone_append=on (as shipped) / off
#   seed-treelog-on, seed-treelog-off
#                              configs/seed-treelog.scenario, treelog=on
#                              (as shipped) / off
#   crash-record, crash-campaign
#                              configs/seed-treelog.fio run by fio on
#                              `zcow fuse --record` on the namespace
#                              (numjobs=CRASH_JOBS loops=CRASH_LOOPS,
#                              directory= under the mount point), then
#                              `zcow crash --ops` of that recording with
#                              --quick on the simulator, in this guest
# Per experiment: blkzone report and the NVMe SMART log before and after,
# the zone resets in the kernel's NVMe trace, zcow's summary.json (zcow
# run) or its verdict line and CSV (bench-*), then `zcow check` when it
# leaves a file system.  A failed experiment is a result (its error is
# in the table); the scenario fails only when a measurement could not
# be made.
# VM_SET keys: experiments=LIST (comma-separated names above, default
# all)  runtime=90  sustained_runtime=20  ops=8000  rounds=2
# seed_runtime= (empty: the configs' own 200ms)  crash_jobs=4
# crash_loops=2
# vm: zones=64 zone_size=16M zone_cap=16M max_open=14 max_active=14 zasl=0 timeout=1800 runtime=90 sustained_runtime=20 ops=8000 rounds=2
# shellcheck shell=dash
# shellcheck disable=SC1091 # the guest path of scenarios/lib.sh
. /scenarios/lib.sh

ALL="gc-uniform gc-hotcold vm-gc-rho60 vm-gc-rho80 gc-sustained"
ALL="$ALL commits-empty commits-4k-fsync refill"
ALL="$ALL seed-append-on seed-append-off seed-treelog-on seed-treelog-off"
ALL="$ALL crash-record crash-campaign"
EXPERIMENTS=$(echo "${ZCOW_EXPERIMENTS:-$ALL}" | tr ',' ' ')
RUNTIME=${ZCOW_RUNTIME:-90}
SUSTAINED_RUNTIME=${ZCOW_SUSTAINED_RUNTIME:-20}
OPS=${ZCOW_OPS:-8000}
ROUNDS=${ZCOW_ROUNDS:-2}
SEED_RUNTIME=${ZCOW_SEED_RUNTIME:-}
CRASH_JOBS=${ZCOW_CRASH_JOBS:-4}
CRASH_LOOPS=${ZCOW_CRASH_LOOPS:-2}
# An experiment that runs longer than this is stopped (and reported).
JOB_TIMEOUT=${ZCOW_JOB_TIMEOUT:-900}
DEVNAME=${DEV#/dev/}
ZONEBYTES=$(($(cat "/sys/block/$DEVNAME/queue/chunk_sectors") * 512))
echo mq-deadline >"/sys/block/$DEVNAME/queue/scheduler"
{
	echo "experiments=$EXPERIMENTS"
	echo "runtime=$RUNTIME"
	echo "sustained_runtime=$SUSTAINED_RUNTIME"
	echo "ops=$OPS"
	echo "rounds=$ROUNDS"
	echo "seed_runtime=$SEED_RUNTIME"
	echo "crash_jobs=$CRASH_JOBS"
	echo "crash_loops=$CRASH_LOOPS"
	echo "zone_bytes=$ZONEBYTES"
	echo "device_bytes=$(($(cat "/sys/block/$DEVNAME/size") * 512))"
	echo "fio_version=$(fio --version)"
} >"$OUT/experiments-setup.txt"

# trace_start, trace_resets, snap and result: lib.sh.

# begin TAG: reset every zone, the state before, the trace on.
begin() {
	: >"$OUT/result-$1.txt"
	blkzone reset "$DEV" || return 1
	snap "$1" before || return 1
	trace_start
	T0=$(now)
}

# end TAG RC CHECK: the state after, then `zcow check` when CHECK is yes.
end() {
	t1=$(now)
	trace_resets "$1"
	snap "$1" after
	result "$1" "rc=$2" "seconds=$(elapsed "$T0" "$t1")"
	if [ "$3" = yes ]; then
		zcow check "$DEV" >"$OUT/check-$1.txt" 2>&1
		result "$1" "check_rc=$?" \
			"check=$(tail -n1 "$OUT/check-$1.txt")"
	fi
	cat "$OUT/result-$1.txt"
}

# last_error FILE: the runner's last error line (zcow's own messages).
last_error() {
	grep '^zcow' "$1" | grep -v '^zcow: .*: warning' | tail -n1
}

# zrun TAG CONFIG [--set k=v ...]: `zcow run /configs/CONFIG.scenario
# --set device=$DEV ...`; the summary.json is kept as zcow-TAG.json.
zrun() {
	tag=$1
	cfg=$2
	shift 2
	begin "$tag" || return 1
	result "$tag" "kind=run" "config=configs/$cfg.scenario" \
		"sets=$(echo "$@" | sed 's/--set //g')"
	timeout "$JOB_TIMEOUT" zcow run "/configs/$cfg.scenario" \
		--set "device=$DEV" "$@" --results "$OUT/zrun" \
		>"$OUT/run-$tag.txt" 2>&1
	rc=$?
	dir=$(grep "^$OUT/zrun/" "$OUT/run-$tag.txt" | tail -n1)
	[ -n "$dir" ] && [ -f "$dir/summary.json" ] &&
		cp "$dir/summary.json" "$OUT/zcow-$tag.json"
	[ -n "$dir" ] && result "$tag" "dir=${dir#"$OUT"/}"
	[ "$rc" = 0 ] || result "$tag" "error=$(last_error "$OUT/run-$tag.txt")"
	end "$tag" "$rc" yes
	tail -n 5 "$OUT/run-$tag.txt"
	return 0
}

# bench TAG SUBCOMMAND ARGS...: zcow bench-commits / bench-refill on $DEV
# (each makes a new file system there), the CSV as bench-TAG.csv.
bench() {
	tag=$1
	shift
	begin "$tag" || return 1
	result "$tag" "kind=bench" "config=zcow $*"
	timeout "$JOB_TIMEOUT" zcow "$@" --csv "$OUT/bench-$tag.csv" --check \
		"$DEV" >"$OUT/run-$tag.txt" 2>&1
	rc=$?
	result "$tag" "verdict=$(grep '^completed\|^stopped\|^failed' \
		"$OUT/run-$tag.txt" | tail -n1)"
	[ "$rc" = 0 ] || result "$tag" "error=$(last_error "$OUT/run-$tag.txt")"
	end "$tag" "$rc" yes
	tail -n 5 "$OUT/run-$tag.txt"
	return 0
}

# crash_record: zcow mkfs, `zcow fuse --record` on $DEV, the seed-treelog
# job file by fio in the mount (fewer clients and loops; its directory
# under /mnt), unmount (zcow's final commit), `zcow check`.
crash_record() {
	tag=crash-record
	begin "$tag" || return 1
	sed -e "s/^numjobs=.*/numjobs=$CRASH_JOBS/" \
		-e "s/^loops=.*/loops=$CRASH_LOOPS/" \
		-e 's|^directory=/|directory=/mnt/|' \
		/configs/seed-treelog.fio >"$OUT/crash-job.fio"
	result "$tag" "kind=record" "config=configs/seed-treelog.fio" \
		"sets=numjobs=$CRASH_JOBS loops=$CRASH_LOOPS directory=/mnt/clients"
	zcow mkfs "$DEV" >/dev/null || return 1
	zcow fuse -f "$DEV" /mnt --record "$OUT/device.ops" \
		>"$OUT/crash-daemon.txt" 2>&1 &
	zpid=$!
	wait_mounted || return 1
	mkdir /mnt/clients
	(cd /mnt && fio "$OUT/crash-job.fio" --output-format=json \
		--output="$OUT/crash-fio.json")
	frc=$?
	umount /mnt
	wait "$zpid"
	zrc=$?
	result "$tag" "fio_rc=$frc" "daemon_rc=$zrc" \
		"ops_lines=$(wc -l <"$OUT/device.ops")"
	rc=0
	[ "$frc" = 0 ] && [ "$zrc" = 0 ] || rc=1
	[ "$rc" = 0 ] || result "$tag" "error=$(last_error "$OUT/crash-daemon.txt")"
	end "$tag" "$rc" yes
	awk '{ print $1 }' "$OUT/device.ops" | sort | uniq -c
	return 0
}

# crash_campaign: the recording's crash campaign on the simulator.
crash_campaign() {
	tag=crash-campaign
	: >"$OUT/result-$tag.txt"
	result "$tag" "kind=crash" "config=zcow crash --ops device.ops --quick"
	[ -s "$OUT/device.ops" ] || {
		result "$tag" "rc=1" \
			"error=no recording (crash-record did not run or failed)"
		return 0
	}
	t0=$(now)
	timeout "$JOB_TIMEOUT" zcow crash --ops "$OUT/device.ops" --quick \
		--results "$OUT/crash" >"$OUT/run-$tag.txt" 2>&1
	rc=$?
	t1=$(now)
	result "$tag" "rc=$rc" "seconds=$(elapsed "$t0" "$t1")" \
		"states=$(sed -n 's/^ *treelog=\(o[nf]*\) *\([0-9]*\).*/\1:\2/p' \
			"$OUT/run-$tag.txt" | tr '\n' ' ')" \
		"violations=$(grep -c '^repro:' "$OUT/run-$tag.txt")"
	[ "$rc" = 0 ] || result "$tag" "error=$(last_error "$OUT/run-$tag.txt")"
	cat "$OUT/result-$tag.txt"
	tail -n 20 "$OUT/run-$tag.txt"
	return 0
}

RT="--set runtime=${RUNTIME}s"
SEED_RT=
[ -n "$SEED_RUNTIME" ] && SEED_RT="--set runtime=$SEED_RUNTIME"
for e in $EXPERIMENTS; do
	# shellcheck disable=SC2086 # RT and SEED_RT are two words or none
	case $e in
	gc-uniform) step "$e" zrun "$e" gc-uniform --set size=512m $RT ;;
	gc-hotcold) step "$e" zrun "$e" gc-hotcold --set size=640m $RT ;;
	vm-gc-rho60 | vm-gc-rho80) step "$e" zrun "$e" "$e" $RT ;;
	gc-sustained)
		step "$e" zrun "$e" gc-sustained --set size=40m \
			--set "runtime=${SUSTAINED_RUNTIME}s"
		;;
	commits-empty)
		step "$e" bench "$e" bench-commits --ops "$OPS" \
			--every $((OPS / 40 > 0 ? OPS / 40 : 1)) --size 0 \
			--sync commit
		;;
	commits-4k-fsync)
		step "$e" bench "$e" bench-commits --ops $((OPS / 2)) \
			--every $((OPS / 80 > 0 ? OPS / 80 : 1)) --size 4k \
			--sync fsync
		;;
	refill) step "$e" bench "$e" bench-refill --rounds "$ROUNDS" ;;
	seed-append-on) step "$e" zrun "$e" seed-zone-append $SEED_RT ;;
	seed-append-off)
		step "$e" zrun "$e" seed-zone-append --set zone_append=off \
			$SEED_RT
		;;
	seed-treelog-on) step "$e" zrun "$e" seed-treelog $SEED_RT ;;
	seed-treelog-off)
		step "$e" zrun "$e" seed-treelog --set treelog=off $SEED_RT
		;;
	crash-record) step "$e" crash_record ;;
	crash-campaign) step "$e" crash_campaign ;;
	*)
		echo "unknown experiment '$e'"
		STEPS_FAILED=$((STEPS_FAILED + 1))
		;;
	esac
done
step blkzone-after blkzone report "$DEV"
finish
