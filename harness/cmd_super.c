// SPDX-License-Identifier: MIT
/*
 * zcow mkfs, dump-super, mount: the superblock commands.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>

#include "cmds.h"
#include "zcow_super.h"
#include "zcow.h"
#include "zdev.h"

#define G64(x) ((unsigned long long)le64toh(x))
#define G32(x) ((unsigned int)le32toh(x))

static void print_uuid(FILE *out, const uint8_t *u)
{
	int i;

	for (i = 0; i < 16; i++) {
		fprintf(out, "%02x", u[i]);
		if (i == 3 || i == 5 || i == 7 || i == 9)
			fputc('-', out);
	}
}

struct flag_name {
	uint64_t bit;
	const char *name;
};

static const struct flag_name super_flags[] = {
	{ ZCOW_SUPER_FLAG_WRITTEN, "WRITTEN" },
	{ ZCOW_SUPER_FLAG_RELOC, "RELOC" },
	{ ZCOW_SUPER_FLAG_ERROR, "ERROR" },
	{ ZCOW_SUPER_FLAG_SEEDING, "SEEDING" },
	{ ZCOW_SUPER_FLAG_METADUMP, "METADUMP" },
	{ ZCOW_SUPER_FLAG_METADUMP_V2, "METADUMP_V2" },
	{ ZCOW_SUPER_FLAG_CHANGING_FSID, "CHANGING_FSID" },
	{ ZCOW_SUPER_FLAG_CHANGING_FSID_V2, "CHANGING_FSID_V2" },
	{ ZCOW_SUPER_FLAG_CHANGING_BG_TREE, "CHANGING_BG_TREE" },
	{ ZCOW_SUPER_FLAG_CHANGING_DATA_CSUM, "CHANGING_DATA_CSUM" },
	{ ZCOW_SUPER_FLAG_CHANGING_META_CSUM, "CHANGING_META_CSUM" },
	{ ZCOW_SUPER_FLAG_SEED_PLACEMENT, "ZCOW_SEED_PLACEMENT" },
	{ 0, NULL },
};

static const struct flag_name compat_ro_flags[] = {
	{ ZCOW_COMPAT_RO_FREE_SPACE_TREE, "FREE_SPACE_TREE" },
	{ ZCOW_COMPAT_RO_FREE_SPACE_TREE_VALID, "FREE_SPACE_TREE_VALID" },
	{ ZCOW_COMPAT_RO_VERITY, "VERITY" },
	{ ZCOW_COMPAT_RO_BLOCK_GROUP_TREE, "BLOCK_GROUP_TREE" },
	{ 0, NULL },
};

static const struct flag_name incompat_flags[] = {
	{ ZCOW_INCOMPAT_MIXED_BACKREF, "MIXED_BACKREF" },
	{ ZCOW_INCOMPAT_DEFAULT_SUBVOL, "DEFAULT_SUBVOL" },
	{ ZCOW_INCOMPAT_MIXED_GROUPS, "MIXED_GROUPS" },
	{ ZCOW_INCOMPAT_COMPRESS_LZO, "COMPRESS_LZO" },
	{ ZCOW_INCOMPAT_COMPRESS_ZSTD, "COMPRESS_ZSTD" },
	{ ZCOW_INCOMPAT_BIG_METADATA, "BIG_METADATA" },
	{ ZCOW_INCOMPAT_EXTENDED_IREF, "EXTENDED_IREF" },
	{ ZCOW_INCOMPAT_RAID56, "RAID56" },
	{ ZCOW_INCOMPAT_SKINNY_METADATA, "SKINNY_METADATA" },
	{ ZCOW_INCOMPAT_NO_HOLES, "NO_HOLES" },
	{ ZCOW_INCOMPAT_METADATA_UUID, "METADATA_UUID" },
	{ ZCOW_INCOMPAT_RAID1C34, "RAID1C34" },
	{ ZCOW_INCOMPAT_ZONED, "ZONED" },
	{ ZCOW_INCOMPAT_EXTENT_TREE_V2, "EXTENT_TREE_V2" },
	{ ZCOW_INCOMPAT_RAID_STRIPE_TREE, "RAID_STRIPE_TREE" },
	{ ZCOW_INCOMPAT_SIMPLE_QUOTA, "SIMPLE_QUOTA" },
	{ 0, NULL },
};

/* As btrfs-progs: "\t\t\t( A |\n\t\t\t  B )". */
static void print_flags(const char *label, uint64_t v,
			const struct flag_name *names)
{
	const char *sep = "\t\t\t( ";
	uint64_t known = 0;
	int i;

	printf("%s0x%llx\n", label, (unsigned long long)v);
	if (!v)
		return;
	for (i = 0; names[i].name; i++) {
		known |= names[i].bit;
		if (!(v & names[i].bit))
			continue;
		printf("%s%s", sep, names[i].name);
		sep = " |\n\t\t\t  ";
	}
	if (v & ~known) {
		printf("%sunknown flag: 0x%llx", sep,
		       (unsigned long long)(v & ~known));
	}
	printf(" )\n");
}

static void print_super(const struct zcow_super_block *sb, uint64_t bytenr,
			const char *spec)
{
	static const uint8_t zero[16];
	uint32_t crc;
	const uint8_t *mu;
	int i;

	memcpy(&crc, sb->csum, sizeof(crc));
	crc = le32toh(crc);
	mu = memcmp(sb->metadata_uuid, zero, 16) ? sb->metadata_uuid : sb->fsid;
	printf("superblock: bytenr=%llu, device=%s\n",
	       (unsigned long long)bytenr, spec);
	printf("---------------------------------------------------------\n");
	printf("csum_type\t\t%u (%s)\n", le16toh(sb->csum_type),
	       le16toh(sb->csum_type) == 0 ? "crc32c" : "unknown");
	printf("csum_size\t\t4\n");
	/* btrfs-progs prints the checksum bytes in disk order. */
	printf("csum\t\t\t0x%02x%02x%02x%02x [%s]\n", sb->csum[0],
	       sb->csum[1], sb->csum[2], sb->csum[3],
	       crc == zcow_sb_csum(sb) ? "match" : "DON'T MATCH");
	printf("bytenr\t\t\t%llu\n", G64(sb->bytenr));
	print_flags("flags\t\t\t", le64toh(sb->flags), super_flags);
	printf("magic\t\t\t%.8s [%s]\n", (const char *)&sb->magic,
	       le64toh(sb->magic) == ZCOW_SB_MAGIC ? "match" :
							    "DON'T MATCH");
	printf("fsid\t\t\t");
	print_uuid(stdout, sb->fsid);
	printf("\nmetadata_uuid\t\t");
	print_uuid(stdout, mu);
	printf("\nlabel\t\t\t%.*s\n", ZCOW_SB_LABEL_SIZE, sb->label);
	printf("generation\t\t%llu\n", G64(sb->generation));
	printf("root\t\t\t%llu\n", G64(sb->root));
	printf("sys_array_size\t\t%u\n", G32(sb->sys_chunk_array_size));
	printf("chunk_root_generation\t%llu\n", G64(sb->chunk_root_generation));
	printf("root_level\t\t%u\n", sb->root_level);
	printf("chunk_root\t\t%llu\n", G64(sb->chunk_root));
	printf("chunk_root_level\t%u\n", sb->chunk_root_level);
	printf("log_root\t\t%llu\n", G64(sb->log_root));
	printf("log_root_transid (deprecated)\t%llu\n",
	       G64(sb->log_root_transid));
	printf("log_root_level\t\t%u\n", sb->log_root_level);
	printf("total_bytes\t\t%llu\n", G64(sb->total_bytes));
	printf("bytes_used\t\t%llu\n", G64(sb->bytes_used));
	printf("sectorsize\t\t%u\n", G32(sb->sectorsize));
	printf("nodesize\t\t%u\n", G32(sb->nodesize));
	printf("leafsize (deprecated)\t%u\n", G32(sb->leafsize));
	printf("stripesize\t\t%u\n", G32(sb->stripesize));
	printf("root_dir\t\t%llu\n", G64(sb->root_dir_objectid));
	printf("num_devices\t\t%llu\n", G64(sb->num_devices));
	print_flags("compat_flags\t\t", le64toh(sb->compat_flags),
		    compat_ro_flags + 4 /* none named */);
	print_flags("compat_ro_flags\t\t", le64toh(sb->compat_ro_flags),
		    compat_ro_flags);
	print_flags("incompat_flags\t\t", le64toh(sb->incompat_flags),
		    incompat_flags);
	printf("cache_generation\t%llu\n", G64(sb->cache_generation));
	printf("uuid_tree_generation\t%llu\n", G64(sb->uuid_tree_generation));
	printf("dev_item.uuid\t\t");
	print_uuid(stdout, sb->dev_item.uuid);
	printf("\ndev_item.fsid\t\t");
	print_uuid(stdout, sb->dev_item.fsid);
	printf(" [%s]\n", memcmp(sb->dev_item.fsid, mu, 16) ? "DON'T MATCH" :
							      "match");
	printf("dev_item.type\t\t%llu\n", G64(sb->dev_item.type));
	printf("dev_item.total_bytes\t%llu\n", G64(sb->dev_item.total_bytes));
	printf("dev_item.bytes_used\t%llu\n", G64(sb->dev_item.bytes_used));
	printf("dev_item.io_align\t%u\n", G32(sb->dev_item.io_align));
	printf("dev_item.io_width\t%u\n", G32(sb->dev_item.io_width));
	printf("dev_item.sector_size\t%u\n", G32(sb->dev_item.sector_size));
	printf("dev_item.devid\t\t%llu\n", G64(sb->dev_item.devid));
	printf("dev_item.dev_group\t%u\n", G32(sb->dev_item.dev_group));
	printf("dev_item.seek_speed\t%u\n", sb->dev_item.seek_speed);
	printf("dev_item.bandwidth\t%u\n", sb->dev_item.bandwidth);
	printf("dev_item.generation\t%llu\n", G64(sb->dev_item.generation));
	printf("sys_chunk_array[%d]:\t(%u bytes, not decoded)\n",
	       ZCOW_SB_SYS_ARRAY_SIZE, G32(sb->sys_chunk_array_size));
	printf("backup_roots[4]:\n");
	for (i = 0; i < 4; i++) {
		const struct zcow_root_backup *b = &sb->super_roots[i];

		printf("\tbackup %d:\n", i);
		printf("\t\tbackup_tree_root:\t%llu\tgen: %llu\tlevel: %u\n",
		       G64(b->tree_root), G64(b->tree_root_gen),
		       b->tree_root_level);
		printf("\t\tbackup_chunk_root:\t%llu\tgen: %llu\tlevel: %u\n",
		       G64(b->chunk_root), G64(b->chunk_root_gen),
		       b->chunk_root_level);
		printf("\t\tbackup_extent_root:\t%llu\tgen: %llu\tlevel: %u\n",
		       G64(b->extent_root), G64(b->extent_root_gen),
		       b->extent_root_level);
		printf("\t\tbackup_fs_root:\t\t%llu\tgen: %llu\tlevel: %u\n",
		       G64(b->fs_root), G64(b->fs_root_gen), b->fs_root_level);
		printf("\t\tbackup_dev_root:\t%llu\tgen: %llu\tlevel: %u\n",
		       G64(b->dev_root), G64(b->dev_root_gen),
		       b->dev_root_level);
		printf("\t\tcsum_root:\t%llu\tgen: %llu\tlevel: %u\n",
		       G64(b->csum_root), G64(b->csum_root_gen),
		       b->csum_root_level);
		printf("\t\tbackup_total_bytes:\t%llu\n", G64(b->total_bytes));
		printf("\t\tbackup_bytes_used:\t%llu\n", G64(b->bytes_used));
		printf("\t\tbackup_num_devices:\t%llu\n\n",
		       G64(b->num_devices));
	}
}

/* The log position of every mirror (zcow's addition to dump-super). */
static void print_log_positions(struct zdev *dev, enum zcow_sb_placement p)
{
	struct zcow_sb_log_pos pos;
	struct zcow_sb_loc loc;
	int m, ret;

	printf("sb_placement\t\t%s%s\n", zcow_sb_placement_name(p),
	       dev->info.is_zoned ? "" : " (emulated zones: fixed offsets)");
	for (m = 0; m < ZCOW_SB_MIRROR_MAX; m++) {
		zcow_sb_locate_mirror(dev, p, m, &loc);
		printf("sb_mirror %d\t\t", m);
		switch (loc.kind) {
		case ZCOW_SB_LOC_NONE:
			printf("beyond the device (skipped)\n");
			continue;
		case ZCOW_SB_LOC_FIXED:
			printf("fixed at %llu\n",
			       (unsigned long long)loc.fixed);
			continue;
		case ZCOW_SB_LOC_LOG:
			break;
		}
		ret = zcow_sb_log_position(dev, &loc, &pos);
		printf("log zones %llu %llu state %c%c wp %llu %llu",
		       (unsigned long long)loc.zone[0],
		       (unsigned long long)loc.zone[1],
		       pos.state[0] ? pos.state[0] : '?',
		       pos.state[1] ? pos.state[1] : '?',
		       (unsigned long long)pos.zones[0].wp,
		       (unsigned long long)pos.zones[1].wp);
		if (ret == -ENOENT)
			printf(" empty, next write %llu\n",
			       (unsigned long long)pos.write_off);
		else if (ret)
			printf(" error: %s\n", strerror(-ret));
		else
			printf(" newest %llu next write %llu%s\n",
			       (unsigned long long)pos.read_off,
			       (unsigned long long)pos.write_off,
			       pos.reset >= 0 ? " (after a reset)" : "");
	}
}

static int print_copy(void *arg, const struct zcow_sb_copy *copy,
		      const struct zcow_super_block *sb)
{
	(void)arg;
	if (copy->is_valid)
		printf("\tmirror %d offset %llu generation %llu\n",
		       copy->mirror, (unsigned long long)copy->off,
		       (unsigned long long)copy->generation);
	else
		printf("\tmirror %d offset %llu invalid (%s)\n", copy->mirror,
		       (unsigned long long)copy->off,
		       zcow_sb_check(sb, copy->mirror));
	return 0;
}

static void dump_super_usage(FILE *out)
{
	fprintf(out,
		"usage: zcow dump-super DEV [--all] [--mirror N]\n"
		"  Print the newest valid superblock (as btrfs inspect-internal\n"
		"  dump-super) and the superblock log position of each mirror.\n"
		"  --all       also list every copy in each log (offset, generation)\n"
		"  --mirror N  print mirror N's newest copy instead (0..2)\n");
}

int cmd_dump_super(int argc, char **argv)
{
	struct zcow_super_block *sb = NULL;
	enum zcow_sb_placement p = ZCOW_SB_PLACE_SEED;
	struct zcow_sb_copy copy;
	struct zcow_sb_loc loc;
	const char *spec = NULL;
	struct zdev *dev = NULL;
	bool all = false;
	int mirror = -1, i, ret, status = 1;
	uint64_t v;

	for (i = 1; i < argc; i++) {
		if (is_help(argv[i])) {
			dump_super_usage(stdout);
			return 0;
		} else if (strcmp(argv[i], "--all") == 0) {
			all = true;
		} else if (strcmp(argv[i], "--mirror") == 0 && i + 1 < argc) {
			if (zdev_parse_u64(argv[++i], &v) ||
			    v >= ZCOW_SB_MIRROR_MAX) {
				fprintf(stderr, "zcow dump-super: bad mirror '%s' (0..2)\n",
					argv[i]);
				return 2;
			}
			mirror = (int)v;
		} else if (argv[i][0] == '-' || spec) {
			fprintf(stderr, "zcow dump-super: unexpected argument '%s'\n",
				argv[i]);
			dump_super_usage(stderr);
			return 2;
		} else {
			spec = argv[i];
		}
	}
	if (!spec) {
		dump_super_usage(stderr);
		return 2;
	}
	ret = open_dev("dump-super", spec, &dev);
	if (ret)
		return ret;
	sb = malloc(sizeof(*sb));
	if (!sb) {
		fprintf(stderr, "zcow dump-super: out of memory\n");
		goto out;
	}
	ret = zcow_sb_read_latest(dev, sb, &copy);
	if (ret == 0)
		p = zcow_sb_placement_of(sb);
	if (mirror >= 0) {
		zcow_sb_locate_mirror(dev, p, mirror, &loc);
		ret = zcow_sb_read_mirror(dev, &loc, sb, &copy);
	}
	if (ret) {
		fprintf(stderr, "zcow dump-super: %s: %s\n", spec,
			ret == -ENOENT ? "no superblock" :
			ret == -EUCLEAN ? "no valid superblock (corrupt)" :
					  strerror(-ret));
	} else {
		print_super(sb, le64toh(sb->bytenr), spec);
		printf("found_at\t\tmirror %d offset %llu generation %llu%s\n",
		       copy.mirror, (unsigned long long)copy.off,
		       (unsigned long long)copy.generation,
		       copy.is_fallback ? " (fallback: newer copy invalid)" :
					  "");
		status = 0;
	}
	print_log_positions(dev, p);
	if (all) {
		printf("superblock copies:\n");
		for (i = 0; i < ZCOW_SB_MIRROR_MAX; i++) {
			if (zcow_sb_locate_mirror(dev, p, i, &loc) ||
			    loc.kind == ZCOW_SB_LOC_NONE)
				continue;
			ret = zcow_sb_for_each_copy(dev, &loc, print_copy,
						    NULL);
			if (ret && ret != -ENOENT) {
				fprintf(stderr, "zcow dump-super: mirror %d: %s\n",
					i, strerror(-ret));
				status = 1;
			}
		}
	}
out:
	free(sb);
	return close_dev(dev, status);
}

static void mkfs_usage(FILE *out)
{
	fprintf(out,
		"usage: zcow mkfs DEV [DEV...] [--label L] [--nodesize N] [--sb-placement seed|kernel] [--seed N]\n"
		"  Reset the device's zones and write the first superblock to every mirror.\n"
		"  Several devices (DEV DEV ..., or DEV+DEV+...): one file system over all\n"
		"  of them, devids 1, 2, ... in the order given; mount them as DEV+DEV+...\n"
		"  --label L          file-system label (at most 255 bytes)\n"
		"  --nodesize N       tree node size, power of two 4K..64K (default 16K)\n"
		"  --sb-placement P   seed: mirrors at zones 16 and min(256G/zone, 1024) (default)\n"
		"                     kernel: mirrors at 512 GiB and 4 TiB, as Linux today\n"
		"  --seed N           PRNG seed for the fsid and device uuid (default: random,\n"
		"                     printed so the run can be repeated); with it the root\n"
		"                     directory's times are 0 (one seed, one image), without\n"
		"                     it now\n");
}

/* The device list of @args (@nr specs or lists) joined by '+', malloc'd;
 * NULL: out of memory. */
static char *join_list(const char *const *args, unsigned int nr)
{
	size_t len = 1;
	unsigned int i;
	char *l;

	for (i = 0; i < nr; i++)
		len += strlen(args[i]) + 1;
	l = malloc(len);
	if (!l)
		return NULL;
	l[0] = '\0';
	for (i = 0; i < nr; i++) {
		if (i)
			strcat(l, "+");
		strcat(l, args[i]);
	}
	return l;
}

int cmd_mkfs(int argc, char **argv)
{
	struct zcow_mkfs_opts opts = { 0 };
	enum zcow_sb_placement placement = ZCOW_SB_PLACE_SEED;
	struct zcow_super_block sb = { 0 };
	struct zcow_fs *fs = NULL;
	struct zcow_devs devs = { 0 };
	const char *args[ZDEVS_MAX];
	unsigned int nr_args = 0;
	char *spec = NULL;
	bool has_seed = false;
	int i, ret, status = 1;
	uint64_t v;

	for (i = 1; i < argc; i++) {
		if (is_help(argv[i])) {
			mkfs_usage(stdout);
			return 0;
		} else if (strcmp(argv[i], "--label") == 0 && i + 1 < argc) {
			opts.label = argv[++i];
		} else if (strcmp(argv[i], "--nodesize") == 0 && i + 1 < argc) {
			if (parse_size_arg("node size", argv[++i], &v))
				return 2;
			if (v > UINT32_MAX) {
				fprintf(stderr, "zcow mkfs: node size too large\n");
				return 2;
			}
			opts.nodesize = (uint32_t)v;
		} else if (strcmp(argv[i], "--sb-placement") == 0 &&
			   i + 1 < argc) {
			i++;
			if (strcmp(argv[i], "seed") == 0) {
				opts.placement = ZCOW_SB_PLACE_SEED;
			} else if (strcmp(argv[i], "kernel") == 0) {
				opts.placement = ZCOW_SB_PLACE_KERNEL;
			} else {
				fprintf(stderr, "zcow mkfs: bad placement '%s' (seed or kernel)\n",
					argv[i]);
				return 2;
			}
		} else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
			if (zdev_parse_u64(argv[++i], &opts.seed)) {
				fprintf(stderr, "zcow mkfs: bad seed '%s'\n",
					argv[i]);
				return 2;
			}
			has_seed = true;
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "zcow mkfs: unexpected argument '%s'\n",
				argv[i]);
			mkfs_usage(stderr);
			return 2;
		} else if (nr_args == ZDEVS_MAX) {
			fprintf(stderr, "zcow mkfs: more than %d devices\n",
				ZDEVS_MAX);
			return 2;
		} else {
			args[nr_args++] = argv[i];
		}
	}
	if (!nr_args) {
		mkfs_usage(stderr);
		return 2;
	}
	if (!has_seed &&
	    getrandom(&opts.seed, sizeof(opts.seed), 0) != sizeof(opts.seed)) {
		fprintf(stderr, "zcow mkfs: getrandom failed; pass --seed\n");
		return 1;
	}
	if (!has_seed) {
		struct timespec now;

		clock_gettime(CLOCK_REALTIME, &now);
		opts.time.sec = now.tv_sec;
		opts.time.nsec = (uint32_t)now.tv_nsec;
	}
	spec = join_list(args, nr_args);
	if (!spec) {
		fprintf(stderr, "zcow mkfs: out of memory\n");
		return 1;
	}
	status = open_devs("mkfs", spec, &devs);
	if (status) {
		free(spec);
		return status;
	}
	status = 1;
	ret = zcow_mkfs_devs(devs.dev, devs.nr, &opts);
	if (ret) {
		fprintf(stderr, "zcow mkfs: %s: %s\n", spec, strerror(-ret));
		goto out;
	}
	ret = mount_devs("mkfs", &devs,
			 &(struct zcow_mount_opts){ .read_only = true }, &fs);
	if (ret) {
		fprintf(stderr, "zcow mkfs: cannot read back the superblock: %s\n",
			strerror(-ret));
		goto out;
	}
	zcow_fs_super(fs, &sb, NULL);
	placement = zcow_sb_placement_of(&sb);
	ret = zcow_unmount(fs);
	if (ret) {
		fprintf(stderr, "zcow mkfs: %s: %s\n", spec, strerror(-ret));
		goto out;
	}
	status = 0;
out:
	/* success only once the devices (images: their files) are saved */
	status = close_devs(&devs, status);
	if (!status) {
		printf("zcow mkfs: %s: fsid ", spec);
		print_uuid(stdout, sb.fsid);
		printf(", generation %llu, nodesize %u, sb placement %s, seed %llu\n",
		       (unsigned long long)le64toh(sb.generation),
		       G32(sb.nodesize), zcow_sb_placement_name(placement),
		       (unsigned long long)opts.seed);
	}
	free(spec);
	return status;
}

static void mount_usage(FILE *out)
{
	fprintf(out,
		"usage: zcow mount DEV [--read-only]\n"
		"  DEV: one device, or every device of the file system as\n"
		"  DEV+DEV+... (any order).\n"
		"  Mount (locate and check the newest superblock), print its\n"
		"  generation, and unmount, which commits a new generation\n"
		"  (not with --read-only).\n");
}

int cmd_mount(int argc, char **argv)
{
	struct zcow_mount_opts opts = { 0 };
	struct zcow_sb_copy found;
	struct zcow_fs_info info;
	struct zcow_fs *fs = NULL;
	const char *spec = NULL;
	struct zcow_devs devs;
	uint64_t gen;
	int i, ret, status = 1;

	for (i = 1; i < argc; i++) {
		if (is_help(argv[i])) {
			mount_usage(stdout);
			return 0;
		} else if (strcmp(argv[i], "--read-only") == 0) {
			opts.read_only = true;
		} else if (argv[i][0] == '-' || spec) {
			fprintf(stderr, "zcow mount: unexpected argument '%s'\n",
				argv[i]);
			mount_usage(stderr);
			return 2;
		} else {
			spec = argv[i];
		}
	}
	if (!spec) {
		mount_usage(stderr);
		return 2;
	}
	status = open_devs("mount", spec, &devs);
	if (status)
		return status;
	status = 1;
	ret = mount_devs("mount", &devs, &opts, &fs);
	if (ret) {
		fprintf(stderr, "zcow mount: %s: %s\n", spec, strerror(-ret));
		goto out;
	}
	zcow_fs_info(fs, &info);
	zcow_fs_super(fs, NULL, &found);
	gen = info.generation;
	printf("mounted %s: generation %llu (mirror %d, offset %llu%s), sb placement %s\n",
	       spec, (unsigned long long)gen, found.mirror,
	       (unsigned long long)found.off,
	       found.is_fallback ? ", fallback copy" : "",
	       zcow_sb_placement_name(info.placement));
	ret = zcow_unmount(fs);
	if (ret) {
		fprintf(stderr, "zcow mount: unmount failed: %s\n",
			strerror(-ret));
		goto out;
	}
	if (!opts.read_only)
		printf("unmounted: generation %llu committed\n",
		       (unsigned long long)gen + 1);
	status = 0;
out:
	return close_devs(&devs, status);
}
