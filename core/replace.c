// SPDX-License-Identifier: MIT
/*
 * Device replace on zoned devices (seeds 008, 009): see core/replace.h.
 */
#include "replace.h"

#include "fs.h"

#define TAG "replace"

bool zcow_replace_is_source(const struct zcow_fs *fs,
			    const struct zcow_device *zd)
{
	return fs->replace && fs->replace->src == zd;
}

bool zcow_replace_clones(const struct zcow_fs *fs, const struct zcow_bg *bg)
{
	return fs->replace && bg->dev == fs->replace->src && !bg->to_copy;
}
