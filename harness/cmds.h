/* SPDX-License-Identifier: MIT */
/*
 * The zcow command-line tool: one function per sub-command, each in its own
 * harness/cmd_*.c, all sharing the conventions below.  A command returns the
 * process exit status (0 success, 1 failure, 2 usage error), prints errors
 * to stderr, and answers --help.
 */
#ifndef ZCOW_CMDS_H
#define ZCOW_CMDS_H

#include <stdbool.h>
#include <stdint.h>

#include "devlist.h"

struct zdev;
struct zcow_fs;
struct zcow_mount_opts;

struct zcow_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;	/* one line for `zcow --help` */
};

#define ZCOW_COMMANDS                                                          \
	CMD("zones", cmd_zones, "print the zones like blkzone report")        \
	CMD("zone", cmd_zone, "reset|open|close|finish|offline|readonly a zone") \
	CMD("mkfs", cmd_mkfs, "make a zcow file system")                      \
	CMD("dump-super", cmd_dump_super, "print the superblock (log)")       \
	CMD("mount", cmd_mount, "mount, report, and unmount (a new generation)") \
	CMD("bench-dev", cmd_bench_dev, "simulator throughput benchmark")     \
	CMD("df", cmd_df, "space per type, like btrfs filesystem df")       \
	CMD("check", cmd_check, "check the trees, extents and block groups") \
	CMD("balance", cmd_balance, "relocate block groups at most N% live (reclaim)") \
	CMD("bench-meta", cmd_bench_meta, "metadata commit benchmark (sim)")    \
	CMD("ls", cmd_ls, "list a directory of a zcow file system")        \
	CMD("cat", cmd_cat, "print files of a zcow file system")            \
	CMD("put", cmd_put, "copy a local file (or stdin) into the fs")     \
	CMD("get", cmd_get, "copy a file out of the fs")                    \
	CMD("rm", cmd_rm, "remove files or empty directories")              \
	CMD("mkdir", cmd_mkdir, "make directories")                         \
	CMD("stat", cmd_stat, "print a file's inode")                       \
	CMD("snapshot", cmd_snapshot, "snapshot of '/', -r read-only (btrfs subvolume snapshot)") \
	CMD("subvol", cmd_subvol, "list the snapshots (btrfs subvolume list)") \
	CMD("bench-fs", cmd_bench_fs, "file-layer write benchmark (sim)")    \
	CMD("bench-commits", cmd_bench_commits, "small commits on small zones (reclaim)") \
	CMD("bench-refill", cmd_bench_refill, "fill, delete every other file, refill (reclaim)") \
	CMD("run", cmd_run, "run a scenario (fio jobs + [zcow]), write results") \
	CMD("crash", cmd_crash, "crash-consistency campaign (configs/crash-*)") \
	CMD("conform", cmd_conform, "check the device rules on DEV (destroys data)") \
	CMD("dev", cmd_dev, "add a device to a file system, list its devices") \
	CMD("replace", cmd_replace, "replace a device of a file system by a new one") \
	CMD("fuse", cmd_fuse, "mount a zcow file system through FUSE")       \
	CMD("mount-options", cmd_mount_options, "list the mount options (-o) with their values")

#define CMD(name, fn, summary) int fn(int argc, char **argv);
ZCOW_COMMANDS
#undef CMD

/* True when @arg is -h or --help. */
bool is_help(const char *arg);

/* One option of a command's table (harness/cmd_opts.c). */
struct zcow_opt {
	const char *name;	/* "--items" */
	enum {
		ZOPT_FLAG,	/* no value: *(bool *)dst = true */
		ZOPT_U64,	/* a number (decimal or 0x-hex) */
		ZOPT_SIZE,	/* bytes with a suffix: 64M, 0x1000 */
		ZOPT_STR,	/* *(const char **)dst = the value */
	} kind;
	void *dst;
	bool is_nonzero;	/* ZOPT_U64/SIZE: 0 is refused */
};

/*
 * Parse @argv by the table @opts (ends with a NULL name).  @dev_ret NULL:
 * no positional argument; else the one positional argument, required, is
 * the device spec (*dev_ret).  Returns 0, -1 (--help: @help printed), or
 * 2 (a usage error, printed with the option and the value).
 */
int zcow_opt_parse(const char *cmd, const char *help,
		   const struct zcow_opt *opts, int argc, char **argv,
		   const char **dev_ret);

/* Seconds on the monotonic clock. */
double zcow_now_sec(void);
/*
 * Open the one device spec @spec of command @cmd (a raw-device command:
 * zones, zone, dump-super, conform), printing the error; a device list
 * (harness/devlist.h) is refused with a message naming @cmd.  Returns 0,
 * 1 (the open failed) or 2 (a list).
 */
int open_dev(const char *cmd, const char *spec, struct zdev **dev_ret);
/* Close a device, printing an error; returns the exit status @status or 1. */
int close_dev(struct zdev *dev, int status);

/* The devices of a file system, as open_devs() opened them from a DEV
 * (one spec or a '+' list), in the order given. */
struct zcow_devs {
	unsigned int nr;
	struct zdev *dev[ZDEVS_MAX];
};
/*
 * Open every device of the device list @list (one spec, or specs joined
 * by '+': docs/device-spec.md, "Several devices") for command @cmd,
 * printing the error; on a failure the devices opened are closed again.
 * Returns 0, 1 (a device did not open) or 2 (the list is malformed, or
 * names one device twice: is_same_dev()).
 */
int open_devs(const char *cmd, const char *list, struct zcow_devs *devs);
/* Whether @a and @b are one device (the same image, file or device path,
 * as the real paths say): opened twice, each would save its own copy. */
bool is_same_dev(struct zdev *a, struct zdev *b);
/* Before @spec is opened: 0, or 2 with a message naming @cmd when it is
 * a sim: image that a device of @devs already holds. */
int check_new_image(const char *cmd, const struct zcow_devs *devs,
		    const char *spec);
/* 0, or 2 with a message naming @cmd when @dev is one of @devs
 * (is_same_dev()). */
int check_new_dev(const char *cmd, const struct zcow_devs *devs,
		  struct zdev *dev);
/* 0, or 2 with a message naming @cmd when @dev holds a zcow or btrfs
 * superblock (a file system @cmd would overwrite) and not @force. */
int check_blank_dev(const char *cmd, struct zdev *dev, bool force);
/* Close every device of @devs (also after a failure: each is tried),
 * printing errors; returns the exit status @status or 1. */
int close_devs(struct zcow_devs *devs, int status);
/*
 * zcow_mount_devs() on @devs.  On -ENODEV (a device of the file system is
 * not in the list) it prints, as "zcow @cmd: ...", which devids are
 * missing, read from the superblocks of the devices given; the caller
 * prints its own line for the error.  Returns 0 or the -errno.
 */
int mount_devs(const char *cmd, struct zcow_devs *devs,
	       const struct zcow_mount_opts *opts, struct zcow_fs **fs_ret);
/* Parse a size/offset argument ("64M", "0x4000000"); prints on error. */
int parse_size_arg(const char *what, const char *s, uint64_t *ret);

#endif /* ZCOW_CMDS_H */
