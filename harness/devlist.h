/* SPDX-License-Identifier: MIT */
/*
 * zdevs: a device list, the DEV of a command or scenario that names a
 * file system on several devices: specs joined by '+'
 * (docs/device-spec.md, "Several devices").
 *
 * DEV is a list when one of its '+' is followed by the start of a spec: a
 * backend name and ':' (sim:, file:) or a '/'.  A list is then split at
 * every '+', and every part must start as a spec.  So a spec whose text
 * holds a '+' (an image path /tmp/a+b.img) can be given alone but not in
 * a list.  Only the text is parsed here: nothing is opened.
 *
 * Who may include this: harness/ and tests/.
 */
#ifndef ZCOW_DEVLIST_H
#define ZCOW_DEVLIST_H

#include <stdbool.h>
#include <stddef.h>

#define ZDEVS_MAX	16	/* devices of a file system (include/zcow.h) */
#define ZDEVS_SPEC_LEN	256	/* bytes of one spec, its NUL included
				 * (struct zdev's spec) */

/* The specs of a device list, in the order given. */
struct zdevs_list {
	unsigned int nr;
	char spec[ZDEVS_MAX][ZDEVS_SPEC_LEN];
};

/* True when @s names two or more devices (the rule above). */
bool zdevs_is_list(const char *s);

/*
 * Split @s into @list: one spec (@s is not a list: taken whole) or the
 * parts of the list.  Returns 0, or -EINVAL with a message in @err: more
 * than ZDEVS_MAX specs, an empty part, a part that does not start as a
 * spec (a spec holding '+'), a spec of ZDEVS_SPEC_LEN bytes or more.
 */
int zdevs_parse(const char *s, struct zdevs_list *list, char *err,
		size_t elen);

#endif /* ZCOW_DEVLIST_H */
