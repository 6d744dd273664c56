/* SPDX-License-Identifier: MIT */
/*
 * Checksums of zcow's on-disk structures: crc32c as btrfs computes it
 * (seed ~0, result inverted), from ISA-L (Debian libisal-dev), which picks
 * the SSE4.2/PCLMUL code path at run time.
 */
#ifndef ZCOW_CSUM_H
#define ZCOW_CSUM_H

#include <stddef.h>
#include <stdint.h>

#include <isa-l/crc.h>

/* btrfs crc32c of @len bytes; crc32c("123456789") == 0xe3069283. */
static inline uint32_t zcow_crc32c(const void *buf, size_t len)
{
	return ~crc32_iscsi((unsigned char *)buf, (int)len, 0xffffffffu);
}

#endif /* ZCOW_CSUM_H */
