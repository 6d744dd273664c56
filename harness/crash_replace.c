// SPDX-License-Identifier: MIT
/*
 * zcrash, workload=replace (harness/crash_int.h, docs/crash.md): the
 * file system's one device replaced by a second device while files are
 * written, and a power cut anywhere.
 *
 * The target is opened from the source's spec and linked into the
 * source's power domain (sim/zsim.h, zsim_link_power()): a cut at any
 * persist point of either device cuts both, and the points of both are
 * numbered together.  After the power cycle the state is mounted where
 * the file system is (zcrash_replace_pick()); oracle 10
 * (zcrash_replace_check()) judges the replace itself, the other oracles
 * the files on the mounted device.
 *
 * What a replace promises across a crash (core/replace.c): until the
 * commit that finishes it, everything lives on the source (writes into
 * groups already copied are cloned to the target as well), so the next
 * mount of the source cancels the replace; that commit writes the trees
 * and the superblocks on the target, which takes the source's devid and
 * uuid; only after it is durable are the source's superblocks wiped.
 * So the state is one of two, never a mix:
 *
 *   where the fs is | replace state at mount        | when
 *   ----------------+-------------------------------+--------------------
 *   source          | NEVER_STARTED                 | cut before the
 *                   |                               | start's commit
 *   source          | CANCELED, src_devid = source  | cut after it and
 *                   | (-1 once a recovery committed | before the finish's
 *                   | the cancel)                   | commit
 *   target          | FINISHED; the source mounts   | cut after the
 *                   | no newer fs (none at all once | finish's commit
 *                   | the finish was acknowledged)  |
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "crash_int.h"

int zcrash_replace_open(const struct camp *c, struct zdev *src,
			struct zcrash_pair *p)
{
	struct zcow_super_block sb;
	struct zcow_sb_copy copy;
	int ret;

	memset(p, 0, sizeof(*p));
	p->src = src;
	if (strcmp(c->workload, "replace"))
		return 0;
	ret = zcow_sb_read_latest(src, &sb, &copy);
	if (ret)
		return ret;
	memcpy(p->fsid, sb.fsid, sizeof(p->fsid));
	ret = zdev_open(c->spec, &p->tgt);
	if (ret)
		return ret;
	if (!zsim_from_dev(p->tgt))
		ret = -EINVAL;
	else
		ret = zsim_link_power(zsim_from_dev(src),
				      zsim_from_dev(p->tgt));
	if (ret)
		zcrash_replace_close(p);
	return ret;
}

void zcrash_replace_close(struct zcrash_pair *p)
{
	if (p->tgt)
		zdev_close(p->tgt);
	p->tgt = NULL;
}

/* The newest valid superblock of the fs on @dev: its generation into
 * *@gen_ret; false when there is none. */
static bool read_gen(struct zdev *dev, const uint8_t *fsid,
		     uint64_t *gen_ret)
{
	struct zcow_super_block sb;
	struct zcow_sb_copy copy;

	*gen_ret = 0;
	if (zcow_sb_read_latest(dev, &sb, &copy) ||
	    memcmp(sb.fsid, fsid, sizeof(sb.fsid)))
		return false;
	*gen_ret = le64toh(sb.generation);
	return true;
}

struct zdev *zcrash_replace_pick(struct zcrash_pair *p)
{
	p->has_sb[0] = read_gen(p->src, p->fsid, &p->gen[0]);
	p->has_sb[1] = read_gen(p->tgt, p->fsid, &p->gen[1]);
	p->on_target = p->has_sb[1] &&
		       (!p->has_sb[0] || p->gen[1] > p->gen[0]);
	return p->on_target ? p->tgt : p->src;
}

/* The index of the first op of @kind in @w, or w->nr. */
static unsigned int find_op(const struct wl *w, enum op_kind kind)
{
	unsigned int i;

	for (i = 0; i < w->nr; i++)
		if (w->ops[i].kind == kind)
			break;
	return i;
}

static void say(void (*report)(void *arg, const char *msg), void *arg,
		const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(void (*report)(void *arg, const char *msg), void *arg,
		const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	report(arg, msg);
}

/* The fs on the target: FINISHED (@st NULL: the mount failed), and the
 * source no newer fs (no fs at all once the finish was acknowledged). */
static void check_on_target(const struct zcrash_pair *p, unsigned int fin,
			    unsigned int cut_op,
			    const struct zcow_replace_status *st,
			    struct zcow_fs *fs,
			    void (*report)(void *arg, const char *msg),
			    void *arg)
{
	struct zcow_mount_opts ro = { .read_only = true };
	struct zcow_fs *old = NULL;
	uint64_t gen;

	if (cut_op < fin)
		say(report, arg, "the target holds the fs (generation %" PRIu64 ") before the finish (op %u) ran, cut at op %u",
		    p->gen[1], fin, cut_op);
	if (st && st->state != ZCOW_REPLACE_FINISHED)
		say(report, arg, "the target mounted with the replace %s, not finished",
		    zcow_replace_state_name(st->state));
	if (zcow_mount(p->src, &ro, &old))
		return;
	gen = zcow_fs_generation(old);
	zcow_unmount(old);
	if (fs && gen >= zcow_fs_generation(fs))
		say(report, arg, "the source mounts generation %" PRIu64 ", not older than the target's %" PRIu64,
		    gen, zcow_fs_generation(fs));
	else if (cut_op > fin)
		say(report, arg, "the source still mounts (generation %" PRIu64 ") after the finish (op %u) was acknowledged",
		    gen, fin);
}

/* The fs on the source (devid @devid): the replace cancelled (or never
 * started when the cut came before the start's commit), never finished
 * (@st NULL: the mount failed). */
static void check_on_source(const struct zcrash_pair *p, uint64_t devid,
			    unsigned int start, unsigned int fin,
			    unsigned int cut_op,
			    const struct zcow_replace_status *st,
			    void (*report)(void *arg, const char *msg),
			    void *arg)
{
	bool is_ok;

	if (cut_op > fin)
		say(report, arg, "the fs is on the source (generation %" PRIu64 "; target %s) after the finish (op %u) was acknowledged",
		    p->gen[0], p->has_sb[1] ? "older" : "none", fin);
	if (!st)
		return;
	if (cut_op < start)
		is_ok = st->state == ZCOW_REPLACE_NEVER_STARTED;
	else if (cut_op == start)
		is_ok = st->state == ZCOW_REPLACE_NEVER_STARTED ||
			st->state == ZCOW_REPLACE_CANCELED;
	else
		is_ok = st->state == ZCOW_REPLACE_CANCELED;
	/* the mount that cancels names the source; once a recovery (cut
	 * again later) committed the cancel, the item names none (-1) */
	if (st->state == ZCOW_REPLACE_CANCELED && st->src_devid != devid &&
	    st->src_devid != UINT64_MAX)
		say(report, arg, "the source mounted with the replace of devid %" PRIu64 " cancelled, the source is devid %" PRIu64,
		    st->src_devid, devid);
	if (!is_ok)
		say(report, arg, "the source mounted with the replace %s, cut at op %u (start op %u, finish op %u)",
		    zcow_replace_state_name(st->state), cut_op, start, fin);
}

void zcrash_replace_check(const struct wl *w, const struct zcrash_pair *p,
			  unsigned int cut_op, struct zcow_fs *fs,
			  void (*report)(void *arg, const char *msg),
			  void *arg)
{
	unsigned int start = find_op(w, OP_REPLACE_START);
	unsigned int fin = find_op(w, OP_REPLACE_FINISH);
	struct zcow_replace_status st;

	if (!p->has_sb[0] && !p->has_sb[1]) {
		say(report, arg, "no device holds a superblock of the fs (cut at op %u; start op %u, finish op %u)",
		    cut_op, start, fin);
		return;
	}
	if (fs)
		zcow_replace_status(fs, &st);
	if (p->on_target)
		check_on_target(p, fin, cut_op, fs ? &st : NULL, fs, report,
				arg);
	else
		check_on_source(p, start < w->nr ? w->ops[start].off : 1,
				start, fin, cut_op, fs ? &st : NULL, report,
				arg);
}
