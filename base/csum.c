// SPDX-License-Identifier: MIT
/* btrfs's name and data-reference hashes (base/csum.h). */
#include "csum.h"
#include "le.h"

uint32_t zcow_name_hash(const char *name, size_t len)
{
	/* The kernel's crc32c(~1, ...): raw, not inverted at the end. */
	return crc32_iscsi((unsigned char *)name, (int)len, 0xfffffffeu);
}

uint64_t zcow_data_ref_hash(uint64_t root, uint64_t ino, uint64_t offset)
{
	uint8_t le[8];
	uint32_t hi, lo;

	/* Raw crc32c (seed ~0, no final inversion) of the little-endian
	 * root, and of inode then offset. */
	put64(le, root);
	hi = crc32_iscsi(le, 8, 0xffffffffu);
	put64(le, ino);
	lo = crc32_iscsi(le, 8, 0xffffffffu);
	put64(le, offset);
	lo = crc32_iscsi(le, 8, lo);
	return ((uint64_t)hi << 31) ^ lo;
}
