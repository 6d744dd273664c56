// SPDX-License-Identifier: MIT
/*
 * zsim images, `blkzone report` import, and the "sim:" spec backend.
 *
 * Image format (version 1), all integers little-endian:
 *
 *   header   "ZSIMIMG\0" u32 version=1 u32 lba_size
 *            u64 nr_zones zone_size zone_capacity nr_conv max_append seed
 *            u32 max_open max_active flags(bit 0: no_auto_close, bit 1:
 *            emulated) reserved=0
 *   zones    per zone: u8 type u8 cond u8[6] 0
 *            u64 wp durable imp_rank (1-based place in the implicitly-open
 *            FIFO, 0 = not IO) nr_data
 *            sequential: nr_data = wp, then wp bytes (the zone's data);
 *            conventional: nr_data = chunks present, each u64 index +
 *            chunk_size bytes (chunk_size = the largest power of two <=
 *            min(zone capacity, 2 MiB))
 *   undo     u64 nr; each u64 off len u8 is_durable u8[7] 0, len bytes old
 *            data, len bytes new data (unflushed conventional writes)
 *   trailer  u64 FNV-1a 64 of every byte before it
 *
 * A cut device saves as the power-cycled device.  Loading checks every
 * field and the checksum; anything wrong is -EUCLEAN with a message.
 */
#include "zsim_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grow.h"
#include "le.h"
#include "zlog.h"

#define IMG_MAGIC "ZSIMIMG"	/* 8 bytes with the NUL */
#define IMG_VERSION 1
#define FNV_BASIS 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull
#define IMG_HDR_SIZE 80		/* bytes up to the first zone record */
#define IMG_ZONE_REC 40		/* bytes of a zone record before its data */

struct img {
	FILE *f;
	uint64_t hash;
	bool is_bad;		/* short read/write */
};

static void hash_bytes(struct img *im, const void *p, size_t len)
{
	const uint8_t *b = p;
	uint64_t h = im->hash;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ b[i]) * FNV_PRIME;
	im->hash = h;
}

static void put(struct img *im, const void *p, size_t len)
{
	if (im->is_bad || !len)
		return;
	if (fwrite(p, 1, len, im->f) != len)
		im->is_bad = true;
	hash_bytes(im, p, len);
}

static void put_u64(struct img *im, uint64_t v)
{
	uint8_t b[8];

	put64(b, v);
	put(im, b, 8);
}

static void put_u32(struct img *im, uint32_t v)
{
	uint8_t b[4];

	put32(b, v);
	put(im, b, 4);
}

static void get(struct img *im, void *p, size_t len)
{
	if (im->is_bad) {
		memset(p, 0, len);
		return;
	}
	if (fread(p, 1, len, im->f) != len) {
		im->is_bad = true;
		memset(p, 0, len);
		return;
	}
	hash_bytes(im, p, len);
}

static uint64_t get_u64(struct img *im)
{
	uint8_t b[8];

	get(im, b, 8);
	return get64(b);
}

static uint32_t get_u32(struct img *im)
{
	uint8_t b[4];

	get(im, b, 4);
	return get32(b);
}

static uint64_t imp_rank(const struct zsim *sim, uint64_t zno)
{
	uint64_t r = 1, i;

	for (i = sim->imp_head; i != ZSIM_NO_ZONE; i = sim->zones[i].next, r++)
		if (i == zno)
			return r;
	return 0;
}

static void save_locked(struct zsim *sim, struct img *im)
{
	const struct zsim_config *cfg = &sim->cfg;
	uint8_t pad[8] = { 0 };
	uint8_t *buf = NULL;
	uint64_t i, c;

	put(im, IMG_MAGIC, 8);
	put_u32(im, IMG_VERSION);
	put_u32(im, cfg->lba_size);
	put_u64(im, cfg->nr_zones);
	put_u64(im, cfg->zone_size);
	put_u64(im, cfg->zone_capacity);
	put_u64(im, cfg->nr_conv);
	put_u64(im, cfg->max_append);
	put_u64(im, cfg->seed);
	put_u32(im, cfg->max_open);
	put_u32(im, cfg->max_active);
	put_u32(im, (cfg->no_auto_close ? 1 : 0) | (cfg->is_emulated ? 2 : 0));
	put_u32(im, 0);
	for (i = 0; i < cfg->nr_zones; i++) {
		const struct zsim_zone *z = &sim->zones[i];
		uint8_t tc[2] = { z->type, z->cond };
		uint64_t nr = 0;

		if (sim->is_cut)
			tc[1] = zsim_cycled_cond(sim, z);
		put(im, tc, 2);
		put(im, pad, 6);
		put_u64(im, z->wp);
		put_u64(im, z->durable);
		put_u64(im, sim->is_cut ? 0 : imp_rank(sim, i));
		if (z->type != ZDEV_ZONE_CONV) {
			put_u64(im, z->wp);
			for (c = 0; c * sim->chunk_size < z->wp; c++) {
				uint64_t n = z->wp - c * sim->chunk_size;

				if (n > sim->chunk_size)
					n = sim->chunk_size;
				if (z->chunks && z->chunks[c]) {
					put(im, z->chunks[c], n);
					continue;
				}
				if (!buf)
					buf = calloc(1, sim->chunk_size);
				if (!buf) {
					im->is_bad = true;
					goto out;
				}
				put(im, buf, n);
			}
			continue;
		}
		for (c = 0; z->chunks && c < sim->chunks_per_zone; c++)
			nr += z->chunks[c] != NULL;
		put_u64(im, nr);
		for (c = 0; z->chunks && c < sim->chunks_per_zone; c++) {
			if (!z->chunks[c])
				continue;
			put_u64(im, c);
			put(im, z->chunks[c], sim->chunk_size);
		}
	}
	put_u64(im, sim->nr_undo);
	for (i = 0; i < sim->nr_undo; i++) {
		const struct zsim_undo *u = &sim->undo[i];
		uint8_t d[8] = { u->is_durable };

		put_u64(im, u->off);
		put_u64(im, u->len);
		put(im, d, 8);
		put(im, u->old_data, u->len);
		put(im, u->new_data, u->len);
	}
	put_u64(im, im->hash);
out:
	free(buf);
}

int zsim_save(struct zsim *sim, const char *path)
{
	struct img im = { .hash = FNV_BASIS };
	char *tmp;
	int ret = 0, fd;

	/* a name of its own: two processes saving one image never write
	 * into one file */
	if (asprintf(&tmp, "%s.XXXXXX", path) < 0)
		return -ENOMEM;
	fd = mkstemp(tmp);
	im.f = fd < 0 ? NULL : fdopen(fd, "wb");
	if (!im.f) {
		ret = -errno;
		zlog_err("sim", "cannot create image %s: %s", tmp,
			 strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		goto out;
	}
	fchmod(fd, 0644);	/* as fopen() would make it (mkstemp: 0600) */
	zsim_lock(sim);
	save_locked(sim, &im);
	zsim_unlock(sim);
	if (fclose(im.f) || im.is_bad) {
		ret = -EIO;
		zlog_err("sim", "cannot write image %s", tmp);
		unlink(tmp);
		goto out;
	}
	/* ORDER: the new image is complete before it replaces the old one. */
	if (rename(tmp, path)) {
		ret = -errno;
		zlog_err("sim", "cannot rename %s to %s: %s", tmp, path,
			 strerror(errno));
		unlink(tmp);
	}
out:
	free(tmp);
	return ret;
}

/* Write @len bytes of @p at @off of @fd; 0 or -errno. */
static int pwrite_all(int fd, const uint8_t *p, uint64_t len, uint64_t off)
{
	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (uint64_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

static int export_locked(struct zsim *sim, int fd)
{
	uint64_t i, c;
	int ret;

	if (sim->is_cut)
		return -EIO;
	if (ftruncate(fd, (off_t)(sim->cfg.nr_zones * sim->cfg.zone_size)))
		return -errno;
	for (i = 0; i < sim->cfg.nr_zones; i++) {
		const struct zsim_zone *z = &sim->zones[i];
		uint64_t end = z->type == ZDEV_ZONE_CONV ? sim->cfg.zone_size :
			       z->wp;

		for (c = 0; z->chunks && c * sim->chunk_size < end; c++) {
			uint64_t n = end - c * sim->chunk_size;

			if (!z->chunks[c])
				continue;
			if (n > sim->chunk_size)
				n = sim->chunk_size;
			ret = pwrite_all(fd, z->chunks[c], n,
					 i * sim->cfg.zone_size +
					 c * sim->chunk_size);
			if (ret)
				return ret;
		}
	}
	return 0;
}

int zsim_export_file(struct zsim *sim, const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int ret;

	if (fd < 0) {
		ret = -errno;
		zlog_err("sim", "cannot create %s: %s", path, strerror(-ret));
		return ret;
	}
	zsim_lock(sim);
	ret = export_locked(sim, fd);
	zsim_unlock(sim);
	if (close(fd) && !ret)
		ret = -errno;
	if (ret)
		zlog_err("sim", "cannot export the device to %s: %s", path,
			 strerror(-ret));
	return ret;
}

static bool is_valid_cond(uint8_t type, uint8_t cond)
{
	if (type == ZDEV_ZONE_CONV)
		return cond == ZDEV_COND_NOT_WP || cond == ZDEV_COND_READONLY ||
		       cond == ZDEV_COND_OFFLINE;
	if (type != ZDEV_ZONE_SEQ_REQ)
		return false;
	switch (cond) {
	case ZDEV_COND_EMPTY:
	case ZDEV_COND_IMP_OPEN:
	case ZDEV_COND_EXP_OPEN:
	case ZDEV_COND_CLOSED:
	case ZDEV_COND_FULL:
	case ZDEV_COND_READONLY:
	case ZDEV_COND_OFFLINE:
		return true;
	}
	return false;
}

struct rank {
	uint64_t rank, zno;
};

static int cmp_rank(const void *a, const void *b)
{
	const struct rank *x = a, *y = b;

	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* Rebuild the IO FIFO in the saved order. */
static int rebuild_fifo(struct zsim *sim, const uint64_t *ranks)
{
	struct rank *r;
	uint64_t i, n = 0;

	zsim_recount_locked(sim);
	r = calloc(sim->cfg.nr_zones, sizeof(*r));
	if (!r)
		return -ENOMEM;
	for (i = 0; i < sim->cfg.nr_zones; i++) {
		if (sim->zones[i].cond == ZDEV_COND_IMP_OPEN) {
			r[n].rank = ranks[i];
			r[n].zno = i;
			n++;
		}
	}
	qsort(r, n, sizeof(*r), cmp_rank);
	sim->imp_head = sim->imp_tail = ZSIM_NO_ZONE;
	for (i = 0; i < n; i++) {
		struct zsim_zone *z = &sim->zones[r[i].zno];

		z->prev = sim->imp_tail;
		z->next = ZSIM_NO_ZONE;
		if (sim->imp_tail != ZSIM_NO_ZONE)
			sim->zones[sim->imp_tail].next = r[i].zno;
		else
			sim->imp_head = r[i].zno;
		sim->imp_tail = r[i].zno;
	}
	free(r);
	return 0;
}

#define BAD(...)                                        \
	do {                                            \
		zlog_err("sim", __VA_ARGS__);           \
		ret = -EUCLEAN;                         \
		goto out;                               \
	} while (0)

static int load_zone(struct zsim *sim, struct img *im, uint64_t i,
		     const char *path, uint8_t *buf)
{
	struct zsim_zone *z = &sim->zones[i];
	uint64_t nr, c, idx, n;
	int ret = 0;

	nr = get_u64(im);
	if (im->is_bad)
		BAD("image %s: truncated in zone %" PRIu64, path, i);
	if (z->type != ZDEV_ZONE_CONV) {
		if (nr != z->wp)
			BAD("image %s: zone %" PRIu64 " data size %" PRIu64
			    " != wp", path, i, nr);
		for (c = 0; c * sim->chunk_size < z->wp; c++) {
			n = z->wp - c * sim->chunk_size;
			if (n > sim->chunk_size)
				n = sim->chunk_size;
			get(im, buf, n);
			if (im->is_bad)
				BAD("image %s: truncated data of zone %" PRIu64,
				    path, i);
			ret = zsim_store_locked(sim, i, c * sim->chunk_size,
						buf, n);
			if (ret)
				goto out;
		}
		goto out;
	}
	if (nr > sim->chunks_per_zone)
		BAD("image %s: zone %" PRIu64 " has %" PRIu64 " chunks", path,
		    i, nr);
	for (c = 0; c < nr; c++) {
		idx = get_u64(im);
		get(im, buf, sim->chunk_size);
		if (im->is_bad)
			BAD("image %s: truncated data of zone %" PRIu64, path,
			    i);
		if (idx >= sim->chunks_per_zone)
			BAD("image %s: zone %" PRIu64 " chunk %" PRIu64
			    " out of range", path, i, idx);
		ret = zsim_store_locked(sim, i, idx * sim->chunk_size, buf,
					sim->chunk_size);
		if (ret)
			goto out;
	}
out:
	return ret;
}

static int load_undo(struct zsim *sim, struct img *im, const char *path)
{
	uint64_t nr, i, zs = sim->cfg.zone_size;
	uint8_t d[8];
	int ret = 0;

	nr = get_u64(im);
	if (im->is_bad)
		BAD("image %s: truncated before the undo log", path);
	for (i = 0; i < nr; i++) {
		struct zsim_undo u = { 0 };

		u.off = get_u64(im);
		u.len = get_u64(im);
		get(im, d, 8);
		if (im->is_bad)
			BAD("image %s: truncated undo log", path);
		if (u.off / zs >= sim->cfg.nr_conv || !u.len ||
		    u.len > zs - u.off % zs || u.len % sim->cfg.lba_size ||
		    d[0] > 1)
			BAD("image %s: bad undo record %" PRIu64, path, i);
		u.is_durable = d[0];
		u.old_data = malloc(u.len);
		u.new_data = malloc(u.len);
		if (!u.old_data || !u.new_data ||
		    ZCOW_GROW_ONE(&sim->undo, sim->nr_undo, &sim->undo_cap)) {
			free(u.old_data);
			free(u.new_data);
			ret = -ENOMEM;
			goto out;
		}
		get(im, u.old_data, u.len);
		get(im, u.new_data, u.len);
		sim->undo[sim->nr_undo++] = u;
		sim->mem_bytes += 2 * u.len;
		if (im->is_bad)
			BAD("image %s: truncated undo log", path);
	}
out:
	return ret;
}

static int load_sim(const char *path, struct zsim **sim_ret)
{
	struct img im = { .hash = FNV_BASIS };
	struct zsim_config cfg = { 0 };
	struct zsim *sim = NULL;
	uint64_t *ranks = NULL;
	uint8_t *buf = NULL;
	char magic[8];
	uint64_t i, sum, end_hash;
	uint32_t flags;
	struct stat st;
	int ret = 0;

	*sim_ret = NULL;
	im.f = fopen(path, "rb");
	if (!im.f) {
		ret = -errno;
		zlog_err("sim", "cannot open image %s: %s", path,
			 strerror(errno));
		return ret;
	}
	get(&im, magic, 8);
	if (im.is_bad || memcmp(magic, IMG_MAGIC, 8))
		BAD("image %s: bad magic", path);
	if (get_u32(&im) != IMG_VERSION)
		BAD("image %s: unknown version", path);
	cfg.lba_size = get_u32(&im);
	cfg.nr_zones = get_u64(&im);
	cfg.zone_size = get_u64(&im);
	cfg.zone_capacity = get_u64(&im);
	cfg.nr_conv = get_u64(&im);
	cfg.max_append = get_u64(&im);
	cfg.seed = get_u64(&im);
	cfg.max_open = get_u32(&im);
	cfg.max_active = get_u32(&im);
	flags = get_u32(&im);
	get_u32(&im);
	cfg.no_auto_close = flags & 1;
	cfg.is_emulated = flags & 2;
	if (im.is_bad || flags > 3 || !cfg.nr_zones || !cfg.zone_size ||
	    !cfg.zone_capacity || !cfg.lba_size || !cfg.max_append)
		BAD("image %s: bad header", path);
	if (zsim_check_config(&cfg))
		BAD("image %s: bad geometry", path);
	/* Each zone has a record of IMG_ZONE_REC bytes after the header:
	 * refuse a zone count the file cannot hold before allocating. */
	if (fstat(fileno(im.f), &st) || st.st_size < IMG_HDR_SIZE ||
	    cfg.nr_zones > (uint64_t)(st.st_size - IMG_HDR_SIZE) / IMG_ZONE_REC)
		BAD("image %s: truncated (%" PRIu64 " zones do not fit)", path,
		    cfg.nr_zones);
	ret = zsim_new(&cfg, &sim);
	if (ret)
		goto out;
	ranks = calloc(cfg.nr_zones, sizeof(*ranks));
	buf = malloc(sim->chunk_size);
	if (!ranks || !buf) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < cfg.nr_zones; i++) {
		struct zsim_zone *z = &sim->zones[i];
		uint8_t h[8];

		get(&im, h, 8);
		z->wp = get_u64(&im);
		z->durable = get_u64(&im);
		ranks[i] = get_u64(&im);
		if (im.is_bad)
			BAD("image %s: truncated in zone %" PRIu64, path, i);
		if (h[0] != z->type || !is_valid_cond(h[0], h[1]))
			BAD("image %s: zone %" PRIu64 " bad type/condition",
			    path, i);
		z->cond = h[1];
		if (z->type == ZDEV_ZONE_CONV ? z->wp || z->durable :
		    z->wp > cfg.zone_capacity || z->durable > z->wp ||
		    (z->cond == ZDEV_COND_EMPTY && z->wp))
			BAD("image %s: zone %" PRIu64 " bad write pointer",
			    path, i);
		ret = load_zone(sim, &im, i, path, buf);
		if (ret)
			goto out;
		if (z->durable < z->wp) {
			z->is_dirty = true;
			sim->dirty[sim->nr_dirty++] = i;
		}
	}
	ret = load_undo(sim, &im, path);
	if (ret)
		goto out;
	end_hash = im.hash;
	sum = get_u64(&im);
	if (im.is_bad || sum != end_hash)
		BAD("image %s: checksum mismatch", path);
	if (fgetc(im.f) != EOF)
		BAD("image %s: trailing bytes", path);
	ret = rebuild_fifo(sim, ranks);
out:
	fclose(im.f);
	free(ranks);
	free(buf);
	if (ret)
		zsim_destroy(sim);
	else
		*sim_ret = sim;
	return ret;
}

int zsim_load(const char *path, struct zdev **dev_ret)
{
	struct zsim *sim;
	int ret;

	*dev_ret = NULL;
	ret = load_sim(path, &sim);
	if (ret)
		return ret;
	ret = zsim_attach(sim, dev_ret);
	if (ret)
		zsim_destroy(sim);
	return ret;
}

/* ---- import ------------------------------------------------------------ */

struct rep_zone {
	uint64_t start, len, cap, wp;	/* bytes; wp relative */
	unsigned int cond, type;
};

/*
 * One `blkzone report` line (512-byte sectors, wptr relative):
 *   start: 0x000000000, len 0x002000, cap 0x002000, wptr 0x000008
 *   reset:0 non-seq:0, zcond: 2(oi) [type: 2(SEQ_WRITE_REQUIRED)]
 */
static int parse_line(const char *line, struct rep_zone *r)
{
	unsigned long long start, len, cap, wp;
	unsigned int reset, nonseq;
	char cname[8], tname[32];

	if (sscanf(line,
		   " start: %llx, len %llx, cap %llx, wptr %llx reset:%u non-seq:%u, zcond:%u(%7[a-z]) [type: %u(%31[A-Z_])]",
		   &start, &len, &cap, &wp, &reset, &nonseq, &r->cond, cname,
		   &r->type, tname) != 10)
		return -EINVAL;
	r->start = start * 512;
	r->len = len * 512;
	r->cap = cap * 512;
	r->wp = wp * 512;
	return 0;
}

static int read_report(const char *dir, struct rep_zone **zones_ret,
		       uint64_t *nr_ret)
{
	struct rep_zone *zones = NULL;
	uint64_t nr = 0, cap = 0, lineno = 0;
	char *path = NULL, *line = NULL;
	size_t line_cap = 0;
	FILE *f = NULL;
	int ret = 0;

	if (asprintf(&path, "%s/report.txt", dir) < 0)
		return -ENOMEM;
	f = fopen(path, "r");
	if (!f) {
		ret = -errno;
		zlog_err("sim", "import: cannot open %s: %s", path,
			 strerror(errno));
		goto out;
	}
	while (getline(&line, &line_cap, f) > 0) {
		lineno++;
		if (strspn(line, " \t\r\n") == strlen(line))
			continue;
		if (ZCOW_GROW_ONE(&zones, nr, &cap)) {
			ret = -ENOMEM;
			goto out;
		}
		if (parse_line(line, &zones[nr])) {
			zlog_err("sim", "import: %s:%" PRIu64
				 ": not a blkzone report line", path, lineno);
			ret = -EINVAL;
			goto out;
		}
		nr++;
	}
	if (!nr) {
		zlog_err("sim", "import: %s: no zones", path);
		ret = -EINVAL;
	}
out:
	if (f)
		fclose(f);
	free(line);
	free(path);
	if (ret) {
		free(zones);
		zones = NULL;
	}
	*zones_ret = zones;
	*nr_ret = nr;
	return ret;
}

/* Whether the rest of @f holds only zero bytes; -errno on a read error. */
static int is_zero_tail(FILE *f, uint8_t *buf, size_t buf_len)
{
	size_t n, i;

	while ((n = fread(buf, 1, buf_len, f)) > 0)
		for (i = 0; i < n; i++)
			if (buf[i])
				return 0;
	return ferror(f) ? -EIO : 1;
}

/*
 * Load DIR/zones/<zno>.bin if it exists: the zone from its start to its
 * reported wp (@rep_wp bytes; a full zone reports the zone end, so `dd` of
 * it gives zone-size bytes), of which the first @wp bytes are data.  The
 * bytes from @wp to @rep_wp are the gap past the capacity, which reads as
 * zeros on the device: they must be zeros in the file too.
 */
static int import_data(struct zsim *sim, const char *dir, uint64_t zno,
		       uint64_t wp, uint64_t rep_wp, uint8_t *buf)
{
	uint64_t off = 0, zs = sim->cfg.zone_size;
	uint64_t max = zno < sim->cfg.nr_conv ? zs : rep_wp;
	char *path = NULL;
	struct stat st;
	FILE *f = NULL;
	size_t n;
	int ret = 0;

	if (asprintf(&path, "%s/zones/%" PRIu64 ".bin", dir, zno) < 0)
		return -ENOMEM;
	if (stat(path, &st)) {
		/* Not captured: the zone reads as zeros up to its wp. */
		goto out;
	}
	if ((uint64_t)st.st_size > max) {
		zlog_err("sim", "import: %s: %lld bytes, more than the zone's wp (%" PRIu64 " bytes)",
			 path, (long long)st.st_size, max);
		ret = -EINVAL;
		goto out;
	}
	f = fopen(path, "rb");
	if (!f) {
		ret = -errno;
		zlog_err("sim", "import: cannot open %s", path);
		goto out;
	}
	if (zno < sim->cfg.nr_conv)
		wp = zs;
	while (off < wp) {
		n = fread(buf, 1, wp - off < sim->chunk_size ?
				  wp - off : sim->chunk_size, f);
		if (!n)
			break;
		ret = zsim_store_locked(sim, zno, off, buf, n);
		if (ret)
			goto out;
		off += n;
	}
	if (off == wp) {
		ret = is_zero_tail(f, buf, sim->chunk_size);
		if (ret == 0) {
			zlog_err("sim", "import: %s: nonzero bytes past the zone's data end (%" PRIu64 " bytes, its capacity): not what the device reads there",
				 path, wp);
			ret = -EINVAL;
			goto out;
		}
		ret = ret < 0 ? ret : 0;
	}
	if (ferror(f)) {
		zlog_err("sim", "import: cannot read %s", path);
		ret = -EIO;
	}
out:
	if (f)
		fclose(f);
	free(path);
	return ret;
}

static int import_sim(const char *dir, struct zsim **sim_ret)
{
	struct zsim_config cfg = { 0 };
	struct rep_zone *rz = NULL;
	struct zsim *sim = NULL;
	uint8_t *buf = NULL;
	uint64_t nr, i;
	int ret;

	*sim_ret = NULL;
	ret = read_report(dir, &rz, &nr);
	if (ret)
		return ret;
	cfg.nr_zones = nr;
	cfg.zone_size = rz[0].len;
	cfg.lba_size = 4096;
	for (i = 0; i < nr; i++) {
		const struct rep_zone *r = &rz[i];
		bool is_conv = r->type == ZDEV_ZONE_CONV;

		if (r->len != cfg.zone_size || r->start != i * cfg.zone_size ||
		    (r->type != ZDEV_ZONE_CONV &&
		     r->type != ZDEV_ZONE_SEQ_REQ) ||
		    (is_conv && i != cfg.nr_conv) ||
		    !is_valid_cond(r->type, r->cond) || r->cap > r->len ||
		    r->wp > r->len || r->wp % cfg.lba_size) {
			zlog_err("sim", "import: %s/report.txt:%" PRIu64
				 ": zone does not fit the geometry", dir,
				 i + 1);
			ret = -EINVAL;
			goto out;
		}
		if (is_conv)
			cfg.nr_conv++;
		else if (!cfg.zone_capacity)
			cfg.zone_capacity = r->cap;
		else if (r->cap != cfg.zone_capacity) {
			zlog_err("sim", "import: %s/report.txt:%" PRIu64
				 ": zone capacities differ", dir, i + 1);
			ret = -EINVAL;
			goto out;
		}
	}
	ret = zsim_new(&cfg, &sim);
	if (ret)
		goto out;
	buf = malloc(sim->chunk_size);
	if (!buf) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < nr; i++) {
		struct zsim_zone *z = &sim->zones[i];
		uint64_t wp = rz[i].wp;

		z->cond = rz[i].cond;
		if (z->type != ZDEV_ZONE_CONV) {
			/* A full zone reports wptr = len; its data ends at
			 * cap (or where the capture file ends). */
			if (z->cond == ZDEV_COND_FULL)
				wp = sim->cfg.zone_capacity;
			if (wp > sim->cfg.zone_capacity ||
			    (z->cond == ZDEV_COND_EMPTY) != (wp == 0)) {
				zlog_err("sim", "import: %s/report.txt:%" PRIu64
					 ": bad wptr", dir, i + 1);
				ret = -EINVAL;
				goto out;
			}
			/* Imported data is durable. */
			z->wp = z->durable = wp;
		}
		ret = import_data(sim, dir, i, wp, rz[i].wp, buf);
		if (ret)
			goto out;
	}
	zsim_recount_locked(sim);
out:
	free(rz);
	free(buf);
	if (ret)
		zsim_destroy(sim);
	else
		*sim_ret = sim;
	return ret;
}

int zsim_import(const char *dir, struct zdev **dev_ret)
{
	struct zsim *sim;
	int ret;

	*dev_ret = NULL;
	ret = import_sim(dir, &sim);
	if (ret)
		return ret;
	ret = zsim_attach(sim, dev_ret);
	if (ret)
		zsim_destroy(sim);
	return ret;
}

/* ---- the "sim:" spec ------------------------------------------------- */

/* Keys that name the geometry: a reopened image or an import must match. */
enum {
	KEY_ZONES = 1 << 0,
	KEY_ZONE_SIZE = 1 << 1,
	KEY_ZONE_CAP = 1 << 2,
	KEY_CONV = 1 << 3,
	KEY_LBA = 1 << 4,
	KEY_MAX_OPEN = 1 << 5,
	KEY_MAX_ACTIVE = 1 << 6,
	KEY_MAX_APPEND = 1 << 7,
	KEY_SEED = 1 << 8,
	KEY_AUTO_CLOSE = 1 << 9,
	KEY_EMULATED = 1 << 10,
};

static int check_key(const char *what, const char *key, uint64_t want,
		     uint64_t have)
{
	if (want == have)
		return 0;
	zlog_err("sim", "%s: %s=%" PRIu64 " given, the device has %" PRIu64,
		 what, key, want, have);
	return -EINVAL;
}

/*
 * Geometry keys given with image= or import= must match the device;
 * behaviour keys (max_open, max_active, max_append, seed, auto_close)
 * override what the image or import says.
 */
static int apply_keys(struct zsim *sim, const struct zsim_config *cfg,
		      unsigned int keys, const char *what)
{
	struct zsim_config *have = &sim->cfg;
	struct zsim_config c = *have;
	int ret = 0;

	if (keys & KEY_ZONES)
		ret = ret ?: check_key(what, "zones", cfg->nr_zones,
				       have->nr_zones);
	if (keys & KEY_ZONE_SIZE)
		ret = ret ?: check_key(what, "zone_size", cfg->zone_size,
				       have->zone_size);
	if (keys & KEY_ZONE_CAP)
		ret = ret ?: check_key(what, "zone_cap", cfg->zone_capacity,
				       have->zone_capacity);
	if (keys & KEY_CONV)
		ret = ret ?: check_key(what, "conv", cfg->nr_conv,
				       have->nr_conv);
	if (keys & KEY_LBA)
		ret = ret ?: check_key(what, "lba", cfg->lba_size,
				       have->lba_size);
	if (keys & KEY_EMULATED)
		ret = ret ?: check_key(what, "emulated", cfg->is_emulated,
				       have->is_emulated);
	if (ret)
		return ret;
	if (keys & KEY_MAX_OPEN)
		c.max_open = cfg->max_open;
	if (keys & KEY_MAX_ACTIVE)
		c.max_active = cfg->max_active;
	if (keys & KEY_MAX_APPEND)
		c.max_append = cfg->max_append;
	if (keys & KEY_SEED)
		c.seed = cfg->seed;
	if (keys & KEY_AUTO_CLOSE)
		c.no_auto_close = cfg->no_auto_close;
	c.no_data = cfg->no_data;	/* data=off applies to images too */
	ret = zsim_check_config(&c);
	if (ret)
		return ret;
	*have = c;
	sim->rng = c.seed;
	return 0;
}

/* The fault keys of a spec, armed once the device exists. */
struct spec_faults {
	struct zsim_fault f[ZSIM_MAX_FAULTS];
	unsigned int nr;
	struct {
		uint64_t zno, at_cmd;
		enum zdev_zone_cond cond;
		char text[64];		/* the value, for messages */
	} z[ZSIM_MAX_FAULTS];
	unsigned int nr_z;
};

/* zone_fail=readonly|offline:ZONE[@CMD]. */
static int parse_zone_fail(const char *val, struct spec_faults *sf)
{
	char buf[64], *colon, *at;
	uint64_t zno, cmd = 0;
	enum zdev_zone_cond cond;

	if (strlen(val) >= sizeof(buf) || sf->nr_z == ZSIM_MAX_FAULTS)
		return -EINVAL;
	strcpy(buf, val);
	colon = strchr(buf, ':');
	if (!colon)
		return -EINVAL;
	*colon++ = '\0';
	if (strcmp(buf, "readonly") == 0)
		cond = ZDEV_COND_READONLY;
	else if (strcmp(buf, "offline") == 0)
		cond = ZDEV_COND_OFFLINE;
	else
		return -EINVAL;
	at = strchr(colon, '@');
	if (at) {
		*at++ = '\0';
		if (zdev_parse_u64(at, &cmd))
			return -EINVAL;
	}
	if (zdev_parse_u64(colon, &zno))
		return -EINVAL;
	sf->z[sf->nr_z].zno = zno;
	sf->z[sf->nr_z].at_cmd = cmd;
	sf->z[sf->nr_z].cond = cond;
	memcpy(sf->z[sf->nr_z].text, val, strlen(val) + 1);	/* < 64 */
	sf->nr_z++;
	return 0;
}

/* Arm the spec's faults on a new device. */
static int arm_faults(struct zsim *sim, const struct spec_faults *sf)
{
	unsigned int i;
	int ret;

	for (i = 0; i < sf->nr; i++) {
		ret = zsim_add_fault(sim, &sf->f[i]);
		if (ret)
			return ret;
	}
	for (i = 0; i < sf->nr_z; i++) {
		if (sf->z[i].zno >= sim->cfg.nr_zones) {
			zlog_err("sim", "zone_fail=%s: zone %" PRIu64 " beyond the device's %" PRIu64 " zones",
				 sf->z[i].text, sf->z[i].zno,
				 sim->cfg.nr_zones);
			return -EINVAL;
		}
		ret = zsim_fail_zone_at(sim, sf->z[i].zno * sim->cfg.zone_size,
					sf->z[i].cond, sf->z[i].at_cmd);
		if (ret)
			return ret;
	}
	return 0;
}

static int parse_spec(const char *params, struct zsim_config *cfg,
		      unsigned int *keys_ret, char *image, char *import_dir,
		      size_t path_len, struct spec_faults *sf)
{
	char key[32], val[4096];
	const char *pos = params;
	uint64_t v;
	int r, ret = 0;

	*keys_ret = 0;
	image[0] = import_dir[0] = '\0';
	while ((r = zdev_spec_next(&pos, key, sizeof(key), val,
				   sizeof(val))) > 0) {
		ret = 0;
		if (strcmp(key, "image") == 0 || strcmp(key, "import") == 0) {
			if (!*val || strlen(val) >= path_len) {
				ret = -EINVAL;
			} else {
				strcpy(strcmp(key, "image") == 0 ? image :
								   import_dir,
				       val);
			}
		} else if (strcmp(key, "zones") == 0) {
			ret = zdev_parse_u64(val, &cfg->nr_zones);
			ret = ret ?: (cfg->nr_zones ? 0 : -EINVAL);
			*keys_ret |= KEY_ZONES;
		} else if (strcmp(key, "zone_size") == 0) {
			ret = zdev_parse_size(val, &cfg->zone_size);
			ret = ret ?: (cfg->zone_size ? 0 : -EINVAL);
			*keys_ret |= KEY_ZONE_SIZE;
		} else if (strcmp(key, "zone_cap") == 0) {
			ret = zdev_parse_size(val, &cfg->zone_capacity);
			ret = ret ?: (cfg->zone_capacity ? 0 : -EINVAL);
			*keys_ret |= KEY_ZONE_CAP;
		} else if (strcmp(key, "conv") == 0) {
			ret = zdev_parse_u64(val, &cfg->nr_conv);
			*keys_ret |= KEY_CONV;
		} else if (strcmp(key, "lba") == 0) {
			ret = zdev_parse_size(val, &v);
			ret = ret ?: (v && v <= (1u << 20) ? 0 : -EINVAL);
			cfg->lba_size = v;
			*keys_ret |= KEY_LBA;
		} else if (strcmp(key, "max_open") == 0) {
			ret = zdev_parse_u64(val, &v);
			ret = ret ?: (v <= UINT32_MAX ? 0 : -EINVAL);
			cfg->max_open = v;
			*keys_ret |= KEY_MAX_OPEN;
		} else if (strcmp(key, "max_active") == 0) {
			ret = zdev_parse_u64(val, &v);
			ret = ret ?: (v <= UINT32_MAX ? 0 : -EINVAL);
			cfg->max_active = v;
			*keys_ret |= KEY_MAX_ACTIVE;
		} else if (strcmp(key, "max_append") == 0) {
			ret = zdev_parse_size(val, &cfg->max_append);
			ret = ret ?: (cfg->max_append ? 0 : -EINVAL);
			*keys_ret |= KEY_MAX_APPEND;
		} else if (strcmp(key, "seed") == 0) {
			ret = zdev_parse_u64(val, &cfg->seed);
			*keys_ret |= KEY_SEED;
		} else if (strcmp(key, "auto_close") == 0) {
			if (strcmp(val, "on") == 0)
				cfg->no_auto_close = false;
			else if (strcmp(val, "off") == 0)
				cfg->no_auto_close = true;
			else
				ret = -EINVAL;
			*keys_ret |= KEY_AUTO_CLOSE;
		} else if (strcmp(key, "fail") == 0 ||
			   strcmp(key, "fail_rate") == 0) {
			if (sf->nr == ZSIM_MAX_FAULTS) {
				zlog_err("sim", "spec key '%s': more than %d faults",
					 key, ZSIM_MAX_FAULTS);
				return -EINVAL;
			}
			ret = zsim_parse_fault(val, key[4] == '_',
					       &sf->f[sf->nr]);
			if (!ret)
				sf->nr++;
		} else if (strcmp(key, "zone_fail") == 0) {
			ret = parse_zone_fail(val, sf);
		} else if (strcmp(key, "emulated") == 0) {
			if (strcmp(val, "on") == 0)
				cfg->is_emulated = true;
			else if (strcmp(val, "off") == 0)
				cfg->is_emulated = false;
			else
				ret = -EINVAL;
			*keys_ret |= KEY_EMULATED;
		} else if (strcmp(key, "data") == 0) {
			if (strcmp(val, "on") == 0)
				cfg->no_data = false;
			else if (strcmp(val, "off") == 0)
				cfg->no_data = true;
			else
				ret = -EINVAL;
		} else {
			zlog_err("sim", "unknown spec key '%s'", key);
			return -EINVAL;
		}
		if (ret) {
			zlog_err("sim", "bad value '%s' for spec key '%s'", val,
				 key);
			return -EINVAL;
		}
	}
	if (r < 0) {
		zlog_err("sim", "spec key or value too long in '%s'", params);
		return -EINVAL;
	}
	if (*image && *import_dir) {
		zlog_err("sim", "spec keys 'image' and 'import' exclude each other");
		return -EINVAL;
	}
	return 0;
}

/*
 * Open and flock() the image @path for the device's lifetime: a second
 * process opening it meanwhile (a `zcow check` while `zcow fuse` still
 * saves it) is refused, -EBUSY, instead of loading a stale image and
 * saving it over the other's.
 */
static int lock_image(const char *path, int *fd_ret)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		zlog_err("sim", "cannot open image %s: %s", path,
			 strerror(errno));
		return -errno;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		int err = errno;

		close(fd);
		if (err == EWOULDBLOCK) {
			zlog_err("sim", "image %s is in use by another process (wait for it to exit)",
				 path);
			return -EBUSY;
		}
		zlog_err("sim", "cannot lock image %s: %s", path,
			 strerror(err));
		return -err;
	}
	*fd_ret = fd;
	return 0;
}

static int backend_open(const char *params, struct zdev **dev_ret)
{
	struct zsim_config cfg = { 0 };
	char image[4096], import_dir[4096];
	struct spec_faults *sf;
	struct zsim *sim = NULL;
	unsigned int keys;
	struct stat st;
	int ret, lock_fd = -1;

	*dev_ret = NULL;
	sf = calloc(1, sizeof(*sf));
	if (!sf)
		return -ENOMEM;
	ret = parse_spec(params, &cfg, &keys, image, import_dir,
			 sizeof(image), sf);
	if (ret)
		goto out;
	if (*import_dir) {
		ret = import_sim(import_dir, &sim);
		ret = ret ?: apply_keys(sim, &cfg, keys, import_dir);
	} else if (*image && stat(image, &st) == 0) {
		ret = lock_image(image, &lock_fd);
		ret = ret ?: load_sim(image, &sim);
		ret = ret ?: apply_keys(sim, &cfg, keys, image);
	} else {
		ret = zsim_new(&cfg, &sim);
	}
	ret = ret ?: arm_faults(sim, sf);
	if (ret)
		goto out;
	if (lock_fd >= 0) {
		sim->image_lock_fd = lock_fd;
		sim->has_image_lock = true;
		lock_fd = -1;
	}
	if (*image) {
		sim->image_path = strdup(image);
		if (!sim->image_path) {
			ret = -ENOMEM;
			goto out;
		}
	}
	ret = zsim_attach(sim, dev_ret);
out:
	if (ret)
		zsim_destroy(sim);
	if (lock_fd >= 0)
		close(lock_fd);
	free(sf);
	return ret;
}

const struct zdev_backend zsim_backend = {
	.prefix = "sim",
	.open = backend_open,
};
