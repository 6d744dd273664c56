#!/bin/sh
# Record `git init`, `git add`, `git commit` of a small tree on a zcow
# FUSE mount (docs/fuse.md) as a recorded-operations file
# (docs/ops-format.md), for `zcow crash --ops FILE` (docs/crash.md).
#
#   configs/ops/record-git.sh build/zcow configs/ops/git-commit.ops
#   GITOPTS="-c core.fsync=all -c core.fsyncMethod=fsync" \
#       configs/ops/record-git.sh build/zcow configs/ops/git-commit-fsync.ops
#
# Needs /dev/fuse, fusermount3 and git; the file system is a fresh
# simulated device kept in a temporary image.  Fixed author, committer
# and dates, so a second recording differs only in git's temporary names.
set -e
case $1 in /*) Z=$1 ;; *) Z=$PWD/$1 ;; esac
case $2 in /*) OUT=$2 ;; *) OUT=$PWD/$2 ;; esac
TMP=$(mktemp -d /tmp/zcow-record-git-XXXXXX)
IMG=$TMP/fs.img
MNT=$TMP/mnt
mkdir "$MNT"
"$Z" mkfs sim:image="$IMG",zones=64,zone_size=4M >/dev/null
"$Z" fuse sim:image="$IMG" "$MNT" --record "$OUT"
rc=0
(
	cd "$MNT"
	mkdir proj && cd proj
	printf 'A small project.\n' > README
	mkdir src
	printf 'int main(void)\n{\n\treturn 0;\n}\n' > src/main.c
	printf 'all:\n\tcc -o hello src/main.c\n' > Makefile
	export GIT_AUTHOR_DATE='2025-01-01T00:00:00Z'
	export GIT_COMMITTER_DATE='2025-01-01T00:00:00Z'
	export GIT_CONFIG_NOSYSTEM=1 HOME="$TMP"
	git init -q -b main .
	git $GITOPTS -c user.name=zcow -c user.email=zcow@example.org add .
	git $GITOPTS -c user.name=zcow -c user.email=zcow@example.org \
		commit -q -m 'initial commit'
) || rc=$?
fusermount3 -u "$MNT"
# zcow fuse makes its final commit and exits at the unmount
while pgrep -f "fuse sim:image=$IMG" >/dev/null; do sleep 0.1; done
rm -rf "$TMP"
echo "git exit status $rc; $(wc -l < "$OUT") lines in $OUT"
exit $rc
