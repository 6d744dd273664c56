# sblog: superblock interop with the kernel.  Kernel btrfs (zoned) commits
# ZCOW_COMMITS transactions; then `zcow dump-super` must find the same latest
# generation as `btrfs inspect-internal dump-super`.  The superblock-log
# zones (0 and 1) are exported up to their write pointers (zones/N.bin) with
# the zone report: a test vector for sim:import= (vm.sh copies it to
# tests/data/kernel-sblog/).  Capacity < zone size, so that the log switches
# zones inside the capacity.
# vm: zones=256 zone_size=4M zone_cap=1M max_open=0 max_active=0 zasl=0 timeout=600 commits=300
# shellcheck shell=dash
# shellcheck disable=SC1091 # the guest path of scenarios/lib.sh
. /scenarios/lib.sh

COMMITS=${ZCOW_COMMITS:-300}

commits() {
	i=0
	while [ "$i" -lt "$COMMITS" ]; do
		: >"/mnt/f$i" || return 1
		sync
		i=$((i + 1))
	done
	echo "$COMMITS commits"
}

# Export zone $1 from its start to its wp (nothing when empty).
export_zone() {
	line=$(blkzone report -o $(($1 * ZONE_SECTORS)) -c 1 "$DEV") || return 1
	wp=$(echo "$line" | sed -n 's/.*wptr \(0x[0-9a-f]*\).*/\1/p')
	cap=$(echo "$line" | sed -n 's/.*cap \(0x[0-9a-f]*\).*/\1/p')
	wp=$((wp))
	cap=$((cap))
	[ "$wp" -gt "$cap" ] && wp=$cap # a full zone reports wp = zone length
	[ "$wp" -eq 0 ] && return 0
	mkdir -p "$OUT/vector/zones"
	dd if="$DEV" of="$OUT/vector/zones/$1.bin" bs=4096 \
		skip=$(($1 * ZONE_SECTORS / 8)) count=$((wp / 8)) iflag=direct ||
		dd if="$DEV" of="$OUT/vector/zones/$1.bin" bs=4096 \
			skip=$(($1 * ZONE_SECTORS / 8)) count=$((wp / 8))
}

export_sb_zones() {
	export_zone 0 && export_zone 1
}

ZONE_SECTORS=$(cat /sys/block/nvme0n1/queue/chunk_sectors)

step mkfs-btrfs mkfs.btrfs -f -O zoned -d single -m single "$DEV"
step mount-btrfs mount -t btrfs "$DEV" /mnt
step commits commits
step umount-btrfs umount /mnt
mkdir -p "$OUT/vector"
step report blkzone report "$DEV"
cp "$OUT/report.txt" "$OUT/vector/report.txt"
step btrfs-dump-super btrfs inspect-internal dump-super -f "$DEV"
cp "$OUT/btrfs-dump-super.txt" "$OUT/vector/dump-super.txt"
step zcow-dump-super zcow dump-super "$DEV"
step export-zones export_sb_zones

bgen=$(awk '$1 == "generation" { print $2; exit }' "$OUT/btrfs-dump-super.txt")
zgen=$(awk '$1 == "generation" { print $2; exit }' "$OUT/zcow-dump-super.txt")
echo "$bgen" >"$OUT/vector/expected-generation"
{
	echo "commits=$COMMITS"
	echo "btrfs_generation=$bgen"
	echo "zcow_generation=$zgen"
	if [ -n "$bgen" ] && [ "$bgen" = "$zgen" ]; then
		echo "match=yes"
	else
		echo "match=no"
	fi
} >"$OUT/sblog-result.txt"
cat "$OUT/sblog-result.txt"
step generations-match grep -qx match=yes "$OUT/sblog-result.txt"
ls -l "$OUT/vector" "$OUT/vector/zones"
finish
