// SPDX-License-Identifier: MIT
/*
 * Model-based test of the file layer: seeded random operations (create,
 * write at random offsets and sizes incl. unaligned, truncate, rename,
 * unlink, mkdir, rmdir, snapshot, fsync) against an in-memory model, with
 * unmount/mount at random points; after every mount zcow check is clean
 * and contents, sizes and listings (also of the snapshots) equal the model.
 * Snapshots sit in "/" as subvolume entries named s0, s1, ... and share
 * its names: random paths use those names too, at the top (the snapshot,
 * read-only, or a name it holds), inside a snapshot (an earlier
 * snapshot's entry it copied: an empty directory) and below.
 * Runs for zone_append on and off, on the simulator (sequential zones) and
 * on the emulated-zones file backend.  ZCOW_MODEL_OPS overrides the count,
 * ZCOW_MODEL_SEED shifts the seeds.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "prng.h"
#include "tests.h"
#include "fs.h"
#include "zsim.h"

#define MiB (1024ULL * 1024)
#define ZS (4 * MiB)
#define MAX_ENT 256
#define MAX_SNAP 4
#define MAX_FILE (96 * 1024)

struct ment {
	char path[160];
	bool is_dir;
	bool is_subvol;		/* a snapshot's copy of an earlier snapshot's
				 * entry: an empty directory */
	uint8_t *data;
	uint64_t size;
};

struct model {
	struct ment e[MAX_ENT + MAX_SNAP];
	int nr;
};

struct mt {
	struct model live;
	struct model snaps[MAX_SNAP];
	char snap_names[MAX_SNAP][16];
	int nr_snaps;
	uint64_t rng;
	struct zcow_fs *fs;
	struct zdev *dev;
	struct zcow_mount_opts opts;
	uint64_t seed;
	uint64_t op;
};

static uint64_t rnd(struct mt *t)
{
	return zcow_rand64(&t->rng);
}

static struct ment *find(struct model *m, const char *path)
{
	int i;

	for (i = 0; i < m->nr; i++)
		if (!strcmp(m->e[i].path, path))
			return &m->e[i];
	return NULL;
}

static void parent_of(const char *path, char *out)
{
	const char *s = strrchr(path, '/');

	memcpy(out, path, (size_t)(s - path));
	out[s - path] = '\0';
}

/* 0 = parent exists and is a dir (or is the root), else errno. */
static int parent_ok(struct model *m, const char *path)
{
	char par[160];
	struct ment *p;

	parent_of(path, par);
	if (!par[0])
		return 0;
	p = find(m, par);
	if (!p) {
		int err = parent_ok(m, par);

		return err ? err : -ENOENT;
	}
	if (!p->is_dir)
		return -ENOTDIR;
	return parent_ok(m, par);
}

static bool has_children(struct model *m, const char *dir)
{
	size_t l = strlen(dir);
	int i;

	for (i = 0; i < m->nr; i++)
		if (!strncmp(m->e[i].path, dir, l) && m->e[i].path[l] == '/')
			return true;
	return false;
}

static void del_ent(struct model *m, struct ment *e)
{
	free(e->data);
	*e = m->e[--m->nr];
}

static void rand_path(struct mt *t, char *out)
{
	static const char *const names[] = { "a", "b", "c", "dd", "e",
					     "long_file_name", "s0", "s1" };
	int depth = 1 + (int)(rnd(t) % 3), i;

	out[0] = '\0';
	for (i = 0; i < depth; i++) {
		strcat(out, "/");
		strcat(out, names[rnd(t) % 8]);
	}
}

static void model_free(struct model *m)
{
	while (m->nr)
		del_ent(m, &m->e[0]);
}

static void model_copy(struct model *dst, const struct model *src)
{
	int i;

	model_free(dst);
	for (i = 0; i < src->nr; i++) {
		dst->e[i] = src->e[i];
		dst->e[i].data = NULL;
		if (src->e[i].size) {
			dst->e[i].data = malloc(src->e[i].size);
			memcpy(dst->e[i].data, src->e[i].data, src->e[i].size);
		}
	}
	dst->nr = src->nr;
}

/* Where a path leads: the live model, or snapshot N's model (read-only)
 * with the path inside it; is_subvol: it names a subvolume entry ("/sN",
 * or an earlier snapshot's entry inside a snapshot). */
struct where {
	struct model *m;
	const char *rel;
	bool is_ro;
	bool is_subvol;
};

static void locate(struct mt *t, const char *path, struct where *w)
{
	int i;

	w->m = &t->live;
	w->rel = path;
	w->is_ro = w->is_subvol = false;
	for (i = 0; i < t->nr_snaps; i++) {
		size_t l = strlen(t->snap_names[i]);
		struct ment *e;

		if (path[0] != '/' || strncmp(path + 1, t->snap_names[i], l) ||
		    (path[1 + l] && path[1 + l] != '/'))
			continue;
		if (!path[1 + l]) {
			w->is_subvol = true;
			return;
		}
		w->m = &t->snaps[i];
		w->rel = path + 1 + l;
		w->is_ro = true;
		e = find(w->m, w->rel);
		w->is_subvol = e && e->is_subvol;
		return;
	}
}

/* The errno of resolving @w's path when it does not exist. */
static int missing(const struct where *w)
{
	int err = parent_ok(w->m, w->rel);

	return err ? err : -ENOENT;
}

#define FAILMSG "repro: seed %llu op %llu: "
#define ARGS (unsigned long long)t->seed, (unsigned long long)t->op

static void verify_tree(struct mt *t, struct model *m, const char *prefix)
{
	char path[256];
	uint8_t *buf = malloc(MAX_FILE + 10);
	int i;

	for (i = 0; i < m->nr; i++) {
		struct ment *e = &m->e[i];
		struct zcow_stat st;
		struct zcow_dirent *ents;
		uint64_t nr, j;
		int k, nchild = 0;

		snprintf(path, sizeof(path), "%s%s", prefix, e->path);
		ck_assert_msg(zcow_stat(t->fs, path, &st) == 0,
			      FAILMSG "%s missing", ARGS, path);
		ck_assert_msg(S_ISDIR(st.mode) == e->is_dir,
			      FAILMSG "%s type", ARGS, path);
		if (e->is_dir) {
			ck_assert_int_eq(zcow_readdir(t->fs, path, &ents, &nr),
					 0);
			for (k = 0; k < m->nr; k++) {
				char par[160];

				parent_of(m->e[k].path, par);
				if (!strcmp(par, e->path))
					nchild++;
			}
			ck_assert_msg(nr == (uint64_t)nchild,
				      FAILMSG "%s: %llu entries, model %d",
				      ARGS, path, (unsigned long long)nr,
				      nchild);
			for (j = 0; j < nr; j++) {
				char cp[320];

				snprintf(cp, sizeof(cp), "%s/%s", e->path,
					 ents[j].name);
				ck_assert_msg(find(m, cp), FAILMSG "extra %s",
					      ARGS, cp);
			}
			free(ents);
		} else {
			struct zcow_file *f;

			ck_assert_msg(st.size == e->size,
				      FAILMSG "%s size %llu model %llu", ARGS,
				      path, (unsigned long long)st.size,
				      (unsigned long long)e->size);
			ck_assert_int_eq(zcow_open(t->fs, path, O_RDONLY, &f),
					 0);
			ck_assert_int_eq(zcow_pread(f, buf, MAX_FILE + 10, 0),
					 (int64_t)e->size);
			ck_assert_msg(!e->size ||
					      !memcmp(buf, e->data, e->size),
				      FAILMSG "%s contents", ARGS, path);
			zcow_close(f);
		}
	}
	free(buf);
}

static void verify(struct mt *t)
{
	struct zcow_dirent *ents;
	uint64_t nr, j;
	int i, top = 0;
	char path[300];

	verify_tree(t, &t->live, "");
	ck_assert_int_eq(zcow_readdir(t->fs, "/", &ents, &nr), 0);
	for (i = 0; i < t->live.nr; i++) {
		parent_of(t->live.e[i].path, path);
		top += !path[0];
	}
	top += t->nr_snaps;
	ck_assert_msg(nr == (uint64_t)top, FAILMSG "root: %llu entries", ARGS,
		      (unsigned long long)nr);
	for (j = 0; j < nr; j++) {
		struct where w;

		snprintf(path, sizeof(path), "/%s", ents[j].name);
		locate(t, path, &w);
		ck_assert_msg(w.is_subvol ? ents[j].type == 2 :
					    find(&t->live, path) != NULL,
			      FAILMSG "extra %s", ARGS, path);
	}
	free(ents);
	for (i = 0; i < t->nr_snaps; i++) {
		snprintf(path, sizeof(path), "/%s", t->snap_names[i]);
		verify_tree(t, &t->snaps[i], path);
	}
}

static void problem(void *arg, const char *msg)
{
	struct mt *t = arg;

	fprintf(stderr, "repro: seed %llu op %llu: check: %s\n",
		(unsigned long long)t->seed, (unsigned long long)t->op, msg);
}

static void remount(struct mt *t)
{
	ck_assert_int_eq(zcow_unmount(t->fs), 0);
	t->fs = NULL;
	ck_assert_int_eq(zcow_mount(t->dev, &t->opts, &t->fs), 0);
	ck_assert_msg(zcow_check(t->fs, problem, t) == 0,
		      FAILMSG "check not clean", ARGS);
	verify(t);
}

static void do_write(struct mt *t, struct ment *e, const char *path)
{
	uint64_t off = rnd(t) % (MAX_FILE / 2), len, i;
	struct zcow_file *f;
	uint8_t *buf;

	switch (rnd(t) % 3) {
	case 0:
		len = 1 + rnd(t) % 100;
		break;
	case 1:
		len = 4096 * (1 + rnd(t) % 4);
		off &= ~4095ULL;
		break;
	default:
		len = 1 + rnd(t) % (MAX_FILE / 2);
		break;
	}
	buf = malloc(len);
	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)(rnd(t) | 1);
	ck_assert_int_eq(zcow_open(t->fs, path, O_RDWR, &f), 0);
	ck_assert_msg(zcow_pwrite(f, buf, len, off) == (int64_t)len,
		      FAILMSG "write %s", ARGS, path);
	if (rnd(t) % 8 == 0)
		ck_assert_int_eq(zcow_fsync(f), 0);
	zcow_close(f);
	if (off + len > e->size) {
		e->data = realloc(e->data, off + len);
		memset(e->data + e->size, 0, off + len - e->size);
		e->size = off + len;
	}
	memcpy(e->data + off, buf, len);
	free(buf);
}

static void do_rename(struct mt *t, const char *src, const char *dst)
{
	struct model *m = &t->live;
	struct ment *s, *d;
	struct where ws, wd;
	size_t sl = strlen(src);
	int want = 0, got, i;

	locate(t, src, &ws);
	locate(t, dst, &wd);
	s = ws.is_subvol ? NULL : find(ws.m, ws.rel);
	d = wd.is_subvol ? NULL : find(wd.m, wd.rel);
	if (!s && !ws.is_subvol)
		want = missing(&ws);
	else if ((want = parent_ok(wd.m, wd.rel)))
		;
	else if (ws.is_subvol || wd.is_subvol)
		want = -EXDEV;	/* no subvolume entry moves */
	else if (ws.is_ro || wd.is_ro)
		want = -EROFS;
	else if (s->is_dir && !strncmp(dst, src, sl) &&
		 (dst[sl] == '/' || !dst[sl]))
		want = strcmp(src, dst) ? -EINVAL : 0;
	else if (d && d != s && s->is_dir && !d->is_dir)
		want = -ENOTDIR;
	else if (d && d != s && !s->is_dir && d->is_dir)
		want = -EISDIR;
	else if (d && d != s && d->is_dir && has_children(m, dst))
		want = -ENOTEMPTY;
	got = zcow_rename(t->fs, src, dst);
	ck_assert_msg(got == want, FAILMSG "rename %s %s: %d, model %d", ARGS,
		      src, dst, got, want);
	if (want || s == d)
		return;
	if (d)
		del_ent(m, d);
	s = find(m, src);
	for (i = 0; i < m->nr; i++) {
		struct ment *e = &m->e[i];
		char np[256];

		if (!strncmp(e->path, src, sl) &&
		    (e->path[sl] == '/' || !e->path[sl])) {
			snprintf(np, sizeof(np), "%s%s", dst, e->path + sl);
			ck_assert_uint_lt(strlen(np), sizeof(e->path));
			strcpy(e->path, np);
		}
	}
}

static void step(struct mt *t)
{
	struct model *m = &t->live;
	char path[64], path2[64];
	struct zcow_file *f;
	struct ment *e;
	struct where w;
	uint64_t r = rnd(t) % 100;
	int want, got;

	rand_path(t, path);
	locate(t, path, &w);
	e = w.is_subvol ? NULL : find(w.m, w.rel);
	if (r < 15) {			/* create */
		want = w.is_subvol || e ? -EEXIST : parent_ok(w.m, w.rel);
		if (!want && w.is_ro)
			want = -EROFS;
		if (!want && m->nr >= MAX_ENT)
			return;
		got = zcow_create(t->fs, path, &f);
		ck_assert_msg(got == want, FAILMSG "create %s: %d, model %d",
			      ARGS, path, got, want);
		if (!got) {
			zcow_close(f);
			e = &m->e[m->nr++];
			memset(e, 0, sizeof(*e));
			strcpy(e->path, path);
		}
	} else if (r < 50) {		/* write */
		if (e && !e->is_dir && w.is_ro)
			ck_assert_int_eq(zcow_open(t->fs, path, O_RDWR, &f),
					 -EROFS);
		else if (e && !e->is_dir)
			do_write(t, e, path);
	} else if (r < 57) {		/* truncate */
		if (e && !e->is_dir && !w.is_ro) {
			uint64_t size = rnd(t) % MAX_FILE;

			ck_assert_int_eq(zcow_open(t->fs, path, O_RDWR, &f), 0);
			ck_assert_int_eq(zcow_truncate(f, size), 0);
			zcow_close(f);
			if (size > e->size) {
				e->data = realloc(e->data, size);
				memset(e->data + e->size, 0, size - e->size);
			}
			e->size = size;
		}
	} else if (r < 67) {		/* rename */
		rand_path(t, path2);
		do_rename(t, path, path2);
	} else if (r < 75) {		/* unlink */
		want = w.is_subvol ? -EPERM : !e ? missing(&w) :
		       w.is_ro ? -EROFS : e->is_dir ? -EISDIR : 0;
		got = zcow_unlink(t->fs, path);
		ck_assert_msg(got == want, FAILMSG "unlink %s: %d, model %d",
			      ARGS, path, got, want);
		if (!got)
			del_ent(m, e);
	} else if (r < 85) {		/* mkdir */
		want = parent_ok(w.m, w.rel);
		if (!want)
			want = w.is_ro ? -EROFS :
			       w.is_subvol || e ? -EEXIST : 0;
		if (!want && m->nr >= MAX_ENT)
			return;
		got = zcow_mkdir(t->fs, path);
		ck_assert_msg(got == want, FAILMSG "mkdir %s: %d, model %d",
			      ARGS, path, got, want);
		if (!got) {
			e = &m->e[m->nr++];
			memset(e, 0, sizeof(*e));
			strcpy(e->path, path);
			e->is_dir = true;
		}
	} else if (r < 92) {		/* rmdir */
		want = w.is_subvol ? -EPERM : !e ? missing(&w) :
		       w.is_ro ? -EROFS : !e->is_dir ? -ENOTDIR :
		       has_children(m, path) ? -ENOTEMPTY : 0;
		got = zcow_rmdir(t->fs, path);
		ck_assert_msg(got == want, FAILMSG "rmdir %s: %d, model %d",
			      ARGS, path, got, want);
		if (!got)
			del_ent(m, e);
	} else if (r < 93) {		/* snapshot */
		if (t->nr_snaps < MAX_SNAP && rnd(t) % 4 == 0) {
			char *name = t->snap_names[t->nr_snaps];
			char top[20];
			struct where ws;
			int i;

			/* s0 and s1 are path names too (taken: -EEXIST) */
			snprintf(name, 16, "s%d", (int)(rnd(t) % MAX_SNAP));
			snprintf(top, sizeof(top), "/%s", name);
			locate(t, top, &ws);
			want = ws.is_subvol || find(m, top) ? -EEXIST : 0;
			got = zcow_snapshot(t->fs, name, NULL);
			ck_assert_msg(got == want,
				      FAILMSG "snapshot %s: %d, model %d",
				      ARGS, name, got, want);
			if (got)
				return;
			model_copy(&t->snaps[t->nr_snaps], m);
			/* the earlier snapshots' entries, copied */
			for (i = 0; i < t->nr_snaps; i++) {
				struct model *sm = &t->snaps[t->nr_snaps];
				char nm[sizeof(t->snap_names[i])];

				/* (a copy: both lie in *t, for the compiler
				 * possibly overlapping) */
				memcpy(nm, t->snap_names[i], sizeof(nm));
				e = &sm->e[sm->nr++];
				memset(e, 0, sizeof(*e));
				snprintf(e->path, sizeof(e->path), "/%s", nm);
				e->is_dir = e->is_subvol = true;
			}
			t->nr_snaps++;
		}
	} else if (r < 96) {		/* sync */
		ck_assert_int_eq(zcow_sync(t->fs), 0);
	} else if (r < 97) {		/* remount */
		remount(t);
	}
}

static void run_model(struct zdev *dev, bool no_append, uint64_t seed,
		      uint64_t nr_ops, uint32_t nodesize)
{
	struct zcow_mkfs_opts mo = { .seed = seed, .nodesize = nodesize };
	struct mt *t = calloc(1, sizeof(*t));
	const char *env = getenv("ZCOW_MODEL_OPS");
	int i;

	if (env)
		nr_ops = strtoull(env, NULL, 0);
	env = getenv("ZCOW_MODEL_SEED");	/* explore: shifts every seed */
	if (env)
		seed += strtoull(env, NULL, 0);
	t->dev = dev;
	t->seed = seed;
	t->rng = seed;
	t->opts.no_zone_append = no_append;
	t->opts.commit_bytes = 4 * MiB;
	ck_assert_int_eq(zcow_mkfs(dev, &mo), 0);
	ck_assert_int_eq(zcow_mount(dev, &t->opts, &t->fs), 0);
	for (t->op = 0; t->op < nr_ops; t->op++)
		step(t);
	remount(t);
	if (getenv("ZCOW_TEST_VERBOSE"))
		fprintf(stderr, "model seed %llu: %llu ops, %d entries, %d snapshots, %llu commits\n",
			(unsigned long long)seed, (unsigned long long)nr_ops,
			t->live.nr, t->nr_snaps,
			(unsigned long long)t->fs->cstats.nr_commits);
	ck_assert_int_eq(zcow_unmount(t->fs), 0);
	model_free(&t->live);
	for (i = 0; i < MAX_SNAP; i++)
		model_free(&t->snaps[i]);
	free(t);
}

static struct zdev *sim_dev(void)
{
	struct zsim_config cfg = { .nr_zones = 96, .zone_size = ZS, .seed = 3 };

	return zcow_test_sim(&cfg);
}

START_TEST(test_files_model_sim_zone_append)
{
	struct zdev *dev = sim_dev();

	run_model(dev, false, 1000 + (uint64_t)_i, 5000, 0);
	ck_assert_uint_eq(zsim_nr_violations(zsim_from_dev(dev),
					     ZSIM_RULE_WRITE_NOT_AT_WP), 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_files_model_sim_plain_writes)
{
	struct zdev *dev = sim_dev();

	/* _i 1: 4 KiB nodes (deeper trees, more splits) */
	run_model(dev, true, 2000 + (uint64_t)_i, 5000, _i ? 4096 : 0);
	ck_assert_uint_eq(zsim_nr_violations(zsim_from_dev(dev),
					     ZSIM_RULE_WRITE_NOT_AT_WP), 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_files_model_sim_max_active_zones)
{
	struct zsim_config cfg = { .nr_zones = 96, .zone_size = ZS, .seed = 4,
				   .max_active = 8, .max_open = 8 };
	struct zdev *dev = NULL;

	ck_assert_int_eq(zsim_create(&cfg, &dev), 0);
	run_model(dev, _i == 1, 4000 + (uint64_t)_i, 2000, 0);
	ck_assert_uint_eq(zsim_nr_violations(zsim_from_dev(dev),
					     ZSIM_RULE_TOO_MANY_ACTIVE), 0);
	zdev_close(dev);
}
END_TEST

START_TEST(test_files_model_emulated_zones)
{
	char path[] = "/tmp/zcow-model-XXXXXX", spec[128];
	struct zdev *dev;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, 96 * (off_t)ZS), 0);
	close(fd);
	snprintf(spec, sizeof(spec), "file:%s,zone_size=4M", path);
	ck_assert_int_eq(zdev_open(spec, &dev), 0);
	run_model(dev, _i == 1, 3000 + (uint64_t)_i, 3000, 0);
	zdev_close(dev);
	unlink(path);
}
END_TEST

Suite *files_model_suite(void)
{
	Suite *s = suite_create("files_model_suite");
	TCase *tc = tcase_create("model");

	tcase_set_timeout(tc, 120);
	/* 2 x 5000 + 2 x 5000 + 2 x 2000 + 2 x 3000 = 30000 operations. */
	tcase_add_loop_test(tc, test_files_model_sim_zone_append, 0, 2);
	tcase_add_loop_test(tc, test_files_model_sim_max_active_zones, 0, 2);
	tcase_add_loop_test(tc, test_files_model_sim_plain_writes, 0, 2);
	tcase_add_loop_test(tc, test_files_model_emulated_zones, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}
