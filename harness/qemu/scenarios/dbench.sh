# dbench: the kernel's btrfs zoned under fsync-heavy load, with the tree-log
# (default mount) and without it (-o notreelog), alternating within one boot
# (docs/vm.md).  Workloads:
#   dbench  dbench -t T -c /usr/share/dbench/client.txt -D /mnt/w N
#   fio     the fsync-per-file job: 4000 files of 8 KiB per job, 4 KiB
#           writes, fsync after each write, N jobs, runtime R
# Each run: mkfs.btrfs -f -O zoned -d single -m single, mount (with or
# without notreelog), sync, counters before, the workload, sync, counters
# after, umount.  Counters (the window is the workload plus its sync):
#   /sys/block/nvme0n1/stat  device writes, sectors written, flushes
#   trace hist triggers      fsync / fdatasync syscalls, btrfs transaction
#                            commits, block requests issued (count and
#                            bytes per rwbs: W = write, N = zone append)
#   dump-super generation    commits, the second way
# Settings (VM_SET, lists separated by commas): workloads=dbench,fio
# dbench_clients=1,8,32 dbench_time=30 fio_jobs=1,8,32 fio_runtime=20
# pairs=1 (on/off pairs per workload and client count); quick=1 sets
# dbench_clients=1,8 dbench_time=12 fio_jobs=8 fio_runtime=5 unless given.
# vm: zones=128 zone_size=64M zone_cap=64M max_open=14 max_active=14 zasl=0 timeout=3600
# shellcheck shell=dash
# shellcheck disable=SC1091 # the guest path of scenarios/lib.sh
. /scenarios/lib.sh

if [ "${ZCOW_QUICK:-0}" = 1 ]; then
	DB_CLIENTS=${ZCOW_DBENCH_CLIENTS:-1,8}
	DB_TIME=${ZCOW_DBENCH_TIME:-12}
	FIO_JOBS=${ZCOW_FIO_JOBS:-8}
	FIO_RUNTIME=${ZCOW_FIO_RUNTIME:-5}
else
	DB_CLIENTS=${ZCOW_DBENCH_CLIENTS:-1,8,32}
	DB_TIME=${ZCOW_DBENCH_TIME:-30}
	FIO_JOBS=${ZCOW_FIO_JOBS:-1,8,32}
	FIO_RUNTIME=${ZCOW_FIO_RUNTIME:-20}
fi
WORKLOADS=${ZCOW_WORKLOADS:-dbench,fio}
PAIRS=${ZCOW_PAIRS:-1}
LOADFILE=/usr/share/dbench/client.txt
TRACE=/sys/kernel/tracing
NAME=$(basename "$DEV")

echo mq-deadline >"/sys/block/$NAME/queue/scheduler"
mount -t tracefs nodev "$TRACE" 2>/dev/null

{
	echo "workloads=$WORKLOADS"
	echo "dbench_clients=$DB_CLIENTS"
	echo "dbench_time=$DB_TIME"
	echo "fio_jobs=$FIO_JOBS"
	echo "fio_runtime=$FIO_RUNTIME"
	echo "pairs=$PAIRS"
	echo "write_cache=$(cat "/sys/block/$NAME/queue/write_cache")"
	echo "fua=$(cat "/sys/block/$NAME/queue/fua" 2>/dev/null)"
	echo "scheduler=$(cat "/sys/block/$NAME/queue/scheduler")"
	echo "btrfs_progs=$(mkfs.btrfs --version 2>&1 | head -n1)"
	echo "fio_version=$(fio --version)"
} >"$OUT/dbench-setup.txt"

# The hist triggers: event and spec.  block_rq_issue sums the bytes of
# each request kind (its rwbs string); the others count hits.
hist_events() {
	echo "syscalls/sys_enter_fsync hist:keys=common_pid:size=4096"
	echo "syscalls/sys_enter_fdatasync hist:keys=common_pid:size=4096"
	echo "btrfs/btrfs_transaction_commit hist:keys=root_objectid"
	echo "block/block_rq_issue hist:keys=dev,rwbs:vals=hitcount,bytes"
}

hist_start() {
	hist_events | while read -r ev spec; do
		echo "$spec" >"$TRACE/events/$ev/trigger" || return 1
	done
}

# hist_stop TAG: each event's hist into $OUT/TAG-hist-<event>.txt, then
# the trigger removed (the next run starts from zero).
hist_stop() {
	hist_events | while read -r ev spec; do
		cat "$TRACE/events/$ev/hist" >"$OUT/$1-hist-${ev#*/}.txt"
		echo "!$spec" >"$TRACE/events/$ev/trigger"
	done
}

generation() {
	btrfs inspect-internal dump-super "$DEV" |
		awk '$1 == "generation" { print $2 }'
}

# commit_stats (newer kernels) when present, else "absent".
commit_stats() {
	for f in /sys/fs/btrfs/*/commit_stats; do
		if [ -r "$f" ]; then
			cat "$f"
			return
		fi
	done
	echo absent
}

workload() {
	case $1 in
	dbench)
		dbench -t "$DB_TIME" -c "$LOADFILE" -D /mnt/w "$2"
		;;
	fio)
		fio --name=f --directory=/mnt/w --nrfiles=4000 --filesize=8k \
			--bs=4k --rw=write --fsync=1 --numjobs="$2" \
			--create_on_open=1 --openfiles=1 \
			--file_service_type=sequential --fallocate=none \
			--runtime="$FIO_RUNTIME" --output-format=json
		;;
	esac
}

# one_run WORKLOAD CLIENTS on|off PAIR
one_run() {
	wl=$1
	n=$2
	log=$3
	tag=$wl-c$n-$log-$4
	opts=
	[ "$log" = off ] && opts="-o notreelog"
	umount /mnt 2>/dev/null
	# shellcheck disable=SC2086 # opts is empty or one option pair
	mkfs.btrfs -f -O zoned -d single -m single "$DEV" >/dev/null &&
		mount -t btrfs $opts "$DEV" /mnt &&
		mkdir /mnt/w && sync || return 1
	grep " /mnt " /proc/mounts >"$OUT/$tag-mount.txt"
	generation >"$OUT/$tag-gen-before.txt"
	commit_stats >"$OUT/$tag-commit-stats-before.txt"
	cat "/sys/block/$NAME/stat" >"$OUT/$tag-stat-before.txt"
	hist_start || return 1
	t0=$(now)
	workload "$wl" "$n" >"$OUT/$tag-out.txt" 2>&1
	wl_rc=$?
	t1=$(now)
	sync
	t2=$(now)
	cat "/sys/block/$NAME/stat" >"$OUT/$tag-stat-after.txt"
	hist_stop "$tag"
	commit_stats >"$OUT/$tag-commit-stats-after.txt"
	generation >"$OUT/$tag-gen-after.txt"
	df -k /mnt >"$OUT/$tag-df.txt"
	umount /mnt
	um_rc=$?
	{
		echo "workload=$wl"
		echo "clients=$n"
		echo "treelog=$log"
		echo "pair=$4"
		echo "rc=$wl_rc"
		echo "umount_rc=$um_rc"
		echo "workload_seconds=$(elapsed "$t0" "$t1")"
		echo "sync_seconds=$(elapsed "$t1" "$t2")"
	} >"$OUT/result-$tag.txt"
	tail -n 22 "$OUT/$tag-out.txt"
	[ "$wl_rc" = 0 ] && [ "$um_rc" = 0 ]
}

for wl in $(echo "$WORKLOADS" | tr ',' ' '); do
	case $wl in
	dbench) list=$DB_CLIENTS ;;
	fio) list=$FIO_JOBS ;;
	*)
		echo "unknown workload '$wl' (have: dbench, fio)"
		STEPS_FAILED=$((STEPS_FAILED + 1))
		continue
		;;
	esac
	for n in $(echo "$list" | tr ',' ' '); do
		p=1
		while [ "$p" -le "$PAIRS" ]; do
			step "$wl-c$n-on-$p" one_run "$wl" "$n" on "$p"
			checkpoint
			step "$wl-c$n-off-$p" one_run "$wl" "$n" off "$p"
			checkpoint
			p=$((p + 1))
		done
	done
done
finish
