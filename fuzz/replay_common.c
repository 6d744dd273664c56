// SPDX-License-Identifier: MIT
/*
 * fuzz: what the replay entries share: set-up, the file data pattern.
 */
#include "fuzz.h"

#include <string.h>

#include "prng.h"
#include "zlog.h"
#include "zsim.h"

void zfuzz_init(void)
{
	static int is_done;

	if (is_done)
		return;
	is_done = 1;
	/* -EEXIST when the program registered it already (the tests). */
	zdev_register_backend(&zsim_backend);
	zlog_set_level(ZLOG_SILENT);
}

static uint64_t mix(uint64_t x)
{
	return zcow_mix64(x + ZCOW_GOLDEN64);
}

static uint64_t name_hash(const char *name)
{
	uint64_t h = 0xcbf29ce484222325ull;
	const char *base = strrchr(name, '/');

	for (base = base ? base + 1 : name; *base; base++)
		h = (h ^ (uint8_t)*base) * 0x100000001b3ull;
	return h;
}

uint8_t zfuzz_pattern(const char *name, uint64_t off)
{
	return mix(name_hash(name) ^ mix(off / 8)) >> (8 * (off % 8));
}

void zfuzz_fill_pattern(uint8_t *buf, const char *name, uint64_t off,
			uint64_t len)
{
	uint64_t h = name_hash(name), word = 0, i;

	for (i = 0; i < len; i++) {
		if (i == 0 || (off + i) % 8 == 0)
			word = mix(h ^ mix((off + i) / 8));
		buf[i] = word >> (8 * ((off + i) % 8));
	}
}
