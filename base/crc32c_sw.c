// SPDX-License-Identifier: MIT
/*
 * crc32_iscsi() for the static zcow of the VM runner (make static): Debian's
 * libisal-dev ships no libisal.a, so the static build links this portable
 * table-driven crc32c instead, with ISA-L's exact signature and semantics
 * (the caller passes the seed and inverts; see base/csum.h).  Likewise
 * crc32_ieee() and crc64_jones_refl(), bit by bit, for fio's verify
 * checksums (harness/fio_verify.c): ISA-L inverts their seed and result.
 * Only the static build links it; everything else uses ISA-L.
 */
#include <stdint.h>

#include <isa-l/crc.h>
#include <isa-l/crc64.h>

/* Reflected Castagnoli polynomial. */
#define CRC32C_POLY 0x82f63b78u

static uint32_t table[256];
static int is_table_ready;

static void make_table(void)
{
	uint32_t c;
	int i, k;

	for (i = 0; i < 256; i++) {
		c = i;
		for (k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ CRC32C_POLY : c >> 1;
		table[i] = c;
	}
	is_table_ready = 1;
}

unsigned int crc32_iscsi(unsigned char *buffer, int len,
			 unsigned int init_crc)
{
	uint32_t crc = init_crc;

	if (!is_table_ready)
		make_table();
	while (len-- > 0)
		crc = table[(crc ^ *buffer++) & 0xff] ^ (crc >> 8);
	return crc;
}

/* CRC-32 with the IEEE polynomial, most significant bit first. */
uint32_t crc32_ieee(uint32_t init_crc, const unsigned char *buf,
			uint64_t len)
{
	uint32_t crc = ~init_crc;
	int k;

	while (len--) {
		crc ^= (uint32_t)*buf++ << 24;
		for (k = 0; k < 8; k++)
			crc = crc & 0x80000000u ? (crc << 1) ^ 0x04c11db7u :
						  crc << 1;
	}
	return ~crc;
}

/* CRC-64 with Jones's polynomial, reflected. */
uint64_t crc64_jones_refl(uint64_t init_crc, const unsigned char *buf,
			  uint64_t len)
{
	uint64_t crc = ~init_crc;
	int k;

	while (len--) {
		crc ^= *buf++;
		for (k = 0; k < 8; k++)
			crc = crc & 1 ? (crc >> 1) ^ 0x95ac9329ac4bc9b5ull :
					crc >> 1;
	}
	return ~crc;
}
