// SPDX-License-Identifier: MIT
/*
 * zcrash and btrfs-progs (harness/crash_int.h, docs/crash.md, oracle 11):
 * a crash state, before and after zcow's recovery, written as the plain
 * file of its device (zsim_export_file()) and read by `btrfs check
 * --readonly`, a checker no one here wrote.  btrfs-progs takes a plain
 * file as emulated zones of 256 MiB, all conventional, with the fixed
 * superblock offsets, so only a device of that geometry can be checked:
 * sim:...,zone_size=256M,conv=ZONES,emulated=on (zcrash_btrfs_open()
 * says so otherwise).
 *
 * A check passes when btrfs check exits 0 and prints only lines it prints
 * on a clean file system made by mkfs.btrfs itself on a file of the same
 * size (-O zoned, single profiles, no free-space tree: zcow keeps none),
 * numbers, the UUID and the file name taken out.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "crash_int.h"

#define BTRFS_ZONE_SIZE (256ULL << 20)	/* btrfs-progs's emulated zone */
#define MAX_REF_LINES 32

struct zcrash_btrfs {
	char dir[64];			/* the folder of the images */
	char img[96];			/* the image checked, reused */
	char *ref[MAX_REF_LINES];	/* normalized clean lines */
	unsigned int nr_ref;
};

/* Run @cmd (through the shell, stderr into stdout): its output in
 * *out_ret (malloc'd), its exit status in *status_ret (-1: killed).
 * 0 or -errno. */
static int run_cmd(const char *cmd, char **out_ret, int *status_ret)
{
	size_t len = 0, cap = 4096;
	char *out = malloc(cap);
	FILE *p;
	int st;

	if (!out)
		return -ENOMEM;
	p = popen(cmd, "r");
	if (!p) {
		free(out);
		return -errno;
	}
	for (;;) {
		size_t n;

		if (cap - len < 1024) {
			char *o = realloc(out, cap * 2);

			if (!o) {
				pclose(p);
				free(out);
				return -ENOMEM;
			}
			out = o;
			cap *= 2;
		}
		n = fread(out + len, 1, cap - len - 1, p);
		if (!n)
			break;
		len += n;
	}
	out[len] = '\0';
	st = pclose(p);
	*status_ret = st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	*out_ret = out;
	return 0;
}

/* @line (up to @len bytes) with what differs between two clean file
 * systems taken out: the image path, the UUID, every number. */
static char *normalize(const char *line, size_t len, const char *img)
{
	char *out = malloc(len + 8), *o = out;
	const char *end = line + len;
	size_t ilen = strlen(img);

	if (!out)
		return NULL;
	if (len >= 6 && !strncmp(line, "UUID: ", 6)) {
		strcpy(out, "UUID: U");
		return out;
	}
	while (line < end) {
		if ((size_t)(end - line) >= ilen && !strncmp(line, img, ilen)) {
			memcpy(o, "IMG", 3);
			o += 3;
			line += ilen;
		} else if (*line >= '0' && *line <= '9') {
			*o++ = 'N';
			while (line < end && *line >= '0' && *line <= '9')
				line++;
		} else {
			*o++ = *line++;
		}
	}
	*o = '\0';
	return out;
}

static bool is_ref_line(const struct zcrash_btrfs *b, const char *l)
{
	unsigned int i;

	for (i = 0; i < b->nr_ref; i++)
		if (!strcmp(b->ref[i], l))
			return true;
	return false;
}

/* btrfs check --readonly on b->img: 0 clean, 1 a complaint (exit status
 * and the lines that a clean file system does not print, in @msg),
 * -errno when it could not run.  With @is_ref, the lines are the
 * reference (kept) and a complaint is an error. */
static int check_img(struct zcrash_btrfs *b, bool is_ref, char *msg,
		     size_t mlen)
{
	char cmd[256], *out, *line, *nl;
	size_t n = 0;
	int status, ret;

	snprintf(cmd, sizeof(cmd), "btrfs check --readonly '%s' 2>&1", b->img);
	ret = run_cmd(cmd, &out, &status);
	if (ret)
		return ret;
	if (status < 0 || status == 127) {
		snprintf(msg, mlen, "btrfs check did not run (exit %d): %.200s",
			 status, out);
		free(out);
		return -ENOENT;
	}
	msg[0] = '\0';
	if (status)
		n = snprintf(msg, mlen, "exit %d", status);
	for (line = out; *line; line = nl) {
		char *l;

		nl = strchr(line, '\n');
		if (!nl)
			nl = line + strlen(line);
		l = normalize(line, nl - line, b->img);
		if (*nl)
			nl++;
		if (!l) {
			free(out);
			return -ENOMEM;
		}
		if (is_ref && b->nr_ref < MAX_REF_LINES) {
			b->ref[b->nr_ref++] = l;
			continue;
		}
		if (!is_ref_line(b, l) && n + 8 < mlen) {
			/* the complaint as printed, numbers and all */
			n += snprintf(msg + n, mlen - n, "%s%.*s",
				      n ? " | " : "", (int)(strcspn(line, "\n")),
				      line);
			if (n >= mlen)
				n = mlen - 1;
		}
		free(l);
	}
	free(out);
	return msg[0] ? 1 : 0;
}

int zcrash_btrfs_open(const struct camp *c, struct zcrash_btrfs **b_ret,
		      char *err, size_t elen)
{
	struct zcrash_btrfs *b = calloc(1, sizeof(*b));
	struct zdev *dev = NULL;
	char cmd[512], msg[512], *out = NULL;
	uint64_t size;
	int ret, status;

	if (!b)
		return -ENOMEM;
	ret = zdev_open(c->spec, &dev);
	if (ret) {
		snprintf(err, elen, "btrfs check: device '%s': %s", c->spec,
			 strerror(-ret));
		goto fail;
	}
	size = dev->info.size;
	if (dev->info.zone_size != BTRFS_ZONE_SIZE || dev->info.is_zoned) {
		snprintf(err, elen, "btrfs check: device '%s': btrfs-progs reads a plain file as conventional zones of 256 MiB: give the device zone_size=256M,conv=%" PRIu64 ",emulated=on (it has %" PRIu64 " of %" PRIu64 " zones conventional, zone size %" PRIu64 ", %s)",
			 c->spec, dev->info.nr_zones, dev->info.nr_conv,
			 dev->info.nr_zones, dev->info.zone_size,
			 dev->info.is_zoned ? "zoned" : "emulated");
		zdev_close(dev);
		ret = -EINVAL;
		goto fail;
	}
	zdev_close(dev);
	snprintf(b->dir, sizeof(b->dir), "%s/zcow-crash-btrfs-XXXXXX",
		 getenv("TMPDIR") && strlen(getenv("TMPDIR")) < 32 ?
		 getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(b->dir)) {
		ret = -errno;
		snprintf(err, elen, "btrfs check: cannot create %s: %s",
			 b->dir, strerror(-ret));
		goto fail;
	}
	snprintf(b->img, sizeof(b->img), "%s/state.img", b->dir);
	/* the reference: a clean mkfs.btrfs of the same size */
	snprintf(cmd, sizeof(cmd),
		 "truncate -s %" PRIu64 " '%s' && mkfs.btrfs -q -f -O zoned -R ^free-space-tree -d single -m single '%s' 2>&1",
		 size, b->img, b->img);
	ret = run_cmd(cmd, &out, &status);
	if (!ret && status) {
		snprintf(err, elen, "btrfs check: mkfs.btrfs of the reference failed (exit %d; btrfs-progs missing? ./run.sh installs it): %.200s",
			 status, out);
		ret = -ENOENT;
	}
	free(out);
	if (ret)
		goto fail_dir;
	ret = check_img(b, true, msg, sizeof(msg));
	if (ret) {
		snprintf(err, elen, "btrfs check: on mkfs.btrfs's reference: %s",
			 ret < 0 && ret != -ENOENT ? strerror(-ret) : msg);
		ret = ret < 0 ? ret : -EIO;
		goto fail_dir;
	}
	unlink(b->img);
	*b_ret = b;
	return 0;
fail_dir:
	unlink(b->img);
	rmdir(b->dir);
fail:
	zcrash_btrfs_close(b);
	return ret;
}

void zcrash_btrfs_close(struct zcrash_btrfs *b)
{
	if (!b)
		return;
	while (b->nr_ref)
		free(b->ref[--b->nr_ref]);
	if (b->dir[0]) {
		unlink(b->img);
		rmdir(b->dir);
	}
	free(b);
}

int zcrash_btrfs_check(struct zcrash_btrfs *b, struct zdev *dev, char *msg,
		       size_t mlen)
{
	struct zsim *sim = zsim_from_dev(dev);
	int ret;

	if (!sim)
		return -EINVAL;
	ret = zsim_export_file(sim, b->img);
	if (!ret)
		ret = check_img(b, false, msg, mlen);
	unlink(b->img);
	return ret;
}
