// SPDX-License-Identifier: MIT
/*
 * zfuzz-seeds DIR: write the generated seed inputs of the image and sblog
 * harnesses into DIR/image/ and DIR/sblog/ (fuzz/seeds.sh adds the text
 * seeds of the scenario and devspec harnesses).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

/* The same image with the header's reserved u32 = 3: the harness
 * reseals superblocks and tree nodes after mutating (replay_image.c). */
static int forged_copy(const char *from, const char *dir, int i)
{
	static uint8_t img[8 << 20];
	char path[4096];
	FILE *f = fopen(from, "rb");
	size_t n = f ? fread(img, 1, sizeof(img), f) : 0;

	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "%s/image/seed-%d-forged.zsim", dir, i);
	if (n < 80 || n == sizeof(img)) {
		fprintf(stderr, "zfuzz-seeds: %s: bad image\n", from);
		return -1;
	}
	img[76] = 3;
	f = fopen(path, "wb");
	if (!f || fwrite(img, 1, n, f) != n || fclose(f)) {
		fprintf(stderr, "zfuzz-seeds: %s: cannot write\n", path);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	uint8_t buf[256];
	char path[4096];
	int i, n;

	if (argc != 2) {
		fprintf(stderr, "usage: zfuzz-seeds DIR\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/image", argv[1]);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/sblog", argv[1]);
	mkdir(path, 0755);
	for (i = 0; i < ZFUZZ_NR_IMAGE_SEEDS; i++) {
		snprintf(path, sizeof(path), "%s/image/seed-%d.zsim", argv[1],
			 i);
		n = zfuzz_image_seed(i, path);
		if (n) {
			fprintf(stderr, "zfuzz-seeds: %s: %s\n", path,
				strerror(-n));
			return 1;
		}
		n = forged_copy(path, argv[1], i);
		if (n)
			return 1;
	}
	for (i = 0; i < ZFUZZ_NR_SBLOG_SEEDS; i++) {
		FILE *f;

		n = zfuzz_sblog_seed(i, buf, sizeof(buf));
		snprintf(path, sizeof(path), "%s/sblog/seed-%d", argv[1], i);
		f = fopen(path, "wb");
		if (n < 0 || !f || fwrite(buf, 1, n, f) != (size_t)n ||
		    fclose(f)) {
			fprintf(stderr, "zfuzz-seeds: %s: cannot write\n",
				path);
			return 1;
		}
	}
	return 0;
}
