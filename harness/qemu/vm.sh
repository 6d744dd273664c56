#!/usr/bin/env bash
# zcow VM regression runner: boot Debian's kernel under QEMU with an emulated
# NVMe ZNS namespace and run one scenario per boot inside (docs/vm.md).
#
#   harness/qemu/vm.sh [SCENARIO...]   default: smoke
#   harness/qemu/vm.sh install         only install the packages
#   harness/qemu/vm.sh check           exit 0 when a VM can run here, else
#                                      print why on stderr and exit 1
#
# Scenarios are harness/qemu/scenarios/NAME.sh; a "# vm: key=value ..." line
# in each gives the geometry and the time limit.  Each run writes
# results/<UTC time>-vm-<scenario>/ (guest.log, the guest's files,
# summary.json).  Environment:
#   ACCEL=tcg|kvm   accelerator (default tcg; KVM does not work on PVM hosts)
#   VM_TIMEOUT=S    override the scenario's time limit (host side)
#   VM_RESULTS=DIR  where result directories go (default results)
#   VM_SET="k=v ..." override geometry keys (zones zone_size zone_cap
#                   max_open max_active zasl mdts lbs zns2 zns2_zones
#                   zns2_zone_size zns2_zone_cap mem timeout) /
#                   pass zcow.k=v to the guest for any other key
#   VM_KEEP=1       keep the run's images under build-vm/
#   VM_NO_BUILD=1   use the existing build-static/zcow (no make static)
#   VM_SBLOG_NAME=N / VM_SBLOG_EXPORT=force
#                   the sblog vector's name in tests/data/kernel-sblog/
#                   (default v4-vm-cap-zone-switch); replace an existing one
# Exit status: 0 when every scenario passed, 1 otherwise, 2 usage.
set -euo pipefail
cd "$(dirname "$0")/../.."

ROOT=$PWD
QDIR=$ROOT/harness/qemu
WORK=$ROOT/build-vm
PACKAGES=(qemu-system-x86 linux-image-amd64 busybox-static fio btrfs-progs
	util-linux nvme-cli cpio kmod libzbd-dev zbd-utils dbench)
GUEST_BINS=(fio mkfs.btrfs btrfs blkzone blkdiscard nvme zbd dbench)
# Data files the guest binaries need (dbench's load file).
GUEST_FILES=(/usr/share/dbench/client.txt)
MODULES=(nvme btrfs fuse crc32c_generic crc32c_intel xxhash_generic blake2b_generic)

log() {
	echo "vm.sh: $*" >&2
}

die() {
	log "$*"
	exit 1
}

missing_packages() {
	local p
	for p in "${PACKAGES[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q 'install ok installed' || echo "$p"
	done
}

install() {
	local missing sudo=""
	mapfile -t missing < <(missing_packages)
	[ ${#missing[@]} -eq 0 ] && return 0
	log "installing ${missing[*]} (first time: about 70 s)"
	[ "$(id -u)" -ne 0 ] && sudo="sudo"
	export DEBIAN_FRONTEND=noninteractive
	timeout 300 $sudo apt-get update -qq >/dev/null ||
		log "apt-get update failed; trying the install anyway"
	timeout 900 $sudo apt-get install -y -qq --no-install-recommends \
		"${missing[@]}" >/dev/null
}

kernel_version() {
	local k
	k=$(find /boot -maxdepth 1 -name 'vmlinuz-*' -printf '%f\n' 2>/dev/null |
		sed 's/^vmlinuz-//' | sort -V | tail -n1)
	[ -n "$k" ] || return 1
	echo "$k"
}

# Why a VM cannot run here (empty when it can).
why_not() {
	local kver
	command -v qemu-system-x86_64 >/dev/null ||
		{ echo "qemu-system-x86_64 is not installed"; return; }
	kver=$(kernel_version) ||
		{ echo "no guest kernel /boot/vmlinuz-* (package linux-image-amd64)"; return; }
	[ -r "/boot/vmlinuz-$kver" ] ||
		{ echo "/boot/vmlinuz-$kver is not readable"; return; }
	[ -d "/lib/modules/$kver" ] ||
		{ echo "no /lib/modules/$kver for the guest kernel"; return; }
	[ -x /bin/busybox ] || { echo "busybox-static is not installed"; return; }
	command -v cpio >/dev/null || { echo "cpio is not installed"; return; }
	[ -e /usr/lib/x86_64-linux-gnu/libzbd.a ] ||
		{ echo "no libzbd.a (package libzbd-dev) for the static zcow"; return; }
	return 0
}

build_zcow() {
	if [ "${VM_NO_BUILD:-0}" = 1 ] && [ -x "$ROOT/build-static/zcow" ]; then
		log "VM_NO_BUILD=1: using the existing build-static/zcow"
		return 0
	fi
	log "building the static zcow (make static)"
	# Not a sub-make of a `make test` that runs the vm_suite.
	timeout 600 env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		make -s -j"$(nproc)" WERROR="${WERROR:-1}" static >&2 ||
		die "make static failed"
}

# Copy a file and its shared-library closure into the initramfs tree $1.
copy_with_libs() {
	local root=$1 bin=$2 lib
	cp -L --parents "$bin" "$root"
	while read -r lib; do
		[ -e "$root$lib" ] || cp -L --parents "$lib" "$root"
	done < <(ldd "$bin" 2>/dev/null | grep -o '/[^ ]*' | sort -u)
}

# Build (or reuse) the initramfs for kernel $1; prints its path.
build_initramfs() {
	local kver=$1 hash cpio tree bin path ko
	hash=$( {
		echo "$kver ${GUEST_BINS[*]} ${MODULES[*]}"
		cat "$QDIR/guest-init.sh" "$QDIR"/scenarios/*.sh "$0" \
			"$ROOT"/configs/*.fio "$ROOT"/configs/*.scenario \
			"$QDIR"/configs/*.fio "$QDIR"/configs/*.scenario
		sha256sum "$ROOT/build-static/zcow"
		for path in "${GUEST_FILES[@]}"; do
			[ -e "$path" ] && sha256sum "$path"
		done
		for bin in "${GUEST_BINS[@]}"; do
			path=$(command -v "$bin" || true)
			[ -n "$path" ] && sha256sum "$path"
		done
	} | sha256sum | cut -c1-16)
	cpio=$WORK/initramfs-$hash.cpio
	if [ -s "$cpio" ]; then
		log "initramfs cached: $cpio"
		echo "$cpio"
		return 0
	fi
	log "building the initramfs ($cpio)"
	tree=$WORK/initramfs-tree
	rm -rf "$tree"
	mkdir -p "$tree"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,mnt,out,scenarios}
	cp /bin/busybox "$tree/bin/busybox"
	for bin in $(/bin/busybox --list); do
		[ -e "$tree/bin/$bin" ] || ln -s busybox "$tree/bin/$bin"
	done
	for bin in "${GUEST_BINS[@]}"; do
		path=$(command -v "$bin" || true)
		if [ -z "$path" ]; then
			log "warning: $bin not found; not in the guest"
			continue
		fi
		copy_with_libs "$tree" "$path"
		[ -e "$tree/bin/$bin" ] || [ "$(dirname "$path")" = /bin ] ||
			ln -sf "$path" "$tree/bin/$bin"
	done
	for path in "${GUEST_FILES[@]}"; do
		if [ -e "$path" ]; then
			cp -L --parents "$path" "$tree"
		else
			log "warning: $path not found; not in the guest"
		fi
	done
	cp "$ROOT/build-static/zcow" "$tree/bin/zcow"
	cp "$QDIR/guest-init.sh" "$tree/init"
	chmod 755 "$tree/init"
	cp "$QDIR"/scenarios/*.sh "$tree/scenarios/"
	mkdir -p "$tree/configs"
	cp "$ROOT"/configs/*.fio "$ROOT"/configs/*.scenario "$tree/configs/" \
		2>/dev/null || true
	# The VM's own job files (harness/qemu/configs/).
	cp "$QDIR"/configs/*.fio "$QDIR"/configs/*.scenario "$tree/configs/" \
		2>/dev/null || true
	: >"$tree/modules.order"
	while read -r ko; do
		grep -qxF "$ko" "$tree/modules.order" && continue
		cp --parents "$ko" "$tree"
		echo "$ko" >>"$tree/modules.order"
	done < <(for ko in "${MODULES[@]}"; do
		modprobe -S "$kver" --show-depends "$ko" 2>/dev/null
	done | awk '$1 == "insmod" { print $2 }')
	[ -s "$tree/modules.order" ] || die "no kernel modules found for $kver"
	(cd "$tree" && find . -print0 | cpio --null -o -H newc --quiet) \
		>"$cpio.tmp"
	mv "$cpio.tmp" "$cpio"
	# Keep only this one cached image.
	find "$WORK" -maxdepth 1 -name 'initramfs-*.cpio' ! -path "$cpio" -delete
	rm -rf "$tree"
	echo "$cpio"
}

# Parse a size like 16M / 1G / 4096 into bytes.
bytes() {
	numfmt --from=iec "${1%B}"
}

# The "# vm:" settings of scenario $1, then VM_SET, as key=value lines.
scenario_settings() {
	sed -n 's/^# vm: //p' "$QDIR/scenarios/$1.sh" | tr ' ' '\n'
	echo "${VM_SET:-}" | tr ' ' '\n'
}

json_str() {
	python3 -c 'import json, sys; print(json.dumps(sys.argv[1]))' "$1"
}

run_scenario() {
	local name=$1 kver=$2 cpio=$3
	local zones=32 zone_size=16M zone_cap="" max_open=0 max_active=0 zasl=0
	local lbs=4096 mdts=7
	local timeout_s=300 mem=2048 extra=() kv key val zns2=0
	local zns2_zones="" zns2_zone_size="" zns2_zone_cap="" zns2_geo=""
	local stamp out run zns res qemu_pid rc=0 t0 t1 t_up="" qver

	while read -r kv; do
		[ -n "$kv" ] || continue
		key=${kv%%=*}
		val=${kv#*=}
		case "$key" in
		zones) zones=$val ;;
		zone_size) zone_size=$val ;;
		zone_cap) zone_cap=$val ;;
		max_open) max_open=$val ;;
		max_active) max_active=$val ;;
		zasl) zasl=$val ;;
		lbs) lbs=$val ;;
		mdts) mdts=$val ;;
		timeout) timeout_s=$val ;;
		mem) mem=$val ;;
		zns2) zns2=$val ;;
		zns2_zones) zns2_zones=$val ;;
		zns2_zone_size) zns2_zone_size=$val ;;
		zns2_zone_cap) zns2_zone_cap=$val ;;
		*) extra+=("zcow.$key=$val") ;;
		esac
	done < <(scenario_settings "$name")
	[ -n "${VM_TIMEOUT:-}" ] && timeout_s=$VM_TIMEOUT
	[ -n "$zone_cap" ] || zone_cap=$zone_size
	# The guest stops its scenario 30 s before the host kills QEMU, so that
	# the results still get out.
	local guest_timeout=$((timeout_s > 60 ? timeout_s - 30 : timeout_s))

	stamp=$(date -u +%Y%m%dT%H%M%SZ)
	out=${VM_RESULTS:-results}/$stamp-vm-$name
	mkdir -p "$out"
	run=$WORK/run-$stamp-$name
	mkdir -p "$run"
	zns=$run/zns.img
	res=$run/results.img
	truncate -s "$(($(bytes "$zone_size") * zones))" "$zns"
	truncate -s 256M "$res"

	local accel=${ACCEL:-tcg} cpu=max
	[ "$accel" = kvm ] && cpu=host
	local qemu=(qemu-system-x86_64 -machine q35 -accel "$accel" -cpu "$cpu"
		-smp 2 -m "$mem" -display none -monitor none -nodefaults
		-no-reboot -serial "file:$out/guest.log"
		-pidfile "$run/qemu.pid"
		-kernel "/boot/vmlinuz-$kver" -initrd "$cpio"
		-append "console=ttyS0 panic=-1 loglevel=4 rdinit=/init zcow.scenario=$name zcow.timeout=$guest_timeout ${extra[*]}"
		-device "nvme,id=nvme0,serial=zns0,mdts=$mdts,zoned.zasl=$zasl"
		-drive "file=$zns,id=zns,format=raw,if=none,cache=unsafe"
		-device "nvme-ns,drive=zns,bus=nvme0,nsid=1,logical_block_size=$lbs,physical_block_size=$lbs,zoned=true,zoned.zone_size=$zone_size,zoned.zone_capacity=$zone_cap,zoned.max_open=$max_open,zoned.max_active=$max_active"
		-drive "file=$res,id=res,format=raw,if=none,cache=unsafe"
		-device "nvme-ns,drive=res,bus=nvme0,nsid=2,logical_block_size=4096,physical_block_size=4096")
	# zns2=1: a second ZNS namespace (nsid 3, /dev/nvme0n3 in the guest:
	# DEV2), e.g. a device replace's target; of the same geometry unless
	# zns2_zones / zns2_zone_size / zns2_zone_cap say otherwise (limits
	# and LBA format are the first's)
	if [ "$zns2" = 1 ]; then
		[ -n "$zns2_zones" ] || zns2_zones=$zones
		if [ -z "$zns2_zone_size" ]; then
			zns2_zone_size=$zone_size
			[ -n "$zns2_zone_cap" ] || zns2_zone_cap=$zone_cap
		fi
		[ -n "$zns2_zone_cap" ] || zns2_zone_cap=$zns2_zone_size
		truncate -s "$(($(bytes "$zns2_zone_size") * zns2_zones))" "$run/zns2.img"
		zns2_geo=" zns2_zones=$zns2_zones zns2_zone_size=$zns2_zone_size zns2_zone_cap=$zns2_zone_cap"
		qemu+=(-drive "file=$run/zns2.img,id=zns2,format=raw,if=none,cache=unsafe"
			-device "nvme-ns,drive=zns2,bus=nvme0,nsid=3,logical_block_size=$lbs,physical_block_size=$lbs,zoned=true,zoned.zone_size=$zns2_zone_size,zoned.zone_capacity=$zns2_zone_cap,zoned.max_open=$max_open,zoned.max_active=$max_active")
	fi
	printf '%q ' "${qemu[@]}" >"$out/qemu-cmdline.txt"
	echo >>"$out/qemu-cmdline.txt"

	log "scenario $name: $zones zones of $zone_size (cap $zone_cap), max_open $max_open, max_active $max_active, zasl $zasl, mdts $mdts, lbs $lbs, timeout ${timeout_s}s -> $out"
	t0=$(date +%s.%N)
	timeout --kill-after=10 "$timeout_s" "${qemu[@]}" </dev/null \
		>"$run/qemu.out" 2>&1 &
	qemu_pid=$!
	# Note when the guest is up, for the boot time.
	while kill -0 "$qemu_pid" 2>/dev/null; do
		if [ -z "$t_up" ] && grep -q '=== ZCOW-VM: up' "$out/guest.log" 2>/dev/null; then
			t_up=$(date +%s.%N)
		fi
		sleep 0.2
	done
	wait "$qemu_pid" || rc=$?
	t1=$(date +%s.%N)
	# A QEMU that outlived its timeout (should not happen): kill it by PID.
	if [ -s "$run/qemu.pid" ] && kill -0 "$(cat "$run/qemu.pid")" 2>/dev/null; then
		log "QEMU still running after its timeout: killing PID $(cat "$run/qemu.pid")"
		kill -KILL "$(cat "$run/qemu.pid")" 2>/dev/null || true
	fi
	cat "$run/qemu.out" >>"$out/guest.log"
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		log "scenario $name: QEMU killed after ${timeout_s}s (hung guest)"
	fi
	mkdir -p "$out/guest"
	tar -xf "$res" -C "$out/guest" 2>/dev/null ||
		log "scenario $name: no results archive from the guest"

	local guest_rc=-1 status=fail
	[ -f "$out/guest/rc" ] && guest_rc=$(cat "$out/guest/rc")
	if grep -q "=== ZCOW-VM: done rc=0 " "$out/guest.log" && [ "$guest_rc" = 0 ]; then
		status=pass
	fi
	qver=$(qemu-system-x86_64 --version | head -n1)
	python3 "$QDIR/summarize.py" "$out" \
		--scenario "$name" --status "$status" --qemu "$qver" \
		--host-kernel "$kver" --qemu-rc "$rc" --t0 "$t0" --t-up "${t_up:-0}" \
		--t1 "$t1" --geometry "zones=$zones zone_size=$zone_size zone_cap=$zone_cap max_open=$max_open max_active=$max_active zasl=$zasl mdts=$mdts lbs=$lbs accel=$accel${zns2_geo}" \
		|| log "summarize.py failed"
	if [ "$name" = sblog ] && [ "$status" = pass ]; then
		export_sblog_vector "$out" "zones=$zones zone_size=$zone_size zone_cap=$zone_cap max_open=$max_open max_active=$max_active zasl=$zasl" "$qver" "$kver" ||
			status=fail
	fi
	[ "${VM_KEEP:-0}" = 1 ] || rm -rf "$run"
	log "scenario $name: $status (results in $out)"
	[ "$status" = pass ]
}

# After the sblog scenario: the exported superblock-log zones become a test
# vector in tests/data/kernel-sblog/ (only when that directory does not exist
# yet, or VM_SBLOG_EXPORT=force), picked up by tests/test_sb.c.
export_sblog_vector() {
	local out=$1 geometry=$2 qver=$3 kver=$4
	local name=${VM_SBLOG_NAME:-v4-vm-cap-zone-switch}
	local dst=$ROOT/tests/data/kernel-sblog/$name src=$out/guest/vector
	local gen commits states
	if [ ! -s "$src/expected-generation" ] || [ ! -s "$src/zones/0.bin" ]; then
		log "sblog: no vector exported by the guest"
		return 1
	fi
	gen=$(cat "$src/expected-generation")
	commits=$(sed -n 's/^commits=//p' "$out/guest/sblog-result.txt")
	states=$(head -n2 "$src/report.txt" |
		sed -n 's/.*cap \(0x[0-9a-f]*\), wptr \(0x[0-9a-f]*\).*zcond: *\([0-9]*([a-z]*)\).*/cap \1 wptr \2 zcond \3/p' |
		awk '{ printf "zone %d: %s; ", NR - 1, $0 }')
	cat >"$src/README" <<EOT
Captured by harness/qemu/vm.sh sblog (zcow's VM runner) from a real Linux kernel $kver (btrfs zoned code of 6.1) with $(btrfs --version 2>/dev/null | head -n1), running under QEMU ($qver, TCG) on an emulated NVMe ZNS namespace ($geometry; 4096-byte logical blocks; blkzone prints 512-byte sectors); made within one VM boot: mkfs.btrfs -f -O zoned -d single -m single /dev/nvme0n1, mount, $commits transaction commits (each one \`: > /mnt/fN; sync\`), umount. Everything was taken after umount: report.txt = blkzone report /dev/nvme0n1, dump-super.txt = btrfs inspect-internal dump-super -f /dev/nvme0n1 (generation $gen), zones/N.bin = the raw bytes of superblock-log zone N from its start to its write pointer, at most its capacity (dd, 4 KiB blocks, O_DIRECT). The zone capacity is below the zone size, so the log fills zone 0 up to its capacity and switches to zone 1. Superblock-log state: $states
EOT
	cp "$src/README" "$out/vector-README"
	if [ -e "$dst" ] && [ "${VM_SBLOG_EXPORT:-}" != force ]; then
		log "sblog: $dst exists; not replaced (VM_SBLOG_EXPORT=force replaces it); this run's vector is in $src"
		return 0
	fi
	rm -rf "$dst"
	mkdir -p "$dst"
	cp -r "$src/README" "$src/report.txt" "$src/dump-super.txt" \
		"$src/expected-generation" "$src/zones" "$dst/"
	log "sblog: test vector written to $dst (generation $gen)"
}

main() {
	local scenarios=("$@") kver cpio failed=0 s why
	[ ${#scenarios[@]} -eq 0 ] && scenarios=(smoke)
	case "${scenarios[0]}" in
	install)
		install
		return
		;;
	check)
		why=$(why_not)
		[ -z "$why" ] && return 0
		echo "$why" >&2
		return 1
		;;
	-h | --help)
		sed -n '2,/^set -euo/p' "$0" | grep '^#' | cut -c3-
		return 0
		;;
	esac
	for s in "${scenarios[@]}"; do
		if [ ! -f "$QDIR/scenarios/$s.sh" ] || [ "$s" = lib ]; then
			log "unknown scenario '$s' (have: $(find "$QDIR/scenarios" -name '*.sh' ! -name lib.sh -printf '%f ' | sed 's/\.sh//g'))"
			exit 2
		fi
	done
	install || log "install failed"
	why=$(why_not)
	[ -z "$why" ] || die "cannot run a VM here: $why"
	mkdir -p "$WORK"
	build_zcow
	kver=$(kernel_version)
	cpio=$(build_initramfs "$kver")
	for s in "${scenarios[@]}"; do
		run_scenario "$s" "$kver" "$cpio" || failed=$((failed + 1))
	done
	[ "$failed" -eq 0 ]
}

main "$@"
