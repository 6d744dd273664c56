#!/bin/sh
# SPDX-License-Identifier: MIT
# fuzz/seeds.sh SEEDS_BIN DIR: generate the seed corpora of every harness
# into DIR/<harness>/ (run from the repository root):
#   image     zsim images made by mkfs + small workloads (SEEDS_BIN)
#   sblog     superblock-log layouts (SEEDS_BIN)
#   scenario  configs/*.scenario, configs/*.fio, configs/fio-examples/*
#   devspec   the spec examples of docs/device-spec.md, paths removed
# Seeds are generated, never committed; tests/corpus/ holds the small
# regression inputs.
set -eu
bin=$1
dir=$2
mkdir -p "$dir/image" "$dir/sblog" "$dir/scenario" "$dir/devspec"
"$bin" "$dir"
for f in configs/*.scenario configs/*.fio configs/fio-examples/*; do
	[ -f "$f" ] && cp "$f" "$dir/scenario/"
done
n=0
for s in \
	'sim:' \
	'sim:zones=64,zone_size=64M,zone_cap=48M,conv=2,max_open=14,max_active=14,lba=4096,max_append=512K,seed=7' \
	'sim:zones=256,zone_size=4M' \
	'sim:zones=8,zone_size=4M,zone_cap=1M,auto_close=off' \
	'sim:zones=8,zone_size=4M,image=fuzz.img' \
	'sim:zones=4,zone_size=1M,lba=512,data=off' \
	'sim:import=nosuchdir' \
	'file:zcow.img,zone_size=4M,size=64M' \
	'file:zcow.img,zone_size=1M,size=8M,lba=512,create' \
	'nosuch:x=1'; do
	n=$((n + 1))
	printf '%s' "$s" > "$dir/devspec/seed-$n"
done
