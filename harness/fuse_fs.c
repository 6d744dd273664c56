// SPDX-License-Identifier: MIT
/*
 * The FUSE operations (harness/fuse_fs.h): each maps one kernel request to
 * the zcow call that does it, returns zcow's -errno unchanged, and records
 * the call when it succeeded and changed something (--record).
 *
 * Recording order: the recorder's lock is held from before the zcow call
 * until its line is appended, so that two calls completing in one order in
 * the file system cannot be recorded in the other (a rename and an unlink
 * of its target, two writes of one block).  Calls that change nothing
 * (getattr, read, readdir, statfs) never take it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "csum.h"
#include "grow.h"
#include "fuse_fs.h"
#include "ops_record.h"
#include "zcow.h"

/* btrfs FT_* of zcow_dirent.type */
#define FT_REG_FILE	1
#define FT_DIR		2
#define FT_SYMLINK	7

/* What fi->fh points at: an open file and its number in the recording. */
struct zfuse_fh {
	struct zcow_file *file;
	uint64_t ino;
	uint64_t rec_fh;	/* 0: not recording */
	bool is_append;		/* O_APPEND: writes land at the end */
};

/* An inode with open handles (struct zfuse's open[]). */
struct zfuse_open {
	uint64_t ino;
	uint64_t nr;		/* handles */
	bool is_orphan;		/* its last name unlinked: an orphan */
};

/* The open flags zcow takes (zcow_open()). */
#define ZCOW_OPEN_FLAGS (O_ACCMODE | O_CREAT | O_EXCL | O_TRUNC | O_APPEND)

static struct zfuse *zf_get(void)
{
	return fuse_get_context()->private_data;
}

static struct zfuse_fh *fh_of(const struct fuse_file_info *fi)
{
	return (struct zfuse_fh *)(uintptr_t)fi->fh;
}

static void rec_begin(struct zfuse *zf)
{
	if (zf->rec)
		ops_rec_lock(zf->rec);
}

/* Record @op (may be NULL: recorded already) if @err is 0, release the
 * recorder; returns @err. */
static int rec_end(struct zfuse *zf, int err, const struct ops_op *op)
{
	if (!zf->rec)
		return err;
	if (!err && op)
		ops_rec_add_locked(zf->rec, op);
	ops_rec_unlock(zf->rec);
	return err;
}

/* ---- files unlinked while open ------------------------------------------
 *
 * The kernel keeps an unlinked file usable through its open descriptors.
 * An unlink (or a rename over) of the last name of an inode with open
 * handles goes through zcow_unlink_open(): the inode stays, nlink 0, with
 * an orphan item in the tree (btrfs's), and the last release deletes it
 * (zcow_orphan_release()); what a kill, a crash or a failed release leaves
 * is deleted by the next read-write mount.  Recorded as the unlink it is.
 * libfuse's own scheme (hard_remove off: a ".fuse_hidden" name in the
 * same directory) is not used: the hidden name keeps the directory from
 * being removed, and a tree walk that unlinks it while it is open renames
 * it forever.
 *
 * ZFUSE_ORPHAN_DIR is what earlier versions kept such files in (renamed
 * there): a read-write mount of an image that has it empties and removes
 * it (orphans_cleanup()), and the root's listing leaves it out meanwhile.
 */

static struct zfuse_open *open_find_locked(struct zfuse *zf, uint64_t ino)
{
	uint64_t i;

	for (i = 0; i < zf->nr_open; i++)
		if (zf->open[i].ino == ino)
			return &zf->open[i];
	return NULL;
}

static void rec_add(struct zfuse *zf, const struct ops_op *op)
{
	if (zf->rec)
		ops_rec_add_locked(zf->rec, op);
}

/*
 * If @path is the last name of a regular file with open handles, unlink
 * it as an orphan (zcow_unlink_open(), recorded as an unlink): 1.  0 when
 * it is not, or when it is inode @keep_ino (a rename onto another name of
 * the same inode removes nothing; 0: none); -errno.  A file zcow does not
 * keep as an orphan (one of a snapshot) is unlinked as it is: 1 too.
 */
static int unlink_if_open_locked(struct zfuse *zf, const char *path,
				 uint64_t keep_ino)
{
	struct zcow_stat zs = { 0 };
	struct zfuse_open *o;
	int err;

	if (zcow_stat(zf->fs, path, &zs) || !S_ISREG(zs.mode) ||
	    zs.nlink != 1 || zs.ino == keep_ino)
		return 0;
	o = open_find_locked(zf, zs.ino);
	if (!o || o->is_orphan)
		return 0;
	err = zcow_unlink_open(zf->fs, path);
	if (err < 0)
		return err;
	rec_add(zf, &(struct ops_op){ .kind = OPS_UNLINK, .path = path });
	o->is_orphan = err == 1;
	return 1;
}

/* A read-write mount of an image from a version that kept files
 * unlinked while open in ZFUSE_ORPHAN_DIR (a crash, or a kill, ended its
 * last mount with files open): unlink every file there, remove it. */
static void orphans_cleanup(struct zfuse *zf)
{
	struct zcow_dirent *ents;
	char path[sizeof(ZFUSE_ORPHAN_DIR) + 260];
	uint64_t nr, i;

	rec_begin(zf);
	if (!zcow_readdir_at(zf->fs, ZFUSE_ORPHAN_DIR, 0, UINT64_MAX, &ents,
			     &nr)) {
		for (i = 0; i < nr; i++) {
			snprintf(path, sizeof(path), ZFUSE_ORPHAN_DIR "/%s",
				 ents[i].name);
			if (!zcow_unlink(zf->fs, path))
				rec_add(zf, &(struct ops_op){
						    .kind = OPS_UNLINK,
						    .path = path });
		}
		free(ents);
		if (!zcow_rmdir(zf->fs, ZFUSE_ORPHAN_DIR))
			rec_add(zf, &(struct ops_op){ .kind = OPS_RMDIR,
						      .path = ZFUSE_ORPHAN_DIR });
	}
	if (zf->rec)
		ops_rec_unlock(zf->rec);
}

static void to_timespec(const struct zcow_timespec *z, struct timespec *ts)
{
	ts->tv_sec = (time_t)z->sec;
	ts->tv_nsec = (long)z->nsec;
}

static void fill_stat(const struct zcow_stat *zs, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = (ino_t)zs->ino;
	st->st_mode = (mode_t)zs->mode;
	st->st_nlink = (nlink_t)zs->nlink;
	st->st_uid = (uid_t)zs->uid;
	st->st_gid = (gid_t)zs->gid;
	st->st_rdev = (dev_t)zs->rdev;
	st->st_size = (off_t)zs->size;
	st->st_blksize = ZCOW_SECTORSIZE;
	/* 512-byte units of the data extents referenced, as btrfs */
	st->st_blocks = (blkcnt_t)((zs->nbytes + 511) / 512);
	to_timespec(&zs->atime, &st->st_atim);
	to_timespec(&zs->mtime, &st->st_mtim);
	to_timespec(&zs->ctime, &st->st_ctim);
}

static void *zf_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	(void)conn;
	/* st_ino is zcow's inode number (readdir's too); files unlinked
	 * while open: unlink_if_open_locked(). */
	struct zfuse *zf = zf_get();

	cfg->use_ino = 1;
	cfg->hard_remove = 1;
	pthread_mutex_init(&zf->open_lock, NULL);
	if (!zf->is_read_only)
		orphans_cleanup(zf);
	return zf;
}

static void zf_destroy(void *private_data)
{
	struct zfuse *zf = private_data;

	if (zf->is_unmounted)
		return;
	rec_begin(zf);
	/* the final commit */
	zf->unmount_err = zcow_unmount(zf->fs);
	zf->fs = NULL;
	zf->is_unmounted = true;
	/* every handle is released */
	free(zf->open);
	zf->open = NULL;
	zf->nr_open = zf->cap_open = 0;
	rec_end(zf, zf->unmount_err, &(struct ops_op){ .kind = OPS_SYNC });
}

static int zf_getattr(const char *path, struct stat *st,
		      struct fuse_file_info *fi)
{
	struct zcow_stat zs = { 0 };
	int err;

	if (fi && fh_of(fi))
		err = zcow_fstat(fh_of(fi)->file, &zs);
	else
		err = zcow_stat(zf_get()->fs, path, &zs);
	if (!err)
		fill_stat(&zs, st);
	return err;
}

static unsigned char dtype_of(uint8_t ft)
{
	switch (ft) {
	case FT_REG_FILE:
		return DT_REG;
	case FT_DIR:
		return DT_DIR;
	case FT_SYMLINK:
		return DT_LNK;
	}
	return DT_UNKNOWN;
}

/*
 * Offsets: 1 after ".", 2 after "..", and DIR_INDEX + 3 after an entry, so
 * that a listing continued at offset o >= 2 asks zcow for the entries from
 * index o - 2 on: stable while entries come and go, as btrfs's.
 */
#define DOT_OFFSETS 2
#define READDIR_BATCH 128

/* The inode number of the directory @path or (@is_parent) of its parent
 * (the root's parent: the root). */
static int dir_ino(struct zcow_fs *fs, const char *path, bool is_parent,
		   ino_t *ino_ret)
{
	struct zcow_stat zs = { 0 };
	char *parent = NULL, *slash;
	int err;

	if (is_parent) {
		parent = strdup(path);
		if (!parent)
			return -ENOMEM;
		slash = strrchr(parent, '/');
		if (slash)
			slash[slash == parent] = '\0';
		path = parent;
	}
	err = zcow_stat(fs, *path ? path : "/", &zs);
	free(parent);
	*ino_ret = (ino_t)zs.ino;
	return err;
}

static int zf_readdir(const char *path, void *buf, fuse_fill_dir_t filler,
		      off_t offset, struct fuse_file_info *fi,
		      enum fuse_readdir_flags flags)
{
	struct zcow_fs *fs = zf_get()->fs;
	bool is_root = !strcmp(path, "/");
	struct stat st;
	uint64_t from, nr, i;
	int err;

	(void)fi;
	(void)flags;
	memset(&st, 0, sizeof(st));
	st.st_mode = S_IFDIR;
	/* "." and "..": their inode numbers (a reader skips an entry of
	 * d_ino 0) */
	if (offset < 1) {
		err = dir_ino(fs, path, false, &st.st_ino);
		if (err)
			return err;
		if (filler(buf, ".", &st, 1, 0))
			return 0;
	}
	if (offset < 2) {
		err = dir_ino(fs, path, true, &st.st_ino);
		if (err)
			return err;
		if (filler(buf, "..", &st, 2, 0))
			return 0;
	}
	from = offset < DOT_OFFSETS ? 0 : (uint64_t)offset - DOT_OFFSETS;
	for (;;) {
		struct zcow_dirent *ents;

		err = zcow_readdir_at(fs, path, from, READDIR_BATCH, &ents,
				      &nr);
		if (err)
			return err;
		for (i = 0; i < nr; i++) {
			if (is_root && !strcmp(ents[i].name,
					       ZFUSE_ORPHAN_DIR + 1))
				continue;
			st.st_ino = (ino_t)ents[i].ino;
			st.st_mode = (mode_t)DTTOIF(dtype_of(ents[i].type));
			if (filler(buf, ents[i].name, &st,
				   (off_t)(ents[i].off + 1 + DOT_OFFSETS), 0))
				break;
		}
		if (nr)
			from = ents[nr - 1].off + 1;
		free(ents);
		if (i < nr || nr < READDIR_BATCH)
			return 0;
	}
}

/* Count a handle of @h's inode (h->ino set here); on failure the handle
 * is closed.  Returns 0 or -errno. */
static int open_add_locked(struct zfuse *zf, struct zfuse_fh *h)
{
	struct zcow_stat zs = { 0 };
	struct zfuse_open *o;
	int err = zcow_fstat(h->file, &zs);

	if (!err) {
		h->ino = zs.ino;
		o = open_find_locked(zf, zs.ino);
		if (o) {
			o->nr++;
			return 0;
		}
		err = ZCOW_GROW_ONE(&zf->open, zf->nr_open, &zf->cap_open);
	}
	if (err) {
		zcow_close(h->file);
		return err;
	}
	zf->open[zf->nr_open++] = (struct zfuse_open){ .ino = h->ino, .nr = 1 };
	return 0;
}

/* Open @path with @flags (O_CREAT: @mode, the caller's ids) into a new
 * handle in fi->fh, recorded as create or open. */
static int open_file(const char *path, int flags, mode_t mode, bool is_create,
		     struct fuse_file_info *fi)
{
	struct fuse_context *ctx = fuse_get_context();
	struct zfuse *zf = ctx->private_data;
	struct zcow_cred cred = { .uid = ctx->uid, .gid = ctx->gid };
	struct zfuse_fh *h = calloc(1, sizeof(*h));
	struct ops_op op = {
		.kind = is_create ? OPS_CREATE : OPS_OPEN,
		.path = path,
		.mode = mode & 07777,
		.flags = (uint32_t)flags,
		.uid = cred.uid,
		.gid = cred.gid,
	};
	int err;

	if (!h)
		return -ENOMEM;
	rec_begin(zf);
	if (zf->rec) {
		h->rec_fh = ops_rec_fh_get_locked(zf->rec);
		if (!h->rec_fh) {
			ops_rec_unlock(zf->rec);
			free(h);
			return -ENOMEM;
		}
	}
	pthread_mutex_lock(&zf->open_lock);
	err = zcow_open_as(zf->fs, path, flags, mode & 07777, &cred,
			   &h->file);
	if (!err)
		err = open_add_locked(zf, h);
	pthread_mutex_unlock(&zf->open_lock);
	op.fh = h->rec_fh;
	if (err && zf->rec)
		ops_rec_fh_put_locked(zf->rec, h->rec_fh);
	rec_end(zf, err, &op);
	if (err) {
		free(h);
		return err;
	}
	h->is_append = flags & O_APPEND;
	fi->fh = (uint64_t)(uintptr_t)h;
	return 0;
}

static int zf_open(const char *path, struct fuse_file_info *fi)
{
	return open_file(path, fi->flags & ZCOW_OPEN_FLAGS, 0, false, fi);
}

static int zf_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	return open_file(path, (fi->flags & ZCOW_OPEN_FLAGS) | O_CREAT, mode,
			 true, fi);
}

static int zf_release(const char *path, struct fuse_file_info *fi)
{
	struct zfuse *zf = zf_get();
	struct zfuse_fh *h = fh_of(fi);
	int err;

	struct zfuse_open *o;

	(void)path;
	rec_begin(zf);
	pthread_mutex_lock(&zf->open_lock);
	o = open_find_locked(zf, h->ino);
	if (o && --o->nr == 0) {
		/* the last close of a file unlinked while open deletes it;
		 * if that fails, its orphan item stays and the next mount
		 * deletes it (the close itself succeeds, as close(2)) */
		if (o->is_orphan)
			zcow_orphan_release(h->file);
		*o = zf->open[--zf->nr_open];
	}
	err = zcow_close(h->file);
	if (zf->rec) {
		ops_rec_fh_put_locked(zf->rec, h->rec_fh);
		rec_add(zf, &(struct ops_op){ .kind = OPS_CLOSE,
					      .fh = h->rec_fh });
	}
	pthread_mutex_unlock(&zf->open_lock);
	if (zf->rec)
		ops_rec_unlock(zf->rec);
	free(h);
	return err;
}

/*
 * close(2) of one descriptor of a handle: zcow keeps nothing in a handle
 * (a write has reached the file system when zcow_pwrite() returns), and
 * close promises no durability: nothing to do.
 */
static int zf_flush(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	(void)fi;
	return 0;
}

static int zf_read(const char *path, char *buf, size_t size, off_t off,
		   struct fuse_file_info *fi)
{
	(void)path;
	return (int)zcow_pread(fh_of(fi)->file, buf, size, (uint64_t)off);
}

static int zf_write(const char *path, const char *buf, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct zfuse *zf = zf_get();
	struct zfuse_fh *h = fh_of(fi);
	struct ops_op op = { .kind = OPS_WRITE, .fh = h->rec_fh,
			     .off = (uint64_t)off, .len = size };
	int64_t n;

	(void)path;
	rec_begin(zf);
	n = zcow_pwrite(h->file, buf, size, (uint64_t)off);
	if (n >= 0 && zf->rec) {
		op.crc = zcow_crc32c(buf, size);
		if (h->is_append) {
			struct zcow_stat zs = { 0 };

			/* where the data landed: the end, under the
			 * recorder's lock no other write moves it */
			if (!zcow_fstat(h->file, &zs) && zs.size >= size)
				op.off = zs.size - size;
		}
	}
	rec_end(zf, n < 0 ? (int)n : 0, &op);
	return (int)n;
}

static int zf_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	struct zfuse *zf = zf_get();
	int err;

	if (size < 0)
		return -EINVAL;
	rec_begin(zf);
	if (fi && fh_of(fi))
		err = zcow_truncate(fh_of(fi)->file, (uint64_t)size);
	else
		err = zcow_truncate_path(zf->fs, path, (uint64_t)size);
	/* a file unlinked while open (no path): no name to record it by
	 * (the replay refuses its handle's later calls, docs/crash.md) */
	return rec_end(zf, err, path ? &(struct ops_op){
						 .kind = OPS_TRUNCATE,
						 .path = path,
						 .size = (uint64_t)size } :
					 NULL);
}

static int zf_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	struct zfuse *zf = zf_get();
	struct zfuse_fh *h = fh_of(fi);
	int err;

	(void)path;
	rec_begin(zf);
	err = datasync ? zcow_fdatasync(h->file) : zcow_fsync(h->file);
	return rec_end(zf, err, &(struct ops_op){ .kind = OPS_FSYNC,
						  .fh = h->rec_fh,
						  .datasync = datasync != 0 });
}

/* fsync of a directory: its inode through the tree-log, as a file's. */
static int zf_fsyncdir(const char *path, int datasync,
		       struct fuse_file_info *fi)
{
	struct zfuse *zf = zf_get();
	struct zcow_file *dir;
	int err;

	(void)datasync;
	(void)fi;
	rec_begin(zf);
	err = zcow_open(zf->fs, path, O_RDONLY, &dir);
	if (!err) {
		err = zcow_fsync(dir);
		zcow_close(dir);
	}
	return rec_end(zf, err, &(struct ops_op){ .kind = OPS_FSYNCDIR,
						  .path = path });
}

static int zf_mkdir(const char *path, mode_t mode)
{
	struct fuse_context *ctx = fuse_get_context();
	struct zfuse *zf = ctx->private_data;
	struct zcow_cred cred = { .uid = ctx->uid, .gid = ctx->gid };
	int err;

	rec_begin(zf);
	err = zcow_mkdir_as(zf->fs, path, mode & 07777, &cred);
	return rec_end(zf, err, &(struct ops_op){ .kind = OPS_MKDIR,
						  .path = path,
						  .mode = mode & 07777,
						  .uid = cred.uid,
						  .gid = cred.gid });
}

static int zf_unlink(const char *path)
{
	struct zfuse *zf = zf_get();

	int err;

	rec_begin(zf);
	pthread_mutex_lock(&zf->open_lock);
	err = unlink_if_open_locked(zf, path, 0);
	if (!err) {
		err = zcow_unlink(zf->fs, path);
		if (!err)
			rec_add(zf, &(struct ops_op){ .kind = OPS_UNLINK,
						      .path = path });
	}
	pthread_mutex_unlock(&zf->open_lock);
	return rec_end(zf, err < 0 ? err : 0, NULL);
}

static int zf_rmdir(const char *path)
{
	struct zfuse *zf = zf_get();

	rec_begin(zf);
	return rec_end(zf, zcow_rmdir(zf->fs, path),
		       &(struct ops_op){ .kind = OPS_RMDIR, .path = path });
}

static int zf_rename(const char *from, const char *to, unsigned int flags)
{
	struct zfuse *zf = zf_get();

	struct zcow_stat a = { 0 };
	int err = 0;

	rec_begin(zf);
	pthread_mutex_lock(&zf->open_lock);
	/* a target replaced while open: unlinked as an orphan first (a
	 * source that cannot replace it, a directory, is left to fail) */
	if (!flags && !zcow_stat(zf->fs, from, &a) && !S_ISDIR(a.mode))
		err = unlink_if_open_locked(zf, to, a.ino);
	if (err >= 0) {
		err = zcow_rename2(zf->fs, from, to, flags);
		if (!err)
			rec_add(zf, &(struct ops_op){ .kind = OPS_RENAME,
						      .path = from, .to = to,
						      .flags = flags });
	}
	pthread_mutex_unlock(&zf->open_lock);
	return rec_end(zf, err, NULL);
}

static int zf_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	struct zfuse *zf = zf_get();

	(void)fi;
	rec_begin(zf);
	return rec_end(zf, zcow_chmod(zf->fs, path, mode & 07777),
		       &(struct ops_op){ .kind = OPS_CHMOD, .path = path,
					 .mode = mode & 07777 });
}

static int zf_chown(const char *path, uid_t uid, gid_t gid,
		    struct fuse_file_info *fi)
{
	struct zfuse *zf = zf_get();

	(void)fi;
	rec_begin(zf);
	return rec_end(zf, zcow_chown(zf->fs, path, (uint32_t)uid,
				      (uint32_t)gid),
		       &(struct ops_op){ .kind = OPS_CHOWN, .path = path,
					 .uid = (uint32_t)uid,
					 .gid = (uint32_t)gid });
}

/* A timespec of utimensat (UTIME_NOW, UTIME_OMIT included) as zcow's. */
static void from_timespec(const struct timespec *ts, struct zcow_timespec *z)
{
	z->sec = ts->tv_sec;
	z->nsec = ts->tv_nsec == UTIME_NOW ? ZCOW_UTIME_NOW :
		  ts->tv_nsec == UTIME_OMIT ? ZCOW_UTIME_OMIT :
					       (uint32_t)ts->tv_nsec;
}

static int zf_utimens(const char *path, const struct timespec tv[2],
		      struct fuse_file_info *fi)
{
	struct zfuse *zf = zf_get();
	struct zcow_timespec ts[2] = {
		{ 0, ZCOW_UTIME_NOW }, { 0, ZCOW_UTIME_NOW },
	};

	(void)fi;
	if (tv) {
		from_timespec(&tv[0], &ts[0]);
		from_timespec(&tv[1], &ts[1]);
	}
	rec_begin(zf);
	return rec_end(zf, zcow_utimens(zf->fs, path, ts),
		       &(struct ops_op){ .kind = OPS_UTIMENS, .path = path,
					 .asec = ts[0].sec,
					 .ansec = ts[0].nsec,
					 .msec = ts[1].sec,
					 .mnsec = ts[1].nsec });
}

static int zf_link(const char *from, const char *to)
{
	struct zfuse *zf = zf_get();

	rec_begin(zf);
	return rec_end(zf, zcow_link(zf->fs, from, to),
		       &(struct ops_op){ .kind = OPS_LINK, .path = from,
					 .to = to });
}

static int zf_symlink(const char *target, const char *path)
{
	struct fuse_context *ctx = fuse_get_context();
	struct zfuse *zf = ctx->private_data;
	struct zcow_cred cred = { .uid = ctx->uid, .gid = ctx->gid };

	rec_begin(zf);
	return rec_end(zf, zcow_symlink(zf->fs, target, path, &cred),
		       &(struct ops_op){ .kind = OPS_SYMLINK, .path = path,
					 .to = target, .uid = cred.uid,
					 .gid = cred.gid });
}

/* FUSE wants the target NUL-terminated, truncated to @size - 1. */
static int zf_readlink(const char *path, char *buf, size_t size)
{
	int64_t n;

	if (!size)
		return -EINVAL;
	n = zcow_readlink(zf_get()->fs, path, buf, size - 1);
	if (n < 0)
		return (int)n;
	buf[n] = '\0';
	return 0;
}

/* XATTR_CREATE and XATTR_REPLACE are zcow's flags, value for value. */
static int zf_setxattr(const char *path, const char *name, const char *value,
		       size_t size, int flags)
{
	struct zfuse *zf = zf_get();

	rec_begin(zf);
	return rec_end(zf, zcow_setxattr(zf->fs, path, name, value, size,
					 (unsigned int)flags),
		       &(struct ops_op){ .kind = OPS_SETXATTR, .path = path,
					 .name = name, .flags = (uint32_t)flags,
					 .value = value, .value_len = size });
}

static int zf_getxattr(const char *path, const char *name, char *value,
		       size_t size)
{
	return (int)zcow_getxattr(zf_get()->fs, path, name, value, size);
}

static int zf_listxattr(const char *path, char *list, size_t size)
{
	return (int)zcow_listxattr(zf_get()->fs, path, list, size);
}

static int zf_removexattr(const char *path, const char *name)
{
	struct zfuse *zf = zf_get();

	rec_begin(zf);
	return rec_end(zf, zcow_removexattr(zf->fs, path, name),
		       &(struct ops_op){ .kind = OPS_REMOVEXATTR,
					 .path = path, .name = name });
}

static int zf_statfs(const char *path, struct statvfs *sv)
{
	struct zcow_statfs zs;
	int err;

	(void)path;
	err = zcow_statfs(zf_get()->fs, &zs);
	if (err)
		return err;
	memset(sv, 0, sizeof(*sv));
	sv->f_bsize = ZCOW_SECTORSIZE;
	sv->f_frsize = ZCOW_SECTORSIZE;
	sv->f_blocks = zs.total / ZCOW_SECTORSIZE;
	sv->f_bfree = zs.free / ZCOW_SECTORSIZE;
	sv->f_bavail = sv->f_bfree;
	/* an inode takes at most a block of metadata: as many more fit as
	 * there are free blocks */
	sv->f_ffree = sv->f_bfree;
	sv->f_favail = sv->f_bfree;
	sv->f_files = sv->f_ffree + zs.nr_inodes;
	sv->f_namemax = 255;
	return 0;
}

/* zcow refuses every fallocate, as btrfs on a zoned device does
 * (-EOPNOTSUPP); a call it accepted would be recorded. */
static int zf_fallocate(const char *path, int mode, off_t off, off_t len,
			struct fuse_file_info *fi)
{
	struct zfuse *zf = zf_get();
	struct zfuse_fh *h = fh_of(fi);
	int err;

	(void)path;
	if (off < 0 || len <= 0)
		return -EINVAL;
	rec_begin(zf);
	err = mode ? -EOPNOTSUPP :
		     zcow_fallocate(h->file, (uint64_t)off, (uint64_t)len);
	return rec_end(zf, err, &(struct ops_op){ .kind = OPS_FALLOCATE,
						  .fh = h->rec_fh,
						  .mode = (uint32_t)mode,
						  .off = (uint64_t)off,
						  .len = (uint64_t)len });
}

const struct fuse_operations zfuse_ops = {
	.init = zf_init,
	.destroy = zf_destroy,
	.getattr = zf_getattr,
	.readdir = zf_readdir,
	.open = zf_open,
	.create = zf_create,
	.release = zf_release,
	.flush = zf_flush,
	.read = zf_read,
	.write = zf_write,
	.truncate = zf_truncate,
	.fsync = zf_fsync,
	.fsyncdir = zf_fsyncdir,
	.mkdir = zf_mkdir,
	.unlink = zf_unlink,
	.rmdir = zf_rmdir,
	.rename = zf_rename,
	.chmod = zf_chmod,
	.chown = zf_chown,
	.utimens = zf_utimens,
	.link = zf_link,
	.symlink = zf_symlink,
	.readlink = zf_readlink,
	.setxattr = zf_setxattr,
	.getxattr = zf_getxattr,
	.listxattr = zf_listxattr,
	.removexattr = zf_removexattr,
	.statfs = zf_statfs,
	.fallocate = zf_fallocate,
};
