/* SPDX-License-Identifier: MIT */
/*
 * Growable arrays: one helper for the "append to a realloc'd array"
 * pattern, doubling the capacity (first allocation: 16 elements, or
 * @need if larger), so that n appends cost O(n) copies in total.
 *
 * Who may include this: everything.
 */
#ifndef ZCOW_GROW_H
#define ZCOW_GROW_H

#include <stddef.h>
#include <stdint.h>

/*
 * Make room for @need elements of @size bytes in the array at *@arr of
 * capacity *@cap (elements): reallocates to the next doubling >= @need.
 * On -ENOMEM (or a size that overflows) the array is left unchanged.
 * Returns 0 or -ENOMEM.
 */
int zcow_grow(void *arr, uint64_t *cap, uint64_t need, size_t size);

/* Room for one more element after the first @nr: zcow_grow(.., nr + 1). */
#define ZCOW_GROW_ONE(arrp, nr, capp) \
	zcow_grow((arrp), (capp), (uint64_t)(nr) + 1, sizeof(**(arrp)))

#endif /* ZCOW_GROW_H */
