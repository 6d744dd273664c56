/* SPDX-License-Identifier: MIT */
/*
 * Checksums and hashes of btrfs's on-disk format, all crc32c (Castagnoli)
 * from ISA-L (Debian libisal-dev), which picks the SSE4.2/PCLMUL code path
 * at run time.  The static build (make static) links base/crc32c_sw.c in
 * place of ISA-L.
 *
 * Who may include this: everything.
 */
#ifndef ZCOW_CSUM_H
#define ZCOW_CSUM_H

#include <stddef.h>
#include <stdint.h>

#include <isa-l/crc.h>

/* btrfs crc32c of @len bytes (seed ~0, result inverted): node, superblock
 * and data-block checksums; crc32c("123456789") == 0xe3069283. */
static inline uint32_t zcow_crc32c(const void *buf, size_t len)
{
	return ~crc32_iscsi((unsigned char *)buf, (int)len, 0xffffffffu);
}

/* btrfs_name_hash(): crc32c(~1, name) without the final inversion, the
 * offset of a DIR_ITEM key. */
uint32_t zcow_name_hash(const char *name, size_t len);

/* btrfs's hash_extent_data_ref(): the offset of an EXTENT_DATA_REF key;
 * inline data references are kept in descending order of it. */
uint64_t zcow_data_ref_hash(uint64_t root, uint64_t ino, uint64_t offset);

#endif /* ZCOW_CSUM_H */
