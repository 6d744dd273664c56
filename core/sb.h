/* SPDX-License-Identifier: MIT */
/*
 * sb: the zcow superblock and its log on zoned devices -- internal header.
 *
 * The format and the read side (layout, placement of the mirrors,
 * locating the newest copy from the log zones' conditions and write
 * pointers, the state table in sb.c, with a fall back to the newest valid
 * copy when the newest is torn or corrupt) are public:
 * include/zcow_super.h, included here.  This header adds what only core/
 * does:
 *   - sealing a superblock (its checksum),
 *   - the zones the allocator must skip,
 *   - writing a new generation to every mirror (flush, reset, FUA write).
 *
 * What it is not: the file system (core/fs.c builds mount and mkfs on it)
 * or an allocator (it only lists the zones the allocator must skip).
 *
 * Who may include this: core/, tests/, fuzz/.  Format: docs/format.md.
 */
#ifndef ZCOW_SB_H
#define ZCOW_SB_H

#include <stdbool.h>
#include <stdint.h>

#include "zcow_super.h"
#include "zdev.h"

/* Set csum[] from the contents. */
void zcow_sb_seal(struct zcow_super_block *sb);
/*
 * The zones the superblock owns under placement @p (zone starts, ascending,
 * no duplicates): the allocator must never hand them out.  Fills up to @max
 * entries; *nr_ret = how many there are.  Returns 0 or -ENOSPC when @max is
 * too small (*nr_ret still says how many are needed).
 */
int zcow_sb_reserved_zones(struct zdev *dev, enum zcow_sb_placement p,
			   uint64_t *zones, unsigned int max,
			   unsigned int *nr_ret);
bool zcow_sb_is_reserved_zone(struct zdev *dev, enum zcow_sb_placement p,
			      uint64_t zone_start);

/*
 * Commit @sb (generation already set by the caller) to every mirror of
 * placement @p: flush, then per mirror reset a full zone if the table says
 * so, and write with FUA.  bytenr and csum are set per mirror (@sb keeps
 * the primary's).  A mirror that cannot be written (a log zone offline or
 * read-only, a write error) is skipped: the log is degraded, not dead, as
 * long as one mirror holds the copy.  Returns 0 when at least one mirror
 * was written, else the first error (-EIO, -EUCLEAN for a log in an
 * impossible state, -ENOSPC never).  zcow_sb_write_all_mirrors() also
 * returns the mirrors that failed as a bit mask (bit m = mirror m) in
 * *failed_ret and leaves reporting them to its caller; @skip_flush is the
 * test-only ordering mutation (ZCOW_MUT_*_BEFORE_FLUSH, docs/crash.md):
 * false in every real write.
 */
int zcow_sb_write_all(struct zdev *dev, enum zcow_sb_placement p,
		      struct zcow_super_block *sb);
int zcow_sb_write_all_mirrors(struct zdev *dev, enum zcow_sb_placement p,
			      struct zcow_super_block *sb, bool skip_flush,
			      uint32_t *failed_ret);

#endif /* ZCOW_SB_H */
