# zcow: one plain GNU Makefile.
#   make          build the library, the simulator, the zcow tool, the tests
#   make test     run every Check suite (tests/)
#   make asan     build and test with address + undefined sanitizers
#   make valgrind run every Check suite under valgrind (memcheck, no fork)
#   make bench    simulator benchmark (zcow bench-dev)
#   make WERROR=1 treat warnings as errors (CI does)
#   make static   a fully static build-static/zcow for the VM runner
#                 (harness/qemu/): libzbd.a, glibc's libc.a, and a portable
#                 crc32c (base/crc32c_sw.c) in place of ISA-L (Debian ships
#                 no libisal.a)
#
# Layers (docs/design.md), each a directory and a library, each compiled
# with the include paths of the layers below it only, so that a broken
# include rule is a compile error:
#   base/     logger, endian, PRNG, growth, checksums      -Ibase
#   dev/      the device plug and its file/libzbd backends  + -Idev
#   sim/      the zone simulator (a device backend)         + -Isim
#   include/  the file system's public API (zcow.h, zcow_super.h)
#   core/     the file system                               + -Iinclude -Icore
#   bench/    benchmark entries on core's internals (zbench.h) base dev
#             include core: libzbench.a, for the tool and the tests only
#   harness/  the zcow tool and the workload runner         base dev sim
#             include bench: the public API and zbench.h, never core/'s
#             internal headers
#   tests/, fuzz/: every layer (white-box)

CC ?= gcc
OPT ?= -O2 -g
BUILD ?= build
WARN := -Wall -Wextra -Wshadow -Wmissing-prototypes
ifeq ($(WERROR),1)
WARN += -Werror
endif
SAN ?=

HAVE_LIBZBD := $(shell pkg-config --exists libzbd 2>/dev/null && echo 1)
ZBD_CFLAGS := $(if $(HAVE_LIBZBD),-DHAVE_LIBZBD $(shell pkg-config --cflags libzbd))
ZBD_LIBS := $(if $(HAVE_LIBZBD),$(shell pkg-config --libs libzbd))
# zcow fuse (harness/cmd_fuse.c, fuse_fs.c): libfuse 3; without it the
# command is not built (zcow fuse answers "not built in")
HAVE_FUSE3 := $(shell pkg-config --exists fuse3 2>/dev/null && echo 1)
FUSE_CFLAGS := $(if $(HAVE_FUSE3),$(shell pkg-config --cflags fuse3))
FUSE_LIBS := $(if $(HAVE_FUSE3),$(shell pkg-config --libs fuse3))
ifeq ($(STATIC),1)
FUSE_LIBS := $(if $(HAVE_FUSE3),$(shell pkg-config --static --libs fuse3) -ldl)
endif
FUSE_SRC := harness/cmd_fuse.c harness/fuse_fs.c
CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null)
ISAL_LIBS := -lisal
# fio's verify checksums (harness/fio_verify.c): nettle (md5, sha*) and
# xxhash; both ship static libraries too
VERIFY_LIBS := -lnettle -lxxhash
STATIC_LDFLAGS :=
ifeq ($(STATIC),1)
ISAL_LIBS :=
STATIC_LDFLAGS := -static
endif

CFLAGS_ALL := -std=gnu11 $(OPT) $(WARN) $(SAN) -D_GNU_SOURCE -pthread \
	$(ZBD_CFLAGS) $(CFLAGS)
LDLIBS_ALL := $(ZBD_LIBS) $(ISAL_LIBS) $(VERIFY_LIBS) -pthread -lm $(LDLIBS)

BASE_SRC := $(filter-out base/crc32c_sw.c,$(wildcard base/*.c))
ifeq ($(STATIC),1)
BASE_SRC += base/crc32c_sw.c
endif
DEV_SRC := $(wildcard dev/*.c)
CORE_SRC := $(wildcard core/*.c)
BENCH_SRC := $(wildcard bench/*.c)
SIM_SRC := $(wildcard sim/*.c)
# The workload runner (zcow run) is a library so the tests link it too.
RUN_SRC := harness/dbench.c harness/devlist.c harness/fio.c harness/fio_ctl.c harness/fio_gen.c harness/fio_log.c harness/fio_verify.c harness/run.c harness/run_ctl.c harness/run_raw.c harness/run_fs.c harness/run_replace.c harness/run_verify.c \
	harness/results.c harness/crash.c harness/crash_workload.c \
	harness/crash_oracle.c harness/crash_replace.c harness/crash_btrfs.c \
	harness/crash_scenario.c harness/crash_ops.c harness/ops_parse.c \
	harness/ops_record.c harness/crash_merge.c
TOOL_SRC := $(filter-out $(RUN_SRC) $(if $(HAVE_FUSE3),,$(FUSE_SRC)),\
	$(wildcard harness/*.c))
TEST_SRC := $(wildcard tests/*.c)

BASE_OBJ := $(BASE_SRC:%.c=$(BUILD)/%.o)
DEV_OBJ := $(DEV_SRC:%.c=$(BUILD)/%.o)
CORE_OBJ := $(CORE_SRC:%.c=$(BUILD)/%.o)
BENCH_OBJ := $(BENCH_SRC:%.c=$(BUILD)/%.o)
SIM_OBJ := $(SIM_SRC:%.c=$(BUILD)/%.o)
TOOL_OBJ := $(TOOL_SRC:%.c=$(BUILD)/%.o)
RUN_OBJ := $(RUN_SRC:%.c=$(BUILD)/%.o)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)
# The fuzz harnesses' replay entries (fuzz/fuzz.h): linked into the tests,
# which replay tests/corpus/, and into the libFuzzer binaries (make fuzz).
FUZZ_REPLAY_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(wildcard fuzz/replay_*.c))
TEST_OBJ += $(FUZZ_REPLAY_OBJ)

LIBZBASE := $(BUILD)/libzbase.a
LIBZDEV := $(BUILD)/libzdev.a
LIBZCOW := $(BUILD)/libzcow.a
LIBZBENCH := $(BUILD)/libzbench.a
LIBZSIM := $(BUILD)/libzsim.a
LIBZRUN := $(BUILD)/libzrun.a
ZCOW := $(BUILD)/zcow
TESTS := $(BUILD)/zcow-tests

.PHONY: all test asan valgrind bench examples-all clean format static
all: $(ZCOW) $(TESTS)

# Each layer's include paths (see the top of this file).
$(BUILD)/base/%.o: INC := -Ibase
$(BUILD)/dev/%.o: INC := -Ibase -Idev
$(BUILD)/sim/%.o: INC := -Ibase -Idev -Isim
$(BUILD)/core/%.o: INC := -Ibase -Idev -Iinclude -Icore
$(BUILD)/bench/%.o: INC := -Ibase -Idev -Iinclude -Icore -Ibench
$(BUILD)/harness/%.o: INC := -Ibase -Idev -Isim -Iinclude -Ibench -Iharness
$(FUSE_SRC:%.c=$(BUILD)/%.o): INC += $(FUSE_CFLAGS)
$(BUILD)/tests/%.o: INC := -Ibase -Idev -Isim -Iinclude -Icore -Ibench -Iharness \
	-Itests -Ifuzz $(CHECK_CFLAGS)
$(BUILD)/fuzz/%.o: INC := -Ibase -Idev -Isim -Iinclude -Icore -Iharness \
	-Ifuzz

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(INC) -MMD -MP -c $< -o $@

# Each archive is made anew: ar r would keep the members of sources
# since moved or removed (a stale object would shadow the new one).
$(LIBZBASE): $(BASE_OBJ)
	rm -f $@
	$(AR) rcs $@ $^

$(LIBZDEV): $(DEV_OBJ)
	rm -f $@
	$(AR) rcs $@ $^

$(LIBZCOW): $(CORE_OBJ)
	rm -f $@
	$(AR) rcs $@ $^

$(LIBZBENCH): $(BENCH_OBJ)
	rm -f $@
	$(AR) rcs $@ $^

$(LIBZSIM): $(SIM_OBJ)
	rm -f $@
	$(AR) rcs $@ $^

$(LIBZRUN): $(RUN_OBJ)
	rm -f $@
	$(AR) rcs $@ $^

# Version and git commit recorded in every summary.json and crash.json.
ZCOW_VERSION := 0.1
GIT_DESC := $(shell git describe --always --dirty 2>/dev/null || echo unknown)
$(BUILD)/harness/results.o: CFLAGS_ALL += -DZCOW_VERSION='"$(ZCOW_VERSION)"' \
	-DZCOW_GIT='"$(GIT_DESC)"'
# results.o is rebuilt whenever the commit changes, not only when
# results.c does.
$(BUILD)/version.stamp: FORCE
	@mkdir -p $(BUILD)
	@echo '$(GIT_DESC)' | cmp -s - $@ || echo '$(GIT_DESC)' > $@
$(BUILD)/harness/results.o: $(BUILD)/version.stamp
.PHONY: FORCE

LIBS_ALL := $(LIBZRUN) $(LIBZBENCH) $(LIBZSIM) $(LIBZCOW) $(LIBZDEV) $(LIBZBASE)

$(ZCOW): $(TOOL_OBJ) $(LIBS_ALL)
	$(CC) $(CFLAGS_ALL) $(STATIC_LDFLAGS) -o $@ $(TOOL_OBJ) $(LIBS_ALL) \
		$(FUSE_LIBS) $(LDLIBS_ALL)

$(TESTS): $(TEST_OBJ) $(LIBS_ALL)
	$(CC) $(CFLAGS_ALL) -o $@ $(TEST_OBJ) $(LIBS_ALL) $(CHECK_LIBS) \
		$(LDLIBS_ALL)

test: $(ZCOW) $(TESTS)
	ZCOW_BIN=$(abspath $(ZCOW)) $(TESTS)

asan:
	$(MAKE) BUILD=build-asan OPT="-O1 -g -fno-omit-frame-pointer" \
		SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined" test

static:
	$(MAKE) BUILD=build-static STATIC=1 build-static/zcow

valgrind: $(ZCOW) $(TESTS)
	CK_FORK=no ZCOW_BIN=$(abspath $(ZCOW)) valgrind -q --error-exitcode=9 \
		--leak-check=full --errors-for-leak-kinds=definite $(TESTS)

bench: $(ZCOW)
	$(ZCOW) bench-dev

# Every fio example of configs/README.md's table, the long ones too (those
# "not run here" by make test: each lays out up to 16 GiB in a file image
# in /tmp, deleted after it).
examples-all: $(ZCOW) $(TESTS)
	ZCOW_EXAMPLES_ALL=1 CK_RUN_SUITE=fio_examples_suite \
		ZCOW_BIN=$(abspath $(ZCOW)) $(TESTS)

# Fuzzing (docs/fuzz.md).  fuzz-build: libFuzzer binaries in build-fuzz/
# (clang, -fsanitize=fuzzer,address,undefined); fuzz: run each harness for
# FUZZ_TIME seconds (FUZZ_JOBS at once) from generated seeds, results in
# results/fuzz-<stamp>/.
FUZZ_BUILD ?= build-fuzz
FUZZ_TIME ?= 60
FUZZ_JOBS ?= 2
FUZZ_HARNESSES ?= image sblog scenario devspec
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined

.PHONY: fuzz fuzz-build fuzz-bins
fuzz-build:
	$(MAKE) BUILD=$(FUZZ_BUILD) CC=clang \
		OPT="-O1 -g -fno-omit-frame-pointer" \
		SAN="$(FUZZ_SAN) -fsanitize=fuzzer-no-link" fuzz-bins
	$(MAKE) $(BUILD)/zfuzz-seeds

fuzz-bins: $(FUZZ_HARNESSES:%=$(BUILD)/fuzz/fuzz_%)

# One libFuzzer main (fuzz/fuzz_main.c), compiled once per harness.
$(BUILD)/fuzz/fuzz_%.o: fuzz/fuzz_main.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(INC) -DZFUZZ_HARNESS=$* -MMD -MP -c $< -o $@

$(BUILD)/fuzz/fuzz_%: $(BUILD)/fuzz/fuzz_%.o $(FUZZ_REPLAY_OBJ) $(LIBS_ALL)
	$(CC) $(CFLAGS_ALL) -fsanitize=fuzzer -o $@ $< $(FUZZ_REPLAY_OBJ) \
		$(LIBS_ALL) $(LDLIBS_ALL)

$(BUILD)/zfuzz-seeds: $(BUILD)/fuzz/mkseeds.o $(FUZZ_REPLAY_OBJ) $(LIBS_ALL)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(FUZZ_REPLAY_OBJ) $(LIBS_ALL) \
		$(LDLIBS_ALL)

fuzz: fuzz-build
	FUZZ_TIME=$(FUZZ_TIME) FUZZ_JOBS=$(FUZZ_JOBS) \
		FUZZ_BUILD=$(FUZZ_BUILD) SEEDS_BIN=$(BUILD)/zfuzz-seeds \
		fuzz/run.sh $(FUZZ_HARNESSES)

format:
	clang-format -i base/*.[ch] dev/*.[ch] include/*.h core/*.[ch] \
		bench/*.[ch] sim/*.[ch] harness/*.[ch] tests/*.[ch]

clean:
	rm -rf build build-asan build-static build-fuzz

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
