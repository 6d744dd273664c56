/* SPDX-License-Identifier: MIT */
/*
 * fuzz: the replay entries of the fuzz harnesses.
 *
 * Each harness has one entry, zfuzz_<name>_one(), that takes one input
 * (bytes from the fuzzer or from a file of tests/corpus/<name>/) and runs
 * it through the code under test with the harness's oracle.  The libFuzzer
 * binaries (fuzz/fuzz_main.c per harness, `make fuzz-build`) and the corpus replay
 * suite (tests/test_corpus.c, `make test`) call the same entry, so a saved
 * crash input replays exactly what the fuzzer ran.
 *
 * What it is not: a fuzzer.  Nothing here needs clang or libFuzzer.
 *
 * Who may include this: fuzz/, tests/.
 */
#ifndef ZCOW_FUZZ_H
#define ZCOW_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* Room for an oracle violation's message. */
#define ZFUZZ_MSG_LEN 512

/*
 * Run one input.  Returns 0 when the oracle holds (the input was refused
 * with an error, or every answer was right), 1 when it does not (@msg says
 * what was wrong), or a negative errno when the harness itself could not
 * run (no memory, no temporary file).  Errors of the code under test are
 * not failures: a corrupt image must give an error or the right data.
 * Crashes, hangs and sanitizer reports are left to the caller's process.
 *
 *  image:    a zsim image file (sim/zsim_image.c) whose trailing checksum
 *	      is recomputed first; loaded, mounted read-only and walked
 *	      (readdir, stat, read of every file, zcow_check), then mounted
 *	      read-write, one file written and fsynced, unmounted and read
 *	      back.  Files the seed images hold carry zfuzz_pattern() data
 *	      keyed by their base name: a successful read must return it.
 *  sblog:    the superblock log zones of a fresh file system rewritten
 *	      from the input (see replay_sblog.c for the encoding), then
 *	      every sb.c reader and a read-only mount.
 *  scenario: the text of a scenario or fio job file: parsed, every [zcow]
 *	      key applied, every job printed.
 *  devspec:  a device spec string opened with zdev_open() inside a private
 *	      temporary directory (specs naming a path with '/' or a real
 *	      device are skipped), zones reported, closed.
 */
int zfuzz_image_one(const uint8_t *data, size_t size, char *msg);
int zfuzz_sblog_one(const uint8_t *data, size_t size, char *msg);
int zfuzz_scenario_one(const uint8_t *data, size_t size, char *msg);
int zfuzz_devspec_one(const uint8_t *data, size_t size, char *msg);

/* Once per process before the first input: register the "sim:" backend
 * and silence the logs (the inputs provoke errors on purpose). */
void zfuzz_init(void);

/* The byte at @off of a file named @name (its base name) in the images. */
uint8_t zfuzz_pattern(const char *name, uint64_t off);
/* zfuzz_pattern() of @len bytes from @off into @buf. */
void zfuzz_fill_pattern(uint8_t *buf, const char *name, uint64_t off,
			uint64_t len);

/*
 * Seed images for the image harness: variant 0 .. ZFUZZ_NR_IMAGE_SEEDS - 1
 * (mkfs only, files and a snapshot, an fsync left in the tree-log, many
 * small files), saved as a zsim image at @path.  0 or -errno.
 */
#define ZFUZZ_NR_IMAGE_SEEDS 4
int zfuzz_image_seed(int variant, const char *path);

/* Seed inputs for the sblog harness (variants as above).  Fills @buf (at
 * most @len bytes) and returns the input's length, or -errno. */
#define ZFUZZ_NR_SBLOG_SEEDS 4
int zfuzz_sblog_seed(int variant, uint8_t *buf, size_t len);

#endif /* ZCOW_FUZZ_H */
