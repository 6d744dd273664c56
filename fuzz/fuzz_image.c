// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness: the image replay entry (fuzz/fuzz.h).  Any oracle
 * violation aborts, so libFuzzer saves the input as a crash.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__asan_default_options(void);

/* A calloc the code under test asks for too much (a geometry from the
 * input) returns NULL, as without ASan, so the -ENOMEM path is tested. */
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char msg[ZFUZZ_MSG_LEN];
	int ret = zfuzz_image_one(data, size, msg);

	if (ret > 0) {
		fprintf(stderr, "zfuzz image: oracle violated: %s\n", msg);
		abort();
	}
	return 0;
}
