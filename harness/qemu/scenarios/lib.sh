# Helpers for the scenarios (sourced by busybox ash inside the VM).
#   step NAME CMD...      run CMD, output to $OUT/NAME.txt (and the console),
#                         one line "NAME rc SECONDS" in $OUT/steps.txt; a
#                         failing step makes the scenario fail
#   soft_step NAME CMD... the same, but a failure is only recorded
#   finish                exit 0 when every step passed
# and the measurements the peers, gc and fuse scenarios share (below).
# shellcheck shell=dash
STEPS_FAILED=0

now() {
	cut -d' ' -f1 /proc/uptime
}

# elapsed T0 T1: the seconds from now() T0 to now() T1, two decimals.
elapsed() {
	echo "$1 $2" | awk '{ printf "%.2f", $2 - $1 }'
}

run_step() {
	name=$1
	shift
	t0=$(now)
	echo "--- step $name: $*"
	"$@" >"$OUT/$name.txt" 2>&1
	step_rc=$?
	t1=$(now)
	cat "$OUT/$name.txt"
	secs=$(elapsed "$t0" "$t1")
	echo "$name $step_rc $secs" >>"$OUT/steps.txt"
	echo "--- step $name: rc=$step_rc ${secs}s"
	return $step_rc
}

step() {
	run_step "$@" || STEPS_FAILED=$((STEPS_FAILED + 1))
}

soft_step() {
	run_step "$@" || true
}

# zcow_fs_run NAME [--set k=v ...]: `zcow run /configs/NAME.scenario` with
# the file-system target on $DEV (mkfs + mount + the jobs on files +
# unmount), results under $OUT/zrun/.
zcow_fs_run() {
	fsname=$1
	shift
	zcow run "/configs/$fsname.scenario" --set "device=$DEV" \
		--results "$OUT/zrun" "$@"
}

# put_get_roundtrip: a file through the fs and back, across an unmount.
put_get_roundtrip() {
	zcow put "$DEV" /bin/zcow /vm-roundtrip.bin &&
		zcow mount "$DEV" &&
		zcow get "$DEV" /vm-roundtrip.bin /tmp/vm-roundtrip.bin &&
		cmp /bin/zcow /tmp/vm-roundtrip.bin &&
		echo "roundtrip: $(wc -c </tmp/vm-roundtrip.bin) bytes identical"
	rt_rc=$?
	rm -f /tmp/vm-roundtrip.bin
	return $rt_rc
}

# --- Measurements shared by peers.sh and gc.sh -------------------------

# Zone resets as the device sees them: NVMe Zone Management Send
# (opcode 0x79) with action 4 (reset) in the kernel's nvme_setup_cmd
# trace, whoever issues them (fio, btrfs, zcow); a reset-all command
# counts once.
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

# trace_resets TAG: the count into $OUT/resets-TAG.txt (first line), the
# zone management commands into trace-zone-mgmt-TAG.txt.
trace_resets() {
	if [ -w "$TRACE/tracing_on" ]; then
		echo 0 >"$TRACE/tracing_on"
		# grep -c prints 0 and fails when nothing matched.
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

# smart TAG: the device's own count of bytes written to $DEV's namespace
# (SMART data units written: thousands of 512-byte units, rounded up).
# QEMU counts every write and Zone Append, NVMe passthrough included,
# which /sys/block/<dev>/stat does not (zcow appends through it).
smart() {
	nvme smart-log /dev/nvme0 --namespace-id="${DEV##*n}" \
		--output-format=json >"$OUT/smart-$1.json" 2>&1 || true
}

# snap TAG WHEN: zone report, SMART log and the block layer's counters of
# $DEV (zones-TAG-WHEN.txt, smart-TAG-WHEN.json, stat-TAG-WHEN.txt).
snap() {
	cat "/sys/block/${DEV#/dev/}/stat" >"$OUT/stat-$1-$2.txt"
	blkzone report "$DEV" >"$OUT/zones-$1-$2.txt" && smart "$1-$2"
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

# fuse_start [OPTIONS]: `zcow fuse -f $DEV /mnt` in the background (ZPID),
# daemon output to $OUT/fuse-daemon-$FUSE_TAG.txt; until /mnt is a fuse
# mount (10 s at most).
ZPID=
fuse_start() {
	zcow fuse "$DEV" /mnt -f ${1:+-o "$1"} \
		>"$OUT/fuse-daemon-${FUSE_TAG:-fuse}.txt" 2>&1 &
	ZPID=$!
	wait_mounted
}

# wait_mounted: until /mnt is a fuse mount (10 s at most).
wait_mounted() {
	local i
	i=0
	while [ $i -lt 100 ]; do
		grep -q " /mnt fuse" /proc/mounts && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# fuse_leftover: after a run that may have failed, its mount and daemon
# gone.
fuse_leftover() {
	umount /mnt 2>/dev/null
	[ -n "$ZPID" ] && wait "$ZPID" 2>/dev/null
	ZPID=
}

# fuse_stop: unmount; the daemon's exit status (its final commit).
fuse_stop() {
	local zd_rc
	umount /mnt || return 1
	wait "$ZPID"
	zd_rc=$?
	ZPID=
	return "$zd_rc"
}

# --- Sustained overwrite at rho (gc.sh; peers.sh's rho workloads) -------
# Globals: DEV, OUT, FILLS, RUNTIME (the overwrite's wall-time limit, s;
# 0 none), JOB_TIMEOUT, DEVBYTES (the device's bytes).

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

# calibrate SYSTEM [D]: calib_SYSTEM, or D bytes given (no measurement;
# calib-data-SYSTEM.txt says source=given).
calibrate() {
	if [ -n "${2:-}" ]; then
		{
			echo "data_bytes=$2"
			echo "source=given"
		} >"$OUT/calib-data-$1.txt"
		cat "$OUT/calib-data-$1.txt"
		return 0
	fi
	"calib_$1"
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
	mkdir -p "$OUT/jobs"
	f=$OUT/jobs/vm-gc-rho$1-$2.fio
	sed -e "s/^size=.*/size=$size/" -e "s/^loops=.*/loops=$loops/" \
		"$(template "$1" fio)" >"$f"
	# The overwrite is the last job: a time limit for it (both fio and
	# zcow run stop a size-based job at its runtime).
	[ "$RUNTIME" = 0 ] || echo "runtime=$RUNTIME" >>"$f"
	echo "$f"
}

# gc_fio RHO SYSTEM TAG: the job file of SYSTEM's D run by fio in the file
# system mounted on /mnt (btrfs, or zcow through FUSE); fills
# result-TAG.txt.  The caller mounted it and unmounts it.
gc_fio() {
	local jf t0 t1 frc
	jf=$(job_file "$1" "$2")
	result "$3" "rho=$1" "system=$2" \
		"file_bytes=$(sed -n 's/^size=//p' "$jf")" \
		"loops=$(sed -n 's/^loops=//p' "$jf")"
	snap "$3" before || return 1
	dmesg -c >/dev/null
	trace_start
	t0=$(now)
	(cd /mnt && timeout "$JOB_TIMEOUT" fio --output-format=normal,json \
		--output="$OUT/fio-$3.txt" "$jf")
	frc=$?
	t1=$(now)
	result "$3" "fio_rc=$frc" "job_seconds=$(elapsed "$t0" "$t1")" \
		"error=$(grep -m1 'io_u error\|^fio: ' "$OUT/fio-$3.txt" |
			tr '\n' ' ')"
}

# btrfs_gc RHO [TAG]: the kernel's btrfs (TAG default btrfs-RHO).
btrfs_gc() {
	local rho tag src urc mopts ro
	rho=$1
	tag=${2:-btrfs-$rho}
	btrfs_fresh || return 1
	btrfs_sysfs >"$OUT/sysfs-$tag-before.txt"
	gc_fio "$rho" btrfs "$tag" || return 1
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
	result "$tag" "sync_rc=$src" "umount_rc=$urc" \
		"mount_options=$mopts" "read_only=$ro"
	cat "$OUT/result-$tag.txt"
	grep -i 'btrfs\|nvme' "$OUT/dmesg-$tag.txt" | tail -n 40
	return 0
}

# fuse_gc RHO [TAG]: zcow through FUSE (zcow fuse, Zone Append), fio's
# job file with zcow's D (TAG default fuse-RHO); then zcow check.
fuse_gc() {
	local rho tag urc
	rho=$1
	tag=${2:-fuse-$rho}
	cp "$OUT/calib-data-zcow.txt" "$OUT/calib-data-fuse.txt" || return 1
	blkzone reset "$DEV" && zcow mkfs "$DEV" >/dev/null || return 1
	FUSE_TAG=$tag fuse_start zone_append=on || return 1
	gc_fio "$rho" fuse "$tag" || return 1
	timeout 600 umount /mnt
	urc=$?
	wait "$ZPID"
	result "$tag" "umount_rc=$urc" "daemon_rc=$?"
	ZPID=
	trace_resets "$tag"
	snap "$tag" after
	zcow check "$DEV" >"$OUT/zcow-check-$tag.txt" 2>&1
	result "$tag" "check_rc=$?"
	cat "$OUT/result-$tag.txt"
	return 0
}

# zcow_gc RHO [TAG]: `zcow run` of configs/vm-gc-rhoRHO.scenario with the
# job file of zcow's D (TAG default zcow-RHO); then zcow df and check.
zcow_gc() {
	local rho tag jf sc t0 t1 zrc dir
	rho=$1
	tag=${2:-zcow-$rho}
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
		"job_seconds=$(elapsed "$t0" "$t1")" \
		"error=$(grep -m1 -i 'error\|No space\|zcow run: job' \
			"$OUT/zcow-run-$tag.txt" | tr '\n' ' ')"
	zcow df "$DEV" >"$OUT/zcow-df-$tag.txt" 2>&1
	zcow check "$DEV" >"$OUT/zcow-check-$tag.txt" 2>&1
	result "$tag" "check_rc=$?"
	cat "$OUT/result-$tag.txt"
	return 0
}

# checkpoint: what $OUT holds so far onto the results namespace (as
# guest-init does at the end), flushed past the page cache: if the kernel
# hangs in a later run, the host still gets the runs before it.
checkpoint() {
	tar -cf /dev/nvme0n2 -C "$OUT" . && blockdev --flushbufs /dev/nvme0n2
}

finish() {
	echo "--- scenario: $STEPS_FAILED failed step(s)"
	[ "$STEPS_FAILED" -eq 0 ]
	exit $?
}
