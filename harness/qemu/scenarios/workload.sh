# workload: zcow's own workload runner (`zcow run`, configs/README.md) on the
# real namespace: the raw-device scenarios (zonemode=zbd), plain writes and
# Zone Append through NVMe passthrough and through the emulated path; then
# zcow mkfs, mount, check.  The file-system scenarios join once the file
# layer exists.
# Each run starts from reset zones: `zcow run` does not yet account for zones
# a previous user left open (a real device keeps them; EOVERFLOW otherwise).
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
step reset zcow zone "$DEV" reset all
step mkfs zcow mkfs "$DEV"
step mount zcow mount "$DEV"
step check zcow check "$DEV"
step blkzone-after blkzone report "$DEV"
finish
