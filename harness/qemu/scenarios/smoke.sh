# smoke: conformance (passthrough and emulated append), zcow mkfs, mount
# twice, check, df, dump-super, zone report; then zcow on the real device:
# a short file-system workload (`zcow run`, 4 KiB random writes on files:
# mkfs, mount, jobs, unmount), mount again, `zcow check` (a failing check
# fails the run), a put/get round trip; the fsync-per-file workload of
# seed-treelog (4 clients: the tree-log written on the real zones), mount,
# check.  Runs in CI (./run.sh test).
# The open/active limits stay small (4 / 6) for the conformance limit
# rules; the fs workload runs within them (zcow needs about 5 active zones:
# superblock log, metadata, system, data).
# vm: zones=32 zone_size=16M zone_cap=12M max_open=4 max_active=6 zasl=4 timeout=240
# shellcheck shell=dash
# shellcheck disable=SC1091 # the guest path of scenarios/lib.sh
. /scenarios/lib.sh

step blkzone-before blkzone report "$DEV"
step conform zcow conform "$DEV"
step conform-emulate zcow conform "$DEV?append=emulate"
step mkfs zcow mkfs "$DEV"
step mount zcow mount "$DEV"
step mount-again zcow mount "$DEV"
step check zcow check "$DEV"
step fs-run zcow_fs_run vm-fs-randwrite-4k --set runtime=300ms \
	--set filesize=8m
step fs-mount-again zcow mount "$DEV"
step fs-check zcow check "$DEV"
step fs-ls zcow ls "$DEV" /
step fs-roundtrip put_get_roundtrip
step fs-check-2 zcow check "$DEV"
step fs-treelog zcow_fs_run seed-treelog --set numjobs=4 --set loops=2 \
	--set unlink_each_loop=0
step fs-treelog-mount zcow mount "$DEV"
step fs-treelog-check zcow check "$DEV"
step fs-treelog-ls zcow ls "$DEV" /clients/client0
soft_step df zcow df "$DEV"
step dump-super zcow dump-super "$DEV"
step zones zcow zones "$DEV"
step blkzone-after blkzone report "$DEV"
finish
