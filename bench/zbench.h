// SPDX-License-Identifier: MIT
/*
 * bench/: benchmark entry points that drive the file system's internals
 * (compiled with core/'s headers, docs/design.md), for the tool's
 * benchmark commands and the tests; never part of the file system
 * library (libzcow.a) itself.
 */
#ifndef ZCOW_ZBENCH_H
#define ZCOW_ZBENCH_H

#include <stdbool.h>
#include <stdint.h>

#include "zcow.h"

/*
 * The metadata benchmark of `zcow bench-meta`: insert @nr_items items
 * (key (objectid, INODE_ITEM, 0), 16-byte value: the item's index and its
 * objectid) into the fs tree, objectids 256, 257, ... (@is_seq) or
 * zcow_rand64(@seed) >> 8 (a duplicate key is skipped), committing after
 * every @commit_every items (0: only at the end) and once at the end.
 * The items are not inodes: the file system is left inconsistent, so run
 * it only on a scratch device, and read the commit statistics with
 * zcow_fs_info().  Returns 0, -EINVAL (no trees: a superblock-only
 * mount), or the -errno of an insert or a commit (-ENOSPC, a device
 * error); *done_ret (may be NULL): the items handled, the failing one
 * included (@nr_items on success or when the last commit failed).
 */
int zcow_bench_tree_insert(struct zcow_fs *fs, uint64_t nr_items,
			   uint64_t commit_every, bool is_seq, uint64_t seed,
			   uint64_t *done_ret);

#endif /* ZCOW_ZBENCH_H */
