# gc: the kernel's btrfs zoned beside zcow under a sustained uniform
# overwrite (docs/vm.md, "The kernel beside zcow").  For each rho (percent
# of the space data can use on that file system): one file of rho x D
# written sequentially in 4 KiB blocks, then uniform 4 KiB random
# overwrites of it (fsync every 1024 writes) until the host has written at
# least FILLS x the device's capacity, with fio's own job file
# configs/vm-gc-rhoNN.fio, on
#   btrfs  the guest kernel's btrfs (mkfs.btrfs -O zoned -d single
#          -m single), fio in the mounted fs;
#   zcow   `zcow run configs/vm-gc-rhoNN.scenario` (the same job file,
#          the fs target on the same namespace, reclaim=greedy).
# D, "the space data can use", is calibrated per file system in this boot:
# on a fresh mkfs one file is written in 1 MiB blocks until ENOSPC; D is
# its size (calib-data-<system>.txt).  The job file's size= becomes rho x D
# (4 KiB aligned) and loops= ceil(FILLS x capacity / size); the job files
# that ran are kept in jobs/.  The overwrite stops after RUNTIME seconds
# of wall time (VM_SET runtime=, default 420 s) even when it has not
# written FILLS x the capacity: gc.md says how far each job got.
# Per run: the job's output, blkzone report before and after, NVMe SMART
# log of namespace 1 before and after (data units written), the zone
# resets in the kernel's NVMe trace, and for btrfs its sysfs allocation
# counters before and after, /proc/mounts (read-only?), dmesg; for zcow
# its summary.json and a `zcow check` after the run.  result-<tag>.txt
# says whether the job finished.  A job that stops with ENOSPC or EROFS
# is a result, not a failed step; the scenario fails only when a
# measurement could not be made.
# VM_SET keys: rhos=60,80  systems=btrfs,zcow  fills=3  runtime=420 (the
# overwrite's wall-time limit in seconds, 0 none; a quick run:
# VM_SET="rhos=5 fills=0.1")
# vm: zones=64 zone_size=16M zone_cap=16M max_open=14 max_active=14 zasl=0 timeout=3600 rhos=60,80 systems=btrfs,zcow fills=3 runtime=420
# shellcheck shell=dash
# shellcheck disable=SC1091 # the guest path of scenarios/lib.sh
. /scenarios/lib.sh

RHOS=$(echo "${ZCOW_RHOS:-60,80}" | tr ',' ' ')
SYSTEMS=$(echo "${ZCOW_SYSTEMS:-btrfs,zcow}" | tr ',' ' ')
FILLS=${ZCOW_FILLS:-3}
# Wall-time limit of each overwrite phase, seconds (0: none).  Under TCG
# zcow's reclaim at rho 0.6-0.8 needs tens of minutes for 3 fills.
RUNTIME=${ZCOW_RUNTIME:-420}
DEVNAME=${DEV#/dev/}
DEVBYTES=$(($(cat "/sys/block/$DEVNAME/size") * 512))
ZONEBYTES=$(($(cat "/sys/block/$DEVNAME/queue/chunk_sectors") * 512))
# A job that runs longer than this is stopped (and reported unfinished).
JOB_TIMEOUT=${ZCOW_JOB_TIMEOUT:-2400}
mkdir -p "$OUT/jobs"
echo mq-deadline >"/sys/block/$DEVNAME/queue/scheduler"
{
	echo "device_bytes=$DEVBYTES"
	echo "zone_bytes=$ZONEBYTES"
	echo "fills=$FILLS"
	echo "runtime=$RUNTIME"
	echo "rhos=$RHOS"
	echo "systems=$SYSTEMS"
} >"$OUT/gc-setup.txt"

# Zone resets as the device sees them (as in peers.sh): Zone Management
# Send (opcode 0x79) with action 4 in the nvme_setup_cmd trace.
TRACE=/sys/kernel/tracing
trace_start() {
	mount -t tracefs nodev "$TRACE" 2>/dev/null
	[ -w "$TRACE/tracing_on" ] || return 0
	echo 0 >"$TRACE/tracing_on"
	echo 4096 >"$TRACE/buffer_size_kb"
	echo >"$TRACE/trace"
	echo 'opcode == 0x79' >"$TRACE/events/nvme/nvme_setup_cmd/filter" ||
		true
	echo 1 >"$TRACE/events/nvme/nvme_setup_cmd/enable"
	echo 1 >"$TRACE/tracing_on"
}

trace_resets() {
	if [ -w "$TRACE/tracing_on" ]; then
		echo 0 >"$TRACE/tracing_on"
		grep -c 'zsa=4' "$TRACE/trace" >"$OUT/resets-$1.txt" || true
		grep 'zsa=' "$TRACE/trace" >"$OUT/trace-zone-mgmt-$1.txt" ||
			true
		# Lost events would make the count too small: say so.
		cat "$TRACE/per_cpu/cpu"*/stats 2>/dev/null |
			awk '/^overrun:/ { s += $2 } END { print "overrun=" s + 0 }' \
				>>"$OUT/resets-$1.txt"
	else
		echo "n/a (no tracefs)" >"$OUT/resets-$1.txt"
	fi
}

# The device's own count of bytes written to namespace 1 (SMART data units
# written: thousands of 512-byte units, rounded up).
smart() {
	nvme smart-log /dev/nvme0 --namespace-id=1 --output-format=json \
		>"$OUT/smart-$1.json" 2>&1 || true
}

# snap TAG WHEN: zone report and SMART log.
snap() {
	blkzone report "$DEV" >"$OUT/zones-$1-$2.txt" && smart "$1-$2"
}

# btrfs's own counters: sysfs allocation (per space type) and the
# reclaim threshold.
btrfs_sysfs() {
	local ad fsdir f
	for ad in /sys/fs/btrfs/*/allocation; do
		[ -d "$ad" ] || continue
		fsdir=${ad%/allocation}
		echo "fsid=${fsdir##*/}"
		for f in "$fsdir/bg_reclaim_threshold" \
			"$fsdir"/allocation/*/bg_reclaim_threshold \
			"$fsdir"/allocation/*/total_bytes \
			"$fsdir"/allocation/*/bytes_used \
			"$fsdir"/allocation/*/bytes_zone_unusable \
			"$fsdir"/allocation/*/bytes_pinned \
			"$fsdir"/allocation/*/bytes_readonly \
			"$fsdir"/allocation/*/bytes_reserved \
			"$fsdir"/allocation/*/disk_used \
			"$fsdir"/allocation/*/disk_total; do
			[ -r "$f" ] && echo "${f#"$fsdir"/}=$(cat "$f")"
		done
	done
}

btrfs_fresh() {
	blkzone reset "$DEV" &&
		mkfs.btrfs -f -O zoned -d single -m single "$DEV" >/dev/null &&
		mount -t btrfs "$DEV" /mnt
}

# calib_btrfs / calib_zcow: D = the size of one file written in 1 MiB
# blocks on a fresh file system until ENOSPC.
calib_btrfs() {
	local d
	btrfs_fresh || return 1
	fio --name=calib --filename=/mnt/calib.dat --rw=write --bs=1m \
		--direct=1 --ioengine=psync --fallocate=none \
		--size="$DEVBYTES" --output="$OUT/calib-btrfs-fio.txt"
	echo "fio rc=$? (ENOSPC expected)"
	sync
	d=$(stat -c %s /mnt/calib.dat) || return 1
	btrfs filesystem df /mnt
	btrfs_sysfs >"$OUT/calib-btrfs-sysfs.txt"
	umount /mnt || return 1
	echo "data_bytes=$d" >"$OUT/calib-data-btrfs.txt"
	cat "$OUT/calib-data-btrfs.txt"
}

calib_zcow() {
	local d
	blkzone reset "$DEV" && zcow mkfs "$DEV" >/dev/null || return 1
	head -c "$DEVBYTES" /dev/zero | zcow put "$DEV" - /calib.dat \
		>"$OUT/calib-zcow-put.txt" 2>&1
	echo "zcow put rc=$? (ENOSPC expected)"
	cat "$OUT/calib-zcow-put.txt"
	# Only ENOSPC ends a calibration: another error gives no D.
	grep -q 'No space left' "$OUT/calib-zcow-put.txt" || return 1
	d=$(zcow stat "$DEV" /calib.dat | sed -n 's/^size: //p')
	[ -n "$d" ] || return 1
	zcow df "$DEV"
	echo "data_bytes=$d" >"$OUT/calib-data-zcow.txt"
	cat "$OUT/calib-data-zcow.txt"
}

# template RHO EXT: /configs/vm-gc-rhoRHO.EXT, or the rho 60 one (a quick
# run, VM_SET="rhos=5 fills=0.1": only size= and loops= differ).
template() {
	if [ -f "/configs/vm-gc-rho$1.$2" ]; then
		echo "/configs/vm-gc-rho$1.$2"
	else
		echo "/configs/vm-gc-rho60.$2"
	fi
}

# job_file RHO SYSTEM: configs/vm-gc-rhoRHO.fio with size = RHO% of D
# (4 KiB aligned), loops = ceil(FILLS x capacity / size) and runtime=
# RUNTIME for the overwrite; its path.
job_file() {
	local d size loops f
	d=$(sed -n 's/^data_bytes=//p' "$OUT/calib-data-$2.txt")
	size=$((d * $1 / 100 / 4096 * 4096))
	loops=$(awk -v f="$FILLS" -v c="$DEVBYTES" -v s="$size" \
		'BEGIN { l = f * c / s; n = int(l); if (n < l) n++;
			 if (n < 1) n = 1; print n }')
	f=$OUT/jobs/vm-gc-rho$1-$2.fio
	sed -e "s/^size=.*/size=$size/" -e "s/^loops=.*/loops=$loops/" \
		"$(template "$1" fio)" >"$f"
	# The overwrite is the last job: a time limit for it (both fio and
	# zcow run stop a size-based job at its runtime).
	[ "$RUNTIME" = 0 ] || echo "runtime=$RUNTIME" >>"$f"
	echo "$f"
}

# result TAG key=value...: append to result-TAG.txt.
result() {
	local r kv
	r=$OUT/result-$1.txt
	shift
	for kv in "$@"; do
		echo "$kv" >>"$r"
	done
}

btrfs_gc() {
	local rho tag jf t0 t1 frc src urc mopts ro
	rho=$1
	tag=btrfs-$rho
	jf=$(job_file "$rho" btrfs)
	result "$tag" "rho=$rho" "system=btrfs" \
		"file_bytes=$(sed -n 's/^size=//p' "$jf")" \
		"loops=$(sed -n 's/^loops=//p' "$jf")"
	btrfs_fresh || return 1
	btrfs_sysfs >"$OUT/sysfs-$tag-before.txt"
	snap "$tag" before || return 1
	dmesg -c >/dev/null
	trace_start
	t0=$(now)
	(cd /mnt && timeout "$JOB_TIMEOUT" fio --output-format=normal,json \
		--output="$OUT/fio-$tag.txt" "$jf")
	frc=$?
	t1=$(now)
	# A file system that went read-only or lost its transaction may
	# refuse the sync; it is part of the result.
	timeout 300 sync
	src=$?
	btrfs_sysfs >"$OUT/sysfs-$tag-after.txt"
	btrfs filesystem df /mnt >"$OUT/btrfs-df-$tag.txt" 2>&1
	btrfs filesystem usage /mnt >"$OUT/btrfs-usage-$tag.txt" 2>&1
	mopts=$(awk '$2 == "/mnt" { print $4 }' /proc/mounts)
	timeout 300 umount /mnt
	urc=$?
	trace_resets "$tag"
	snap "$tag" after
	dmesg >"$OUT/dmesg-$tag.txt"
	ro=no
	case ",$mopts," in *,ro,*) ro=yes ;; esac
	grep -qi 'forced readonly\|read-only' "$OUT/dmesg-$tag.txt" && ro=yes
	result "$tag" "fio_rc=$frc" "sync_rc=$src" "umount_rc=$urc" \
		"mount_options=$mopts" "read_only=$ro" \
		"job_seconds=$(echo "$t0 $t1" | awk '{ printf "%.1f", $2 - $1 }')" \
		"error=$(grep -m1 'io_u error\|^fio: ' "$OUT/fio-$tag.txt" | tr '\n' ' ')"
	cat "$OUT/result-$tag.txt"
	grep -i 'btrfs\|nvme' "$OUT/dmesg-$tag.txt" | tail -n 40
	return 0
}

zcow_gc() {
	local rho tag jf sc t0 t1 zrc dir
	rho=$1
	tag=zcow-$rho
	jf=$(job_file "$rho" zcow)
	sc=$OUT/jobs/vm-gc-rho$rho-zcow.scenario
	sed "s|^include .*|include ${jf##*/}|" \
		"$(template "$rho" scenario)" >"$sc"
	result "$tag" "rho=$rho" "system=zcow" \
		"file_bytes=$(sed -n 's/^size=//p' "$jf")" \
		"loops=$(sed -n 's/^loops=//p' "$jf")"
	blkzone reset "$DEV" || return 1
	snap "$tag" before || return 1
	trace_start
	t0=$(now)
	timeout "$JOB_TIMEOUT" zcow run "$sc" --set "device=$DEV" \
		--results "$OUT/zrun" >"$OUT/zcow-run-$tag.txt" 2>&1
	zrc=$?
	t1=$(now)
	trace_resets "$tag"
	snap "$tag" after
	cat "$OUT/zcow-run-$tag.txt"
	dir=$(tail -n1 "$OUT/zcow-run-$tag.txt")
	[ "$zrc" -eq 0 ] && [ -f "$dir/summary.json" ] &&
		cp "$dir/summary.json" "$OUT/zcow-summary-$tag.json" &&
		cp "$dir/intervals.csv" "$OUT/zcow-intervals-$tag.csv"
	result "$tag" "zcow_rc=$zrc" \
		"job_seconds=$(echo "$t0 $t1" | awk '{ printf "%.1f", $2 - $1 }')" \
		"error=$(grep -m1 -i 'error\|No space\|zcow run: job' \
			"$OUT/zcow-run-$tag.txt" | tr '\n' ' ')"
	zcow df "$DEV" >"$OUT/zcow-df-$tag.txt" 2>&1
	zcow check "$DEV" >"$OUT/zcow-check-$tag.txt" 2>&1
	result "$tag" "check_rc=$?"
	cat "$OUT/result-$tag.txt"
	return 0
}

for s in $SYSTEMS; do
	step "calib-$s" "calib_$s"
done
for rho in $RHOS; do
	for s in $SYSTEMS; do
		[ -s "$OUT/calib-data-$s.txt" ] || continue
		step "$s-$rho" "${s}_gc" "$rho"
		umount /mnt 2>/dev/null
	done
done
step blkzone-after blkzone report "$DEV"
finish
