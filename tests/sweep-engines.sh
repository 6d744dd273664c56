#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# harness/sweep.py's engines against each other (tests/test_sweep.c):
#   tests/sweep-engines.sh ZCOW parallel
#       a 4-point sweep with --engine local and --engine parallel -j2: the
#       same folders, the same summary.json but for the wall-clock fields,
#       the same intervals.csv; plot.py on the parallel folder; a rerun
#       after a lost summary.json runs that one point again.  A quick crash
#       campaign as 4 shards (harness/campaign.py), local and parallel,
#       merged: the whole campaign's crash.csv and crash.json.
#   tests/sweep-engines.sh ZCOW slurm
#       a one-node Slurm cluster on localhost (munged, slurmctld, slurmd
#       from Debian's munge and slurm-wlm, everything in a temp dir), the
#       same sweep as one array job (--engine slurm --wait), compared with
#       the local run.  Exit status 77 when the cluster cannot start here,
#       the reason and the daemons' log tails on stderr.
# Everything it starts it stops, and the temp dir goes, on every exit.
set -euo pipefail
cd "$(dirname "$0")/.."

zcow=$(realpath "$1")
mode=$2
tmp=$(mktemp -d /tmp/zcow-sweep.XXXXXX)
chmod 755 "$tmp"
SWEEP=(configs/raw-randwrite-4k.scenario --set runtime=20ms
	--grid numjobs=1,4 zone_append=on,off)

pids=()
cleanup() {
	local f p
	for f in "$tmp"/slurmd.pid "$tmp"/slurmctld.pid "$tmp"/munge/pid; do
		[ -s "$f" ] && pids+=("$(cat "$f")")
	done
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	for p in "${pids[@]}"; do
		# wait for each to go (slurmd's children: its job steps)
		for _ in $(seq 50); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$p" 2>/dev/null || true
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
	echo "sweep-engines: $*" >&2
	exit 1
}

# summary.json without its wall-clock fields
nowall() {
	sed -e '/"wall_time_s": [0-9.]*,$/d' \
		-e 's/, "wall_time_s": [0-9.]*//' "$1"
}

# same() A B: the two sweep folders hold the same points and results
same() {
	local a=$1 b=$2 d n count=0
	for d in "$a"/*/; do
		d=${d%/}
		n=${d##*/}
		[ -f "$d/summary.json" ] || continue
		[ -f "$b/$n/summary.json" ] || fail "$b/$n: no summary.json"
		diff <(nowall "$d/summary.json") \
			<(nowall "$b/$n/summary.json") >&2 ||
			fail "$a/$n and $b/$n: summary.json differs"
		cmp "$d/intervals.csv" "$b/$n/intervals.csv" >&2 ||
			fail "$a/$n and $b/$n: intervals.csv differs"
		count=$((count + 1))
	done
	[ "$count" = 4 ] || fail "$a: $count points, want 4"
	[ "$(ls "$b" | grep -c -- '-numjobs=')" = 4 ] ||
		fail "$b: not 4 points"
	# sweep.csv: the same points in the same order
	diff <(sed "s|$a/||" "$a/sweep.csv") <(sed "s|$b/||" "$b/sweep.csv") >&2 ||
		fail "sweep.csv differs"
}

CAMPAIGN=(configs/crash-ops-atomic.scenario --quick)

# crash.json without its wall-clock lines, its paths without their folder
# (other engines run the scenario by its absolute path or a staged copy)
crashjson() {
	grep -v '"seconds"\|"states_per_minute"' "$1" |
		sed -E 's|^(  "(scenario\|ops_file)": ")[^"]*/|\1|'
}

# campaign NAME ENGINE-OPTION...: the campaign as 4 shards, merged, is
# the whole campaign (crash.json but for its wall-clock lines)
campaign() {
	local name=$1 merged
	shift
	python3 harness/campaign.py --zcow "$zcow" --results "$tmp/c-$name" \
		--shards 4 "$@" "${CAMPAIGN[@]}" >"$tmp/c-$name.out" \
		2>"$tmp/c-$name.err" ||
		fail "campaign $name: $(cat "$tmp/c-$name.err" "$tmp"/c-"$name"/.campaign-*/slurm-*.out 2>/dev/null)"
	merged=$(sed -n 's/^results: //p' "$tmp/c-$name.out")
	[ -d "$merged" ] || fail "campaign $name: no merged folder"
	[ "$(ls -d "$tmp/c-$name"/crash-ops-atomic-quick-shard-[1-4]-of-4/*/ | wc -l)" = 4 ] ||
		fail "campaign $name: not 4 shard folders"
	cmp "$tmp/whole/crash.csv" "$merged/crash.csv" >&2 ||
		fail "campaign $name: crash.csv differs from the whole run's"
	diff <(crashjson "$tmp/whole/crash.json") <(crashjson "$merged/crash.json") >&2 ||
		fail "campaign $name: crash.json differs from the whole run's"
	grep -q "^campaign: 4/4 shards done" "$tmp/c-$name.err" ||
		fail "campaign $name: no progress line"
}

mkdir "$tmp/w"
"$zcow" crash "${CAMPAIGN[@]}" --results "$tmp/w" >/dev/null ||
	fail "the whole campaign failed"
mv "$tmp"/w/*/ "$tmp/whole"

python3 harness/sweep.py --zcow "$zcow" --results "$tmp/local" "${SWEEP[@]}" \
	>"$tmp/local.out" 2>"$tmp/local.err" || fail "local: $(cat "$tmp/local.err")"
[ "$(grep -c . "$tmp/local.out")" = 4 ] || fail "local: not 4 folders"
tail -n 1 "$tmp/local.err" | grep -qx 'sweep: 4/4 points done (0 skipped), ETA 0:00:00' ||
	fail "local: progress line: $(tail -n 1 "$tmp/local.err")"
# -j and --array-limit: refused outside their engine, 0 refused in it
for bad in "-j 0" "--engine parallel -j 0" "--array-limit 0" \
	"--engine slurm --shared $tmp/sh --dry-run --array-limit 0"; do
	# shellcheck disable=SC2086
	rc=0
	python3 harness/sweep.py --zcow "$zcow" --results "$tmp/no" $bad \
		"${SWEEP[@]}" >/dev/null 2>"$tmp/no.err" || rc=$?
	[ "$rc" = 2 ] && grep -q "^usage: " "$tmp/no.err" && [ ! -e "$tmp/no" ] ||
		fail "sweep.py $bad: not refused: $(cat "$tmp/no.err")"
done

if [ "$mode" = parallel ]; then
	python3 harness/sweep.py --engine parallel -j2 --zcow "$zcow" \
		--results "$tmp/par" "${SWEEP[@]}" >"$tmp/par.out" 2>"$tmp/par.err" ||
		fail "parallel: $(cat "$tmp/par.err")"
	same "$tmp/local" "$tmp/par"
	# plot.py reads both folders to the same tables
	for e in local par; do
		python3 harness/plot.py --out "$tmp/plot-$e" --x numjobs \
			--series zone_append "$tmp/$e" >/dev/null ||
			fail "plot.py on the $e folder"
	done
	[ "$(grep -c '^| [14] |' "$tmp/plot-par/table.md")" = 4 ] ||
		fail "plot.py: table.md has not 4 runs"
	cmp "$tmp/plot-local/table.md" "$tmp/plot-par/table.md" >&2 ||
		fail "plot.py: the tables differ"
	cmp "$tmp/plot-local/curve.csv" "$tmp/plot-par/curve.csv" >&2 ||
		fail "plot.py: the curves differ"
	# resume: one point's summary lost (a node died), one cut short
	p1=$(ls -d "$tmp"/par/*numjobs=1-zone_append=on)
	p4=$(ls -d "$tmp"/par/*numjobs=4-zone_append=off)
	rm "$p1/summary.json"
	head -c 100 "$p4/summary.json" >"$tmp/cut" && mv "$tmp/cut" "$p4/summary.json"
	touch -d '2000-01-01' "$tmp"/par/*/summary.json
	# GNU parallel's ":" is this host without ssh
	echo ":" >"$tmp/hosts"
	python3 harness/sweep.py --engine parallel -j2 --sshloginfile "$tmp/hosts" \
		--zcow "$zcow" --results "$tmp/par" "${SWEEP[@]}" >/dev/null 2>"$tmp/par2.err" ||
		fail "parallel rerun: $(cat "$tmp/par2.err")"
	tail -n 1 "$tmp/par2.err" | grep -qx 'sweep: 4/4 points done (2 skipped), ETA 0:00:00' ||
		fail "parallel rerun: $(tail -n 1 "$tmp/par2.err")"
	# the two complete points were left alone
	[ "$(find "$tmp"/par -name summary.json -newermt '2001-01-01' | wc -l)" = 2 ] ||
		fail "the rerun ran other points than the two incomplete ones"
	same "$tmp/local" "$tmp/par"
	campaign local
	campaign parallel --engine parallel -j2
	# a point that fails fails the sweep, naming it; no sweep.csv
	if python3 harness/sweep.py --engine parallel -j2 --zcow "$zcow" \
		--results "$tmp/bad" --set no_such_key=1 "${SWEEP[@]}" \
		>"$tmp/bad.out" 2>"$tmp/bad.err"; then
		fail "a sweep with an unknown key succeeded"
	fi
	grep -q "^sweep: failed (GNU parallel's job log" "$tmp/bad.err" ||
		fail "failed sweep: $(cat "$tmp/bad.err")"
	[ "$(grep -c "^exit 1 signal 0: .* --set no_such_key=1 " "$tmp/bad.err")" = 4 ] ||
		fail "failed sweep: not 4 failed points: $(cat "$tmp/bad.err")"
	[ ! -s "$tmp/bad.out" ] && [ ! -e "$tmp/bad/sweep.csv" ] ||
		fail "failed sweep: wrote a folder list"
	echo ok
	exit 0
fi

[ "$mode" = slurm ] || fail "mode $mode: want parallel or slurm"

skip() {
	local f
	{
		echo "SLURM CLUSTER DID NOT START: $*"
		for f in "$tmp"/munge/log "$tmp"/log/slurmctld.log "$tmp"/log/slurmd.log; do
			[ -f "$f" ] || continue
			echo "--- tail of ${f##*/}:"
			tail -n 15 "$f"
		done
	} >&2
	exit 77
}

for b in munged munge slurmctld slurmd sbatch sinfo; do
	command -v "$b" >/dev/null || skip "$b is not installed (./run.sh installs slurm-wlm and munge)"
done
[ "$(id -u)" = 0 ] || skip "not root: slurmd and SlurmUser=root need root here"

# munge: its own key, socket, pid and log in the temp dir
mkdir -p "$tmp/munge" "$tmp/key" "$tmp/state" "$tmp/spool" "$tmp/log" "$tmp/shared"
chmod 755 "$tmp/munge"
chmod 700 "$tmp/key"
dd if=/dev/urandom of="$tmp/key/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$tmp/key/munge.key"
munged --force --key-file="$tmp/key/munge.key" --socket="$tmp/munge/sock" \
	--pid-file="$tmp/munge/pid" --log-file="$tmp/munge/log" \
	--seed-file="$tmp/munge/seed" || skip "munged did not start"
munge -S "$tmp/munge/sock" -n | unmunge -S "$tmp/munge/sock" >/dev/null ||
	skip "munge cannot encode and decode a credential"

# two free TCP ports for slurmctld and slurmd
read -r cport dport < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s:
    x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
host=$(hostname -s)
mem=$(awk '/^MemTotal:/ { print int($2 / 1024 / 2) }' /proc/meminfo)
export SLURM_CONF="$tmp/slurm.conf"
cat >"$SLURM_CONF" <<EOF
ClusterName=zcowtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$cport
SlurmdPort=$dport
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge/sock
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
NodeName=$host NodeAddr=127.0.0.1 CPUs=2 RealMemory=$mem State=UNKNOWN
PartitionName=zcow Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -i -f "$SLURM_CONF" || skip "slurmctld did not start"
slurmd -f "$SLURM_CONF" -N "$host" || skip "slurmd did not start"
state=
for _ in $(seq 60); do
	state=$(sinfo -h -N -o %t 2>/dev/null || true)
	[ "$state" = idle ] && break
	sleep 0.5
done
[ "$state" = idle ] || skip "the node is not idle after 30 s (sinfo: '${state:-nothing}')"

python3 harness/sweep.py --engine slurm --shared "$tmp/shared" --dry-run \
	--zcow "$zcow" --results "$tmp/slurm" "${SWEEP[@]}" >"$tmp/dry.out" ||
	fail "slurm --dry-run"
grep -qx '#SBATCH --array=0-3' "$tmp/dry.out" || fail "dry run: no --array=0-3"
[ ! -e "$tmp/slurm" ] || fail "dry run: wrote $tmp/slurm"
[ -z "$(squeue -h)" ] || fail "dry run: submitted a job"

# submitted held, without --wait: a rerun while it is queued is refused;
# released and done, a rerun lists the folders
python3 harness/sweep.py --engine slurm --shared "$tmp/shared" \
	--sbatch-arg=--hold --zcow "$zcow" --results "$tmp/slurm" "${SWEEP[@]}" \
	>"$tmp/slurm.out" 2>"$tmp/slurm.err" || fail "slurm: $(cat "$tmp/slurm.err")"
job=$(sed -n 's/^sweep: submitted job \([0-9]*\) (4 array tasks); .*/\1/p' "$tmp/slurm.err")
[ -n "$job" ] && [ ! -s "$tmp/slurm.out" ] || fail "slurm: submit: $(cat "$tmp/slurm.err")"
if python3 harness/sweep.py --engine slurm --shared "$tmp/shared" \
	--zcow "$zcow" --results "$tmp/slurm" "${SWEEP[@]}" 2>"$tmp/slurm.err"; then
	fail "slurm: a rerun while the job is queued went ahead"
fi
grep -q "^sweep: job $job (zcow-raw-randwrite-4k-set233662f2) is still queued or running" \
	"$tmp/slurm.err" || fail "slurm: rerun while queued: $(cat "$tmp/slurm.err")"
scontrol release "$job"
for _ in $(seq 120); do
	[ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && break
	sleep 0.5
done
[ -z "$(squeue -h -j "$job" 2>/dev/null)" ] || fail "slurm: job $job still queued after 60 s"
python3 harness/sweep.py --engine slurm --shared "$tmp/shared" \
	--zcow "$zcow" --results "$tmp/slurm" "${SWEEP[@]}" \
	>"$tmp/slurm.out" 2>"$tmp/slurm.err" ||
	fail "slurm: $(cat "$tmp/slurm.err" "$tmp"/slurm/.sweep-*/slurm-*.out 2>/dev/null)"
[ "$(grep -c . "$tmp/slurm.out")" = 4 ] || fail "slurm: not 4 folders listed"
[ "$(ls "$tmp"/slurm/.sweep-*/slurm-"${job}"_[0-3].out | wc -l)" = 4 ] ||
	fail "slurm: not 4 array tasks"
cmp "$tmp/shared/bin/zcow" "$zcow" || fail "slurm: zcow not staged"
same "$tmp/local" "$tmp/slurm"
# resume with --wait: one point lost, one array task
rm "$(ls -d "$tmp"/slurm/*numjobs=4-zone_append=on)/summary.json"
python3 harness/sweep.py --engine slurm --shared "$tmp/shared" --wait \
	--zcow "$zcow" --results "$tmp/slurm" "${SWEEP[@]}" \
	>"$tmp/slurm.out" 2>"$tmp/slurm.err" ||
	fail "slurm --wait: $(cat "$tmp/slurm.err" "$tmp"/slurm/.sweep-*/slurm-*.out 2>/dev/null)"
grep -qx '#SBATCH --array=0-0' "$tmp"/slurm/.sweep-*/job.sbatch ||
	fail "slurm --wait: not one array task"
tail -n 1 "$tmp/slurm.err" | grep -qx 'sweep: 4/4 points done (3 skipped), ETA 0:00:00' ||
	fail "slurm --wait: $(tail -n 1 "$tmp/slurm.err")"
same "$tmp/local" "$tmp/slurm"
same "$tmp/local" "$tmp/slurm"
# failing tasks fail the sweep, naming them and the task logs
if python3 harness/sweep.py --engine slurm --shared "$tmp/shared" --wait \
	--zcow "$zcow" --results "$tmp/sbad" --set no_such_key=1 "${SWEEP[@]}" \
	>"$tmp/sbad.out" 2>"$tmp/sbad.err"; then
	fail "slurm: a sweep with an unknown key succeeded"
fi
grep -q "^sweep: job [0-9]* ended with 4 task(s) failed and 4 not done (task logs $tmp/sbad/.sweep-" \
	"$tmp/sbad.err" || fail "slurm: failed sweep: $(cat "$tmp/sbad.err")"
grep -q "^task 3: exit 1: $tmp/sbad/raw-randwrite-4k-set[0-9a-f]*-numjobs=4-zone_append=off\$" \
	"$tmp/sbad.err" || fail "slurm: failed task 3: $(cat "$tmp/sbad.err")"
grep -q "option 'no_such_key': unknown option" "$tmp"/sbad/.sweep-*/slurm-*_3.out ||
	fail "slurm: failed task's log"
[ ! -s "$tmp/sbad.out" ] || fail "slurm: failed sweep listed folders"
campaign slurm --engine slurm --shared "$tmp/shared" --wait
[ "$(ls "$tmp"/c-slurm/.campaign-*/slurm-*_[0-3].out | wc -l)" = 4 ] ||
	fail "campaign slurm: not 4 array tasks"
echo ok
