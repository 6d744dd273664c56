// SPDX-License-Identifier: MIT
/*
 * workload=ops (harness/crash_int.h, docs/crash.md "Recorded
 * operations"): a recorded-operations file (harness/ops_parse.h) turned
 * into the ops a campaign replays on a fresh simulated file system.
 *
 * The file names files by handle (create/open FH ... write FH ...); the
 * campaign's ops name them by path (each op opens its path, acts, closes:
 * fsync and fdatasync act on the inode, whichever handle).  So the
 * recording is walked once here with a namespace of its own: every name
 * (file or directory, its inode), and every open handle's inode; a
 * handle's file is reached by its name at the time of the call, through
 * renames of it and of the directories above it.  The walk also checks
 * that the file is consistent with itself from an empty file system (a
 * parent that exists, a handle that is open, O_EXCL on a new name, a
 * rename the kernel would have allowed): a recording that is not is
 * refused with its line (never silently skipped).
 *
 * A write writes LEN bytes of a pattern derived from its line number
 * (zcrash_fill() with the line's tag): the program's data is not in the
 * file (only its crc32c), and the oracle must know every byte.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crash_int.h"
#include "grow.h"
#include "ops_parse.h"

/* Linux's renameat2() flags (the recording's FLAGS). */
#define REC_RENAME_NOREPLACE	1u
#define REC_RENAME_EXCHANGE	2u

/* A name in the recording's namespace ("/" is implicit). */
struct tname {
	char path[PATH_LEN];
	bool is_dir;
	bool is_symlink;
	uint64_t ino;
};

struct tr {
	const char *file;
	const struct zops_line *l;	/* the line being walked */
	struct tname n[MAX_ENT];
	unsigned int nr;
	uint64_t last_ino;
	uint64_t *fh_ino;		/* by handle number; 0 = closed */
	uint64_t nr_fh;
	struct wl *w;
	char *err;
	size_t elen;
};

static int refuse(struct tr *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int refuse(struct tr *t, const char *fmt, ...)
{
	int n = snprintf(t->err, t->elen, "%s:%u: %s: ", t->file, t->l->line,
			 ops_kind_name(t->l->kind));
	va_list ap;

	if (n >= 0 && (size_t)n < t->elen) {
		va_start(ap, fmt);
		vsnprintf(t->err + n, t->elen - n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static struct tname *lookup(struct tr *t, const char *p)
{
	unsigned int i;

	for (i = 0; i < t->nr; i++)
		if (!strcmp(t->n[i].path, p))
			return &t->n[i];
	return NULL;
}

/* The first name of inode @ino, NULL when it has none (unlinked). */
static struct tname *name_of(struct tr *t, uint64_t ino)
{
	unsigned int i;

	for (i = 0; i < t->nr; i++)
		if (t->n[i].ino == ino)
			return &t->n[i];
	return NULL;
}

/* @p fits the model, and its parent is an existing directory. */
static int check_new(struct tr *t, const char *p)
{
	const char *slash = strrchr(p, '/');
	char parent[PATH_LEN];
	struct tname *d;

	if (strlen(p) >= PATH_LEN)
		return refuse(t, "%s: longer than the %u bytes the crash model holds",
			      p, PATH_LEN - 1);
	if (!strcmp(p, "/"))
		return refuse(t, "/: exists (the top level)");
	if (lookup(t, p))
		return refuse(t, "%s: exists already", p);
	if (slash == p)
		return 0;
	snprintf(parent, sizeof(parent), "%.*s", (int)(slash - p), p);
	d = lookup(t, parent);
	if (!d)
		return refuse(t, "%s: its directory %s does not exist (the replay starts from an empty file system)",
			      p, parent);
	if (!d->is_dir)
		return refuse(t, "%s: %s is not a directory", p, parent);
	return 0;
}

static int add_name(struct tr *t, const char *p, bool is_dir, uint64_t ino)
{
	struct tname *e;

	if (t->nr >= MAX_ENT)
		return refuse(t, "%s: more than %u names at once: the crash model holds %u",
			      p, MAX_ENT, MAX_ENT);
	e = &t->n[t->nr++];
	snprintf(e->path, sizeof(e->path), "%s", p);
	e->is_dir = is_dir;
	e->is_symlink = false;
	e->ino = ino ? ino : ++t->last_ino;
	return 0;
}

static void del_name(struct tr *t, struct tname *e)
{
	*e = t->n[--t->nr];
}

static bool has_children(struct tr *t, const char *d)
{
	size_t l = strlen(d);
	unsigned int i;

	for (i = 0; i < t->nr; i++)
		if (!strncmp(t->n[i].path, d, l) && t->n[i].path[l] == '/')
			return true;
	return false;
}

/* An existing file at @p (not a directory). */
static int want_file(struct tr *t, const char *p, struct tname **e_ret)
{
	struct tname *e = lookup(t, p);

	if (!e)
		return refuse(t, "%s: no such file", p);
	if (e->is_dir)
		return refuse(t, "%s: a directory", p);
	if (e->is_symlink)	/* FUSE's kernel side resolves symlinks */
		return refuse(t, "%s: a symlink (the kernel resolves symlinks: a recorded call on a file never names one)",
			      p);
	*e_ret = e;
	return 0;
}

/* Bind handle @fh (closed) to inode @ino. */
static int bind_fh(struct tr *t, uint64_t fh, uint64_t ino)
{
	if (fh >= t->nr_fh) {
		uint64_t n = fh + 16, *a;

		a = realloc(t->fh_ino, n * sizeof(*a));
		if (!a)
			return -ENOMEM;
		memset(a + t->nr_fh, 0, (n - t->nr_fh) * sizeof(*a));
		t->fh_ino = a;
		t->nr_fh = n;
	}
	if (t->fh_ino[fh])
		return refuse(t, "handle %" PRIu64 " is open already (handles are reused only after close)",
			      fh);
	t->fh_ino[fh] = ino;
	return 0;
}

/* The path that reaches open handle @fh's file now. */
static int fh_path(struct tr *t, uint64_t fh, const char **p_ret)
{
	struct tname *e;

	if (fh >= t->nr_fh || !t->fh_ino[fh])
		return refuse(t, "handle %" PRIu64 " is not open", fh);
	e = name_of(t, t->fh_ino[fh]);
	if (!e)
		return refuse(t, "handle %" PRIu64 ": its file has no name left (removed while open): the replay reaches files by name",
			      fh);
	*p_ret = e->path;
	return 0;
}

/* Append an op for the current line. */
static int emit(struct tr *t, enum op_kind k, const char *a, const char *b,
		uint64_t off, uint64_t len)
{
	struct op *o = zcrash_wl_push(t->w, k, a, b, off, len);

	if (!o)
		return -ENOMEM;
	o->line = t->l->line;
	/* the pattern of a write: derived from its line number */
	o->tag = zcrash_mix64(t->l->line);
	o->expect = k == OP_FALLOCATE ? -EOPNOTSUPP : 0;
	return 0;
}

/* The op emit() just added, for the fields it does not set. */
static struct op *last_op(struct tr *t)
{
	return &t->w->ops[t->w->nr - 1];
}

/* emit() with the line's mode and owner (mkdir, create, symlink). */
static int emit_owned(struct tr *t, enum op_kind k, const char *a)
{
	int ret = emit(t, k, a, NULL, 0, 0);

	if (!ret) {
		last_op(t)->mode = t->l->mode;
		last_op(t)->uid = t->l->uid;
		last_op(t)->gid = t->l->gid;
	}
	return ret;
}

/* An existing name or the top level (the attribute calls). */
static int want_any(struct tr *t, const char *p)
{
	if (strcmp(p, "/") && !lookup(t, p))
		return refuse(t, "%s: no such file or directory", p);
	return 0;
}

/* Rename the names at and below @from to @to. */
static void move_names(struct tr *t, const char *from, const char *to)
{
	size_t l = strlen(from);
	unsigned int i;

	for (i = 0; i < t->nr; i++) {
		char np[PATH_LEN];

		if (strncmp(t->n[i].path, from, l) ||
		    (t->n[i].path[l] && t->n[i].path[l] != '/'))
			continue;
		snprintf(np, sizeof(np), "%s%s", to, t->n[i].path + l);
		memcpy(t->n[i].path, np, PATH_LEN);
	}
}

/* The longest name at or below @p, less @p's own length. */
static size_t longest_below(struct tr *t, const char *p)
{
	size_t l = strlen(p), n = 0;
	unsigned int i;

	for (i = 0; i < t->nr; i++)
		if (!strncmp(t->n[i].path, p, l) &&
		    (!t->n[i].path[l] || t->n[i].path[l] == '/') &&
		    strlen(t->n[i].path) - l > n)
			n = strlen(t->n[i].path) - l;
	return n;
}

/* RENAME_EXCHANGE: both names exist, neither below the other; the
 * names at and below each take the other's place. */
static int do_exchange(struct tr *t, const struct zops_line *l)
{
	size_t l2 = strlen(l->path2);
	unsigned int i;
	int ret;

	if (!lookup(t, l->path2))
		return refuse(t, "%s: no such file or directory (RENAME_EXCHANGE needs both)",
			      l->path2);
	if (!strncmp(l->path, l->path2, l2) && l->path[l2] == '/')
		return refuse(t, "%s: below %s", l->path, l->path2);
	if (strlen(l->path2) + longest_below(t, l->path) >= PATH_LEN ||
	    strlen(l->path) + longest_below(t, l->path2) >= PATH_LEN)
		return refuse(t, "a name would be longer than the %u bytes the crash model holds",
			      PATH_LEN - 1);
	ret = emit(t, OP_RENAME, l->path, l->path2, 0, 0);
	if (ret)
		return ret;
	last_op(t)->flags = l->flags;
	for (i = 0; i < t->nr; i++) {
		char np[PATH_LEN];
		const char *p = t->n[i].path;
		size_t la = strlen(l->path);

		if (!strncmp(p, l->path, la) && (!p[la] || p[la] == '/'))
			snprintf(np, sizeof(np), "%s%s", l->path2, p + la);
		else if (!strncmp(p, l->path2, l2) && (!p[l2] || p[l2] == '/'))
			snprintf(np, sizeof(np), "%s%s", l->path, p + l2);
		else
			continue;
		memcpy(t->n[i].path, np, PATH_LEN);
	}
	return 0;
}

static int do_rename(struct tr *t, const struct zops_line *l)
{
	struct tname *from = lookup(t, l->path), *to = lookup(t, l->path2);
	size_t lf = strlen(l->path);
	int ret;

	if (l->flags & ~(REC_RENAME_NOREPLACE | REC_RENAME_EXCHANGE))
		return refuse(t, "FLAGS %u: only RENAME_NOREPLACE (1) and RENAME_EXCHANGE (2) are zcow's",
			      l->flags);
	if (l->flags == (REC_RENAME_NOREPLACE | REC_RENAME_EXCHANGE))
		return refuse(t, "FLAGS 3: RENAME_NOREPLACE with RENAME_EXCHANGE (the kernel refuses it)");
	if (!from)
		return refuse(t, "%s: no such file or directory", l->path);
	if (!strcmp(l->path, l->path2))	/* the kernel's no-op */
		return emit(t, OP_RENAME, l->path, l->path2, 0, 0) ?:
		       (last_op(t)->flags = l->flags, 0);
	if (!strncmp(l->path2, l->path, lf) && l->path2[lf] == '/')
		return refuse(t, "%s: into itself", l->path2);
	if (l->flags & REC_RENAME_EXCHANGE)
		return do_exchange(t, l);
	if (to && to->ino == from->ino)	/* two links of one inode: a no-op */
		return emit(t, OP_RENAME, l->path, l->path2, 0, 0) ?:
		       (last_op(t)->flags = l->flags, 0);
	if (to) {
		if (l->flags & REC_RENAME_NOREPLACE)
			return refuse(t, "%s exists, yet RENAME_NOREPLACE succeeded", l->path2);
		if (from->is_dir && !to->is_dir)
			return refuse(t, "%s over the file %s", l->path, l->path2);
		if (!from->is_dir && to->is_dir)
			return refuse(t, "%s over the directory %s", l->path, l->path2);
		if (to->is_dir && has_children(t, l->path2))
			return refuse(t, "%s over the directory %s, which is not empty",
				      l->path, l->path2);
	} else {
		ret = check_new(t, l->path2);
		if (ret)
			return ret;
	}
	/* every name moved must still fit the model */
	if (strlen(l->path2) + longest_below(t, l->path) >= PATH_LEN)
		return refuse(t, "%s: a name below it would be longer than the %u bytes the crash model holds",
			      l->path2, PATH_LEN - 1);
	ret = emit(t, OP_RENAME, l->path, l->path2, 0, 0);
	if (ret)
		return ret;
	last_op(t)->flags = l->flags;
	if (to)
		del_name(t, to);
	move_names(t, l->path, l->path2);
	return 0;
}

/* One line of the recording. */
static int walk_line(struct tr *t, const struct zops_line *l)
{
	struct tname *e = NULL;
	const char *p = NULL;
	int ret;

	t->l = l;
	switch (l->kind) {
	case OPS_MKDIR:
		ret = check_new(t, l->path) ?: add_name(t, l->path, true, 0);
		return ret ?: emit_owned(t, OP_MKDIR, l->path);
	case OPS_CREATE:
		e = lookup(t, l->path);
		if (e) {	/* O_CREAT on a name that exists: an open */
			if (e->is_dir || e->is_symlink)
				return refuse(t, "%s: a %s", l->path,
					      e->is_dir ? "directory" : "symlink");
			if (l->flags & O_EXCL)
				return refuse(t, "%s exists, yet O_EXCL succeeded", l->path);
			ret = bind_fh(t, l->fh, e->ino);
			if (!ret && (l->flags & O_TRUNC))
				ret = emit(t, OP_TRUNC, l->path, NULL, 0, 0);
			return ret;
		}
		ret = check_new(t, l->path) ?: add_name(t, l->path, false, 0);
		return ret ?: bind_fh(t, l->fh, t->last_ino) ?:
		       emit_owned(t, OP_CREATE, l->path);
	case OPS_OPEN:
		if (l->flags & O_CREAT)
			return refuse(t, "FLAGS %u has O_CREAT: the recorder writes such an open as create",
				      l->flags);
		ret = want_file(t, l->path, &e) ?: bind_fh(t, l->fh, e->ino);
		if (!ret && (l->flags & O_TRUNC))
			ret = emit(t, OP_TRUNC, l->path, NULL, 0, 0);
		return ret;
	case OPS_CLOSE:
		ret = fh_path(t, l->fh, &p);
		/* a handle whose file lost its name may still be closed */
		if (ret && l->fh < t->nr_fh && t->fh_ino[l->fh])
			ret = 0;
		if (!ret)
			t->fh_ino[l->fh] = 0;
		return ret;
	case OPS_WRITE:
		return fh_path(t, l->fh, &p) ?:
		       emit(t, OP_WRITE, p, NULL, l->off, l->len);
	case OPS_TRUNCATE:
		return want_file(t, l->path, &e) ?:
		       emit(t, OP_TRUNC, l->path, NULL, l->size, 0);
	case OPS_FSYNC:
		return fh_path(t, l->fh, &p) ?:
		       emit(t, l->is_datasync ? OP_FDATASYNC : OP_FSYNC, p,
			    NULL, 0, 0);
	case OPS_FSYNCDIR:
		e = lookup(t, l->path);
		if (strcmp(l->path, "/") && (!e || !e->is_dir))
			return refuse(t, "%s: no such directory", l->path);
		return emit(t, OP_FSYNC, l->path, NULL, 0, 0);
	case OPS_UNLINK:	/* a file or a symlink (itself) */
		e = lookup(t, l->path);
		if (!e)
			return refuse(t, "%s: no such file", l->path);
		if (e->is_dir)
			return refuse(t, "%s: a directory", l->path);
		ret = emit(t, OP_UNLINK, l->path, NULL, 0, 0);
		if (!ret)
			del_name(t, e);
		return ret;
	case OPS_RMDIR:
		e = lookup(t, l->path);
		if (!e || !e->is_dir)
			return refuse(t, "%s: no such directory", l->path);
		if (has_children(t, l->path))
			return refuse(t, "%s: not empty", l->path);
		ret = emit(t, OP_RMDIR, l->path, NULL, 0, 0);
		if (!ret)
			del_name(t, e);
		return ret;
	case OPS_RENAME:
		return do_rename(t, l);
	case OPS_LINK:
		e = lookup(t, l->path);
		if (!e)
			return refuse(t, "%s: no such file", l->path);
		if (e->is_dir)
			return refuse(t, "%s: a directory (the kernel refuses it: EPERM)",
				      l->path);
		ret = check_new(t, l->path2);
		if (!ret)
			ret = emit(t, OP_LINK, l->path, l->path2, 0, 0);
		return ret ?: add_name(t, l->path2, false, e->ino) ?:
		       (t->n[t->nr - 1].is_symlink = e->is_symlink, 0);
	case OPS_SYMLINK:
		ret = check_new(t, l->path2) ?: add_name(t, l->path2, false, 0);
		if (!ret) {
			t->n[t->nr - 1].is_symlink = true;
			ret = emit_owned(t, OP_SYMLINK, l->path2);
		}
		if (!ret) {
			last_op(t)->value = (const uint8_t *)l->path;
			last_op(t)->value_len = strlen(l->path);
		}
		return ret;
	case OPS_CHMOD:
		ret = want_any(t, l->path) ?:
		      emit(t, OP_CHMOD, l->path, NULL, 0, 0);
		if (!ret)
			last_op(t)->mode = l->mode;
		return ret;
	case OPS_CHOWN:
		ret = want_any(t, l->path) ?:
		      emit(t, OP_CHOWN, l->path, NULL, 0, 0);
		if (!ret) {
			last_op(t)->uid = l->uid;
			last_op(t)->gid = l->gid;
		}
		return ret;
	case OPS_UTIMENS:
		ret = want_any(t, l->path) ?:
		      emit(t, OP_UTIMENS, l->path, NULL, 0, 0);
		if (!ret) {
			struct op *o = last_op(t);

			o->ts[0].sec = l->asec;
			o->ts[0].nsec = l->ansec;
			o->ts[1].sec = l->msec;
			o->ts[1].nsec = l->mnsec;
		}
		return ret;
	case OPS_SETXATTR:
	case OPS_REMOVEXATTR:	/* the name fits o->b: 255 bytes at most */
		ret = want_any(t, l->path) ?:
		      emit(t, l->kind == OPS_SETXATTR ? OP_SETXATTR :
			   OP_REMOVEXATTR, l->path, l->name, 0, 0);
		if (!ret) {
			last_op(t)->flags = l->flags;
			last_op(t)->value = l->value;
			last_op(t)->value_len = l->value_len;
		}
		return ret;
	case OPS_FALLOCATE:	/* zoned storage refuses it: expected */
		return fh_path(t, l->fh, &p) ?:
		       emit(t, OP_FALLOCATE, p, NULL, l->off, l->len);
	case OPS_SYNC:
		return emit(t, OP_SYNC, NULL, NULL, 0, 0);
	case OPS_NR_KINDS:
		break;
	}
	return refuse(t, "not a call");
}

int zcrash_ops_load(struct camp *c, char *err, size_t elen)
{
	struct tr *t = calloc(1, sizeof(*t));
	struct zops *z = NULL;
	uint64_t i;
	int ret;

	free(c->ops_wl.ops);
	memset(&c->ops_wl, 0, sizeof(c->ops_wl));
	zops_free(c->ops_parsed);
	c->ops_parsed = NULL;
	if (!t) {
		snprintf(err, elen, "%s: out of memory", c->ops_file);
		return -ENOMEM;
	}
	ret = zops_parse_file(c->ops_file, &z, err, elen);
	if (ret) {
		free(t);
		return ret;
	}
	t->file = c->ops_file;
	t->w = &c->ops_wl;
	t->err = err;
	t->elen = elen;
	for (i = 0; i < z->nr && !ret; i++) {
		ret = walk_line(t, &z->l[i]);
		if (ret == -ENOMEM)
			snprintf(err, elen, "%s: out of memory", c->ops_file);
	}
	if (!ret && !c->ops_wl.nr) {
		snprintf(err, elen, "%s: no calls to replay", c->ops_file);
		ret = -EINVAL;
	}
	if (!ret)
		snprintf(c->ops_wl.desc, sizeof(c->ops_wl.desc),
			 "ops %.100s (%" PRIu64 " calls, %u ops)",
			 c->ops_file, z->nr, c->ops_wl.nr);
	free(t->fh_ino);
	free(t);
	if (ret) {
		zops_free(z);
		free(c->ops_wl.ops);
		memset(&c->ops_wl, 0, sizeof(c->ops_wl));
		return ret;
	}
	c->ops_parsed = z;	/* symlink targets, xattr values */
	return 0;
}
