// SPDX-License-Identifier: MIT
/*
 * fuzz: the image harness: zsim image -> load -> mount -> walk -> check.
 *
 * The input is a whole zsim image file.  Its trailing FNV-1a checksum is
 * recomputed before loading, so the fuzzer's mutations reach the image
 * parser and the file system instead of stopping at the trailer.  Nothing
 * else is resealed: superblock, tree node and data checksums stay as the
 * mutation left them, which is corruption as a device would produce it.
 *
 * One exception, chosen by the image header's reserved u32 (the loader
 * ignores it): bit 0 reseals every tree node's crc32c, bit 1 every
 * superblock's, after the mutation.  That models metadata that is wrong
 * but checksum-valid, which reaches the tree and item parsers instead of
 * the checksum check; no file system can tell such data from the truth,
 * so these inputs are held to "no crash, no hang, no sanitizer report"
 * only.
 *
 * Oracle: no answer is wrong.  Every file in the seed images holds
 * zfuzz_pattern(base name, offset) in every committed state, so a read
 * that succeeds must return exactly that; any error is a right answer.
 * After the read-only walk a read-write mount writes one file, fsyncs it
 * and unmounts; when every step said 0, a read-only remount must give that
 * file back whole, or fail.
 */
#include "fuzz.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "csum.h"
#include "fs.h"
#include "zsim.h"

#define MiB (1024ULL * 1024)
/* Seed geometry: 20 zones so the seed placement's mirror 1 (zones 16, 17)
 * fits; a small capacity keeps images and per-input time small. */
#define SEED_ZONES	20
#define SEED_ZONE_SIZE	(4 * MiB)
#define SEED_ZONE_CAP	(1 * MiB)
#define READ_CHUNK	(64 * 1024)
#define READ_MAX	(1 * MiB)	/* bytes read per file */
#define WALK_DEPTH	6
#define WALK_MAX_ENTS	256		/* entries visited per input */
#define RW_NAME		"fuzz-rw-file"
#define RW_LEN		10000

/* The zsim image header (sim/zsim_image.c): 80 bytes, the reserved u32
 * last; each zone record is 40 bytes before its data. */
#define IMG_HDR_LEN	80
#define IMG_RESERVED	76
#define IMG_ZONE_LEN	40
#define IMG_CHUNK_MAX	(2 * MiB)

#define FNV_BASIS 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

struct walk {
	struct zcow_fs *fs;
	char *msg;
	int nr_ents;
	int failed;
	uint8_t *buf;
	uint8_t *want;		/* the pattern to compare with */
	bool is_forged;		/* checksums resealed: no data oracle */
};

/* The first offset where @got differs from the pattern, or -1. */
static int64_t mismatch(struct walk *w, const char *path, uint64_t off,
			uint64_t len)
{
	uint64_t i;

	zfuzz_fill_pattern(w->want, path, off, len);
	if (!memcmp(w->buf, w->want, len))
		return -1;
	for (i = 0; w->buf[i] == w->want[i]; i++)
		;
	return off + i;
}

__attribute__((format(printf, 2, 0)))
static int fail(struct walk *w, const char *fmt, const char *path,
		uint64_t off)
{
	char tmp[2048];
	size_t n;

	if (!w->failed) {
		snprintf(tmp, sizeof(tmp), fmt, path, (unsigned long long)off);
		n = strnlen(tmp, ZFUZZ_MSG_LEN - 1);
		memcpy(w->msg, tmp, n);
		w->msg[n] = '\0';
	}
	w->failed = 1;
	return 1;
}

/* Read @path in chunks: every successful chunk must be the pattern. */
static void read_file(struct walk *w, const char *path, uint64_t size)
{
	struct zcow_file *f;
	uint64_t off;

	if (zcow_open(w->fs, path, O_RDONLY, &f))
		return;
	for (off = 0; off < READ_MAX && !w->failed; off += READ_CHUNK) {
		int64_t n = zcow_pread(f, w->buf, READ_CHUNK, off);
		int64_t bad;

		if (n < 0)
			continue;	/* an error is a right answer */
		if (n > READ_CHUNK) {
			fail(w, "%s: pread returned more than asked at %llu",
			     path, off);
			break;
		}
		bad = w->is_forged ? -1 : mismatch(w, path, off, n);
		if (bad >= 0) {
			fail(w, "%s: wrong data at %llu", path, bad);
			break;
		}
		if (n < READ_CHUNK)
			break;
	}
	(void)size;
	zcow_close(f);
}

static void walk_dir(struct walk *w, const char *dir, int depth)
{
	struct zcow_dirent *ents = NULL;
	uint64_t nr = 0, i;

	if (zcow_readdir(w->fs, dir, &ents, &nr))
		return;
	for (i = 0; i < nr && !w->failed && w->nr_ents < WALK_MAX_ENTS; i++) {
		struct zcow_stat st;
		char path[1024];

		w->nr_ents++;
		snprintf(path, sizeof(path), "%s/%s", dir, ents[i].name);
		if (zcow_stat(w->fs, path, &st))
			continue;
		if ((st.mode & S_IFMT) == S_IFDIR) {
			if (depth < WALK_DEPTH)
				walk_dir(w, path, depth + 1);
		} else if ((st.mode & S_IFMT) == S_IFREG) {
			read_file(w, path, st.size);
		}
	}
	free(ents);
}

/* Write @len pattern bytes to @path at @off (created if missing). */
static int put_file(struct zcow_fs *fs, const char *path, uint64_t off,
		    uint64_t len, bool do_fsync)
{
	struct zcow_file *f;
	uint8_t *buf = malloc(len ? len : 1);
	int64_t n;
	int ret;

	if (!buf)
		return -ENOMEM;
	zfuzz_fill_pattern(buf, path, off, len);
	ret = zcow_open(fs, path, O_CREAT | O_RDWR, &f);
	if (ret)
		goto out;
	n = zcow_pwrite(f, buf, len, off);
	ret = n < 0 ? (int)n : 0;
	if (!ret && do_fsync)
		ret = zcow_fsync(f);
	if (zcow_close(f) && !ret)
		ret = -EIO;
out:
	free(buf);
	return ret;
}

/* The read-write step: write, fsync, unmount, remount read-only, read. */
static void rw_step(struct walk *w, struct zdev *dev)
{
	struct zcow_mount_opts rw = { 0 }, ro = { .read_only = true };
	const char *path = "/" RW_NAME;
	struct zcow_fs *fs = NULL;
	struct zcow_file *f;
	uint64_t off;
	int64_t n;
	int ret;

	if (zcow_mount(dev, &rw, &fs))
		return;
	/* A name the seeds never use, so whatever is there is fresh. */
	zcow_unlink(fs, path);
	ret = put_file(fs, path, 0, RW_LEN, true);
	if (zcow_unmount(fs) || ret)
		return;
	fs = NULL;
	if (zcow_mount(dev, &ro, &fs))
		return;
	w->fs = fs;
	if (w->is_forged) {
		/* read it, nothing more to check */
		read_file(w, path, RW_LEN);
		goto out;
	}
	if (zcow_open(fs, path, O_RDONLY, &f) == -ENOENT) {
		fail(w, "%s: fsynced and unmounted with 0, gone after remount"
		     " (%llu)", path, 0);
		goto out;
	}
	for (off = 0; off < RW_LEN && !w->failed; off += READ_CHUNK) {
		int64_t bad;

		n = zcow_pread(f, w->buf, READ_CHUNK, off);
		if (n < 0)
			break;
		if ((uint64_t)n != RW_LEN - off) {
			fail(w, "%s: fsynced data short after remount at %llu",
			     path, off + n);
			break;
		}
		bad = mismatch(w, path, off, n);
		if (bad >= 0)
			fail(w, "%s: wrong fsynced data at %llu", path, bad);
	}
	zcow_close(f);
out:
	zcow_unmount(fs);
}

static uint64_t get_le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

/* One run of device bytes in the image: @len bytes at zone offset @off. */
struct region {
	uint8_t *p;
	uint64_t off, len;
};

/* The data runs of every zone (as much as the image holds). */
static unsigned int image_regions(uint8_t *img, size_t size,
				  struct region *r, unsigned int max)
{
	uint64_t nr_zones, cap, chunk, pos = IMG_HDR_LEN, i, j, nr;
	unsigned int n = 0;

	if (size < IMG_HDR_LEN)
		return 0;
	nr_zones = get_le(img + 16, 8);
	cap = get_le(img + 32, 8);
	for (chunk = 1; chunk <= cap && chunk <= IMG_CHUNK_MAX; chunk <<= 1)
		;
	chunk >>= 1;
	for (i = 0; i < nr_zones && n < max; i++) {
		uint8_t type;

		if (size - pos < IMG_ZONE_LEN)
			break;
		type = img[pos];
		nr = get_le(img + pos + 32, 8);
		pos += IMG_ZONE_LEN;
		if (type != ZDEV_ZONE_CONV) {
			if (nr > size - pos)
				break;
			r[n++] = (struct region){ img + pos, 0, nr };
			pos += nr;
			continue;
		}
		for (j = 0; j < nr && n < max; j++) {
			if (!chunk || size - pos < 8 || size - pos - 8 < chunk)
				return n;
			r[n++] = (struct region){ img + pos + 8,
						  get_le(img + pos, 8) * chunk,
						  chunk };
			pos += 8 + chunk;
		}
	}
	return n;
}

/*
 * Reseal the superblocks (@flags bit 1) and then the tree nodes (bit 0:
 * blocks at nodesize-aligned zone offsets that carry the first
 * superblock's fsid) of the image in place.
 */
static void reseal(uint8_t *img, size_t size, uint32_t flags)
{
	struct region r[256];
	unsigned int nr = image_regions(img, size, r, 256), i;
	const struct zcow_super_block *sb = NULL;
	uint32_t nodesize = ZCOW_DEFAULT_NODESIZE;
	uint64_t off;

	for (i = 0; i < nr; i++)
		for (off = 0; off + ZCOW_SB_SIZE <= r[i].len;
		     off += ZCOW_SB_SIZE) {
			struct zcow_super_block *s = (void *)(r[i].p + off);

			if (get_le((uint8_t *)&s->magic, 8) != ZCOW_SB_MAGIC)
				continue;
			if (flags & 2)
				zcow_sb_seal(s);
			if (!sb)
				sb = s;
		}
	if (!sb || !(flags & 1))
		return;
	if (get_le((uint8_t *)&sb->nodesize, 4) >= 4096 &&
	    get_le((uint8_t *)&sb->nodesize, 4) <= 65536 &&
	    !(get_le((uint8_t *)&sb->nodesize, 4) & 4095))
		nodesize = get_le((uint8_t *)&sb->nodesize, 4);
	for (i = 0; i < nr; i++)
		for (off = (nodesize - r[i].off % nodesize) % nodesize;
		     off + nodesize <= r[i].len; off += nodesize) {
			uint8_t *b = r[i].p + off;
			uint32_t crc;

			if (memcmp(b + 0x20, sb->fsid, 16))
				continue;
			crc = zcow_crc32c(b + ZCOW_CSUM_SIZE,
					  nodesize - ZCOW_CSUM_SIZE);
			memset(b, 0, ZCOW_CSUM_SIZE);
			b[0] = crc;
			b[1] = crc >> 8;
			b[2] = crc >> 16;
			b[3] = crc >> 24;
		}
}

/* A private in-memory file holding @data with the trailer resealed. */
static int image_fd(const uint8_t *data, size_t size, char *path,
		    size_t path_len)
{
	uint64_t h = FNV_BASIS;
	uint8_t trailer[8];
	size_t i;
	int fd;

	fd = memfd_create("zfuzz-image", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (size >= 8) {
		for (i = 0; i < size - 8; i++)
			h = (h ^ data[i]) * FNV_PRIME;
		for (i = 0; i < 8; i++)
			trailer[i] = h >> (8 * i);
	}
	if ((size >= 8 && (write(fd, data, size - 8) != (ssize_t)(size - 8) ||
			   write(fd, trailer, 8) != 8)) ||
	    (size < 8 && write(fd, data, size) != (ssize_t)size)) {
		close(fd);
		return -EIO;
	}
	snprintf(path, path_len, "/proc/self/fd/%d", fd);
	return fd;
}

int zfuzz_image_one(const uint8_t *data, size_t size, char *msg)
{
	struct zcow_mount_opts ro = { .read_only = true };
	struct walk w = { .msg = msg };
	struct zdev *dev = NULL;
	char path[64];
	int fd, ret;

	uint8_t *copy = NULL;
	uint32_t flags;

	msg[0] = '\0';
	zfuzz_init();
	flags = size >= IMG_HDR_LEN ? get_le(data + IMG_RESERVED, 4) & 3 : 0;
	if (flags) {
		copy = malloc(size);
		if (!copy)
			return -ENOMEM;
		memcpy(copy, data, size);
		reseal(copy, size, flags);
		data = copy;
		w.is_forged = true;
	}
	fd = image_fd(data, size, path, sizeof(path));
	free(copy);
	if (fd < 0)
		return fd;
	ret = zsim_load(path, &dev);
	close(fd);
	if (ret)
		return 0;	/* refused: a right answer */
	w.buf = malloc(READ_CHUNK);
	w.want = malloc(READ_CHUNK);
	if (!w.buf || !w.want) {
		free(w.buf);
		free(w.want);
		zdev_close(dev);
		return -ENOMEM;
	}
	if (!zcow_mount(dev, &ro, &w.fs)) {
		walk_dir(&w, "", 0);	/* snapshots included: "/NAME" */
		zcow_check(w.fs, NULL, NULL);
		zcow_unmount(w.fs);
		w.fs = NULL;
		if (!w.failed)
			rw_step(&w, dev);
	}
	zdev_close(dev);
	free(w.buf);
	free(w.want);
	return w.failed;
}

/* ---- seed images -------------------------------------------------------- */

static int seed_files(struct zcow_fs *fs, int variant)
{
	int ret = 0, i;

	switch (variant) {
	case 0:		/* mkfs only */
		break;
	case 1:		/* files in two commits, a snapshot, an unlink */
		ret = zcow_mkdir(fs, "/d");
		ret = ret ?: put_file(fs, "/a", 0, 5000, false);
		ret = ret ?: put_file(fs, "/d/b", 0, 20000, false);
		ret = ret ?: zcow_sync(fs);
		ret = ret ?: put_file(fs, "/c", 0, 3 * 4096, false);
		ret = ret ?: zcow_snapshot(fs, "s1", NULL);
		ret = ret ?: zcow_unlink(fs, "/a");
		ret = ret ?: put_file(fs, "/d/b", 20000, 20000, false);
		break;
	case 2:		/* a commit, then fsyncs the tree-log holds */
		ret = put_file(fs, "/base", 0, 8192, false);
		ret = ret ?: zcow_sync(fs);
		ret = ret ?: put_file(fs, "/logged", 0, 6000, true);
		ret = ret ?: put_file(fs, "/base", 8192, 100, true);
		break;
	case 3:		/* many small files in nested directories */
		ret = zcow_mkdir(fs, "/x");
		ret = ret ?: zcow_mkdir(fs, "/x/y");
		for (i = 0; i < 40 && !ret; i++) {
			char path[64];

			snprintf(path, sizeof(path), "%s/f%02d",
				 i % 3 == 0 ? "" : i % 3 == 1 ? "/x" : "/x/y",
				 i);
			ret = put_file(fs, path, 0, 100 + 97 * i, false);
		}
		break;
	default:
		ret = -EINVAL;
	}
	return ret;
}

int zfuzz_image_seed(int variant, const char *path)
{
	struct zsim_config cfg = {
		.nr_zones = SEED_ZONES,
		.zone_size = SEED_ZONE_SIZE,
		.zone_capacity = SEED_ZONE_CAP,
		.max_append = 128 * 1024,
		.seed = 1,
	};
	struct zcow_mkfs_opts mo = { .seed = 1 };
	struct zcow_mount_opts mount = { 0 };
	struct zcow_fs *fs = NULL;
	struct zdev *dev = NULL;
	int ret;

	zfuzz_init();
	ret = zsim_create(&cfg, &dev);
	if (ret)
		return ret;
	ret = zcow_mkfs(dev, &mo);
	ret = ret ?: zcow_mount(dev, &mount, &fs);
	if (ret)
		goto out;
	ret = seed_files(fs, variant);
	if (variant == 2) {
		/* Keep the log: cut the power instead of a commit (the
		 * unmount then fails and only frees the fs). */
		if (!ret)
			zsim_cut_now(zsim_from_dev(dev), ZSIM_LOSS_DROP, 1);
		zcow_unmount(fs);
	} else {
		ret = zcow_unmount(fs) ?: ret;
	}
	ret = ret ?: zsim_save(zsim_from_dev(dev), path);
out:
	zdev_close(dev);
	return ret;
}
