# compat: btrfs compatibility with the Linux kernel, both ways, in one boot
# (docs/vm.md, "The kernel and zcow on one file system").
#   zcow -> kernel  zcow mkfs (kernel superblock placement) and zcow put of
#                   files of several sizes in nested directories; the
#                   kernel mounts it, checks every file's sha256, writes
#                   more files, appends to one of zcow's, unmounts; zcow
#                   reads everything back, `zcow check --data` and `btrfs
#                   check --readonly` are clean; zcow writes once more and
#                   the kernel reads that too.
#   snapshots       zcow snapshots the top level (-r) and writes after it;
#                   the kernel lists the snapshot read-only, reads it as
#                   it was, makes its own snapshot and writes after it;
#                   zcow lists both and reads the kernel's, deletes its
#                   own; both checks are clean; the kernel reads what
#                   stays; a writable snapshot takes a file from each
#                   side, each reads the other's.
#   progs -> zcow   mkfs.btrfs -O zoned with btrfs-progs' default features
#                   (free-space-tree, extref, no-holes): the kernel writes
#                   files, zcow reads them (read-only mounts), zcow refuses
#                   to write, both checks stay clean.
#   lean -> zcow    mkfs.btrfs -O zoned,^extref -R ^free-space-tree (what
#                   zcow maintains): the kernel writes, zcow reads and
#                   writes (a new file, and over one the kernel stored
#                   inline), both checks are clean, the kernel reads
#                   zcow's files.
#   seed            zcow mkfs with its default superblock placement: the
#                   kernel refuses to mount it (superblock flag bit 56, a
#                   known difference), zcow reads it, btrfs check accepts.
# Every step is a `cstep NAME WHAT CMD...`: its output in NAME.txt, its
# description in compat-steps.txt; a kernel step that fails appends the end
# of dmesg to its output.  summarize.py makes compat.md and summary.json's
# `compat` member from them.
# vm: zones=64 zone_size=64M zone_cap=64M max_open=14 max_active=14 zasl=0 timeout=600
# shellcheck shell=dash
# shellcheck disable=SC1091 # the guest path of scenarios/lib.sh
. /scenarios/lib.sh

MNT=/mnt
GOT=/tmp/compat-got
# The files of each side: path (from the fs root) and size in bytes.  Sizes
# cover an empty file, files below a sector and a block, unaligned tails,
# and files of several extents (zasl=0: 512 KiB appends).
ZCOW_FILES="z/empty 0
z/tiny 1
z/d1/small 100
z/d1/d2/block 4096
z/d1/d2/d3/block-plus 4097
z/odd 70001
z/d1/mib 1048576
z/d1/d2/multi 3145733
z/large 16777216"
KERNEL_FILES="k/empty 0
k/tiny 7
k/k1/small 3000
k/k1/k2/block 8192
k/k1/k2/k3/odd 123457
k/k1/multi 5242883
k/large 12582912"
PROGS_FILES="p/tiny 5
p/p1/small 2222
p/p1/p2/odd 99999
p/p1/multi 4194311"
LEAN_FILES="l/tiny 9
l/l1/small 1111
l/l1/l2/odd 77777
l/l1/multi 2097169"

cstep() {
	name=$1
	printf '%s\t%s\n' "$name" "$2" >>"$OUT/compat-steps.txt"
	shift 2
	step "$name" "$@"
}

# with_dmesg CMD...: CMD; it fails too when the kernel logs a WARNING,
# a BUG or a BTRFS error / critical line meanwhile (those lines follow
# its output); when it fails, the end of the kernel log follows.
with_dmesg() {
	wd_from=$(dmesg | wc -l)
	"$@"
	wd_rc=$?
	wd_new=$(dmesg | tail -n +"$((wd_from + 1))" |
		grep -E 'WARNING:|BUG:|BTRFS (error|critical)')
	if [ -n "$wd_new" ]; then
		echo "--- the kernel logged during this step:"
		echo "$wd_new"
		[ "$wd_rc" -eq 0 ] && wd_rc=1
	fi
	if [ "$wd_rc" -ne 0 ]; then
		echo "--- rc=$wd_rc; dmesg (last 60 lines):"
		dmesg | tail -n 60
	fi
	return "$wd_rc"
}

# make_files ROOT LIST: random files under ROOT as LIST says, and their
# sha256 manifest ROOT.sha256 (paths relative to ROOT, as on the fs).
make_files() {
	echo "$2" | while read -r path size; do
		mkdir -p "$1/$(dirname "$path")" &&
			head -c "$size" /dev/urandom >"$1/$path" || return 1
	done || return 1
	manifest "$1"
}

manifest() {
	(cd "$1" && find . -type f | sed 's|^\./||' | sort |
		while read -r f; do sha256sum "$f"; done) >"$1.sha256" &&
		cat "$1.sha256"
}

# zcow_put_tree ROOT: ROOT's directories (parents first) and files into
# the zcow fs at the same paths.
zcow_put_tree() {
	dirs=$(cd "$1" && find . -mindepth 1 -type d | sed 's|^\.||' | sort)
	# shellcheck disable=SC2086 # one argument per directory
	zcow mkdir "$DEV" $dirs || return 1
	for f in $(cd "$1" && find . -type f | sed 's|^\.||' | sort); do
		zcow put "$DEV" "$1$f" "$f" || return 1
	done
	echo "put $(echo "$dirs" | wc -w) directories, $(cd "$1" && find . -type f | wc -l) files"
}

# zcow_verify MANIFEST...: `zcow get` of every file, sha256 compared
# (the files under $ZV_PREFIX, a snapshot's directory, if set).
zcow_verify() {
	bad=0
	n=0
	for m in "$@"; do
		while read -r sum path; do
			n=$((n + 1))
			rm -f "$GOT"
			if ! zcow get "$DEV" "${ZV_PREFIX:-}/$path" "$GOT"; then
				echo "FAIL ${ZV_PREFIX:-}/$path: zcow get failed"
				bad=$((bad + 1))
				continue
			fi
			got=$(sha256sum "$GOT" | cut -d' ' -f1)
			if [ "$got" = "$sum" ]; then
				echo "ok /$path $(wc -c <"$GOT") bytes"
			else
				echo "FAIL /$path: sha256 $got, expected $sum ($(wc -c <"$GOT") bytes)"
				bad=$((bad + 1))
			fi
		done <"$m"
	done
	rm -f "$GOT"
	echo "zcow read $n files, $bad differ"
	[ "$bad" -eq 0 ]
}

# kernel_verify MANIFEST...: with the fs mounted on $MNT, every file's
# sha256 and the number of regular files under each top directory.
kernel_verify() {
	is_mounted || return 1
	kv_rc=0
	for m in "$@"; do
		(cd "$MNT" && sha256sum -c "$m") || kv_rc=1
		top=$(head -n1 "$m" | awk '{ print $2 }' | cut -d/ -f1)
		want=$(wc -l <"$m")
		have=$(find "$MNT/$top" -type f | wc -l)
		echo "/$top: $have regular files, manifest $want"
		[ "$have" -eq "$want" ] || kv_rc=1
	done
	return "$kv_rc"
}

is_mounted() {
	grep -q " $MNT btrfs " /proc/mounts && return 0
	echo "$MNT: no btrfs mounted"
	return 1
}

kernel_mount() {
	mount -t btrfs "$DEV" "$MNT" && grep " $MNT " /proc/mounts
}

# kernel_write ROOT [APPEND_TO]: ROOT's tree copied into the mounted fs,
# and (APPEND_TO, a manifest path) 4099 bytes appended to that file, the
# same to its copy under /tmp/src-z so that the manifest can be remade.
kernel_write() {
	is_mounted || return 1
	cp -a "$1"/* "$MNT/" || return 1
	if [ -n "${2:-}" ]; then
		head -c 4099 /dev/urandom >/tmp/compat-append
		cat /tmp/compat-append >>"$MNT/$2" &&
			cat /tmp/compat-append >>"/tmp/src-z/$2" || return 1
		manifest /tmp/src-z >/dev/null || return 1
		echo "appended 4099 bytes to /$2"
	fi
	sync && find "$MNT" | sort
}

kernel_umount() {
	umount "$MNT"
}

# kernel_write_session ROOT: mount, kernel_write ROOT, umount.
kernel_write_session() {
	kernel_mount || return 1
	kernel_write "$1"
	ks_rc=$?
	kernel_umount || ks_rc=1
	return "$ks_rc"
}

# kernel_read_write_session ROOT MANIFEST: mount, kernel_verify MANIFEST,
# kernel_write ROOT, umount.
kernel_read_write_session() {
	kernel_mount || return 1
	kernel_verify "$2" && kernel_write "$1"
	ks_rc=$?
	kernel_umount || ks_rc=1
	return "$ks_rc"
}

# kernel_read_again FILE MANIFEST...: mount, kernel_verify, FILE (zcow's
# last put, at the root) equal to /tmp/src-zcow2, umount.
kernel_read_again() {
	kernel_mount || return 1
	file=$1
	shift
	kernel_verify "$@" && cmp /tmp/src-zcow2 "$MNT$file" &&
		echo "$file ok"
	kr_rc=$?
	kernel_umount || kr_rc=1
	return "$kr_rc"
}

# kernel_snapshot_session: mount; zcow's snapshot /zsnap is listed,
# read-only, and holds zcow's files as they were (the top level has zcow's
# newer /z/odd); the kernel snapshots the top level as /ksnap (-r) and
# writes /k/after-ksnap after it; umount.
kernel_snapshot_session() {
	kernel_mount || return 1
	kss_rc=0
	btrfs subvolume list "$MNT" | tee /tmp/compat-subvols
	grep -q " path zsnap$" /tmp/compat-subvols ||
		{ echo "zsnap not listed"; kss_rc=1; }
	ro=$(btrfs property get "$MNT/zsnap" ro)
	echo "zsnap: $ro"
	[ "$ro" = "ro=true" ] || kss_rc=1
	(cd "$MNT/zsnap" && sha256sum -c /tmp/src-z.sha256) || kss_rc=1
	cmp /tmp/src-zcow3 "$MNT/z/odd" && echo "/z/odd: zcow's newer bytes" ||
		kss_rc=1
	if touch "$MNT/zsnap/new" 2>/dev/null; then
		echo "a write into the read-only snapshot succeeded"
		kss_rc=1
	fi
	btrfs subvolume snapshot -r "$MNT" "$MNT/ksnap" || kss_rc=1
	head -c 5000 /dev/urandom >"$MNT/k/after-ksnap" || kss_rc=1
	sync
	kernel_umount || kss_rc=1
	return "$kss_rc"
}

# zcow_writable_snapshot: zcow snapshots the top level writable as /zw
# and writes /zw/zcow-file in it.
zcow_writable_snapshot() {
	zcow snapshot "$DEV" / /zw || return 1
	head -c 7777 /dev/urandom >/tmp/compat-zw
	zcow put "$DEV" /tmp/compat-zw /zw/zcow-file
}

# kernel_writable_session: mount; /zw is writable (ro=false) and holds
# zcow's file; the kernel writes /zw/kernel-file; umount.
kernel_writable_session() {
	kernel_mount || return 1
	kws_rc=0
	ro=$(btrfs property get "$MNT/zw" ro)
	echo "zw: $ro"
	[ "$ro" = "ro=false" ] || kws_rc=1
	cmp /tmp/compat-zw "$MNT/zw/zcow-file" && echo "/zw/zcow-file ok" ||
		kws_rc=1
	head -c 6666 /dev/urandom >/tmp/compat-kw
	cp /tmp/compat-kw "$MNT/zw/kernel-file" && sync || kws_rc=1
	kernel_umount || kws_rc=1
	return "$kws_rc"
}

# zcow_read_kernel_write: zcow reads the kernel's file in /zw.
zcow_read_kernel_write() {
	rm -f "$GOT"
	zcow get "$DEV" /zw/kernel-file "$GOT" && cmp /tmp/compat-kw "$GOT" &&
		echo "/zw/kernel-file ok"
}

# zcow_read_ksnap: zcow lists both snapshots and reads the kernel's
# files in /ksnap, and /ksnap/z/odd as zcow wrote it.
zcow_read_ksnap() {
	zcow subvol list "$DEV" | tee /tmp/compat-zsubvols || return 1
	grep -q " path zsnap$" /tmp/compat-zsubvols &&
		grep -q " path ksnap$" /tmp/compat-zsubvols || return 1
	ZV_PREFIX=/ksnap zcow_verify /tmp/src-k.sha256 || return 1
	rm -f "$GOT"
	zcow get "$DEV" /ksnap/z/odd "$GOT" && cmp /tmp/src-zcow3 "$GOT" &&
		echo "/ksnap/z/odd ok"
}

# kernel_after_delete: mount; zsnap is gone, ksnap lists and reads.
kernel_after_delete() {
	kernel_mount || return 1
	kad_rc=0
	btrfs subvolume list "$MNT" | tee /tmp/compat-subvols
	if grep -q " path zsnap$" /tmp/compat-subvols; then
		echo "zsnap still listed"
		kad_rc=1
	fi
	[ -e "$MNT/zsnap" ] && { echo "/zsnap still there"; kad_rc=1; }
	(cd "$MNT/ksnap" && sha256sum -c /tmp/src-k.sha256) || kad_rc=1
	kernel_umount || kad_rc=1
	return "$kad_rc"
}

# zcow_overwrite_inline: zcow puts 3000 new bytes over the kernel's
# /l/l1/small (1111 bytes: the kernel stored them inline); zcow reads
# them back; the manifest follows.
zcow_overwrite_inline() {
	btrfs inspect-internal dump-tree -t fs "$DEV" |
		grep -m1 "inline extent data size 1111" ||
		{ echo "the kernel did not store /l/l1/small inline"; return 1; }
	head -c 3000 /dev/urandom >/tmp/compat-ow
	zcow put "$DEV" /tmp/compat-ow /l/l1/small || return 1
	cp /tmp/compat-ow /tmp/src-l/l/l1/small &&
		manifest /tmp/src-l >/dev/null || return 1
	rm -f "$GOT"
	zcow get "$DEV" /l/l1/small "$GOT" && cmp /tmp/compat-ow "$GOT" &&
		echo "/l/l1/small: zcow's 3000 bytes"
}

# zcow_refuses_write: `zcow put` on a file system with features zcow does
# not maintain must fail and say so (nothing written: btrfs check after).
zcow_refuses_write() {
	echo refused >/tmp/compat-refused
	if zcow put "$DEV" /tmp/compat-refused /refused 2>&1; then
		echo "zcow put succeeded: it must refuse"
		return 1
	fi
	zcow put "$DEV" /tmp/compat-refused /refused 2>&1 |
		grep -q "not maintained by zcow: mount read-only"
}

# kernel_refuses_seed: the mount fails and the kernel names the
# placement flag (1 << 56) as the reason.
kernel_refuses_seed() {
	ks_from=$(dmesg | wc -l)
	if mount -t btrfs "$DEV" "$MNT"; then
		echo "the kernel mounted it: the known difference is gone"
		umount "$MNT"
		return 1
	fi
	dmesg | tail -n +"$((ks_from + 1))" | grep BTRFS
	dmesg | tail -n +"$((ks_from + 1))" |
		grep -q "unsupported super flag: 72057594037927936"
}

# progs_mkfs FEATURES [MKFS_ARGS...]
progs_mkfs() {
	features=$1
	shift
	mkfs.btrfs -f -O "$features" "$@" -d single -m single "$DEV" &&
		btrfs inspect-internal dump-super "$DEV" |
		grep -E '^(generation|compat_ro_flags|incompat_flags)'
}

{
	echo "btrfs_progs=$(mkfs.btrfs --version 2>&1 | head -n1)"
	echo "kernel=$(uname -r)"
} >"$OUT/compat-setup.txt"
mkdir -p "$MNT"
make_files /tmp/src-z "$ZCOW_FILES" >/dev/null
make_files /tmp/src-k "$KERNEL_FILES" >/dev/null
make_files /tmp/src-p "$PROGS_FILES" >/dev/null
make_files /tmp/src-l "$LEAN_FILES" >/dev/null
echo zcow-second >/tmp/src-zcow2
head -c 9001 /dev/urandom >/tmp/src-zcow3

# 1. zcow makes and writes, the kernel reads and writes, zcow reads.
cstep zcow-mkfs "zcow mkfs --sb-placement kernel" \
	zcow mkfs "$DEV" --sb-placement kernel --label compat
cstep zcow-write "zcow mkdir + zcow put: 9 files, 0 B to 16 MiB, 3 levels of directories" \
	zcow_put_tree /tmp/src-z
cstep zcow-read "zcow get of zcow's files: sha256 equal" \
	zcow_verify /tmp/src-z.sha256
cstep zcow-check "zcow check --data on zcow's file system" \
	zcow check --data "$DEV"
cstep btrfs-check "btrfs check --readonly on zcow's file system" \
	btrfs check --readonly "$DEV"
cstep kernel-mount "mount -t btrfs (zcow's file system)" \
	with_dmesg kernel_mount
cstep kernel-read "kernel reads zcow's files: sha256 equal, no file more or less" \
	with_dmesg kernel_verify /tmp/src-z.sha256
cstep kernel-write "kernel writes 7 files in 3 levels of directories, appends to /z/d1/mib, sync" \
	with_dmesg kernel_write /tmp/src-k z/d1/mib
cstep kernel-umount "umount" \
	with_dmesg kernel_umount
cstep zcow-read-kernel "zcow get of the kernel's files and of zcow's (one appended by the kernel)" \
	zcow_verify /tmp/src-k.sha256 /tmp/src-z.sha256
cstep zcow-check-after "zcow check --data after the kernel's writes" \
	zcow check --data "$DEV"
cstep btrfs-check-after "btrfs check --readonly after the kernel's writes" \
	btrfs check --readonly "$DEV"
cstep zcow-write-after "zcow put onto the kernel-written file system" \
	zcow put "$DEV" /tmp/src-zcow2 /second-z
cstep kernel-read-again "kernel mounts again and reads every file, zcow's newest too" \
	with_dmesg kernel_read_again /second-z /tmp/src-z.sha256 /tmp/src-k.sha256

# 1b. snapshots, both ways.
cstep zcow-snapshot "zcow snapshot -r of the top level as /zsnap" \
	zcow snapshot "$DEV" / /zsnap -r
cstep zcow-write-after-snapshot "zcow put over /z/odd after the snapshot" \
	zcow put "$DEV" /tmp/src-zcow3 /z/odd
cstep zcow-check-snapshot "zcow check --data with the snapshot" \
	zcow check --data "$DEV"
cstep btrfs-check-snapshot "btrfs check --readonly with zcow's snapshot" \
	btrfs check --readonly "$DEV"
cstep kernel-snapshot "kernel: zcow's snapshot listed, read-only, as it was; the kernel snapshots /ksnap and writes after it" \
	with_dmesg kernel_snapshot_session
cstep zcow-read-kernel-snapshot "zcow subvol list shows both; zcow reads the kernel's snapshot" \
	zcow_read_ksnap
cstep zcow-delete-snapshot "zcow subvol delete zsnap (beside the kernel's snapshot)" \
	zcow subvol delete "$DEV" zsnap
cstep zcow-check-after-delete "zcow check --data after the delete" \
	zcow check --data "$DEV"
cstep btrfs-check-after-delete "btrfs check --readonly after zcow's delete" \
	btrfs check --readonly "$DEV"
cstep kernel-after-delete "kernel: zsnap gone, ksnap reads" \
	with_dmesg kernel_after_delete
cstep zcow-writable-snapshot "zcow snapshot (writable) /zw, zcow writes a file in it" \
	zcow_writable_snapshot
cstep kernel-writable-snapshot "kernel: /zw writable, zcow's file reads, the kernel writes one" \
	with_dmesg kernel_writable_session
cstep zcow-read-kernel-write "zcow reads the kernel's file in /zw" \
	zcow_read_kernel_write
cstep zcow-check-writable "zcow check --data with the writable snapshot" \
	zcow check --data "$DEV"
cstep btrfs-check-writable "btrfs check --readonly with the writable snapshot" \
	btrfs check --readonly "$DEV"

# 2. btrfs-progs' defaults: zcow may read but must not write.
cstep progs-mkfs "mkfs.btrfs -O zoned -d single -m single (defaults: free-space-tree, extref, no-holes)" \
	progs_mkfs zoned
cstep progs-kernel-write "kernel mounts, writes 4 files, unmounts" \
	with_dmesg kernel_write_session /tmp/src-p
cstep progs-zcow-read "zcow get (read-only mounts) of the kernel's files: sha256 equal" \
	zcow_verify /tmp/src-p.sha256
cstep progs-zcow-refuses-write "zcow put is refused (features zcow does not maintain)" \
	zcow_refuses_write
cstep progs-zcow-check "zcow check --data on the btrfs-progs file system" \
	zcow check --data "$DEV"
cstep progs-btrfs-check "btrfs check --readonly after zcow's reads" \
	btrfs check --readonly "$DEV"

# 3. btrfs-progs without the features zcow does not maintain: both write.
cstep lean-mkfs "mkfs.btrfs -O zoned,^extref -R ^free-space-tree -d single -m single" \
	progs_mkfs 'zoned,^extref' -R ^free-space-tree
cstep lean-kernel-write "kernel mounts, writes 4 files, unmounts" \
	with_dmesg kernel_write_session /tmp/src-l
cstep lean-zcow-read "zcow get of the kernel's files: sha256 equal" \
	zcow_verify /tmp/src-l.sha256
cstep lean-zcow-write "zcow put (read-write mount) onto the kernel's file system" \
	zcow put "$DEV" /tmp/src-zcow2 /second-l
cstep lean-zcow-write-inline "zcow put over a file the kernel stored inline (1111 bytes)" \
	zcow_overwrite_inline
cstep lean-zcow-check "zcow check --data" zcow check --data "$DEV"
cstep lean-btrfs-check "btrfs check --readonly after zcow's write" \
	btrfs check --readonly "$DEV"
cstep lean-kernel-read "kernel mounts again, reads the kernel's files and zcow's" \
	with_dmesg kernel_read_again /second-l /tmp/src-l.sha256

# 4. zcow's default superblock placement (mirrors at zones 16 and
# min(256G / zone size, 1024), superblock flag bit 56): the kernel refuses
# the flag, a known difference (docs/vm.md); zcow still reads its files.
cstep seed-mkfs "zcow mkfs (default --sb-placement seed)" \
	zcow mkfs "$DEV" --label compat-seed
cstep seed-zcow-write "zcow mkdir + zcow put of the same 9 files" \
	zcow_put_tree /tmp/src-z
cstep seed-kernel-refuses "mount -t btrfs is refused: unsupported super flag bit 56" \
	kernel_refuses_seed
cstep seed-zcow-read "zcow get of zcow's files after the kernel's refusal" \
	zcow_verify /tmp/src-z.sha256
cstep seed-btrfs-check "btrfs check --readonly (btrfs-progs accepts the flag)" \
	btrfs check --readonly "$DEV"
soft_step dmesg dmesg
finish
