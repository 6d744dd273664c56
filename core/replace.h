/* SPDX-License-Identifier: MIT */
/*
 * replace: device replace on zoned devices (seeds 008, 009).
 *
 * What it is: the copy of one device (the source) onto a new one (the
 * target) while the file system stays in use.  At the start every block
 * group with a device extent on the source is marked to_copy (seed 008);
 * the copy goes group by group in address order, each zone written with
 * plain writes at the target's write pointer, a hole (freed space that is
 * not copied) written as zeroes so that the target's write pointer
 * follows the source's (seed 009).  Writes the file system makes meanwhile
 * go to the source and, only for groups whose copy is finished, are cloned
 * to the target at the same offset; new groups are never put on the
 * source.  The end levels every write pointer once more and switches the
 * source's devid to the target in one commit.
 *
 * Who may include it: core/, tests/.
 */
#ifndef ZCOW_REPLACE_H
#define ZCOW_REPLACE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "sb.h"
#include "zdev.h"

struct zcow_fs;
struct zcow_bg;
struct zcow_device;

/* A running replace (fs->replace; NULL when none runs).  Its counters
 * and state are fs->replace_st. */
struct zcow_replace {
	struct zcow_device *src;	/* the device being replaced */
	struct zdev *tgt;		/* the new device */
	/* Serializes a write to a source group with its clone, so that the
	 * target sees a group's writes in the source's order. */
	pthread_mutex_t io_lock;
	int error;			/* first failed target write: the
					 * replace cannot finish */
	/* The group being copied (frozen: is_copying): its start, 0 when
	 * none; how far its copy got (bytes from its start: the target's
	 * write pointer); the end of the live extent copied last. */
	uint64_t cur, cur_pos, ext_end;
};

/* Is @zd the source of a running replace? */
bool zcow_replace_is_source(const struct zcow_fs *fs,
			    const struct zcow_device *zd);

/*
 * The zone commands of a group on the source of a running replace
 * (zcow_bg_write & co. call these): the command goes to the source and,
 * when the group is not to_copy (copied, or made after the start), the
 * same command to the target at the same offset.  A failed clone is
 * kept in the replace's error; the file system's command succeeds with
 * the source's result.
 */
int zcow_replace_write(struct zcow_fs *fs, struct zcow_bg *bg,
		       const void *buf, uint64_t len, uint64_t off,
		       unsigned int flags, enum zdev_class cls);
int zcow_replace_append(struct zcow_fs *fs, struct zcow_bg *bg,
			const void *buf, uint64_t len, unsigned int flags,
			enum zdev_class cls, uint64_t *off_ret);
int zcow_replace_zone_mgmt(struct zcow_fs *fs, struct zcow_bg *bg,
			   enum zdev_zone_action action);

/* A chunk was just made on @bg's device: on a replace's source, its
 * target zone must be empty (reset if not).  0 or a device errno. */
int zcow_replace_new_group(struct zcow_fs *fs, struct zcow_bg *bg);

/* The commit: put the dev-replace item (device tree, key (0, 250, 0))
 * when its state or cursor changed.  0 or -errno. */
int zcow_replace_sync_item(struct zcow_fs *fs, bool *changed_ret);

/* Mount: read the dev-replace item; a replace that was running when the
 * file system went down is cancelled (the source holds everything).
 * 0 or -errno. */
int zcow_replace_load(struct zcow_fs *fs);

/* Unmount and teardown: a running replace is cancelled (the final
 * commit writes it). */
void zcow_replace_drop(struct zcow_fs *fs);

#endif /* ZCOW_REPLACE_H */
