/* SPDX-License-Identifier: MIT */
/*
 * Little-endian field access for zcow's on-disk structures (btrfs byte
 * order), on unaligned byte pointers.  Who may include this: everything.
 */
#ifndef ZCOW_LE_H
#define ZCOW_LE_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return le64toh(v);
}

static inline uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return le32toh(v);
}

static inline uint16_t get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return le16toh(v);
}

static inline void put64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, 8);
}

static inline void put32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, 4);
}

static inline void put16(uint8_t *p, uint16_t v)
{
	v = htole16(v);
	memcpy(p, &v, 2);
}

#endif /* ZCOW_LE_H */
