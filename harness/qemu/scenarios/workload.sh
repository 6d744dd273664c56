# workload: zcow's own workload runner (`zcow run`, configs/README.md) on the
# real namespace.  Raw device (zonemode=zbd): plain writes, Zone Append
# through NVMe passthrough and through the emulated path.  Then zcow on the
# real device, all in this one boot: the file-system target (mkfs, mount,
# jobs on files, unmount) of configs/fs-seqwrite-128k.scenario and of
# harness/qemu/configs/vm-fs-randwrite-4k.scenario (4 KiB random writes),
# each followed by a mount, `zcow check`, `zcow ls`; a put/get round trip
# across an unmount; `zcow df`.
# Each raw run starts from reset zones; the fs target resets the zones
# itself.  Scaled: 256 x 16 MiB zones (12 MiB capacity, 3 GiB), fs files
# of 128 MiB (seqwrite) and 64 MiB (randwrite), 1 s time-based each.
# vm: zones=256 zone_size=16M zone_cap=12M max_open=14 max_active=14 zasl=0 timeout=600
# shellcheck shell=dash
# shellcheck disable=SC1091 # the guest path of scenarios/lib.sh
. /scenarios/lib.sh

zrun() {
	zcow zone "$DEV" reset all >/dev/null &&
		zcow run "/configs/$1.scenario" --set "device=$2" --results "$OUT/zrun" &&
		blkzone report "$DEV" | awk '{ print $8, $NF }' | sort | uniq -c
}

step blkzone-before blkzone report "$DEV"
step run-seqwrite zrun raw-seqwrite-128k "$DEV"
step run-append zrun raw-zone-append "$DEV"
step run-append-emulate zrun raw-zone-append "$DEV?append=emulate"

step fs-seqwrite zcow_fs_run fs-seqwrite-128k --set filesize=128m \
	--set runtime=1s
step fs-seqwrite-mount zcow mount "$DEV"
step fs-seqwrite-check zcow check "$DEV"
step fs-seqwrite-ls zcow ls "$DEV" /
step fs-randwrite zcow_fs_run vm-fs-randwrite-4k
step fs-randwrite-mount zcow mount "$DEV"
step fs-randwrite-check zcow check "$DEV"
step fs-randwrite-ls zcow ls "$DEV" /
step fs-roundtrip put_get_roundtrip
step fs-check-final zcow check "$DEV"
soft_step df zcow df "$DEV"
step blkzone-after blkzone report "$DEV"
finish
