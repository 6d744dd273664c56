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
# shellcheck disable=SC2034 # read by the gc functions of lib.sh
JOB_TIMEOUT=${ZCOW_JOB_TIMEOUT:-2400}
echo mq-deadline >"/sys/block/$DEVNAME/queue/scheduler"
{
	echo "device_bytes=$DEVBYTES"
	echo "zone_bytes=$ZONEBYTES"
	echo "fills=$FILLS"
	echo "runtime=$RUNTIME"
	echo "rhos=$RHOS"
	echo "systems=$SYSTEMS"
} >"$OUT/gc-setup.txt"

# The measurements (trace_start / trace_resets, snap, result), the
# calibrations and the btrfs_gc / zcow_gc runs are in lib.sh, shared with
# peers.sh's rho workloads.

for s in $SYSTEMS; do
	step "calib-$s" calibrate "$s"
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
