# peers: the same workloads on the raw namespace (fio zonemode=zbd), in
# the kernel's btrfs (zoned), in zcow (`zcow run`, its file-system target:
# mkfs, mount, the jobs, unmount) and in zcow through FUSE (`zcow fuse`),
# in one boot, each run from reset zones.  Workloads (VM_SET
# workloads=, comma-separated; default all):
#   seq128k    one job, rw=write bs=128k size=512M psync direct=1
#              end_fsync=1 (VM_SET rw, bs, size, runtime: as before)
#   rand4k-N   N jobs of 4 KiB random writes (psync, direct=1), time-based
#              rand_runtime s (20), end_fsync=1; fs peers: one file of
#              rand_size (64M) per job; raw: the whole namespace; zcow
#              run: runtime rand_runtime / N (its jobs' clocks, below)
#   fsync      the kernel fsync job, configs/kernel-fsync.fio (4000 files
#              of 8 KiB per job, an fsync after every 4 KiB write),
#              runtime fsync_runtime (20) s, fsync_jobs (8) jobs
#   rhoNN      the sustained uniform overwrite of the gc scenario at rho
#              NN % (configs/vm-gc-rhoNN.fio / .scenario, lib.sh's gc
#              functions) on the second namespace ($DEV2, the gc geometry:
#              64 x 16 MiB), until ENOSPC, fills (3) device fills, the
#              overwrite's wall-time limit rho_runtime (30) s or the
#              job's limit rho_job_timeout (400) s (fuse:
#              rho_fuse_timeout, 150 s); D (the space data can
#              use) d_btrfs= / d_zcow= bytes, default the gc scenario's
#              measurement; calib=1 measures it in this boot
# Peers (VM_SET peers=): raw (fio psync on the block device), raw-uring
# (fio io_uring_cmd on the NVMe generic char device, iodepth 1: where
# the guest's fio has it), btrfs, zcow, fuse.  raw and raw-uring have no
# file system: fsync and rho are n/a for them (result file says why).
# Per run: the job's output (fio normal + JSON; zcow's summary.json),
# blkzone report, /sys/block/<dev>/stat and the NVMe SMART log before and
# after (device bytes: SMART counts NVMe passthrough, the block stat does
# not), zone resets from the kernel's NVMe trace; for zcow and fuse a
# `zcow check` after.  quick=1: rand_runtime=5 fsync_runtime=5
# rho_runtime=10 fills=0.2 rho_job_timeout=120.
# vm.sh turns result-*.txt into peers.md (one table per workload), the
# plots peers-<workload>.svg and summary.json.
# vm: zones=64 zone_size=64M zone_cap=64M max_open=14 max_active=14 zasl=0 timeout=3000 size=512M rw=write bs=128k append=on zns2=1 zns2_zones=64 zns2_zone_size=16M
# shellcheck disable=SC2086,SC2046 # TIME_OPTS, wl_opts and zsets are lists
# shellcheck shell=dash
# shellcheck disable=SC1091 # the guest path of scenarios/lib.sh
. /scenarios/lib.sh

SIZE=${ZCOW_SIZE:-512M}
RW=${ZCOW_RW:-write}
BS=${ZCOW_BS:-128k}
# runtime=S (VM_SET): seq128k time-based, rewriting the SIZE bytes until
# S seconds; the raw device then wraps with zone resets.
TIME_OPTS=
[ -n "${ZCOW_RUNTIME:-}" ] && TIME_OPTS="--time_based --runtime=$ZCOW_RUNTIME"
if [ "${ZCOW_QUICK:-0}" = 1 ]; then
	RAND_RUNTIME=${ZCOW_RAND_RUNTIME:-5}
	FSYNC_RUNTIME=${ZCOW_FSYNC_RUNTIME:-5}
	RHO_RUNTIME=${ZCOW_RHO_RUNTIME:-10}
	FILLS=${ZCOW_FILLS:-0.2}
	RHO_JOB_TIMEOUT=${ZCOW_RHO_JOB_TIMEOUT:-120}
	RHO_FUSE_TIMEOUT=${ZCOW_RHO_FUSE_TIMEOUT:-60}
else
	RAND_RUNTIME=${ZCOW_RAND_RUNTIME:-20}
	FSYNC_RUNTIME=${ZCOW_FSYNC_RUNTIME:-20}
	RHO_RUNTIME=${ZCOW_RHO_RUNTIME:-30}
	FILLS=${ZCOW_FILLS:-3}
	RHO_JOB_TIMEOUT=${ZCOW_RHO_JOB_TIMEOUT:-400}
	RHO_FUSE_TIMEOUT=${ZCOW_RHO_FUSE_TIMEOUT:-150}
fi
# 8, not the job file's 32: fio's set-up looks up every one of a job's
# 4000 names about 4 times before it starts, and through FUSE under TCG
# 32 jobs' 500,000 lookups alone take about 11 minutes
FSYNC_JOBS=${ZCOW_FSYNC_JOBS:-8}
# D, the space data can use on the gc geometry, as the gc scenario
# measured it (docs/vm.md; 944 and 864 MiB); calib=1 measures it again
if [ "${ZCOW_CALIB:-0}" = 1 ]; then
	D_BTRFS=${ZCOW_D_BTRFS:-}
	D_ZCOW=${ZCOW_D_ZCOW:-}
else
	D_BTRFS=${ZCOW_D_BTRFS:-989855744}
	D_ZCOW=${ZCOW_D_ZCOW:-905969664}
fi
RAND_SIZE=${ZCOW_RAND_SIZE:-64M}
WORKLOADS=$(echo "${ZCOW_WORKLOADS:-seq128k,rand4k-1,rand4k-8,rand4k-32,fsync,rho60,rho80}" | tr ',' ' ')
PEERS=$(echo "${ZCOW_PEERS:-raw,raw-uring,btrfs,zcow,fuse}" | tr ',' ' ')
APPEND=${ZCOW_APPEND:-on}
# lib.sh's gc functions read them: the overwrite's wall-time limit, a
# job's limit
# shellcheck disable=SC2034
{
	RUNTIME=$RHO_RUNTIME
	JOB_TIMEOUT=$RHO_JOB_TIMEOUT
}
DEV1=$DEV
NG=/dev/ng0n1

echo mq-deadline >/sys/block/nvme0n1/queue/scheduler

# raw-uring: does the guest's fio have io_uring_cmd, with zonemode=zbd on
# the generic char device?  A 1 MiB probe from reset zones says.
URING=no
if echo " $PEERS " | grep -q ' raw-uring '; then
	blkzone reset "$DEV"
	if fio --name=probe --filename="$NG" --ioengine=io_uring_cmd \
		--cmd_type=nvme --zonemode=zbd --rw=write --bs=128k --size=1z \
		>"$OUT/uring-probe.txt" 2>&1; then
		URING=yes
	fi
fi

{
	echo "workloads=$WORKLOADS"
	echo "peers=$PEERS"
	echo "size=$SIZE rw=$RW bs=$BS runtime=${ZCOW_RUNTIME:-}"
	echo "rand_runtime=$RAND_RUNTIME"
	echo "rand_size=$RAND_SIZE"
	echo "fsync_runtime=$FSYNC_RUNTIME"
	echo "fsync_jobs=$FSYNC_JOBS"
	echo "rho_runtime=$RHO_RUNTIME"
	echo "rho_job_timeout=$RHO_JOB_TIMEOUT"
	echo "rho_fuse_timeout=$RHO_FUSE_TIMEOUT"
	echo "d_btrfs=$D_BTRFS"
	echo "d_zcow=$D_ZCOW"
	echo "fills=$FILLS"
	echo "append=$APPEND"
	echo "uring=$URING"
	echo "fio_version=$(fio --version)"
	echo "btrfs_progs=$(mkfs.btrfs --version 2>&1 | head -n1)"
} >"$OUT/peers-setup.txt"

# wl_opts WORKLOAD: its fio options (every fio peer; the file or device
# and the engine come from the peer).
wl_opts() {
	case $1 in
	seq128k)
		echo "--rw=$RW --bs=$BS --size=$SIZE --end_fsync=1 $TIME_OPTS"
		;;
	rand4k-*)
		echo "--rw=randwrite --bs=4k --numjobs=${1#rand4k-}" \
			"--time_based --runtime=$RAND_RUNTIME --end_fsync=1" \
			"--group_reporting"
		;;
	esac
}

# fsync_job: the kernel fsync job file with this run's runtime and jobs.
fsync_job() {
	mkdir -p "$OUT/jobs"
	sed -e "s/^runtime=.*/runtime=$FSYNC_RUNTIME/" \
		-e "s/^numjobs=.*/numjobs=$FSYNC_JOBS/" \
		/configs/kernel-fsync.fio >"$OUT/jobs/kernel-fsync.fio"
	echo "$OUT/jobs/kernel-fsync.fio"
}

# fio_fs WORKLOAD TAG: the workload in the file system on /mnt.
fio_fs() {
	case $1 in
	seq128k)
		fio --name="$2" --filename=/mnt/fio.dat --direct=1 \
			--ioengine=psync $(wl_opts "$1") \
			--output-format=normal,json --output="$OUT/fio-$2.txt"
		;;
	rand4k-*)
		fio --name="$2" --directory=/mnt/w --size="$RAND_SIZE" \
			--direct=1 --ioengine=psync --fallocate=none \
			$(wl_opts "$1") \
			--output-format=normal,json --output="$OUT/fio-$2.txt"
		;;
	fsync)
		fio --output-format=normal,json --output="$OUT/fio-$2.txt" \
			"$(fsync_job)"
		;;
	esac
}

# begin TAG / end TAG: the counters around a run (lib.sh's snap and
# trace); the seconds of the job between them.
begin() {
	snap "$1" before
	trace_start
	T0=$(now)
}

end() {
	result "$1" "job_seconds=$(elapsed "$T0" "$(now)")"
}

finish_counters() {
	trace_resets "$1"
	snap "$1" after
}

# One run of a workload per peer: peer_PEER WORKLOAD TAG.
peer_raw() {
	blkzone reset "$DEV" || return 1
	result "$2" "engine=psync"
	begin "$2"
	fio --name="$2" --filename="$DEV" --direct=1 --ioengine=psync \
		--zonemode=zbd $(wl_opts "$1") \
		--output-format=normal,json --output="$OUT/fio-$2.txt"
	result "$2" "rc=$?"
	end "$2"
	finish_counters "$2"
}

peer_raw_uring() {
	blkzone reset "$DEV" || return 1
	result "$2" "engine=io_uring_cmd"
	begin "$2"
	# end_fsync: the char device takes no fsync (a flush is a no-op on
	# QEMU's cache=unsafe image anyway)
	fio --name="$2" --filename="$NG" --ioengine=io_uring_cmd \
		--cmd_type=nvme --iodepth=1 --zonemode=zbd \
		$(wl_opts "$1" | sed 's/--end_fsync=1//') \
		--output-format=normal,json --output="$OUT/fio-$2.txt"
	result "$2" "rc=$?"
	end "$2"
	finish_counters "$2"
}

peer_btrfs() {
	btrfs_fresh && mkdir -p /mnt/w || return 1
	result "$2" "engine=psync"
	begin "$2"
	fio_fs "$1" "$2"
	result "$2" "rc=$?"
	end "$2"
	umount /mnt
	result "$2" "umount_rc=$?"
	finish_counters "$2"
}

# zcow_job WORKLOAD: the workload as a fio job file for `zcow run`, its
# path (fsync: the shipped scenario; --set gives runtime and jobs).
zcow_job() {
	f=$OUT/jobs/zcow-$1.fio
	mkdir -p "$OUT/jobs"
	case $1 in
	seq128k)
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
		} >"$f"
		;;
	rand4k-*)
		{
			echo "[global]"
			echo "rw=randwrite"
			echo "bs=4k"
			echo "size=$RAND_SIZE"
			echo "ioengine=psync"
			echo "direct=1"
			echo "time_based"
			# on a device without a timing model each job's clock
			# advances only by its own calls (one thread): N jobs
			# of runtime R take N x R of wall time, so R / N here
			echo "runtime=$((RAND_RUNTIME * 1000 / ${1#rand4k-}))ms"
			echo "end_fsync=1"
			echo "numjobs=${1#rand4k-}"
			echo "[$1]"
		} >"$f"
		;;
	fsync)
		f=/configs/kernel-fsync.scenario
		;;
	esac
	echo "$f"
}

# zcow: the "before" counters are of the reset device (mkfs runs inside
# `zcow run`, its bytes and the unmount commit's count).
peer_zcow() {
	blkzone reset "$DEV" || return 1
	result "$2" "engine=zcow run (psync, one thread)"
	begin "$2"
	zsets=
	[ "$1" = fsync ] &&
		zsets="--set runtime=$FSYNC_RUNTIME --set numjobs=$FSYNC_JOBS"
	zcow run "$(zcow_job "$1")" --set "device=$DEV" \
		--set "zone_append=$APPEND" $zsets \
		--results "$OUT/zrun" >"$OUT/zcow-run-$2.txt" 2>&1
	result "$2" "rc=$?"
	end "$2"
	finish_counters "$2"
	cat "$OUT/zcow-run-$2.txt"
	cp "$(tail -n1 "$OUT/zcow-run-$2.txt")/summary.json" \
		"$OUT/zcow-summary-$2.json"
	zcow check "$DEV" >"$OUT/zcow-check-$2.txt" 2>&1
	result "$2" "check_rc=$?"
}

# fuse: counters from after mkfs and mount (as btrfs) to after the
# unmount, whose final commit counts.
peer_fuse() {
	blkzone reset "$DEV" && zcow mkfs "$DEV" >/dev/null || return 1
	FUSE_TAG=$2 fuse_start "zone_append=$APPEND" && mkdir -p /mnt/w ||
		return 1
	result "$2" "engine=psync"
	begin "$2"
	fio_fs "$1" "$2"
	result "$2" "rc=$?"
	end "$2"
	fuse_stop
	result "$2" "umount_rc=$?"
	finish_counters "$2"
	zcow check "$DEV" >"$OUT/zcow-check-$2.txt" 2>&1
	result "$2" "check_rc=$?"
}

# run_peer WORKLOAD PEER: one run, result-WORKLOAD-PEER.txt.
run_peer() {
	tag=$1-$2
	result "$tag" "workload=$1" "peer=$2"
	case $2-$1 in
	raw*-fsync | raw*-rho*)
		result "$tag" "status=n/a" \
			"why=no file system: nothing to fsync or overwrite in place"
		return 0
		;;
	raw-uring-*)
		if [ "$URING" != yes ]; then
			result "$tag" "status=n/a" \
				"why=fio io_uring_cmd with zonemode=zbd failed (uring-probe.txt)"
			return 0
		fi
		;;
	esac
	case $1 in
	rho*)
		rho_peer "${1#rho}" "$2" "$tag"
		return
		;;
	esac
	case $2 in
	raw-uring) peer_raw_uring "$1" "$tag" ;;
	*) "peer_$2" "$1" "$tag" ;;
	esac
	rp_rc=$?
	rc=$(sed -n 's/^rc=//p' "$OUT/result-$tag.txt")
	[ "$rp_rc" = 0 ] && [ "$rc" = 0 ]
}

# rho_peer RHO PEER TAG: lib.sh's gc runs on $DEV2 (zcow = zcow_gc: the
# native runner; fuse: fio's job file in zcow's FUSE mount).
rho_peer() {
	case $2 in
	btrfs | zcow) "$2_gc" "$1" "$3" ;;
	fuse)
		# its 4 KiB writes take about 7 ms each under TCG: the fill
		# alone would take half an hour
		JOB_TIMEOUT=$RHO_FUSE_TIMEOUT
		fuse_gc "$1" "$3"
		rp_rc=$?
		# shellcheck disable=SC2034 # read by lib.sh's gc_fio
		JOB_TIMEOUT=$RHO_JOB_TIMEOUT
		return $rp_rc
		;;
	esac
}

rho_setup() {
	i=0
	while [ ! -b "$DEV2" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ -b "$DEV2" ] || return 1
	DEV=$DEV2
	DEVBYTES=$(($(cat "/sys/block/${DEV#/dev/}/size") * 512))
	echo mq-deadline >"/sys/block/${DEV#/dev/}/queue/scheduler"
	{
		echo "rho_device=$DEV"
		echo "rho_device_bytes=$DEVBYTES"
		echo "rho_zone_bytes=$(($(cat "/sys/block/${DEV#/dev/}/queue/chunk_sectors") * 512))"
	} >>"$OUT/peers-setup.txt"
	if echo " $PEERS " | grep -q ' btrfs '; then
		step calib-btrfs calibrate btrfs "$D_BTRFS"
	fi
	if echo " $PEERS " | grep -q ' zcow \| fuse '; then
		step calib-zcow calibrate zcow "$D_ZCOW"
	fi
	umount /mnt 2>/dev/null
	DEV=$DEV1
}

for wl in $WORKLOADS; do
	case $wl in
	rho*)
		[ -n "${RHO_READY:-}" ] || { rho_setup; RHO_READY=1; }
		DEV=$DEV2
		;;
	*) DEV=$DEV1 ;;
	esac
	for peer in $PEERS; do
		step "$wl-$peer" run_peer "$wl" "$peer"
		fuse_leftover
	done
	# a later hang still leaves these runs to the host
	checkpoint
done
DEV=$DEV1
finish
