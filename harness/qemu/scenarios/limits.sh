# limits: every command within the queue's limits.  Records the guest's
# queue limits (every file of /sys/block/nvme0n1/queue), what zcow uses per
# command (`zcow zones --limits`), then Zone Appends of the largest size
# zcow issues: a put/get round trip of a large file (cmp), then a stress
# of `appends` (10000) such appends, files of `mb` MiB put and removed in
# turn, `zcow check` at the end.  The guest's free memory is scattered
# first: transparent huge pages off (a buffer in huge pages is physically
# contiguous, its pages merge into few segments and a command above the
# segment limit passes), then `frag` (50000) one-page files on tmpfs, every
# other one removed, so that the pages of zcow's buffers are seldom
# neighbours.  Then `zcow zones --append-test`: `raw` (4000) Zone Appends
# of the largest size through NVMe passthrough, every other one from a
# page-aligned buffer (handed to the kernel as it is), the others from one
# 16 bytes past a page (bounced), each read back; `raw_emulate` (1000) the
# same through the emulated append (`?append=emulate`: writes at the
# write pointer, sized by max_sectors_kb).
# zasl 0: zone_append_max_bytes = mdts = 512 KiB, the geometry a 512 KiB
# passthrough Zone Append failed on with EINVAL (128 pages against
# max_segments 127).  Other geometries through VM_SET (docs/vm.md):
# lbs=512 (512-byte LBA format), zasl=5 (128 KiB appends), mdts=5 (128 KiB
# commands of every kind).
# vm: zones=64 zone_size=64M zone_cap=64M max_open=14 max_active=14 zasl=0 mdts=7 lbs=4096 mb=128 appends=10000 frag=50000 raw=4000 raw_emulate=1000 timeout=1200
# shellcheck shell=dash
# shellcheck disable=SC1091 # the guest path of scenarios/lib.sh
. /scenarios/lib.sh

MB=${ZCOW_MB:-128}
APPENDS=${ZCOW_APPENDS:-10000}
FRAG=${ZCOW_FRAG:-50000}
RAW=${ZCOW_RAW:-4000}
RAW_EMULATE=${ZCOW_RAW_EMULATE:-1000}
{
	echo "mb=$MB"
	echo "appends=$APPENDS"
	echo "frag=$FRAG"
	echo "raw=$RAW"
	echo "raw_emulate=$RAW_EMULATE"
} >"$OUT/limits-setup.txt"

queue_limits() {
	for f in /sys/block/nvme0n1/queue/*; do
		[ -f "$f" ] && echo "${f##*/}=$(cat "$f" 2>/dev/null)"
	done
	return 0
}

# stress: put and remove files of $MB MiB until $APPENDS appends of the
# largest size zcow uses have been issued.
stress() {
	max=$(zcow zones "$DEV" --limits | awk '$1 == "append" && $2 == "passthru" { print $3 }')
	[ -n "$max" ] && [ "$max" -gt 0 ] || {
		max=$(cat /sys/block/nvme0n1/queue/zone_append_max_bytes)
		echo "no append size from zcow zones --limits: $max assumed"
	}
	per=$(((MB * 1048576 + max - 1) / max))
	rounds=$(((APPENDS + per - 1) / per))
	echo "append size $max, $per appends per file, $rounds files"
	zcow mkfs "$DEV" || return 1
	i=0
	while [ "$i" -lt "$rounds" ]; do
		zcow put "$DEV" /tmp/big "/s$i" || {
			echo "put $i failed after $((i * per)) appends"
			return 1
		}
		if [ "$i" -gt 0 ]; then
			zcow rm "$DEV" "/s$((i - 1))" || return 1
		fi
		i=$((i + 1))
	done
	echo "stress: $((rounds * per)) appends of at most $max bytes"
	zcow get "$DEV" "/s$((rounds - 1))" /tmp/back &&
		cmp /tmp/big /tmp/back && echo "last file identical"
	rc=$?
	rm -f /tmp/back
	return $rc
}

thp_off() {
	f=/sys/kernel/mm/transparent_hugepage/enabled
	[ -f "$f" ] || {
		echo "no $f"
		return 0
	}
	echo "before: $(cat "$f")"
	echo never >"$f" && echo "after: $(cat "$f")"
}

# fragment: $FRAG one-page files on tmpfs, the odd ones removed.
fragment() {
	mkdir -p /tmp/frag || return 1
	i=0
	while [ "$i" -lt "$FRAG" ]; do
		echo "$i" >"/tmp/frag/$i"
		i=$((i + 1))
	done
	rm -f /tmp/frag/*[13579]
	echo "$FRAG files, $(ls /tmp/frag | wc -l) kept"
	grep -E 'MemFree|^Cached' /proc/meminfo
	cat /proc/buddyinfo
}

step queue-limits queue_limits
step thp-off thp_off
step fragment fragment
soft_step zones-limits zcow zones "$DEV" --limits
soft_step zones-limits-emulate zcow zones "$DEV?append=emulate" --limits
step mkdata dd if=/dev/urandom of=/tmp/big bs=1M count="$MB"
step mkfs zcow mkfs "$DEV"
step put zcow put "$DEV" /tmp/big /big
step get zcow get "$DEV" /big /tmp/big-back
step cmp cmp /tmp/big /tmp/big-back
step check zcow check "$DEV"
step stress stress
step check-2 zcow check "$DEV"
step append-test zcow zones "$DEV" --append-test "$RAW"
step append-test-emulate zcow zones "$DEV?append=emulate" \
	--append-test "$RAW_EMULATE"
finish
