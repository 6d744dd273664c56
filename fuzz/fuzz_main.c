// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness: one replay entry (fuzz/fuzz.h), chosen at compile
 * time by -DZFUZZ_HARNESS=image|sblog|scenario|devspec (the Makefile builds
 * build-fuzz/fuzz/fuzz_<harness> from this file).  Any oracle violation
 * aborts, so libFuzzer saves the input as a crash.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz.h"

#ifndef ZFUZZ_HARNESS
#error "build with -DZFUZZ_HARNESS=image|sblog|scenario|devspec"
#endif

#define ZFUZZ_STR2(x) #x
#define ZFUZZ_STR(x) ZFUZZ_STR2(x)
#define ZFUZZ_ONE2(x) zfuzz_##x##_one
#define ZFUZZ_ONE(x) ZFUZZ_ONE2(x)

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
	int ret = ZFUZZ_ONE(ZFUZZ_HARNESS)(data, size, msg);

	if (ret > 0) {
		fprintf(stderr, "zfuzz " ZFUZZ_STR(ZFUZZ_HARNESS)
				": oracle violated: %s\n",
			msg);
		abort();
	}
	return 0;
}
