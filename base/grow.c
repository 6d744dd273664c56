// SPDX-License-Identifier: MIT
/* Growable arrays (base/grow.h). */
#include <errno.h>
#include <stdlib.h>

#include "grow.h"

int zcow_grow(void *arr, uint64_t *cap, uint64_t need, size_t size)
{
	void **pa = arr, *p;
	uint64_t c = *cap ? *cap : 16;

	if (need <= *cap)
		return 0;
	while (c < need) {
		if (c > UINT64_MAX / 2)
			return -ENOMEM;
		c *= 2;
	}
	if (size && c > SIZE_MAX / size)
		return -ENOMEM;
	p = realloc(*pa, c * size);
	if (!p)
		return -ENOMEM;
	*pa = p;
	*cap = c;
	return 0;
}
