// SPDX-License-Identifier: MIT
/*
 * zcow df, check, balance: the metadata-engine commands (bench-meta:
 * cmd_bench.c); zcow mount-options, the table every -o takes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "zcow.h"

static void human(char *buf, size_t len, uint64_t v, bool raw)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double d = (double)v;
	int u = 0;

	if (raw) {
		snprintf(buf, len, "%" PRIu64, v);
		return;
	}
	while (d >= 1024 && u < 4) {
		d /= 1024;
		u++;
	}
	snprintf(buf, len, "%.2f%s", d, units[u]);
}

/* Parse "[FLAG] DEV" style arguments (@flag: "--raw", or NULL); returns
 * 0, or an exit status. */
static int parse_dev_args(const char *cmd, const char *usage,
			  const char *flag, int argc, char **argv,
			  const char **spec_ret, bool *flag_ret)
{
	int i;

	*spec_ret = NULL;
	for (i = 1; i < argc; i++) {
		if (is_help(argv[i])) {
			printf("usage: zcow %s %s\n", cmd, usage);
			return -1;
		} else if (flag && strcmp(argv[i], flag) == 0) {
			*flag_ret = true;
		} else if (argv[i][0] == '-' || *spec_ret) {
			fprintf(stderr, "zcow %s: unexpected argument '%s'\n",
				cmd, argv[i]);
			return 2;
		} else {
			*spec_ret = argv[i];
		}
	}
	if (!*spec_ret) {
		fprintf(stderr, "usage: zcow %s %s\n", cmd, usage);
		return 2;
	}
	return 0;
}

int cmd_df(int argc, char **argv)
{
	struct zcow_mount_opts ro = { .read_only = true };
	const struct zcow_fs_space *sp;
	struct zcow_fs_info info;
	struct zcow_fs *fs = NULL;
	struct zcow_devs devs;
	const char *spec;
	char a[32], b[32], c[32], d[32], e[32], f[32];
	bool raw = false;
	unsigned int i;
	int ret;

	ret = parse_dev_args("df", "[--raw] DEV", "--raw", argc, argv, &spec,
			     &raw);
	if (ret)
		return ret < 0 ? 0 : ret;
	ret = open_devs("df", spec, &devs);
	if (ret)
		return ret;
	ret = mount_devs("df", &devs, &ro, &fs);
	if (ret) {
		fprintf(stderr, "zcow df: %s: %s\n", spec, strerror(-ret));
		return close_devs(&devs, 1);
	}
	zcow_fs_info(fs, &info);
	if (!info.has_trees) {
		fprintf(stderr, "zcow df: %s: no trees\n", spec);
		zcow_unmount(fs);
		return close_devs(&devs, 1);
	}
	for (i = 0; i < ZCOW_FS_NR_SPACE; i++) {
		sp = &info.space[i];
		human(a, sizeof(a), sp->total, raw);
		human(b, sizeof(b), sp->used, raw);
		human(c, sizeof(c), sp->zone_unusable, raw);
		human(d, sizeof(d), sp->reserved, raw);
		human(e, sizeof(e), sp->pinned, raw);
		human(f, sizeof(f), sp->readonly, raw);
		printf("%s, single: total=%s, used=%s, zone_unusable=%s, reserved=%s, pinned=%s, readonly=%s, groups=%" PRIu64 "\n",
		       sp->name, a, b, c, d, e, f, sp->nr_groups);
	}
	human(a, sizeof(a), info.reclaimable, raw);
	human(b, sizeof(b), info.zone_unusable, raw);
	printf("reclaimable=%s of zone_unusable=%s (freed in data and metadata groups: relocation, zcow balance, wins it back)\n",
	       a, b);
	if (info.sb_failed_mirrors)
		printf("superblock log: degraded, mirrors 0x%x cannot be written\n",
		       info.sb_failed_mirrors);
	ret = zcow_unmount(fs);
	if (ret)
		fprintf(stderr, "zcow df: unmount: %s\n", strerror(-ret));
	return close_devs(&devs, ret ? 1 : 0);
}

static void print_problem(void *arg, const char *msg)
{
	(void)arg;
	printf("ERROR: %s\n", msg);
}

int cmd_check(int argc, char **argv)
{
	struct zcow_mount_opts ro = { .read_only = true };
	struct zcow_fs_info info;
	struct zcow_fs *fs = NULL;
	struct zcow_devs devs;
	const char *spec;
	bool is_data = false;
	uint64_t nr_orphans = 0;
	int ret, nr_data = 0;

	ret = parse_dev_args("check", "[--data] DEV", "--data", argc, argv,
			     &spec, &is_data);
	if (ret)
		return ret < 0 ? 0 : ret;
	ret = open_devs("check", spec, &devs);
	if (ret)
		return ret;
	ret = mount_devs("check", &devs, &ro, &fs);
	if (ret) {
		printf("ERROR: mount failed: %s\n", strerror(-ret));
		return close_devs(&devs, 1);
	}
	zcow_fs_info(fs, &info);
	printf("checking %s: generation %" PRIu64 ", %" PRIu64 " block groups\n",
	       spec, info.generation, info.nr_block_groups);
	ret = zcow_check(fs, print_problem, NULL);
	/* inodes unlinked while open that the next read-write mount
	 * deletes: not a problem (btrfs check accepts them too) */
	if (ret >= 0 && !zcow_nr_orphans(fs, &nr_orphans) && nr_orphans)
		printf("%" PRIu64 " orphan inode%s (unlinked while open; the next read-write mount deletes them)\n",
		       nr_orphans, nr_orphans == 1 ? "" : "s");
	if (ret >= 0 && is_data) {
		nr_data = zcow_check_data(fs, print_problem, NULL);
		ret = nr_data < 0 ? nr_data : ret + nr_data;
	}
	if (ret < 0)
		printf("ERROR: check could not run: %s\n", strerror(-ret));
	else if (ret > 0)
		printf("found %d problem%s\n", ret, ret == 1 ? "" : "s");
	else
		printf("no problems found\n");
	if (zcow_unmount(fs) && !ret)
		ret = 1;
	return close_devs(&devs, ret ? 1 : 0);
}

/*
 * zcow balance [-o OPTS] [--usage N] DEV: relocate the data and metadata
 * groups at most N% live (btrfs balance start -dusage=N -musage=N), so
 * that their zones are reset.
 */
int cmd_balance(int argc, char **argv)
{
	static const char usage[] = "[-o MOUNT_OPTS] [--usage N] [--raw] DEV";
	struct zcow_mount_opts mo = { 0 };
	struct zcow_reclaim_stats st = { 0 };
	char a[32], b[32];
	bool raw = false;
	struct zcow_fs_info info;
	struct zcow_fs *fs = NULL;
	struct zcow_devs devs;
	const char *spec = NULL;
	unsigned long pct = 100;
	char *end;
	int i, ret, uret;

	for (i = 1; i < argc; i++) {
		if (is_help(argv[i])) {
			printf("usage: zcow balance %s\n"
			       "relocate every data and metadata block group "
			       "whose live share is at most N%% (default 100: "
			       "all but the ones being written, and those "
			       "with nothing to gain) and reset their zones; "
			       "sizes in zcow df's units (--raw: bytes)\n",
			       usage);
			return 0;
		} else if (!strcmp(argv[i], "--usage") && i + 1 < argc) {
			errno = 0;
			pct = strtoul(argv[++i], &end, 10);
			if (errno || *end || !argv[i][0] || pct > 100) {
				fprintf(stderr, "zcow balance: --usage '%s': "
						"need a percentage in 0..100\n",
					argv[i]);
				return 2;
			}
		} else if (!strcmp(argv[i], "--raw")) {
			raw = true;
		} else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
			if (zcow_mount_opts_parse(argv[++i], &mo)) {
				fprintf(stderr, "zcow balance: bad mount "
						"options '%s'\n", argv[i]);
				return 2;
			}
		} else if (argv[i][0] == '-' || spec) {
			fprintf(stderr, "zcow balance: unexpected argument "
					"'%s'\nusage: zcow balance %s\n",
				argv[i], usage);
			return 2;
		} else {
			spec = argv[i];
		}
	}
	if (!spec) {
		fprintf(stderr, "usage: zcow balance %s\n", usage);
		return 2;
	}
	if (mo.read_only) {
		fprintf(stderr, "zcow balance: a read-only mount cannot "
				"relocate\n");
		return 2;
	}
	ret = open_devs("balance", spec, &devs);
	if (ret)
		return ret;
	ret = mount_devs("balance", &devs, &mo, &fs);
	if (ret) {
		fprintf(stderr, "zcow balance: mount %s: %s\n", spec,
			strerror(-ret));
		return close_devs(&devs, 1);
	}
	ret = zcow_balance(fs, (uint32_t)pct, &st);
	if (ret)
		fprintf(stderr, "zcow balance: %s\n", strerror(-ret));
	/* in zcow df's units (--raw: bytes, as df --raw) */
	human(a, sizeof(a), st.data_bytes, raw);
	human(b, sizeof(b), st.meta_bytes, raw);
	printf("relocated %" PRIu64 " block groups (data %" PRIu64
	       ", metadata %" PRIu64 "): %s of data in %" PRIu64
	       " extents, %s of metadata in %" PRIu64
	       " nodes; %" PRIu64 " zones reset\n",
	       st.groups_relocated, st.data_groups, st.meta_groups,
	       a, st.data_extents, b, st.meta_nodes, st.zones_reset);
	zcow_fs_info(fs, &info);
	human(a, sizeof(a), info.reclaimable, raw);
	printf("reclaimable now: %s\n", a);
	uret = zcow_unmount(fs);
	if (uret)
		fprintf(stderr, "zcow balance: unmount: %s\n",
			strerror(-uret));
	return close_devs(&devs, ret || uret ? 1 : 0);
}

/* ---- mount-options: the table of core/mount_opts.c ---------------------- */

int cmd_mount_options(int argc, char **argv)
{
	const struct zcow_mount_opt_doc *d;
	bool names = false;
	unsigned int i;
	char spelled[96];

	if (argc == 2 && is_help(argv[1])) {
		printf("usage: zcow mount-options [--names]\n"
		       "  the mount options every -o takes (zcow fuse, balance,\n"
		       "  bench-*; a scenario's [zcow] keys of the same names),\n"
		       "  one per line with its value and help; --names: the\n"
		       "  names alone, one per line\n");
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "--names"))
		names = true;
	else if (argc > 1) {
		fprintf(stderr, "zcow mount-options: unexpected argument '%s'\n"
				"usage: zcow mount-options [--names]\n",
			argv[1]);
		return 2;
	}
	for (i = 0; (d = zcow_mount_opt_doc(i)); i++) {
		if (names) {
			printf("%s\n", d->name);
			continue;
		}
		snprintf(spelled, sizeof(spelled), "%s%s%s", d->name,
			 d->value ? "=" : "", d->value ? d->value : "");
		if (strlen(spelled) < 24)
			printf("  %-24s %s\n", spelled, d->help);
		else
			printf("  %s\n  %-24s %s\n", spelled, "", d->help);
	}
	return 0;
}
