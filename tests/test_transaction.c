// SPDX-License-Identifier: MIT
/*
 * Trees and transactions (seed 007): core/transaction.c, core/check.c.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "prng.h"
#include "tests.h"
#include "fs.h"
#include "zlog.h"
#include "zsim.h"
#include "zoned.h"

#define MiB (1024ULL * 1024)
#define ZS (4 * MiB)

/*
 * The metadata tests use the fs tree as a plain tree: items of key type
 * 0, which the file layer and its checker ignore, beside the two items of
 * the root directory 256 that mkfs puts there (ROOT_DIR_ITEMS).
 */
#define SCRATCH_KEY	0
#define ROOT_DIR_ITEMS	2

static struct zdev *new_sim(uint64_t nr_zones, uint64_t cap, uint64_t nr_conv,
			    uint64_t seed)
{
	struct zsim_config cfg = { .nr_zones = nr_zones, .zone_size = ZS,
				   .zone_capacity = cap, .nr_conv = nr_conv,
				   .seed = seed };

	return zcow_test_sim(&cfg);
}

/* The fs tree against a model: present[k] and val[k] for k < n. */
static int compare_model(struct zcow_fs *fs, const uint8_t *present,
			 const uint64_t *val, uint64_t n)
{
	struct zcow_tree_iter it;
	struct zcow_key key, start = { 0, 0, 0 };
	const void *data;
	uint64_t count = 0, want = 0, i, v;
	uint32_t len;
	int ret;

	for (i = 0; i < n; i++)
		want += present[i];
	zcow_tree_iter_init(&it, &fs->fs_tree, &start);
	while ((ret = zcow_tree_iter_next(&it, &key, &data, &len)) == 0) {
		if (key.type != SCRATCH_KEY)
			continue;
		if (key.objectid >= n || !present[key.objectid] || len != 8)
			return -1;
		memcpy(&v, data, 8);
		if (v != val[key.objectid])
			return -2;
		count++;
	}
	if (ret != -ENOENT)
		return ret;
	return count == want ? 0 : -3;
}

START_TEST(test_txn_random_inserts_deletes_match_model_after_remount)
{
	const uint64_t n = 60000, nr_ops = 100000;
	struct zdev *dev = new_sim(64, 0, 0, 1);
	uint8_t *present = calloc(n, 1);
	uint64_t *val = calloc(n, sizeof(*val));
	struct zcow_fs *fs = NULL;
	struct zdev_stats st;
	uint64_t rng = 42, i;

	ck_assert_ptr_nonnull(present);
	ck_assert_ptr_nonnull(val);
	ck_assert_int_eq(zcow_mkfs(dev, NULL), 0);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), 0);
	for (i = 0; i < nr_ops; i++) {
		uint64_t r = zcow_rand64(&rng);
		struct zcow_key key = { r % n, SCRATCH_KEY, 0 };
		uint64_t k = key.objectid;

		if ((r >> 40) % 10 < 7) {
			uint64_t v = r;

			if (present[k]) {
				ck_assert_int_eq(zcow_tree_update(&fs->fs_tree,
								  &key, &v, 8),
						 0);
			} else {
				ck_assert_int_eq(zcow_tree_insert(&fs->fs_tree,
								  &key, &v, 8),
						 0);
			}
			present[k] = 1;
			val[k] = v;
		} else {
			ck_assert_int_eq(zcow_tree_delete(&fs->fs_tree, &key),
					 present[k] ? 0 : -ENOENT);
			present[k] = 0;
		}
		if ((i + 1) % 10000 == 0)
			ck_assert_int_eq(zcow_commit(fs), 0);
	}
	ck_assert_int_eq(compare_model(fs, present, val, n), 0);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	fs = NULL;
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), 0);
	ck_assert_int_eq(compare_model(fs, present, val, n), 0);
	zcow_test_assert_clean(fs);
	ck_assert_uint_eq(zsim_nr_violations(zsim_from_dev(dev),
					     ZSIM_RULE_WRITE_NOT_AT_WP),
			  0);
	/* metadata churn emptied whole groups: they were reset */
	zdev_get_stats(dev, &st);
	ck_assert_uint_gt(st.cmds[ZDEV_CLASS_ZONE][ZDEV_OP_RESET], 0);
	zcow_unmount(fs);
	zdev_close(dev);
	free(present);
	free(val);
}
END_TEST

START_TEST(test_txn_unmount_commits_the_running_transaction)
{
	struct zdev *dev = new_sim(20, 0, 0, 8);
	struct zcow_mount_opts ro = { .read_only = true };
	struct zcow_fs *fs = NULL;
	struct zdev_stats a, b;
	uint64_t i, gen;

	ck_assert_int_eq(zcow_mkfs(dev, NULL), 0);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), 0);
	gen = fs->generation;
	for (i = 0; i < 500; i++) {
		struct zcow_key key = { 1000 + i, SCRATCH_KEY, 0 };

		ck_assert_int_eq(zcow_tree_insert(&fs->fs_tree, &key, &i, 8), 0);
	}
	ck_assert_int_eq(zcow_unmount(fs), 0);
	fs = NULL;
	zdev_get_stats(dev, &a);
	ck_assert_int_eq(zcow_mount(dev, &ro, &fs), 0);
	ck_assert_uint_eq(fs->generation, gen + 1);
	ck_assert_int_eq(zcow_tree_nr_items(&fs->fs_tree),
			 500 + ROOT_DIR_ITEMS);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	/* a read-only mount, check and unmount write nothing */
	zdev_get_stats(dev, &b);
	ck_assert_uint_eq(b.cmds[ZDEV_CLASS_META][ZDEV_OP_WRITE],
			  a.cmds[ZDEV_CLASS_META][ZDEV_OP_WRITE]);
	ck_assert_uint_eq(b.cmds[ZDEV_CLASS_SB][ZDEV_OP_WRITE],
			  a.cmds[ZDEV_CLASS_SB][ZDEV_OP_WRITE]);
	zdev_close(dev);
}
END_TEST

/*
 * A commit flushes once, before the superblock copies, which it writes
 * with FUA (btrfs's write_all_supers): two mirrors on this device, two
 * superblock writes, one flush.
 */
START_TEST(test_txn_commit_flushes_once_before_its_superblocks)
{
	struct zdev *dev = new_sim(20, 0, 0, 8);
	struct zcow_fs *fs = NULL;
	struct zdev_stats a, b;
	uint64_t i;

	ck_assert_int_eq(zcow_mkfs(dev, NULL), 0);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), 0);
	for (i = 0; i < 500; i++) {
		struct zcow_key key = { 1000 + i, ZCOW_INODE_ITEM_KEY, 0 };

		ck_assert_int_eq(zcow_tree_insert(&fs->fs_tree, &key, &i, 8), 0);
	}
	zdev_get_stats(dev, &a);
	ck_assert_int_eq(zcow_commit(fs), 0);
	zdev_get_stats(dev, &b);
	ck_assert_uint_eq(b.cmds[ZDEV_CLASS_FLUSH][ZDEV_OP_FLUSH] -
				  a.cmds[ZDEV_CLASS_FLUSH][ZDEV_OP_FLUSH], 1);
	ck_assert_uint_eq(b.cmds[ZDEV_CLASS_SB][ZDEV_OP_WRITE] -
				  a.cmds[ZDEV_CLASS_SB][ZDEV_OP_WRITE], 2);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

/*
 * A commit's nodes are counted per tree: 500 items in the fs tree make
 * fs-tree nodes, the root tree's one leaf is written once, and the
 * counts per tree add up to the nodes written.
 */
START_TEST(test_txn_commit_counts_nodes_per_tree)
{
	struct zdev *dev = new_sim(20, 0, 0, 8);
	struct zcow_fs *fs = NULL;
	struct zcow_commit_stats c0, c1;
	uint64_t i, sum = 0;
	int t;

	ck_assert_int_eq(zcow_mkfs(dev, NULL), 0);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), 0);
	for (i = 0; i < 500; i++) {
		struct zcow_key key = { 1000 + i, ZCOW_INODE_ITEM_KEY, 0 };

		ck_assert_int_eq(zcow_tree_insert(&fs->fs_tree, &key, &i, 8), 0);
	}
	c0 = fs->cstats;
	ck_assert_int_eq(zcow_commit(fs), 0);
	c1 = fs->cstats;
	for (t = 0; t < ZCOW_COMMIT_NR_TREES; t++)
		sum += c1.nodes_by_tree[t] - c0.nodes_by_tree[t];
	ck_assert_uint_eq(sum, c1.nodes_written - c0.nodes_written);
	ck_assert_uint_ge(c1.nodes_by_tree[4] - c0.nodes_by_tree[4], 2);
	ck_assert_uint_eq(c1.nodes_by_tree[0] - c0.nodes_by_tree[0], 1);
	ck_assert_str_eq(zcow_commit_tree_name(0), "root");
	ck_assert_str_eq(zcow_commit_tree_name(4), "fs");
	ck_assert_str_eq(zcow_commit_tree_name(6), "uuid");
	ck_assert_str_eq(zcow_commit_tree_name(7), "data_reloc");
	ck_assert_str_eq(zcow_commit_tree_name(8), "zeroed");
	ck_assert_ptr_null(zcow_commit_tree_name(9));
	ck_assert_ptr_null(zcow_commit_tree_name(-1));
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_txn_million_items_survive_remount_and_check)
{
	const uint64_t n = 1000000;
	struct zdev *dev = new_sim(128, 0, 0, 6);
	struct zcow_fs *fs = NULL;
	struct zcow_tree_iter it;
	struct zcow_key key, start = { 0, 0, 0 };
	const void *data;
	uint64_t i, v;
	uint32_t len;

	ck_assert_int_eq(zcow_mkfs(dev, NULL), 0);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), 0);
	for (i = 0; i < n; i++) {
		struct zcow_key k = { 256 + i, SCRATCH_KEY, 0 };

		ck_assert_int_eq(zcow_tree_insert(&fs->fs_tree, &k, &i, 8), 0);
		if ((i + 1) % 100000 == 0)
			ck_assert_int_eq(zcow_commit(fs), 0);
	}
	ck_assert_int_eq(zcow_unmount(fs), 0);
	fs = NULL;
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), 0);
	zcow_tree_iter_init(&it, &fs->fs_tree, &start);
	for (i = 0; zcow_tree_iter_next(&it, &key, &data, &len) == 0; i++) {
		if (key.type != SCRATCH_KEY) {
			i--;
			continue;
		}
		ck_assert_uint_eq(key.objectid, 256 + i);
		memcpy(&v, data, 8);
		ck_assert_uint_eq(v, i);
	}
	ck_assert_uint_eq(i, n);
	zcow_test_assert_clean(fs);
	ck_assert_uint_eq(zsim_nr_violations(zsim_from_dev(dev),
					     ZSIM_RULE_WRITE_NOT_AT_WP),
			  0);
	zcow_unmount(fs);
	zdev_close(dev);
}
END_TEST

/* Per-zone expected next write offset, from the device's command trace. */
struct seq_trace {
	uint64_t next[64];
	uint64_t nr_bad;
	uint64_t nr_meta;
};

static void trace_seq(void *arg, const struct zdev_trace_rec *rec)
{
	struct seq_trace *t = arg;
	uint64_t z = rec->zone / ZS;

	if (rec->result || z >= 64)
		return;
	if (rec->op == ZDEV_OP_RESET) {
		t->next[z] = rec->zone;
		return;
	}
	if (rec->op != ZDEV_OP_WRITE)
		return;
	if (rec->cls == ZDEV_CLASS_META) {
		t->nr_meta++;
		if (rec->off != t->next[z])
			t->nr_bad++;
	}
	t->next[z] = rec->off + rec->len;
}

START_TEST(test_txn_commit_writes_nodes_at_the_wp_without_holes)
{
	struct zdev *dev = new_sim(48, 0, 0, 2);
	struct seq_trace t;
	struct zcow_fs *fs = NULL;
	uint64_t rng = 7, i, z;
	int c;

	for (z = 0; z < 64; z++)
		t.next[z] = z * ZS;
	t.nr_bad = t.nr_meta = 0;
	zdev_set_trace(dev, trace_seq, &t);
	ck_assert_int_eq(zcow_mkfs(dev, NULL), 0);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), 0);
	for (c = 0; c < 12; c++) {
		/* inserts and deletes in one transaction: splits then merges
		 * free nodes allocated in it (redirtied) */
		for (i = 0; i < 3000; i++) {
			struct zcow_key key = { zcow_rand64(&rng) % 20000,
						SCRATCH_KEY, 0 };
			uint64_t v = i;

			if (zcow_tree_insert(&fs->fs_tree, &key, &v, 8) ==
			    -EEXIST)
				ck_assert_int_eq(zcow_tree_delete(&fs->fs_tree,
								  &key),
						 0);
		}
		for (i = 0; i < 1500; i++) {
			struct zcow_key key = { zcow_rand64(&rng) % 20000,
						SCRATCH_KEY, 0 };

			zcow_tree_delete(&fs->fs_tree, &key);
		}
		/* leaves born and emptied in one transaction: freed before
		 * writeback, so written zeroed */
		for (i = 0; i < 2000; i++) {
			struct zcow_key key = { 100000 + i,
						SCRATCH_KEY, 0 };

			ck_assert_int_eq(zcow_tree_insert(&fs->fs_tree, &key,
							  &i, 8),
					 0);
		}
		for (i = 0; i < 2000; i++) {
			struct zcow_key key = { 100000 + i,
						SCRATCH_KEY, 0 };

			ck_assert_int_eq(zcow_tree_delete(&fs->fs_tree, &key),
					 0);
		}
		ck_assert_int_eq(zcow_commit(fs), 0);
		for (i = 0; i < fs->nr_bgs; i++)
			if (!(fs->bgs[i]->flags & ZCOW_BG_DATA))
				ck_assert_uint_eq(fs->bgs[i]->meta_wp,
						  fs->bgs[i]->alloc_offset);
	}
	ck_assert_uint_gt(fs->cstats.nodes_redirtied, 0);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_set_trace(dev, NULL, NULL);
	ck_assert_uint_gt(t.nr_meta, 0);
	ck_assert_uint_eq(t.nr_bad, 0);
	ck_assert_uint_eq(zsim_nr_violations(zsim_from_dev(dev),
					     ZSIM_RULE_WRITE_NOT_AT_WP),
			  0);
	fs = NULL;
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), 0);
	zcow_test_assert_clean(fs);
	zcow_unmount(fs);
	zdev_close(dev);
}
END_TEST

START_TEST(test_txn_check_finds_missing_extent_item_and_bad_used)
{
	struct zdev *dev = new_sim(20, 0, 0, 3);
	struct zcow_fs *fs = NULL;
	struct zcow_tree_iter it;
	struct zcow_key key, start = { 0, 0, 0 };
	uint64_t i;

	ck_assert_int_eq(zcow_mkfs(dev, NULL), 0);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), 0);
	for (i = 0; i < 2000; i++) {
		struct zcow_key k = { i, SCRATCH_KEY, 0 };

		ck_assert_int_eq(zcow_tree_insert(&fs->fs_tree, &k, &i, 8), 0);
	}
	ck_assert_int_eq(zcow_commit(fs), 0);
	ck_assert_int_eq(zcow_check(fs, NULL, NULL), 0);
	/* drop one METADATA_ITEM behind the allocator's back */
	zcow_tree_iter_init(&it, &fs->extent_tree, &start);
	while (zcow_tree_iter_next(&it, &key, NULL, NULL) == 0)
		if (key.type == ZCOW_METADATA_ITEM_KEY)
			break;
	ck_assert_int_eq(key.type, ZCOW_METADATA_ITEM_KEY);
	ck_assert_int_eq(zcow_tree_delete(&fs->extent_tree, &key), 0);
	ck_assert_int_eq(zcow_commit(fs), 0);
	/* the block has no extent item, the group's used is off */
	ck_assert_int_ge(zcow_check(fs, NULL, NULL), 2);
	zcow_unmount(fs);
	zdev_close(dev);
}
END_TEST

/* The checker's zones rule: a data group whose zone was reset behind the
 * file system's back (its committed used bytes are no longer on the
 * device) is a problem zcow_check() reports. */
static void count_zone_reset(void *arg, const char *msg)
{
	if (strstr(msg, "reset too early"))
		(*(int *)arg)++;
}

START_TEST(test_txn_check_finds_group_whose_zone_was_reset_behind_its_back)
{
	struct zcow_mount_opts ro = { .read_only = true };
	struct zdev *dev = new_sim(20, 0, 0, 5);
	struct zcow_fs *fs = NULL;
	struct zcow_file *f = NULL;
	struct zcow_bg *data = NULL;
	uint8_t buf[65536];
	int nr_reset = 0;
	uint64_t i;

	memset(buf, 0x5a, sizeof(buf));
	ck_assert_int_eq(zcow_mkfs(dev, NULL), 0);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), 0);
	ck_assert_int_eq(zcow_create(fs, "/a", &f), 0);
	ck_assert_int_eq(zcow_pwrite(f, buf, sizeof(buf), 0),
			 (int64_t)sizeof(buf));
	ck_assert_int_eq(zcow_fsync(f), 0);
	ck_assert_int_eq(zcow_close(f), 0);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	ck_assert_int_eq(zcow_mount(dev, &ro, &fs), 0);
	zcow_test_assert_clean(fs);
	ck_assert_int_eq(zcow_check_zones(fs, zcow_test_print_problem, NULL),
			 0);
	for (i = 0; i < fs->nr_bgs && !data; i++)
		if ((fs->bgs[i]->flags & ZCOW_BG_DATA) &&
		    fs->bgs[i]->item_used)
			data = fs->bgs[i];
	ck_assert_ptr_nonnull(data);
	ck_assert_int_eq(zdev_reset_zone(dev, data->physical,
					 ZDEV_CLASS_ZONE), 0);
	ck_assert_int_eq(zcow_check_zones(fs, count_zone_reset, &nr_reset),
			 1);
	ck_assert_int_eq(nr_reset, 1);
	nr_reset = 0;
	ck_assert_int_ge(zcow_check(fs, count_zone_reset, &nr_reset), 1);
	ck_assert_int_eq(nr_reset, 1);
	zcow_unmount(fs);
	zdev_close(dev);
}
END_TEST

START_TEST(test_txn_check_finds_corrupt_node_in_conventional_zone)
{
	struct zdev *dev = new_sim(16, 0, 16, 4);
	struct zcow_fs *fs = NULL;
	uint64_t bytenr, phys;
	struct zcow_mount_opts ro = { .read_only = true };
	uint8_t blk[4096];

	ck_assert_int_eq(zcow_mkfs(dev, NULL), 0);
	ck_assert_int_eq(zcow_mount(dev, &ro, &fs), 0);
	ck_assert_int_eq(zcow_check(fs, NULL, NULL), 0);
	zcow_tree_root(&fs->fs_tree, &bytenr, NULL, NULL);
	ck_assert_int_eq(zcow_map_logical(fs, bytenr, fs->nodesize, &phys), 0);
	/* overwrite the middle of the fs tree's leaf (conventional zone) */
	memset(blk, 0xee, sizeof(blk));
	ck_assert_int_eq(zdev_write(dev, blk, sizeof(blk), phys + 4096, 0,
				    ZDEV_CLASS_OTHER),
			 0);
	ck_assert_int_gt(zcow_check(fs, NULL, NULL), 0);
	zcow_unmount(fs);
	zdev_close(dev);
}
END_TEST

/* ---- the tool: zcow check / df ------------------------------------------- */

/* Run "$ZCOW_BIN ARGS", capture stdout into @out; returns the exit status. */
static int run_tool(char *out, size_t len, const char *fmt, const char *arg)
{
	const char *bin = getenv("ZCOW_BIN");
	char cmd[512];
	size_t n = 0;
	FILE *p;
	int st;

	ck_assert_msg(bin && *bin, "ZCOW_BIN is not set");
	snprintf(cmd, sizeof(cmd), "%s ", bin);
	snprintf(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd), fmt, arg);
	strncat(cmd, " 2>/dev/null", sizeof(cmd) - strlen(cmd) - 1);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	while (n + 1 < len && (st = fgetc(p)) != EOF)
		out[n++] = (char)st;
	out[n] = '\0';
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

START_TEST(test_txn_tool_check_and_df_report_and_fail_on_corruption)
{
	char path[] = "/tmp/zcow-md-XXXXXX", spec[128], out[8192];
	struct zcow_fs *fs = NULL;
	struct zdev *dev = NULL;
	uint64_t bytenr, phys, i;
	uint8_t blk[4096];
	int fd;

	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, 16 * ZS), 0);
	close(fd);
	snprintf(spec, sizeof(spec), "file:%s,zone_size=4M", path);
	ck_assert_int_eq(run_tool(out, sizeof(out), "mkfs %s", spec), 0);
	ck_assert_int_eq(zdev_open(spec, &dev), 0);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), 0);
	for (i = 0; i < 3000; i++) {
		struct zcow_key key = { i, SCRATCH_KEY, 0 };

		ck_assert_int_eq(zcow_tree_insert(&fs->fs_tree, &key, &i, 8), 0);
	}
	ck_assert_int_eq(zcow_unmount(fs), 0);
	ck_assert_int_eq(zdev_close(dev), 0);
	ck_assert_int_eq(run_tool(out, sizeof(out), "check %s", spec), 0);
	ck_assert_ptr_nonnull(strstr(out, "no problems found"));
	ck_assert_int_eq(run_tool(out, sizeof(out), "df %s", spec), 0);
	ck_assert_ptr_nonnull(strstr(out, "Data, single: total=4.00MiB"));
	ck_assert_ptr_nonnull(strstr(out, "Metadata, single: total="));
	ck_assert_ptr_nonnull(strstr(out, "System, single: total="));
	ck_assert_ptr_nonnull(strstr(out, "zone_unusable="));
	/* corrupt the fs tree's root node: check lists it, exits 1 */
	ck_assert_int_eq(zdev_open(spec, &dev), 0);
	ck_assert_int_eq(zcow_mount(dev, &(struct zcow_mount_opts){ .read_only = true }, &fs), 0);
	zcow_tree_root(&fs->fs_tree, &bytenr, NULL, NULL);
	ck_assert_int_eq(zcow_map_logical(fs, bytenr, fs->nodesize, &phys), 0);
	zcow_unmount(fs);
	ck_assert_int_eq(zdev_close(dev), 0);
	memset(blk, 0x77, sizeof(blk));
	fd = open(path, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, blk, sizeof(blk), (off_t)phys + 4096),
			 (ssize_t)sizeof(blk));
	close(fd);
	ck_assert_int_eq(run_tool(out, sizeof(out), "check %s", spec), 1);
	ck_assert_ptr_nonnull(strstr(out, "ERROR:"));
	unlink(path);
}
END_TEST

/* ---- crash sweep ---------------------------------------------------------- */

#define CR_KEYS		20000
#define CR_TXNS		5
#define CR_INS		1500
#define CR_DEL		400

struct cr_geo {
	uint64_t nr_zones, cap, nr_conv;
	const char *name;
};

static const struct cr_geo cr_geos[] = {
	{ 24, 0, 0, "seq" },
	{ 24, 3 * MiB, 6, "conv6+seq-cap3M" },
	/* 16 nodes per zone: chunks allocated and groups removed mid-run */
	{ 40, 256 * 1024, 0, "seq-cap256K" },
};

/* snapshots[t]: the model after transaction t (0 = mkfs: empty). */
struct cr_model {
	uint8_t present[CR_TXNS + 1][CR_KEYS];
	uint64_t val[CR_TXNS + 1][CR_KEYS];
};

static struct cr_model *build_model(void)
{
	struct cr_model *m = calloc(1, sizeof(*m));
	uint64_t rng = 99;
	int t, i;

	ck_assert_ptr_nonnull(m);
	for (t = 1; t <= CR_TXNS; t++) {
		memcpy(m->present[t], m->present[t - 1], CR_KEYS);
		memcpy(m->val[t], m->val[t - 1], sizeof(m->val[t]));
		for (i = 0; i < CR_INS; i++) {
			uint64_t k = zcow_rand64(&rng) % CR_KEYS;

			m->present[t][k] = 1;
			m->val[t][k] = k * 1000 + (uint64_t)t;
		}
		for (i = 0; i < CR_DEL; i++)
			m->present[t][zcow_rand64(&rng) % CR_KEYS] = 0;
	}
	return m;
}

/*
 * Replay transactions 1..CR_TXNS (the same PRNG stream as the model),
 * committing each, then unmount.  Stops at the first error.  Returns the
 * generation of the last acknowledged commit.
 */
static uint64_t cr_run(struct zdev *dev, const struct cr_model *m)
{
	struct zcow_fs *fs = NULL;
	uint64_t rng = 99, acked = 1;
	int t, i;

	if (zcow_mount(dev, NULL, &fs))
		return acked;
	for (t = 1; t <= CR_TXNS; t++) {
		int ret = 0;

		for (i = 0; i < CR_INS; i++) {
			uint64_t k = zcow_rand64(&rng) % CR_KEYS;
			struct zcow_key key = { k, SCRATCH_KEY, 0 };
			uint64_t v = k * 1000 + (uint64_t)t;

			if (!ret)
				ret = zcow_tree_update(&fs->fs_tree, &key, &v, 8);
			if (ret == -ENOENT)
				ret = zcow_tree_insert(&fs->fs_tree, &key, &v, 8);
		}
		for (i = 0; i < CR_DEL; i++) {
			struct zcow_key key = { zcow_rand64(&rng) % CR_KEYS,
						SCRATCH_KEY, 0 };

			if (!ret) {
				ret = zcow_tree_delete(&fs->fs_tree, &key);
				if (ret == -ENOENT)
					ret = 0;
			}
		}
		if (!ret)
			ret = zcow_commit(fs);
		if (ret)
			break;
		acked = fs->generation;
	}
	if (t > CR_TXNS && zcow_unmount(fs) == 0)
		return acked + 1;
	if (t <= CR_TXNS)
		zcow_unmount(fs);
	(void)m;
	return acked;
}

static struct zdev *cr_fresh(const struct cr_geo *g, uint64_t seed)
{
	struct zdev *dev = new_sim(g->nr_zones, g->cap, g->nr_conv, seed);
	struct zcow_mkfs_opts opts = { .seed = 1 };

	ck_assert_int_eq(zcow_mkfs(dev, &opts), 0);
	return dev;
}

static void cr_sweep(int loop)
{
	const struct cr_geo *g = &cr_geos[loop / ZSIM_NR_LOSS];
	enum zsim_loss loss = (enum zsim_loss)(loop % ZSIM_NR_LOSS);
	struct cr_model *m = build_model();
	struct zdev *dev;
	uint64_t p0, nr_persist, n, runs = 0, nr_chunks;
	struct zdev_stats st;

	dev = cr_fresh(g, 1);
	p0 = zsim_nr_persist(zsim_from_dev(dev));
	ck_assert_uint_eq(cr_run(dev, m), CR_TXNS + 2);
	nr_persist = zsim_nr_persist(zsim_from_dev(dev)) - p0;
	zdev_get_stats(dev, &st);
	{
		struct zcow_fs *fs = NULL;

		ck_assert_int_eq(zcow_mount(dev, NULL, &fs), 0);
		nr_chunks = fs->nr_bgs;
		zcow_unmount(fs);
	}
	zdev_close(dev);
	for (n = 1; n <= nr_persist; n++) {
		struct zsim_cut cut = { .kind = ZSIM_CUT_PERSIST, .ordinal = n,
					.when = ZSIM_CUT_AFTER, .loss = loss,
					.seed = n * 7919 };
		struct zcow_fs *fs = NULL;
		struct zsim *sim;
		uint64_t acked, gen, t;
		int ret;

		dev = cr_fresh(g, n);
		sim = zsim_from_dev(dev);
		ck_assert_int_eq(zsim_arm_cut(sim, &cut), 0);
		acked = cr_run(dev, m);
		if (zsim_is_cut(sim))
			ck_assert_int_eq(zsim_power_cycle(sim), 0);
		ret = zcow_mount(dev, NULL, &fs);
		if (ret) {
			fprintf(stderr, "repro: txn-crash geo=%s policy=%s cut=persist=%" PRIu64 " seed=%" PRIu64 ": mount failed %d\n",
				g->name, zsim_loss_name(loss), n, cut.seed,
				ret);
			ck_abort();
		}
		gen = fs->generation;
		t = gen - 1 > CR_TXNS ? CR_TXNS : gen - 1;
		ret = zcow_check(fs, zcow_test_print_problem, NULL);
		if (ret || gen < acked || !fs->has_trees ||
		    compare_model(fs, m->present[t], m->val[t], CR_KEYS)) {
			fprintf(stderr, "repro: txn-crash geo=%s policy=%s cut=persist=%" PRIu64 " seed=%" PRIu64 ": check %d, generation %" PRIu64 " (acked %" PRIu64 "), model %d\n",
				g->name, zsim_loss_name(loss), n, cut.seed,
				ret, gen, acked,
				compare_model(fs, m->present[t], m->val[t],
					      CR_KEYS));
			ck_abort();
		}
		/* it goes on where the write pointers are */
		for (t = 0; t < 300; t++) {
			struct zcow_key key = { CR_KEYS + t,
						SCRATCH_KEY, 0 };

			ck_assert_int_eq(zcow_tree_insert(&fs->fs_tree, &key,
							  &t, 8),
					 0);
		}
		ck_assert_int_eq(zcow_commit(fs), 0);
		ret = zcow_check(fs, zcow_test_print_problem, NULL);
		if (ret || zsim_nr_violations(sim, ZSIM_RULE_WRITE_NOT_AT_WP)) {
			fprintf(stderr, "repro: txn-crash geo=%s policy=%s cut=persist=%" PRIu64 " seed=%" PRIu64 ": after recovery: check %d, %" PRIu64 " writes off the wp\n",
				g->name, zsim_loss_name(loss), n, cut.seed,
				ret,
				zsim_nr_violations(sim,
						   ZSIM_RULE_WRITE_NOT_AT_WP));
			ck_abort();
		}
		zcow_unmount(fs);
		zdev_close(dev);
		runs++;
	}
	printf("txn-crash: geo=%s policy=%s: %" PRIu64 " cut points passed (run: %" PRIu64 " groups at the end, %" PRIu64 " groups removed)\n",
	       g->name, zsim_loss_name(loss), runs, nr_chunks,
	       st.cmds[ZDEV_CLASS_ZONE][ZDEV_OP_RESET]);
	free(m);
}

START_TEST(test_txn_crash_at_every_persist_point_keeps_last_durable_commit)
{
	cr_sweep(_i);
}
END_TEST

/* ---- metadata reservation (docs/space.md) ------------------------- */

/* The count zcow_tree_nr_nodes() follows equals a fresh walk. */
static void assert_node_count(struct zcow_tree *tree)
{
	int64_t followed = zcow_tree_nr_nodes(tree), walked;

	ck_assert_int_ge(followed, 1);
	tree->has_nodes_base = false;
	walked = zcow_tree_nr_nodes(tree);
	ck_assert_int_eq(followed, walked);
}

START_TEST(test_txn_node_count_follows_splits_merges_and_cow)
{
	struct zdev *dev = new_sim(24, 0, 0, 3);
	struct zcow_fs *fs = NULL;
	uint8_t val[300];
	uint64_t seed = 5, i;
	int round;

	ck_assert_int_eq(zcow_mkfs(dev, NULL), 0);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), 0);
	ck_assert_int_eq(zcow_tree_nr_nodes(&fs->fs_tree), 1);
	memset(val, 0x5a, sizeof(val));
	for (round = 0; round < 4; round++) {
		for (i = 0; i < 3000; i++) {
			struct zcow_key key = { 1000 + zcow_rand64(&seed) % 6000,
						SCRATCH_KEY, 0 };
			int ret;

			if (round % 2 == 0)
				ret = zcow_tree_insert(&fs->fs_tree, &key, val,
						       (uint32_t)(8 + i % 290));
			else
				ret = zcow_tree_delete(&fs->fs_tree, &key);
			ck_assert(!ret || ret == -EEXIST || ret == -ENOENT);
		}
		assert_node_count(&fs->fs_tree);
		ck_assert_int_eq(zcow_commit(fs), 0);
		assert_node_count(&fs->fs_tree);
		assert_node_count(&fs->extent_tree);
		assert_node_count(&fs->root_tree);
	}
	ck_assert_int_gt(zcow_tree_nr_nodes(&fs->fs_tree), 10);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

/*
 * On the default device of `zcow run` (profile zn540: 256 zones of
 * 64 MiB, 34 MiB capacity, 16 KiB nodes) the reservation holds back
 * under 0.1% of the device with 1000 files.
 */
START_TEST(test_txn_reserve_holds_back_little_on_default_geometry)
{
	struct zsim_config cfg = {
		.nr_zones = 256,
		.zone_size = 64 * MiB,
		.zone_capacity = 34 * MiB,
		.max_open = 14,
		.max_active = 14,
		.seed = 7,
	};
	struct zcow_mkfs_opts mo = { .seed = 1, .nodesize = 16384 };
	struct zdev *dev = NULL;
	struct zcow_fs *fs = NULL;
	uint64_t room, held, commit, dev_bytes = 256 * 64 * MiB;
	uint8_t buf[4096];
	char p[32];
	int i;

	ck_assert_int_eq(zsim_create(&cfg, &dev), 0);
	ck_assert_int_eq(zcow_mkfs(dev, &mo), 0);
	ck_assert_int_eq(zcow_mount(dev, NULL, &fs), 0);
	memset(buf, 7, sizeof(buf));
	for (i = 0; i < 1000; i++) {
		struct zcow_file *f;

		snprintf(p, sizeof(p), "/f%d", i);
		ck_assert_int_eq(zcow_open(fs, p, O_CREAT | O_RDWR, &f), 0);
		ck_assert_int_eq(zcow_pwrite(f, buf, sizeof(buf), 0),
				 (int64_t)sizeof(buf));
		zcow_close(f);
	}
	ck_assert_int_eq(zcow_sync(fs), 0);
	ck_assert_int_eq(zcow_meta_room(fs, &room), 0);
	ck_assert_int_eq(zcow_meta_need(fs, 0, false, &held), 0);
	ck_assert_int_eq(zcow_meta_need(fs, 0, true, &commit), 0);
	zlog(ZLOG_INFO, "test",
	     "default geometry, 1000 files: room %" PRIu64 " MiB, held back %" PRIu64 " KiB (%.4f%% of the device), of which the commit %" PRIu64 " KiB",
	     (uint64_t)(room / MiB), held / 1024,
	     100.0 * (double)held / (double)dev_bytes,
	     commit / 1024);
	ck_assert_uint_lt(held * 1000, dev_bytes);
	ck_assert_uint_lt(commit, held);
	ck_assert_int_eq(zcow_meta_check(fs, 0, false), 0);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

/*
 * The transactions an fsync without the tree-log sees (the core's side of
 * commit_model=btrfs, harness/run_fs.c): a change belongs to the running
 * transaction (generation + 1); the fsync that commits it makes exactly
 * that generation durable; a change made after that commit belongs to the
 * next one, and a second fsync of a file committed already commits
 * nothing.
 */
START_TEST(test_txn_write_after_commit_lands_in_the_next_generation)
{
	struct zcow_mkfs_opts mko = { .seed = 5 };
	struct zcow_mount_opts mo = { .no_treelog = true };
	struct zdev *dev = new_sim(16, ZS, 0, 5);
	struct zcow_file *a, *b;
	struct zcow_statfs st;
	struct zcow_stat sa, sb;
	struct zcow_fs *fs;
	uint8_t buf[4096];
	uint64_t g, commits;

	memset(buf, 3, sizeof(buf));
	ck_assert_int_eq(zcow_mkfs(dev, &mko), 0);
	ck_assert_int_eq(zcow_mount(dev, &mo, &fs), 0);
	g = zcow_fs_generation(fs);
	ck_assert_int_eq(zcow_open(fs, "/a", O_CREAT | O_RDWR, &a), 0);
	ck_assert_int_eq(zcow_pwrite(a, buf, sizeof(buf), 0), 4096);
	ck_assert_int_eq(zcow_fstat(a, &sa), 0);
	ck_assert_uint_eq(sa.transid, g + 1);
	ck_assert_int_eq(zcow_statfs(fs, &st), 0);
	commits = st.nr_commits;
	ck_assert_int_eq(zcow_fsync(a), 0);
	ck_assert_uint_eq(zcow_fs_generation(fs), g + 1);
	/* the next writer is in the next transaction */
	ck_assert_int_eq(zcow_open(fs, "/b", O_CREAT | O_RDWR, &b), 0);
	ck_assert_int_eq(zcow_pwrite(b, buf, sizeof(buf), 0), 4096);
	ck_assert_int_eq(zcow_fstat(b, &sb), 0);
	ck_assert_uint_eq(sb.transid, g + 2);
	/* /a is durable: its second fsync commits nothing */
	ck_assert_int_eq(zcow_fsync(a), 0);
	ck_assert_uint_eq(zcow_fs_generation(fs), g + 1);
	ck_assert_int_eq(zcow_fsync(b), 0);
	ck_assert_uint_eq(zcow_fs_generation(fs), g + 2);
	ck_assert_int_eq(zcow_statfs(fs, &st), 0);
	ck_assert_uint_eq(st.nr_commits, commits + 2);
	ck_assert_uint_eq(st.nr_fsyncs, 3);
	zcow_close(a);
	zcow_close(b);
	ck_assert_int_eq(zcow_unmount(fs), 0);
	zdev_close(dev);
}
END_TEST

Suite *transaction_suite(void)
{
	Suite *s = suite_create("transaction_suite");
	TCase *tc = tcase_create("core");
	TCase *cr = tcase_create("crash");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc,
		       test_txn_random_inserts_deletes_match_model_after_remount);
	tcase_add_test(tc, test_txn_unmount_commits_the_running_transaction);
	tcase_add_test(tc, test_txn_commit_flushes_once_before_its_superblocks);
	tcase_add_test(tc, test_txn_commit_counts_nodes_per_tree);
	tcase_add_test(tc, test_txn_million_items_survive_remount_and_check);
	tcase_add_test(tc, test_txn_commit_writes_nodes_at_the_wp_without_holes);
	tcase_add_test(tc, test_txn_check_finds_missing_extent_item_and_bad_used);
	tcase_add_test(tc,
		       test_txn_check_finds_corrupt_node_in_conventional_zone);
	tcase_add_test(
		tc, test_txn_check_finds_group_whose_zone_was_reset_behind_its_back);
	tcase_add_test(tc,
		       test_txn_tool_check_and_df_report_and_fail_on_corruption);
	tcase_add_test(tc, test_txn_node_count_follows_splits_merges_and_cow);
	tcase_add_test(tc,
		       test_txn_reserve_holds_back_little_on_default_geometry);
	tcase_add_test(tc,
		       test_txn_write_after_commit_lands_in_the_next_generation);
	suite_add_tcase(s, tc);
	tcase_set_timeout(cr, 120);
	tcase_add_loop_test(
		cr, test_txn_crash_at_every_persist_point_keeps_last_durable_commit,
		0, ZSIM_NR_LOSS * (int)(sizeof(cr_geos) / sizeof(cr_geos[0])));
	suite_add_tcase(s, cr);
	return s;
}
