/* SPDX-License-Identifier: MIT */
/*
 * zdb: dbench's NetBench loadfiles, replayed on a zcow file system (the
 * fio job option zcow_loadfile, configs/README.md).
 *
 * A loadfile is dbench 4's client.txt: one operation a line, "[TIME] OP
 * ARGS... STATUS", file names in quotes with '\' separators, rooted at
 * "\clients\client1", which each client replaces by its own
 * "clients/clientN" (N = 0, 1, ...; every "client1" in the name, as dbench
 * does).  STATUS is what the operation must return: NT_STATUS_OK (or 0x0)
 * is success, any other NT_STATUS_* or 0x... a failure.  A leading TIME
 * (seconds) paces the client: the operation starts no earlier than TIME
 * after the client began this pass over the file (dbench's
 * nb_time_delay).  The whole file is parsed once (zdb_load()); a bad line
 * is "FILE:LINE: what is wrong".
 *
 * Each operation maps onto include/zcow.h as dbench's fileio backend maps
 * it onto POSIX (dbench fileio.c):
 *
 *   NTCreateX NAME OPTS DISP H  open O_RDWR (+O_CREAT for FILE_CREATE,
 *                               +O_CREAT|O_TRUNC for FILE_OVERWRITE[_IF]);
 *                               OPTS & FILE_DIRECTORY_FILE: mkdir, then
 *                               open the directory; handle H
 *   Close H                     close
 *   Rename OLD NEW              rename
 *   Unlink NAME                 unlink
 *   Deltree NAME                unlink every file below NAME (directories
 *                               stay, as in dbench)
 *   Mkdir NAME                  mkdir (its result is not checked)
 *   Rmdir NAME                  rmdir
 *   QUERY_PATH_INFORMATION      stat            (alias Qpathinfo)
 *   QUERY_FILE_INFORMATION      fstat           (alias Qfileinfo)
 *   FIND_FIRST NAME L MAX C     stat, and readdir of the directory when
 *                               NAME has a wildcard  (alias Find)
 *   WriteX H OFF SIZE RET       pwrite of SIZE bytes; RET must be written
 *   ReadX H OFF SIZE RET        pread; a short read is a mismatch
 *   Flush H                     fsync of H's file: the caller runs it
 *                               (ZDB_STEP_FLUSH), as the job's sync
 *   QUERY_FS_INFORMATION        skipped: statfs changes nothing (Qfsinfo)
 *   SET_FILE_INFORMATION        skipped: zcow keeps no timestamps to set
 *                               (alias Sfileinfo)
 *   LockX, UnlockX              skipped: byte-range locks are not modelled
 *
 * Skipped operations still check their handle, and are counted apart
 * from the ones done.  Status checks follow dbench: a mismatch of Unlink,
 * Rmdir or Rename, a write that wrote less than RET, or an unknown handle
 * ends dbench ("ERROR: child N failed at line L"), and ends the replay
 * with that error here; a mismatch of NTCreateX or a short ReadX is only
 * printed by dbench, and counted here (zdb_stats.mismatches).
 *
 * Not supported (a parse error naming the line): dbench's loop and
 * sequence commands (LOOP, REPEAT, SLEEP, SETSP, WAITSP, WRITEPATTERN,
 * RANDOMSTRING) and random parameters ('*', '+').
 *
 * What it is not: a scheduler; the runner (harness/run_fs.c) calls
 * zdb_step() once per operation and times it.
 * Who may include this: harness/ and tests/.
 */
#ifndef ZCOW_DBENCH_H
#define ZCOW_DBENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fio.h"
#include "zcow.h"

#define ZDB_MAX_FILES	200	/* open handles per client (dbench's) */

enum zdb_op {
	ZDB_NTCREATEX,
	ZDB_CLOSE,
	ZDB_RENAME,
	ZDB_UNLINK,
	ZDB_DELTREE,
	ZDB_MKDIR,
	ZDB_RMDIR,
	ZDB_QPATHINFO,
	ZDB_QFILEINFO,
	ZDB_QFSINFO,
	ZDB_SFILEINFO,
	ZDB_FIND,
	ZDB_WRITEX,
	ZDB_READX,
	ZDB_LOCKX,
	ZDB_UNLOCKX,
	ZDB_FLUSH,
	ZDB_NR_OPS
};

/* The loadfile's name of @op (dbench 4's spelling). */
const char *zdb_op_name(enum zdb_op op);

/* One line of a loadfile. */
struct zdb_line {
	uint8_t op;		/* enum zdb_op */
	bool is_ok;		/* the status is success */
	uint32_t line;		/* 1-based, in the loadfile */
	uint64_t at_ns;		/* pacing: not before pass start + at_ns;
				 * 0 = none */
	uint32_t name, name2;	/* offsets in zdb_load.pool; 0 = none */
	uint32_t status;	/* offset in pool of the status text */
	uint64_t p[4];		/* the numeric arguments, in order */
};

/* A parsed loadfile, shared by the clients of a job. */
struct zdb_load {
	char *path;
	struct zdb_line *lines;
	uint64_t nr_lines;
	uint64_t lines_cap;
	char *pool;		/* NUL-terminated strings; offset 0 is "" */
	uint64_t pool_len, pool_cap;
	unsigned int refs;
};

/*
 * Parse the loadfile at @path.  Returns 0 with *load_ret (zdb_put()),
 * -errno when it cannot be read ("PATH: reason" in @err), or -EINVAL with
 * "PATH:LINE: what is wrong" in @err.  A file without any operation is
 * -EINVAL too.
 */
int zdb_load(const char *path, struct zdb_load **load_ret, char *err,
	     size_t err_len);
/* Another user of @load; zdb_put() drops one (the last frees it). */
void zdb_get(struct zdb_load *load);
void zdb_put(struct zdb_load *load);

/* What a client did; ops and bytes count from zdb_client.count_from on
 * (dbench's warmup), mismatches and passes always. */
struct zdb_stats {
	uint64_t done[ZDB_NR_OPS];	/* ran on the fs */
	uint64_t skipped[ZDB_NR_OPS];	/* no file-system effect */
	uint64_t mismatches[ZDB_NR_OPS];	/* status not as expected */
	uint64_t bytes;		/* ReadX + WriteX sizes: dbench's MB/s */
	uint64_t read_bytes, write_bytes;
	uint64_t passes;	/* complete passes over the loadfile */
};

void zdb_stats_add(struct zdb_stats *sum, const struct zdb_stats *s);

struct zdb_handle {
	uint64_t handle;	/* 0: free */
	struct zcow_file *f;
	bool is_dir;
	bool is_dirty;		/* written through since its last Flush */
};

/* One client replaying a loadfile. */
struct zdb_client {
	struct zdb_load *load;
	struct zcow_fs *fs;
	unsigned int id;		/* N of clients/clientN */
	char root[ZFIO_VAL_LEN];	/* directory prefix; "" = / */
	uint64_t pos;			/* next line */
	uint64_t pass_start;		/* simulated ns: this pass began */
	uint64_t count_from;		/* simulated ns: counting starts */
	struct zdb_handle h[ZDB_MAX_FILES];
	struct zcow_file *flush;	/* the file of a due Flush */
	bool flush_is_dirty;		/* ... written through its handle
					 * since that handle's last Flush */
	void *buf;
	uint64_t buf_len;
	struct zdb_stats st;
};

/* What one zdb_step() did. */
enum zdb_step {
	ZDB_STEP_DONE,		/* an operation ran (or was skipped) */
	ZDB_STEP_FLUSH,		/* a Flush: fsync zdb_client.flush now */
	ZDB_STEP_WAIT,		/* paced: nothing ran, call again at
				 * *wait_ret */
	ZDB_STEP_PASS,		/* the loadfile ended: a new pass begins
				 * at the next call */
};

struct zdb_result {
	enum zdb_step step;
	enum zdb_op op;		/* the operation (DONE, FLUSH) */
	uint64_t read, written;	/* bytes the operation read or wrote */
	uint64_t wait;		/* ZDB_STEP_WAIT: simulated ns */
};

/* Set up @c (zeroed by the caller) for client @id of @load on @fs, its
 * names under @root ("" or "/dir").  Takes a reference on @load. */
int zdb_client_init(struct zdb_client *c, struct zdb_load *load,
		    struct zcow_fs *fs, const char *root, unsigned int id);
/* Close its handles and drop the load; 0 or the first close error. */
int zdb_client_free(struct zdb_client *c);

/*
 * The next operation of @c, submitted at simulated time @now.  Returns 0
 * with @r filled, or -errno with the message in @err: an operation that
 * ends dbench (see the top of this file), "LOADFILE:LINE: client N: ...",
 * or a file-system error where dbench would have failed.
 */
int zdb_step(struct zdb_client *c, uint64_t now, struct zdb_result *r,
	     char *err, size_t err_len);

/*
 * dbench's report of @st over @secs simulated seconds of counting, for
 * @nr_clients clients: summary.json's "dbench" member (@ind indents it)
 * and the text report (dbench's per-operation table and its Throughput
 * line).  MB/s = 1e-6 * bytes / secs, as dbench computes it.
 */
void zdb_put_json(FILE *f, const struct zdb_stats *st, double secs,
		  unsigned int nr_clients, uint64_t nr_fsyncs, const char *ind);
void zdb_put_text(FILE *f, const struct zdb_stats *st, double secs,
		  unsigned int nr_clients, uint64_t nr_fsyncs);

#endif /* ZCOW_DBENCH_H */
