/* SPDX-License-Identifier: MIT */
/*
 * zcow as a FUSE file system: the high-level (path) operations of libfuse 3
 * over the path calls of include/zcow.h (docs/fuse.md).  Each operation is
 * one zcow call (or an open, the call and a close for a call by path that
 * zcow makes on a handle); zcow's -errno goes to the kernel unchanged.
 * With a recorder (harness/ops_record.h), every successful mutating call
 * is recorded under the recorder's lock held across the call.
 *
 * What it is not: the command line (harness/cmd_fuse.c: options, mount,
 * the loop).  Who may include this: harness/ (it includes <fuse.h>).
 */
#ifndef ZCOW_FUSE_FS_H
#define ZCOW_FUSE_FS_H

#define FUSE_USE_VERSION 314
#include <fuse.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct zcow_fs;
struct ops_rec;
struct zfuse_open;

/*
 * Where a file unlinked while open keeps its inode until its last close
 * (zcow frees an inode with its last name): a directory of the top level,
 * left out of the root's listing, emptied at mount and removed at unmount.
 */
#define ZFUSE_ORPHAN_DIR "/.zcow-orphans"

/* What the operations share: fuse_new()'s private data. */
struct zfuse {
	struct zcow_fs *fs;	/* mounted; zcow_unmount() in destroy */
	struct ops_rec *rec;	/* NULL: not recording */
	bool is_read_only;	/* mounted ro */
	bool is_unmounted;	/* destroy ran zcow_unmount() */
	int unmount_err;	/* its result */
	/* the open inodes (after the recorder's lock, if both) */
	pthread_mutex_t open_lock;
	struct zfuse_open *open;
	uint64_t nr_open, cap_open;
};

extern const struct fuse_operations zfuse_ops;

#endif /* ZCOW_FUSE_FS_H */
