// SPDX-License-Identifier: MIT
/*
 * The mount options: one table (mount_opts[]), one row per option with
 * the setting it sets, its value, its help line and its setter.  The
 * parser (zcow_mount_opts_parse()), the option list of the commands'
 * help (zcow_mount_opt_doc()) and the docs' list (a test compares
 * README.md with the table) all come from it: adding an option is one
 * row and its setter.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zcow.h"
#include "zdev.h"
#include "zlog.h"

#define TAG "files"

/* The settings the options set: two options of one setting in one list
 * conflict ("ro,rw"), the same one repeated does not. */
enum setting {
	SET_RO, SET_ATIME, SET_ZONE_APPEND, SET_TREELOG, SET_HOTCOLD,
	SET_CLEANER, SET_COMMIT_BYTES, SET_DATA_ZONES, SET_RECLAIM,
	SET_RECLAIM_THRESHOLD, SET_RECLAIM_HIGH, SET_NONE, NR_SETTINGS
};

struct mount_opt {
	struct zcow_mount_opt_doc doc;
	enum setting setting;
	/* 0, or -EINVAL after its message; @val is "" without a value */
	int (*set)(struct zcow_mount_opts *o, const char *key,
		   const char *val);
};

/* "on" or "off" into *@on_ret: 0, or -EINVAL for anything else. */
static int parse_on_off(const char *val, bool *on_ret)
{
	if (strcmp(val, "on") && strcmp(val, "off"))
		return -EINVAL;
	*on_ret = !strcmp(val, "on");
	return 0;
}

const char *zcow_hotcold_name(int mode)
{
	switch (mode) {
	case ZCOW_HOTCOLD_OFF:
		return "off";
	case ZCOW_HOTCOLD_FREQUENCY:
		return "frequency";
	case ZCOW_HOTCOLD_AGE:
		return "age";
	}
	return "?";
}

int zcow_hotcold_parse(const char *name)
{
	bool on;

	if (!strcmp(name, "frequency"))
		return ZCOW_HOTCOLD_FREQUENCY;
	if (!strcmp(name, "age"))
		return ZCOW_HOTCOLD_AGE;
	if (parse_on_off(name, &on))
		return -EINVAL;
	return on ? ZCOW_HOTCOLD_FREQUENCY : ZCOW_HOTCOLD_OFF;
}

static int on_off(const char *key, const char *val, bool *on_ret)
{
	if (!parse_on_off(val, on_ret))
		return 0;
	zlog_err(TAG, "mount option %s: bad value '%s' (on or off)", key, val);
	return -EINVAL;
}

/* A number in [@lo, @hi] into *@n_ret, or -EINVAL (no message). */
static int number_in(const char *val, unsigned long lo, unsigned long hi,
		     uint32_t *n_ret)
{
	char *end;
	unsigned long n = strtoul(val, &end, 10);

	if (!*val || *end || n < lo || n > hi)
		return -EINVAL;
	*n_ret = (uint32_t)n;
	return 0;
}

/* ---- the setters ------------------------------------------------------ */

static int set_ro(struct zcow_mount_opts *o, const char *key, const char *val)
{
	(void)val;
	o->read_only = !strcmp(key, "ro");
	return 0;
}

static int set_atime(struct zcow_mount_opts *o, const char *key,
		     const char *val)
{
	(void)val;
	o->atime = !strcmp(key, "noatime")     ? ZCOW_ATIME_NOATIME :
		   !strcmp(key, "strictatime") ? ZCOW_ATIME_STRICTATIME :
						 ZCOW_ATIME_RELATIME;
	return 0;
}

static int set_zone_append(struct zcow_mount_opts *o, const char *key,
			   const char *val)
{
	bool on;

	if (on_off(key, val, &on))
		return -EINVAL;
	o->no_zone_append = !on;
	return 0;
}

static int set_treelog(struct zcow_mount_opts *o, const char *key,
		       const char *val)
{
	bool on = false;

	if (!strcmp(key, "treelog") && on_off(key, val, &on))
		return -EINVAL;
	o->no_treelog = !on;
	return 0;
}

static int set_hotcold(struct zcow_mount_opts *o, const char *key,
		       const char *val)
{
	int mode = zcow_hotcold_parse(val);

	(void)key;
	if (mode < 0) {
		zlog_err(TAG, "mount option hotcold=%s: need on, off, frequency or age",
			 val);
		return -EINVAL;
	}
	o->hotcold = mode;
	return 0;
}

static int set_cleaner(struct zcow_mount_opts *o, const char *key,
		       const char *val)
{
	(void)key;
	if (!strcmp(val, "writer")) {
		o->cleaner = ZCOW_CLEANER_WRITER;
	} else if (!strcmp(val, "background")) {
		o->cleaner = ZCOW_CLEANER_THREAD;
	} else {
		zlog_err(TAG, "mount option cleaner=%s: need writer or background",
			 val);
		return -EINVAL;
	}
	return 0;
}

static int set_commit_bytes(struct zcow_mount_opts *o, const char *key,
			    const char *val)
{
	if (!zdev_parse_size(val, &o->commit_bytes))
		return 0;
	zlog_err(TAG, "mount option %s: bad value '%s' (bytes, e.g. 64M)", key,
		 val);
	return -EINVAL;
}

static int set_data_zones(struct zcow_mount_opts *o, const char *key,
			  const char *val)
{
	(void)key;
	if (!number_in(val, 1, ZCOW_MAX_DATA_ZONES, &o->data_zones))
		return 0;
	zlog_err(TAG, "mount option data_zones=%s: need a number in 1..%u", val,
		 ZCOW_MAX_DATA_ZONES);
	return -EINVAL;
}

static int set_reclaim(struct zcow_mount_opts *o, const char *key,
		       const char *val)
{
	int p = zcow_reclaim_parse(val);
	char names[128];

	(void)key;
	if (p >= 0) {
		o->reclaim = p;
		return 0;
	}
	zcow_reclaim_names(names, sizeof(names));
	zlog_err(TAG, "mount option reclaim=%s: need %s", val, names);
	return -EINVAL;
}

static int set_reclaim_threshold(struct zcow_mount_opts *o, const char *key,
				 const char *val)
{
	(void)key;
	if (!number_in(val, 51, 100, &o->reclaim_threshold))
		return 0;
	zlog_err(TAG, "mount option reclaim_threshold=%s: need a percentage in 51..100",
		 val);
	return -EINVAL;
}

static int set_reclaim_high(struct zcow_mount_opts *o, const char *key,
			    const char *val)
{
	(void)key;
	if (!number_in(val, ZCOW_RECLAIM_LOW_ZONES + 1, ZCOW_RECLAIM_MAX_HIGH,
		       &o->reclaim_high))
		return 0;
	zlog_err(TAG, "mount option reclaim_high=%s: need a number of free zones in %u..%u",
		 val, ZCOW_RECLAIM_LOW_ZONES + 1, ZCOW_RECLAIM_MAX_HIGH);
	return -EINVAL;
}

static int set_refused(struct zcow_mount_opts *o, const char *key,
		       const char *val)
{
	(void)o;
	(void)val;
	zlog_err(TAG, "mount option %s refused: zoned file systems write data copy-on-write with checksums only (no in-place overwrite)",
		 key);
	return -EINVAL;
}

/* ---- the table -------------------------------------------------------- */

static const struct mount_opt mount_opts[] = {
	{ { "ro", NULL, "read-only: nothing is written, not even at unmount" },
	  SET_RO, set_ro },
	{ { "rw", NULL, "read-write (the default)" }, SET_RO, set_ro },
	{ { "relatime", NULL,
	    "a read updates the atime when it is not after the mtime or ctime, or a day old (the default)" },
	  SET_ATIME, set_atime },
	{ { "noatime", NULL, "a read never updates the atime" }, SET_ATIME,
	  set_atime },
	{ { "strictatime", NULL, "every read updates the atime" }, SET_ATIME,
	  set_atime },
	{ { "zone_append", "on|off",
	    "data by Zone Append (on, the default) or by plain writes at the write pointer" },
	  SET_ZONE_APPEND, set_zone_append },
	{ { "treelog", "on|off",
	    "fsync writes the file's items to the tree-log in its own block group (on, the default), or commits" },
	  SET_TREELOG, set_treelog },
	{ { "notreelog", NULL, "treelog=off" }, SET_TREELOG, set_treelog },
	{ { "hotcold", "on|off|frequency|age",
	    "data placed by how often its range is written (on = frequency) or by the age of what it replaces (age); off by default" },
	  SET_HOTCOLD, set_hotcold },
	{ { "cleaner", "writer|background",
	    "who runs reclaim: the writer that needs room (the default) or a background thread" },
	  SET_CLEANER, set_cleaner },
	{ { "commit_bytes", "SIZE",
	    "commit after this many bytes of data writes (default 256M)" },
	  SET_COMMIT_BYTES, set_commit_bytes },
	{ { "data_zones", "N",
	    "data block groups written at once, 1..16 (default: up to 4, as the active zones allow)" },
	  SET_DATA_ZONES, set_data_zones },
	{ { "reclaim", "off|threshold|greedy|cost-benefit|hotcold-greedy",
	    "which block groups are relocated so their zones can be reset (docs/reclaim.md)" },
	  SET_RECLAIM, set_reclaim },
	{ { "reclaim_threshold", "N",
	    "percent of a group unusable at which reclaim=threshold relocates it, 51..100 (default 75)" },
	  SET_RECLAIM_THRESHOLD, set_reclaim_threshold },
	{ { "reclaim_high", "N",
	    "free zones the just-in-time cleaner keeps, reserves included (docs/reclaim.md)" },
	  SET_RECLAIM_HIGH, set_reclaim_high },
	{ { "nodatacow", NULL,
	    "refused: zoned file systems write data copy-on-write" },
	  SET_NONE, set_refused },
	{ { "nodatasum", NULL, "refused: data always has checksums" },
	  SET_NONE, set_refused },
};

#define NR_MOUNT_OPTS (sizeof(mount_opts) / sizeof(mount_opts[0]))

const struct zcow_mount_opt_doc *zcow_mount_opt_doc(unsigned int i)
{
	return i < NR_MOUNT_OPTS ? &mount_opts[i].doc : NULL;
}

static const struct mount_opt *lookup(const char *key)
{
	unsigned int i;

	for (i = 0; i < NR_MOUNT_OPTS; i++)
		if (!strcmp(key, mount_opts[i].doc.name))
			return &mount_opts[i];
	return NULL;
}

int zcow_mount_opts_parse(const char *s, struct zcow_mount_opts *opts)
{
	char key[64], val[64], seen[NR_SETTINGS][130] = { { 0 } };
	const char *pos = s ? s : "";
	int r;

	while ((r = zdev_spec_next(&pos, key, sizeof(key), val,
				   sizeof(val))) == 1) {
		const struct mount_opt *m = lookup(key);
		char spelled[130];

		if (!m) {
			zlog_err(TAG, "unknown mount option '%s%s%s'", key,
				 *val ? "=" : "", val);
			return -EINVAL;
		}
		/* a value it would ignore ("ro=0") is refused */
		if (!m->doc.value && *val && m->setting != SET_NONE) {
			zlog_err(TAG, "mount option %s takes no value (got '%s')",
				 key, val);
			return -EINVAL;
		}
		/* One setting once: "ro,rw" would leave the last word to
		 * chance of order; the same option repeated is harmless. */
		snprintf(spelled, sizeof(spelled), "%s%s%s", key,
			 *val ? "=" : "", val);
		if (m->setting != SET_NONE) {
			if (seen[m->setting][0] &&
			    strcmp(seen[m->setting], spelled)) {
				zlog_err(TAG, "mount options '%s' and '%s' set the same thing: give one",
					 seen[m->setting], spelled);
				return -EINVAL;
			}
			memcpy(seen[m->setting], spelled, sizeof(spelled));
		}
		if (m->set(opts, key, val))
			return -EINVAL;
	}
	return r < 0 ? r : 0;
}
