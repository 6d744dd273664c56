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

#include <stdbool.h>
#include <stdint.h>

#include "sb.h"
#include "zdev.h"

struct zcow_fs;
struct zcow_bg;
struct zcow_device;

/* A running replace (fs->replace; NULL when none runs). */
struct zcow_replace {
	struct zcow_device *src;	/* the device being replaced */
	struct zdev *tgt;		/* the new device */
	struct zcow_dev_item tgt_item;	/* its item while it is the target */
	uint64_t cursor;		/* groups below this logical are copied */
	uint64_t nr_to_copy;		/* groups marked at the start */
	uint64_t nr_copied;
	uint64_t bytes_copied;		/* live bytes read and written */
	uint64_t bytes_zeroed;		/* holes and levelling */
	uint64_t bytes_cloned;		/* file system writes cloned */
};

/* Is @zd the source of a running replace (no new chunk goes there)? */
bool zcow_replace_is_source(const struct zcow_fs *fs,
			    const struct zcow_device *zd);

/* Is @bg copied already, so that its writes are cloned to the target? */
bool zcow_replace_clones(const struct zcow_fs *fs, const struct zcow_bg *bg);

#endif /* ZCOW_REPLACE_H */
