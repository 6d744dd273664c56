/* SPDX-License-Identifier: MIT */
/*
 * The one PRNG of zcow: splitmix64 (Steele, Lea, Flood, "Fast splittable
 * pseudorandom number generators", OOPSLA 2014).  A 64-bit state, any
 * value a valid seed; the same seed gives the same sequence on every host,
 * which is what makes runs and crash campaigns reproducible.
 *
 * Who may include this: everything.
 */
#ifndef ZCOW_PRNG_H
#define ZCOW_PRNG_H

#include <stdint.h>

/* The golden-ratio increment of splitmix64 (also a good multiplicative
 * hash constant: zcow_mix64()). */
#define ZCOW_GOLDEN64 0x9e3779b97f4a7c15ULL

/* splitmix64's output function: a bijective mix of @z. */
static inline uint64_t zcow_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* The next value of the sequence of *@state (advances the state). */
static inline uint64_t zcow_rand64(uint64_t *state)
{
	return zcow_mix64(*state += ZCOW_GOLDEN64);
}

/* A value below @n (@n > 0; modulo bias is below 2^-32 for n < 2^32). */
static inline uint64_t zcow_rand_below(uint64_t *state, uint64_t n)
{
	return zcow_rand64(state) % n;
}

#endif /* ZCOW_PRNG_H */
