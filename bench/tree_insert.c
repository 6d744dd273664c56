// SPDX-License-Identifier: MIT
/*
 * The metadata benchmark (zcow bench-meta): tree inserts and commits on a
 * scratch file system, so the tool measures the metadata engine through
 * one public call instead of reaching into the fs tree.
 */
#include <errno.h>
#include <string.h>

#include "fs.h"
#include "prng.h"
#include "zbench.h"
#include "zlog.h"

int zcow_bench_tree_insert(struct zcow_fs *fs, uint64_t nr_items,
			   uint64_t commit_every, bool is_seq, uint64_t seed,
			   uint64_t *done_ret)
{
	uint64_t i, rng = seed;
	uint8_t val[16];
	int ret = 0;

	if (!fs->has_trees) {
		zlog_err("bench", "no trees to insert into");
		return -EINVAL;
	}
	for (i = 0; i < nr_items && !ret; i++) {
		struct zcow_key key = { 256, ZCOW_INODE_ITEM_KEY, 0 };

		key.objectid = is_seq ? 256 + i : zcow_rand64(&rng) >> 8;
		memcpy(val, &i, sizeof(i));
		memcpy(val + 8, &key.objectid, 8);
		ret = zcow_tree_insert(&fs->fs_tree, &key, val, sizeof(val));
		if (ret == -EEXIST)
			ret = 0;
		if (!ret && commit_every && (i + 1) % commit_every == 0)
			ret = zcow_commit(fs);
	}
	if (!ret)
		ret = zcow_commit(fs);
	if (done_ret)
		*done_ret = i;
	return ret;
}
