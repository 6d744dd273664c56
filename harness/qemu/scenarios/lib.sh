# Helpers for the scenarios (sourced by busybox ash inside the VM).
#   step NAME CMD...      run CMD, output to $OUT/NAME.txt (and the console),
#                         one line "NAME rc SECONDS" in $OUT/steps.txt; a
#                         failing step makes the scenario fail
#   soft_step NAME CMD... the same, but a failure is only recorded
#   finish                exit 0 when every step passed
# shellcheck shell=dash
STEPS_FAILED=0

now() {
	cut -d' ' -f1 /proc/uptime
}

# elapsed T0 T1: the seconds from now() T0 to now() T1, two decimals.
elapsed() {
	echo "$1 $2" | awk '{ printf "%.2f", $2 - $1 }'
}

run_step() {
	name=$1
	shift
	t0=$(now)
	echo "--- step $name: $*"
	"$@" >"$OUT/$name.txt" 2>&1
	step_rc=$?
	t1=$(now)
	cat "$OUT/$name.txt"
	secs=$(elapsed "$t0" "$t1")
	echo "$name $step_rc $secs" >>"$OUT/steps.txt"
	echo "--- step $name: rc=$step_rc ${secs}s"
	return $step_rc
}

step() {
	run_step "$@" || STEPS_FAILED=$((STEPS_FAILED + 1))
}

soft_step() {
	run_step "$@" || true
}

# zcow_fs_run NAME [--set k=v ...]: `zcow run /configs/NAME.scenario` with
# the file-system target on $DEV (mkfs + mount + the jobs on files +
# unmount), results under $OUT/zrun/.
zcow_fs_run() {
	fsname=$1
	shift
	zcow run "/configs/$fsname.scenario" --set "device=$DEV" \
		--results "$OUT/zrun" "$@"
}

# put_get_roundtrip: a file through the fs and back, across an unmount.
put_get_roundtrip() {
	zcow put "$DEV" /bin/zcow /vm-roundtrip.bin &&
		zcow mount "$DEV" &&
		zcow get "$DEV" /vm-roundtrip.bin /tmp/vm-roundtrip.bin &&
		cmp /bin/zcow /tmp/vm-roundtrip.bin &&
		echo "roundtrip: $(wc -c </tmp/vm-roundtrip.bin) bytes identical"
	rt_rc=$?
	rm -f /tmp/vm-roundtrip.bin
	return $rt_rc
}

finish() {
	echo "--- scenario: $STEPS_FAILED failed step(s)"
	[ "$STEPS_FAILED" -eq 0 ]
	exit $?
}
