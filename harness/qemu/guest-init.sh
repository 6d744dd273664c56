#!/bin/sh
# PID 1 of the zcow VM (busybox ash): mount the pseudo file systems, load the
# nvme and btrfs modules, run one scenario on /dev/nvme0n1, write everything
# under /out as a tar archive onto the results namespace /dev/nvme0n2 and
# power off.  Parameters come from the kernel command line:
#   zcow.scenario=NAME  zcow.timeout=SECONDS  zcow.<key>=<value> (exported to
#   the scenario as ZCOW_<KEY>).  Console markers: "=== ZCOW-VM: ...".
# shellcheck shell=dash
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /tmp /mnt /out /run
mount -t tmpfs tmpfs /tmp

SCENARIO=
GUEST_TIMEOUT=600
read -r cmdline </proc/cmdline
for word in $cmdline; do
	case "$word" in
	zcow.scenario=*) SCENARIO=${word#zcow.scenario=} ;;
	zcow.timeout=*) GUEST_TIMEOUT=${word#zcow.timeout=} ;;
	zcow.*=*)
		kv=${word#zcow.}
		key=$(echo "${kv%%=*}" | tr 'a-z.-' 'A-Z__')
		export "ZCOW_$key=${kv#*=}"
		;;
	esac
done
echo "=== ZCOW-VM: init uptime=$(cut -d' ' -f1 /proc/uptime) scenario=$SCENARIO"

while read -r ko; do
	insmod "$ko" 2>/dev/null || echo "init: insmod $ko failed"
done </modules.order

i=0
while [ ! -b /dev/nvme0n1 ] || [ ! -b /dev/nvme0n2 ]; do
	i=$((i + 1))
	if [ "$i" -gt 300 ]; then
		echo "=== ZCOW-VM: no /dev/nvme0n1 or /dev/nvme0n2 after 30 s"
		ls /dev >&2
		poweroff -f
	fi
	sleep 0.1
done
echo "=== ZCOW-VM: up uptime=$(cut -d' ' -f1 /proc/uptime)"

{
	echo "kernel=$(uname -r)"
	echo "uptime_at_run=$(cut -d' ' -f1 /proc/uptime)"
	for a in zoned nr_zones chunk_sectors max_open_zones max_active_zones \
		zone_append_max_bytes logical_block_size physical_block_size \
		max_sectors_kb max_hw_sectors_kb max_segments \
		max_segment_size dma_alignment virt_boundary_mask \
		scheduler; do
		echo "$a=$(cat /sys/block/nvme0n1/queue/$a 2>/dev/null)"
	done
} >/out/guest-info.txt

rc=0
start=$(cut -d' ' -f1 /proc/uptime)
if [ -f "/scenarios/$SCENARIO.sh" ]; then
	echo "=== ZCOW-VM: run $SCENARIO (timeout ${GUEST_TIMEOUT}s)"
	(
		cd /out || exit 1
		DEV=/dev/nvme0n1 DEV2=/dev/nvme0n3 OUT=/out timeout "$GUEST_TIMEOUT" \
			sh "/scenarios/$SCENARIO.sh"
		echo $? >/out/rc
	) 2>&1 | tee /out/scenario.log
	rc=$(cat /out/rc 2>/dev/null || echo 125)
else
	echo "=== ZCOW-VM: unknown scenario '$SCENARIO'"
	rc=2
fi
end=$(cut -d' ' -f1 /proc/uptime)
echo "run_seconds=$(echo "$start $end" | awk '{ printf "%.2f", $2 - $1 }')" \
	>>/out/guest-info.txt
echo "$rc" >/out/rc
sync
tar -cf /dev/nvme0n2 -C /out . && sync
echo "=== ZCOW-VM: done rc=$rc uptime=$(cut -d' ' -f1 /proc/uptime)"
poweroff -f
