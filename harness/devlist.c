// SPDX-License-Identifier: MIT
/*
 * Device lists: "SPEC+SPEC+..." (harness/devlist.h).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "devlist.h"

/* Whether @p starts as a spec does: "NAME:" (a backend: sim, file) or an
 * absolute path (a real device). */
static bool is_spec_start(const char *p)
{
	const char *q = p;

	if (*p == '/')
		return true;
	while (isalnum((unsigned char)*q) || *q == '_')
		q++;
	return q > p && *q == ':';
}

bool zdevs_is_list(const char *s)
{
	const char *p;

	for (p = strchr(s, '+'); p; p = strchr(p + 1, '+'))
		if (is_spec_start(p + 1))
			return true;
	return false;
}

int zdevs_parse(const char *s, struct zdevs_list *list, char *err,
		size_t elen)
{
	const char *p = s, *end;
	size_t len;

	list->nr = 0;
	if (!zdevs_is_list(s)) {
		if (strlen(s) >= ZDEVS_SPEC_LEN) {
			snprintf(err, elen, "device spec too long (%zu bytes, at most %d)",
				 strlen(s), ZDEVS_SPEC_LEN - 1);
			return -EINVAL;
		}
		snprintf(list->spec[0], ZDEVS_SPEC_LEN, "%s", s);
		list->nr = 1;
		return 0;
	}
	for (;;) {
		end = strchr(p, '+');
		len = end ? (size_t)(end - p) : strlen(p);
		if (list->nr == ZDEVS_MAX) {
			snprintf(err, elen, "'%s': more than %d devices", s,
				 ZDEVS_MAX);
			return -EINVAL;
		}
		if (!len) {
			snprintf(err, elen, "'%s': an empty device in the list (two '+' in a row, or one at an end)",
				 s);
			return -EINVAL;
		}
		if (len >= ZDEVS_SPEC_LEN) {
			snprintf(err, elen, "'%.*s...': device spec too long (%zu bytes, at most %d)",
				 32, p, len, ZDEVS_SPEC_LEN - 1);
			return -EINVAL;
		}
		if (!is_spec_start(p)) {
			snprintf(err, elen, "'%.*s' in the device list '%s' is not a device spec (sim:..., file:..., /dev/...; a spec holding '+' cannot be in a list)",
				 (int)len, p, s);
			return -EINVAL;
		}
		memcpy(list->spec[list->nr], p, len);
		list->spec[list->nr][len] = '\0';
		list->nr++;
		if (!end)
			return 0;
		p = end + 1;
	}
}
