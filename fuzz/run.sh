#!/bin/sh
# SPDX-License-Identifier: MIT
# fuzz/run.sh HARNESS...: run each libFuzzer harness for FUZZ_TIME seconds
# (default 60), FUZZ_JOBS of them at once (default 2), from fresh seeds.
# Results in results/fuzz-<UTC stamp>/<harness>/: corpus/ (what libFuzzer
# kept), artifacts (crash-*, leak-*, timeout-*, oom-*), log, and a
# summary.txt with execs, exec/s, coverage and artifacts per harness.
# Environment: FUZZ_BUILD (build-fuzz), SEEDS_BIN (build/zfuzz-seeds),
# FUZZ_OPTS (more libFuzzer flags), FUZZ_RESULTS (results), FUZZ_RESUME
# (an earlier results/fuzz-<stamp> folder: its corpora seed this run too).
# libFuzzer runs in fork mode and keeps going after a crash, a leak, an
# out-of-memory or a timeout, so one run finds more than the first.
set -eu
time=${FUZZ_TIME:-60}
jobs=${FUZZ_JOBS:-2}
fbuild=${FUZZ_BUILD:-build-fuzz}
seeds_bin=${SEEDS_BIN:-build/zfuzz-seeds}
out=$(realpath -m "${FUZZ_RESULTS:-results}")/fuzz-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out/seeds"
fuzz/seeds.sh "$seeds_bin" "$out/seeds"

one() {
	h=$1
	d=$out/$h
	mkdir -p "$d/corpus"
	# -timeout: one input taking 10 s is a hang; rss 2 GiB is an OOM.
	nice -n 10 "$fbuild/fuzz/fuzz_$h" -max_total_time="$time" \
		-timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1048576 \
		-max_len=1048576 \
		-fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1 \
		-print_final_stats=1 -artifact_prefix="$d/" \
		${FUZZ_OPTS:-} "$d/corpus" "$out/seeds/$h" \
		${FUZZ_RESUME:+"$FUZZ_RESUME/$h/corpus"} > "$d/log" 2>&1 ||
		echo "$h: stopped with an artifact (see $d/log)" >&2
	# CPU of this subshell's children: the fuzzer and its fork jobs.
	times > "$d/cputime"
}

running=0
for h in "$@"; do
	one "$h" &
	running=$((running + 1))
	if [ "$running" -ge "$jobs" ]; then
		wait
		running=0
	fi
done
wait

{
	printf 'FUZZ_TIME=%s s (wall) per harness; exec/s per CPU second\n' \
		"$time"
	printf '%-9s %8s %10s %8s %6s %6s %s\n' harness cpu-s execs exec/s \
		cov ft 'oom/timeout/crash'
	for h in "$@"; do
		d=$out/$h
		# fork mode: "#EXECS: cov: C ft: F corp: N exec/s R
		# oom/timeout/crash: O/T/X time: ..."
		last=$(grep -E '^#[0-9]+: cov:' "$d/log" | tail -1)
		execs=$(echo "$last" | sed -n 's/^#\([0-9]*\):.*/\1/p')
		cov=$(echo "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
		ft=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
		otc=$(echo "$last" |
		      sed -n 's/.*oom\/timeout\/crash: \([0-9/]*\).*/\1/p')
		# "1m2.50s 0m3.25s": user and system
		cpu=$(tail -1 "$d/cputime" | awk '{ n = 0
			for (i = 1; i <= 2; i++) {
				split($i, a, /[ms]/); n += a[1] * 60 + a[2] }
			printf "%d", n }')
		rate=$(( ${execs:-0} / (${cpu:-0} > 0 ? ${cpu:-1} : 1) ))
		printf '%-9s %8s %10s %8s %6s %6s %s\n' "$h" "${cpu:-?}" \
			"${execs:-?}" "$rate" "${cov:-?}" "${ft:-?}" "${otc:-?}"
	done
} > "$out/summary.txt"
cat "$out/summary.txt"
echo "results: $out"
