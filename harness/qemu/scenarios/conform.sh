# conform: the device rules on a second geometry, capacity = zone size (the
# zone-end split rules run here; smoke has capacity < size) and zasl 0
# (zone_append_max_bytes = mdts = 512 KiB); both append paths.
# vm: zones=32 zone_size=4M zone_cap=4M max_open=4 max_active=6 zasl=0 timeout=240
# shellcheck shell=dash
# shellcheck disable=SC1091 # the guest path of scenarios/lib.sh
. /scenarios/lib.sh

step conform zcow conform "$DEV"
step conform-emulate zcow conform "$DEV?append=emulate"
step blkzone-after blkzone report "$DEV"
finish
