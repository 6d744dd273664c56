# peers: the same fio job on the raw namespace (fio zonemode=zbd), on a
# file in kernel btrfs (zoned) and on a file in zcow (`zcow run`, its
# file-system target: mkfs, mount, the job, unmount), in one boot.  Per
# peer: the job's output (fio normal + JSON; zcow's summary.json), blkzone
# report before and after (device bytes = sum of write-pointer advances),
# zone resets from the kernel's NVMe trace (fio's and zcow's own counts
# too).  After zcow's run: mount again and `zcow check`.
# vm.sh turns them into peers.md and summary.json.
# vm: zones=64 zone_size=64M zone_cap=64M max_open=14 max_active=14 zasl=0 timeout=900 size=512M rw=write bs=128k append=on
# shellcheck disable=SC2086 # TIME_OPTS is a list of options
# shellcheck shell=dash
# shellcheck disable=SC1091 # the guest path of scenarios/lib.sh
. /scenarios/lib.sh

SIZE=${ZCOW_SIZE:-512M}
RW=${ZCOW_RW:-write}
BS=${ZCOW_BS:-128k}
# runtime=S (VM_SET): time-based, rewriting the SIZE bytes until S seconds;
# the raw device then wraps with zone resets, and the wp-sum WA no longer
# counts the bytes rewritten in reset zones.
TIME_OPTS=
[ -n "${ZCOW_RUNTIME:-}" ] && TIME_OPTS="--time_based --runtime=$ZCOW_RUNTIME"

echo mq-deadline >/sys/block/nvme0n1/queue/scheduler

# Zone resets as the device sees them: NVMe Zone Management Send commands
# (opcode 0x79) with action 4 (reset) in the kernel's nvme_setup_cmd trace,
# whoever issues them (fio, btrfs).  A reset-all command counts once.
TRACE=/sys/kernel/tracing
trace_start() {
	mount -t tracefs nodev "$TRACE" 2>/dev/null
	[ -w "$TRACE/tracing_on" ] || return 0
	echo 0 >"$TRACE/tracing_on"
	echo >"$TRACE/trace"
	echo 'opcode == 0x79' >"$TRACE/events/nvme/nvme_setup_cmd/filter" ||
		true
	echo 1 >"$TRACE/events/nvme/nvme_setup_cmd/enable"
	echo 1 >"$TRACE/tracing_on"
}

# trace_resets PEER: the count into $OUT/resets-PEER.txt.
trace_resets() {
	if [ -w "$TRACE/tracing_on" ]; then
		echo 0 >"$TRACE/tracing_on"
		# grep -c prints 0 and fails when nothing matched.
		grep -c 'zsa=4' "$TRACE/trace" >"$OUT/resets-$1.txt" || true
		grep 'zsa=' "$TRACE/trace" >"$OUT/trace-zone-mgmt-$1.txt" ||
			true
	else
		echo "n/a (no tracefs)" >"$OUT/resets-$1.txt"
	fi
}

# fio_job PEER FILE [fio options]: the one job every peer runs.
fio_job() {
	peer=$1
	file=$2
	shift 2
	fio --name="$peer" --filename="$file" --direct=1 --ioengine=psync \
		--rw="$RW" --bs="$BS" --size="$SIZE" --end_fsync=1 \
		--output-format=normal,json --output="$OUT/fio-$peer.txt" \
		$TIME_OPTS "$@" ||
		return 1
	grep -o '[0-9]* zone resets' "$OUT/fio-$peer.txt" |
		awk '{ s += $1 } END { print s + 0 }' >"$OUT/fio-resets-$peer.txt"
}

raw() {
	blkzone reset "$DEV" &&
		blkzone report "$DEV" >"$OUT/zones-raw-before.txt" &&
		trace_start &&
		fio_job raw "$DEV" --zonemode=zbd &&
		trace_resets raw &&
		blkzone report "$DEV" >"$OUT/zones-raw-after.txt"
}

btrfs_peer() {
	blkzone reset "$DEV" &&
		mkfs.btrfs -f -O zoned -d single -m single "$DEV" >/dev/null &&
		mount -t btrfs "$DEV" /mnt &&
		blkzone report "$DEV" >"$OUT/zones-btrfs-before.txt" &&
		trace_start &&
		fio_job btrfs /mnt/fio.dat &&
		umount /mnt &&
		trace_resets btrfs &&
		blkzone report "$DEV" >"$OUT/zones-btrfs-after.txt"
}

# zcow_peer: the same job as a fio job file for `zcow run` (one file in
# the root directory; zcow's data by Zone Append unless append=off).  The
# "before" report is of the reset device: zcow's mkfs and its unmount
# commit are inside the run, so they count in its device bytes.
zcow_peer() {
	{
		echo "[global]"
		echo "rw=$RW"
		echo "bs=$BS"
		echo "size=$SIZE"
		echo "ioengine=psync"
		echo "direct=1"
		echo "end_fsync=1"
		if [ -n "${ZCOW_RUNTIME:-}" ]; then
			echo "time_based"
			echo "runtime=${ZCOW_RUNTIME}s"
		fi
		echo "[peer-zcow]"
	} >"$OUT/zcow-job.fio"
	blkzone reset "$DEV" &&
		blkzone report "$DEV" >"$OUT/zones-zcow-before.txt" &&
		trace_start &&
		zcow run "$OUT/zcow-job.fio" --set "device=$DEV" \
			--set "zone_append=${ZCOW_APPEND:-on}" \
			--results "$OUT/zrun" >"$OUT/zcow-run.txt" 2>&1 &&
		trace_resets zcow &&
		blkzone report "$DEV" >"$OUT/zones-zcow-after.txt" &&
		cp "$(tail -n1 "$OUT/zcow-run.txt")/summary.json" \
			"$OUT/zcow-summary.json"
	zp_rc=$?
	cat "$OUT/zcow-run.txt"
	return $zp_rc
}

step raw raw
step btrfs btrfs_peer
umount /mnt 2>/dev/null
step zcow zcow_peer
step zcow-mount zcow mount "$DEV"
step zcow-check zcow check "$DEV"
finish
