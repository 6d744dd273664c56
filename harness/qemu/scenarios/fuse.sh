# fuse: zcow's FUSE mount (`zcow fuse`) on the ZNS namespace against the
# kernel's btrfs zoned on the same namespace, in one boot, the same jobs:
#   dbench  dbench -t T -c /usr/share/dbench/client.txt -D /mnt/w N
#   fio     4 KiB random writes into one 64 MiB file, fsync every 8
#           writes, buffered (psync), time-based R seconds, verify=crc32c
#           read back at the end
# Each run: blkzone reset, mkfs (zcow mkfs / mkfs.btrfs -O zoned), mount
# (zcow fuse -f in the background / mount -t btrfs), mkdir /mnt/w, sync,
# /sys/block/nvme0n1/stat before, the workload, sync, unmount (umount;
# zcow's daemon ends with its final commit; for zcow then `zcow check`),
# stat after.  Device bytes = sectors written (stat field 7) from before
# the workload to after the unmount, the final commits included.
# vm.sh turns the result-*.txt files into fuse.md and summary.json.
# Settings (VM_SET): peers=zcow,btrfs workloads=dbench,fio clients=4
# dbench_time=20 fio_runtime=20; quick=1: dbench_time=8 fio_runtime=8.
# vm: zones=64 zone_size=64M zone_cap=64M max_open=14 max_active=14 zasl=0 timeout=1800
# shellcheck shell=dash
# shellcheck disable=SC1091 # the guest path of scenarios/lib.sh
. /scenarios/lib.sh

if [ "${ZCOW_QUICK:-0}" = 1 ]; then
	DB_TIME=${ZCOW_DBENCH_TIME:-8}
	FIO_RUNTIME=${ZCOW_FIO_RUNTIME:-8}
else
	DB_TIME=${ZCOW_DBENCH_TIME:-20}
	FIO_RUNTIME=${ZCOW_FIO_RUNTIME:-20}
fi
PEERS=${ZCOW_PEERS:-zcow,btrfs}
WORKLOADS=${ZCOW_WORKLOADS:-dbench,fio}
CLIENTS=${ZCOW_CLIENTS:-4}
LOADFILE=/usr/share/dbench/client.txt
NAME=$(basename "$DEV")

echo mq-deadline >"/sys/block/$NAME/queue/scheduler"

{
	echo "peers=$PEERS"
	echo "workloads=$WORKLOADS"
	echo "clients=$CLIENTS"
	echo "dbench_time=$DB_TIME"
	echo "fio_runtime=$FIO_RUNTIME"
	echo "btrfs_progs=$(mkfs.btrfs --version 2>&1 | head -n1)"
	echo "fio_version=$(fio --version)"
	echo "fuse_dev=$(ls -l /dev/fuse 2>&1)"
} >"$OUT/fuse-setup.txt"

workload() {
	case $1 in
	dbench)
		dbench -t "$DB_TIME" -c "$LOADFILE" -D /mnt/w "$CLIENTS"
		;;
	fio)
		fio --name=f --directory=/mnt/w --size=64M --bs=4k \
			--rw=randwrite --ioengine=psync --fsync=8 \
			--numjobs="$CLIENTS" --time_based \
			--runtime="$FIO_RUNTIME" --fallocate=none \
			--verify=crc32c --do_verify=1 --output-format=json
		;;
	esac
}

mount_peer() {
	blkzone reset "$DEV" || return 1
	case $1 in
	zcow)
		zcow mkfs "$DEV" >/dev/null || return 1
		FUSE_TAG=$2 fuse_start
		;;
	btrfs)
		mkfs.btrfs -f -O zoned -d single -m single "$DEV" >/dev/null &&
			mount -t btrfs "$DEV" /mnt
		;;
	esac
}

umount_peer() {
	if [ "$1" = zcow ]; then
		fuse_stop || return 1
		zcow check "$DEV" >"$OUT/$2-check.txt" 2>&1
	else
		umount /mnt
	fi
}

# one_run PEER WORKLOAD
one_run() {
	tag=$1-$2
	mount_peer "$1" "$tag" && mkdir /mnt/w && sync || return 1
	cat "/sys/block/$NAME/stat" >"$OUT/$tag-stat-before.txt"
	t0=$(now)
	workload "$2" >"$OUT/$tag-out.txt" 2>&1
	wl_rc=$?
	t1=$(now)
	sync
	t2=$(now)
	df -k /mnt >"$OUT/$tag-df.txt"
	umount_peer "$1" "$tag"
	um_rc=$?
	# after the unmount: its final commit counts (zcow's FUSE mount gets
	# no syncfs from the kernel, so its last commit is the unmount's)
	cat "/sys/block/$NAME/stat" >"$OUT/$tag-stat-after.txt"
	{
		echo "peer=$1"
		echo "workload=$2"
		echo "clients=$CLIENTS"
		echo "rc=$wl_rc"
		echo "umount_rc=$um_rc"
		echo "workload_seconds=$(elapsed "$t0" "$t1")"
		echo "sync_seconds=$(elapsed "$t1" "$t2")"
	} >"$OUT/result-$tag.txt"
	tail -n 22 "$OUT/$tag-out.txt"
	[ "$wl_rc" = 0 ] && [ "$um_rc" = 0 ]
}

for wl in $(echo "$WORKLOADS" | tr ',' ' '); do
	for peer in $(echo "$PEERS" | tr ',' ' '); do
		step "$peer-$wl" one_run "$peer" "$wl"
		fuse_leftover
	done
done
finish
