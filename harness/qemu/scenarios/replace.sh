# replace: device replace on real zoned devices (seeds 008, 009;
# docs/devices.md).  Two ZNS namespaces of the same geometry, $DEV and
# $DEV2.
#   1. While writing: `zcow run` of vm-fs-randwrite-4k on $DEV (mkfs,
#      mount, 4 jobs of 4 KiB random writes on files) with
#      replace_target=$DEV2 starting 300 ms into the jobs; the run ends
#      with the file system on $DEV2.  Then $DEV2 alone mounts and checks
#      clean, its files are listed; $DEV no longer mounts (its superblocks
#      are wiped).
#   2. Files compared: $DEV2's zones reset, mkfs on $DEV, three files put (the zcow binary,
#      busybox, a file of random bytes), `zcow replace $DEV 1 $DEV2`, then
#      $DEV2 alone mounts, checks clean, and every file comes back
#      byte-identical.
# vm: zones=32 zone_size=16M zone_cap=12M max_open=8 max_active=10 zasl=4 timeout=600 zns2=1
# shellcheck shell=dash
# shellcheck disable=SC1091 # the guest path of scenarios/lib.sh
. /scenarios/lib.sh

# `zcow mount DEV` must fail (a replaced device holds no superblock).
mount_fails() {
	if zcow mount "$1"; then
		echo "$1 still mounts after it was replaced"
		return 1
	fi
	echo "$1 no longer mounts: as expected"
}

put_files() {
	dd if=/dev/urandom of=/tmp/random.bin bs=4096 count=1500 2>/dev/null &&
		zcow put "$DEV" /bin/zcow /zcow.bin &&
		zcow put "$DEV" /bin/busybox /busybox.bin &&
		zcow put "$DEV" /tmp/random.bin /random.bin
}

get_and_compare() {
	for f in zcow busybox random; do
		case $f in
		zcow) orig=/bin/zcow ;;
		busybox) orig=/bin/busybox ;;
		*) orig=/tmp/random.bin ;;
		esac
		zcow get "$DEV2" "/$f.bin" "/tmp/$f.got" &&
			cmp "$orig" "/tmp/$f.got" &&
			echo "$f.bin: $(wc -c <"/tmp/$f.got") bytes identical" ||
			return 1
		rm -f "/tmp/$f.got"
	done
}

step blkzone-before blkzone report "$DEV"
step run-with-replace zcow_fs_run vm-fs-randwrite-4k --set runtime=1s \
	--set filesize=8m --set "replace_target=$DEV2" \
	--set replace_at=300ms
step replaced-mount zcow mount "$DEV2"
step replaced-check zcow check "$DEV2"
step replaced-ls zcow ls "$DEV2" /
step old-does-not-mount mount_fails "$DEV"
step reset-target blkzone reset "$DEV2"
step mkfs zcow mkfs "$DEV"
step put put_files
step replace zcow replace "$DEV" 1 "$DEV2"
step new-mount zcow mount "$DEV2"
step new-check zcow check "$DEV2"
step compare get_and_compare
step old-does-not-mount-2 mount_fails "$DEV"
step blkzone-after blkzone report "$DEV2"
finish
