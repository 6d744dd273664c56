# smoke: conformance (passthrough and emulated append), zcow mkfs, mount
# twice, check, df, dump-super, zone report.  Runs in CI (./run.sh test).
# A workload joins once the file layer exists (zcow run, configs/).
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
soft_step df zcow df "$DEV"
step dump-super zcow dump-super "$DEV"
step zones zcow zones "$DEV"
step blkzone-after blkzone report "$DEV"
finish
