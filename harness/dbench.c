// SPDX-License-Identifier: MIT
/*
 * dbench loadfiles on a zcow file system: the parser and the mapping of
 * each NetBench operation onto include/zcow.h (harness/dbench.h).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "dbench.h"
#include "grow.h"

#define NS		1000000000ull
#define MAX_TOKENS	16
#define PATH_LEN	(ZFIO_VAL_LEN + 1024)

/* NTCreateX's create options and dispositions (SMB, dbench.h). */
#define FILE_DIRECTORY_FILE	0x0001
#define FILE_CREATE		2
#define FILE_OVERWRITE		4
#define FILE_OVERWRITE_IF	5

/*
 * The operations: dbench 4's name, dbench 3's (an alias), the arguments
 * between the name and the status ('N' a name, 'i' an integer) and how
 * they read in an error.
 */
static const struct {
	const char *name, *alias, *args, *usage;
} ops[ZDB_NR_OPS] = {
	[ZDB_NTCREATEX] = { "NTCreateX", NULL, "Niii",
			    "NAME OPTIONS DISPOSITION HANDLE" },
	[ZDB_CLOSE] = { "Close", NULL, "i", "HANDLE" },
	[ZDB_RENAME] = { "Rename", NULL, "NN", "OLD NEW" },
	[ZDB_UNLINK] = { "Unlink", NULL, "Ni", "NAME ATTRIBUTES" },
	[ZDB_DELTREE] = { "Deltree", NULL, "N", "NAME" },
	[ZDB_MKDIR] = { "Mkdir", NULL, "N", "NAME" },
	[ZDB_RMDIR] = { "Rmdir", NULL, "N", "NAME" },
	[ZDB_QPATHINFO] = { "QUERY_PATH_INFORMATION", "Qpathinfo", "Ni",
			    "NAME LEVEL" },
	[ZDB_QFILEINFO] = { "QUERY_FILE_INFORMATION", "Qfileinfo", "ii",
			    "HANDLE LEVEL" },
	[ZDB_QFSINFO] = { "QUERY_FS_INFORMATION", "Qfsinfo", "i", "LEVEL" },
	[ZDB_SFILEINFO] = { "SET_FILE_INFORMATION", "Sfileinfo", "ii",
			    "HANDLE LEVEL" },
	[ZDB_FIND] = { "FIND_FIRST", "Find", "Niii",
		       "PATTERN LEVEL MAXCOUNT COUNT" },
	[ZDB_WRITEX] = { "WriteX", NULL, "iiii",
			 "HANDLE OFFSET SIZE RETURNED" },
	[ZDB_READX] = { "ReadX", NULL, "iiii",
			"HANDLE OFFSET SIZE RETURNED" },
	[ZDB_LOCKX] = { "LockX", NULL, "iii", "HANDLE OFFSET SIZE" },
	[ZDB_UNLOCKX] = { "UnlockX", NULL, "iii", "HANDLE OFFSET SIZE" },
	[ZDB_FLUSH] = { "Flush", NULL, "i", "HANDLE" },
};

/* dbench commands that are not operations, refused by name. */
static const char *const unsupported[] = {
	"LOOP", "ENDLOOP", "REPEAT", "SLEEP", "SETSP", "WAITSP",
	"WRITEPATTERN", "RANDOMSTRING",
};

const char *zdb_op_name(enum zdb_op op)
{
	return ops[op].name;
}

static int fail(char *err, size_t len, const char *path, unsigned int line,
		const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int fail(char *err, size_t len, const char *path, unsigned int line,
		const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(err, len, "%s:%u: %s", path, line, msg);
	return -EINVAL;
}

/* Add @s (@n bytes) to the pool; its offset in *off_ret. */
static int pool_add(struct zdb_load *l, const char *s, size_t n,
		    uint32_t *off_ret)
{
	int ret;

	if (l->pool_len + n + 1 > UINT32_MAX)
		return -E2BIG;
	ret = zcow_grow(&l->pool, &l->pool_cap, l->pool_len + n + 1, 1);
	if (ret)
		return ret;
	memcpy(l->pool + l->pool_len, s, n);
	l->pool[l->pool_len + n] = '\0';
	*off_ret = (uint32_t)l->pool_len;
	l->pool_len += n + 1;
	return 0;
}

/*
 * Split @s into tokens at spaces and tabs; a token in double quotes may
 * hold spaces (dbench's next_token()).  Returns the number of tokens, or
 * -1 for an unterminated quote, -2 for too many.
 */
static int tokenize(char *s, char **tok)
{
	int n = 0;

	for (;;) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			return n;
		if (n == MAX_TOKENS)
			return -2;
		if (*s == '"') {
			tok[n++] = ++s;
			s = strchr(s, '"');
			if (!s)
				return -1;
		} else {
			tok[n++] = s;
			while (*s && *s != ' ' && *s != '\t')
				s++;
			if (!*s)
				return n;
		}
		*s++ = '\0';
	}
}

static int find_op(const char *name)
{
	unsigned int i;

	for (i = 0; i < ZDB_NR_OPS; i++)
		if (!strcasecmp(name, ops[i].name) ||
		    (ops[i].alias && !strcasecmp(name, ops[i].alias)))
			return (int)i;
	return -1;
}

static bool is_status(const char *s)
{
	return !strncmp(s, "NT_STATUS_", 10) || !strncmp(s, "0x", 2);
}

/* dbench's expected_status(): NT_STATUS_OK or a zero 0x value. */
static bool is_ok_status(const char *s)
{
	if (!strcmp(s, "NT_STATUS_OK"))
		return true;
	return !strncmp(s, "0x", 2) && strtoull(s, NULL, 16) == 0;
}

/* One line into @l (tokens @tok, @n of them); 0 or -EINVAL in @err. */
static int parse_line(struct zdb_load *l, unsigned int lineno, char **tok,
		      int n, char *err, size_t len)
{
	struct zdb_line zl = { .line = lineno };
	const char *args;
	int first = 0, op, k, nr_args, ret;
	unsigned int np = 0;

	if (isdigit((unsigned char)tok[0][0])) {
		char *end;
		double t = strtod(tok[0], &end);

		if (*end || t < 0 || t > 1e9)
			return fail(err, len, l->path, lineno, "'%s' is not a "
				    "time in seconds", tok[0]);
		zl.at_ns = (uint64_t)(t * (double)NS + 0.5);
		first = 1;
	}
	if (first >= n)
		return fail(err, len, l->path, lineno, "a time and no "
			    "operation");
	op = find_op(tok[first]);
	if (op < 0) {
		for (k = 0; k < (int)(sizeof(unsupported) /
				      sizeof(unsupported[0])); k++)
			if (!strcmp(tok[first], unsupported[k]))
				return fail(err, len, l->path, lineno,
					    "dbench's %s is not supported",
					    unsupported[k]);
		if (!strncmp(tok[first], "SMB", 3))
			return fail(err, len, l->path, lineno, "a dbench 1 "
				    "loadfile (SMB...) is not supported");
		return fail(err, len, l->path, lineno, "unknown operation "
			    "'%s'", tok[first]);
	}
	zl.op = (uint8_t)op;
	args = ops[op].args;
	nr_args = n - first - 2;
	if (nr_args < 0 || !is_status(tok[n - 1]))
		return fail(err, len, l->path, lineno, "%s: the last field "
			    "'%s' is not a status (NT_STATUS_... or 0x...)",
			    ops[op].name, n - first > 1 ? tok[n - 1] : "");
	if (nr_args != (int)strlen(args))
		return fail(err, len, l->path, lineno, "%s takes %zu "
			    "arguments (%s) and a status, found %d",
			    ops[op].name, strlen(args), ops[op].usage,
			    nr_args);
	zl.is_ok = is_ok_status(tok[n - 1]);
	ret = pool_add(l, tok[n - 1], strlen(tok[n - 1]), &zl.status);
	for (k = 0; !ret && k < nr_args; k++) {
		char *a = tok[first + 1 + k], *end, *p;

		if (a[0] == '*' || a[0] == '+')
			return fail(err, len, l->path, lineno, "%s argument "
				    "%d '%s': random parameters ('*', '+') "
				    "are not supported", ops[op].name, k + 1,
				    a);
		if (args[k] == 'i') {
			errno = 0;
			zl.p[np++] = strtoull(a, &end, 0);
			if (!*a || *end || errno || a[0] == '-')
				return fail(err, len, l->path, lineno,
					    "%s argument %d '%s' is not a "
					    "number", ops[op].name, k + 1, a);
			continue;
		}
		for (p = a; *p; p++)
			if (*p == '\\')
				*p = '/';
		if (a[0] != '/')
			return fail(err, len, l->path, lineno, "%s argument "
				    "%d '%s' is not a path (\\...)",
				    ops[op].name, k + 1, a);
		ret = pool_add(l, a, strlen(a), zl.name ? &zl.name2 : &zl.name);
	}
	ret = ret ?: ZCOW_GROW_ONE(&l->lines, l->nr_lines, &l->lines_cap);
	if (ret)
		return fail(err, len, l->path, lineno, "%s", strerror(-ret));
	l->lines[l->nr_lines++] = zl;
	return 0;
}

int zdb_load(const char *path, struct zdb_load **load_ret, char *err,
	     size_t err_len)
{
	struct zdb_load *l;
	char *buf = NULL, *tok[MAX_TOKENS];
	size_t cap = 0;
	unsigned int lineno = 0;
	uint32_t empty;
	ssize_t n;
	FILE *f;
	int ret = 0;

	*load_ret = NULL;
	f = fopen(path, "r");
	if (!f) {
		ret = -errno;
		snprintf(err, err_len, "%s: %s", path, strerror(errno));
		return ret;
	}
	l = calloc(1, sizeof(*l));
	if (!l || !(l->path = strdup(path))) {
		free(l);
		fclose(f);
		return -ENOMEM;
	}
	l->refs = 1;
	ret = pool_add(l, "", 0, &empty);	/* offset 0: no name */
	while (!ret && (n = getline(&buf, &cap, f)) >= 0) {
		int nt;

		lineno++;
		while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
			buf[--n] = '\0';
		if ((size_t)n != strlen(buf)) {
			ret = fail(err, err_len, path, lineno, "a NUL byte");
			break;
		}
		nt = tokenize(buf, tok);
		if (nt == -1)
			ret = fail(err, err_len, path, lineno,
				   "unterminated quote");
		else if (nt == -2)
			ret = fail(err, err_len, path, lineno, "more than %d "
				   "fields", MAX_TOKENS);
		else if (nt > 0 && tok[0][0] != '#')
			ret = parse_line(l, lineno, tok, nt, err, err_len);
	}
	if (!ret && ferror(f)) {
		ret = -EIO;
		snprintf(err, err_len, "%s: read error", path);
	}
	if (!ret && !l->nr_lines)
		ret = fail(err, err_len, path, lineno, "no operation in the "
			   "loadfile");
	free(buf);
	fclose(f);
	if (ret) {
		zdb_put(l);
		return ret;
	}
	*load_ret = l;
	return 0;
}

void zdb_get(struct zdb_load *load)
{
	load->refs++;
}

void zdb_put(struct zdb_load *load)
{
	if (!load || --load->refs)
		return;
	free(load->path);
	free(load->lines);
	free(load->pool);
	free(load);
}

void zdb_stats_add(struct zdb_stats *sum, const struct zdb_stats *s)
{
	unsigned int i;

	for (i = 0; i < ZDB_NR_OPS; i++) {
		sum->done[i] += s->done[i];
		sum->skipped[i] += s->skipped[i];
		sum->mismatches[i] += s->mismatches[i];
	}
	sum->bytes += s->bytes;
	sum->read_bytes += s->read_bytes;
	sum->write_bytes += s->write_bytes;
	sum->passes += s->passes;
}

int zdb_client_init(struct zdb_client *c, struct zdb_load *load,
		    struct zcow_fs *fs, const char *root, unsigned int id)
{
	size_t n = strlen(root);

	if (n >= sizeof(c->root))
		return -ENAMETOOLONG;
	while (n && root[n - 1] == '/')	/* "/", "/d/": "", "/d" */
		n--;
	memcpy(c->root, root, n);
	c->root[n] = '\0';
	zdb_get(load);
	c->load = load;
	c->fs = fs;
	c->id = id;
	return 0;
}

int zdb_client_free(struct zdb_client *c)
{
	unsigned int i;
	int ret = 0, r;

	for (i = 0; i < ZDB_MAX_FILES; i++) {
		if (!c->h[i].handle)
			continue;
		r = zcow_close(c->h[i].f);
		ret = ret ?: r;
		c->h[i].handle = 0;
	}
	zdb_put(c->load);
	c->load = NULL;
	free(c->buf);
	c->buf = NULL;
	return ret;
}

/* The client's path of pool name @off: the root, then the name with
 * every "client1" replaced by "clientN" (dbench's all_string_sub()). */
static void client_path(const struct zdb_client *c, uint32_t off, char *out,
			size_t len)
{
	const char *s = c->load->pool + off, *hit;
	size_t n = (size_t)snprintf(out, len, "%s", c->root);

	while (n < len && (hit = strstr(s, "client1"))) {
		n += (size_t)snprintf(out + n, len - n, "%.*s" "client%u",
				      (int)(hit - s), s, c->id);
		s = hit + 7;
	}
	if (n < len)
		snprintf(out + n, len - n, "%s", s);
}

/* "LOADFILE:LINE: client N: ..." as the error; returns @ret. */
static int step_err(const struct zdb_client *c, const struct zdb_line *zl,
		    char *err, size_t len, int ret, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

static int step_err(const struct zdb_client *c, const struct zdb_line *zl,
		    char *err, size_t len, int ret, const char *fmt, ...)
{
	char msg[PATH_LEN * 2 + 128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(err, len, "%s:%u: client %u: %s", c->load->path, zl->line,
		 c->id, msg);
	return ret;
}

static const char *status_of(const struct zdb_client *c,
			     const struct zdb_line *zl)
{
	return c->load->pool + zl->status;
}

/* dbench's find_handle(): an unknown handle ends the client. */
static int find_handle(struct zdb_client *c, const struct zdb_line *zl,
		       struct zdb_handle **h_ret, char *err, size_t len)
{
	unsigned int i;

	for (i = 0; i < ZDB_MAX_FILES; i++) {
		if (c->h[i].handle == zl->p[0]) {
			*h_ret = &c->h[i];
			return 0;
		}
	}
	return step_err(c, zl, err, len, -EBADF, "%s: handle %llu was not "
			"found", ops[zl->op].name,
			(unsigned long long)zl->p[0]);
}

/* Unlink, Rmdir, Rename: a result other than the status ends dbench. */
static int check_status(struct zdb_client *c, const struct zdb_line *zl,
			int ret, const char *what, const char *path,
			char *err, size_t len)
{
	if (!ret == zl->is_ok)
		return 0;
	c->st.mismatches[zl->op]++;
	return step_err(c, zl, err, len, -EPROTO, "%s '%s' %s, expected %s",
			what, path, ret ? strerror(-ret) : "succeeded",
			status_of(c, zl));
}

/* dbench's deltree: unlink every file below @path, recursively;
 * directories stay and errors are ignored, as there. */
static void deltree(struct zdb_client *c, const char *path, unsigned int depth)
{
	struct zcow_dirent *ents;
	uint64_t nr, i;
	char sub[PATH_LEN];

	if (depth > 64 || zcow_readdir(c->fs, path, &ents, &nr))
		return;
	for (i = 0; i < nr; i++) {
		snprintf(sub, sizeof(sub), "%s/%s", path, ents[i].name);
		if (ents[i].type == 2)
			deltree(c, sub, depth + 1);
		else
			(void)zcow_unlink(c->fs, sub);
	}
	free(ents);
}

static int need_buf(struct zdb_client *c, uint64_t len)
{
	void *b;

	if (len <= c->buf_len)
		return 0;
	b = realloc(c->buf, len);
	if (!b)
		return -ENOMEM;
	memset(b, 0, len);	/* dbench's rw_buf: zeros */
	c->buf = b;
	c->buf_len = len;
	return 0;
}

static int do_createx(struct zdb_client *c, const struct zdb_line *zl,
		      const char *path, char *err, size_t len)
{
	struct zcow_file *f = NULL;
	struct zcow_stat st;
	unsigned int i;
	int flags = O_RDWR, ret;
	bool is_dir = zl->p[0] & FILE_DIRECTORY_FILE;

	if (zl->p[1] == FILE_CREATE)
		flags |= O_CREAT;
	if (zl->p[1] == FILE_OVERWRITE || zl->p[1] == FILE_OVERWRITE_IF)
		flags |= O_CREAT | O_TRUNC;
	if (is_dir) {
		(void)zcow_mkdir(c->fs, path);	/* as dbench: unchecked */
		flags = O_RDONLY;
	}
	ret = zcow_open(c->fs, path, flags, &f);
	if (ret == -EISDIR)
		ret = zcow_open(c->fs, path, O_RDONLY, &f);
	if (ret || !zl->is_ok) {
		/* dbench prints the mismatch and goes on */
		if (!ret == !zl->is_ok)
			c->st.mismatches[zl->op]++;
		if (!ret)
			(void)zcow_close(f);
		return 0;
	}
	for (i = 0; i < ZDB_MAX_FILES && c->h[i].handle; i++)
		;
	if (i == ZDB_MAX_FILES) {
		(void)zcow_close(f);
		return step_err(c, zl, err, len, -EMFILE, "file table full "
				"(%d handles) for '%s'", ZDB_MAX_FILES, path);
	}
	ret = zcow_fstat(f, &st);
	if (ret) {
		(void)zcow_close(f);
		return step_err(c, zl, err, len, ret, "fstat '%s': %s", path,
				strerror(-ret));
	}
	c->h[i].handle = zl->p[2];
	c->h[i].f = f;
	c->h[i].is_dir = S_ISDIR(st.mode);
	c->h[i].is_dirty = false;
	return 0;
}

/* WriteX and ReadX. */
static int do_rw(struct zdb_client *c, const struct zdb_line *zl,
		 struct zdb_handle *h, struct zdb_result *r, char *err,
		 size_t len)
{
	uint64_t off = zl->p[1], size = zl->p[2], want = zl->p[3];
	int64_t n;
	int ret = need_buf(c, size);

	if (ret)
		return ret;
	if (zl->op == ZDB_WRITEX) {
		n = zcow_pwrite(h->f, c->buf, size, off);
		if (n < 0)
			return step_err(c, zl, err, len, (int)n, "write "
					"failed on handle %llu (%s)",
					(unsigned long long)h->handle,
					strerror((int)-n));
		if ((uint64_t)n != want)
			return step_err(c, zl, err, len, -EIO, "wrote %lld "
					"bytes, expected to write %llu bytes "
					"on handle %llu", (long long)n,
					(unsigned long long)want,
					(unsigned long long)h->handle);
		r->written = size;
		h->is_dirty = true;
		return 0;
	}
	n = zcow_pread(h->f, c->buf, size, off);
	if (n < 0 || (uint64_t)n != want)	/* dbench prints it */
		c->st.mismatches[zl->op]++;
	r->read = n > 0 ? (uint64_t)n : 0;
	return 0;
}

/* Run line @zl; *is_skipped when it has no file-system effect. */
static int run_line(struct zdb_client *c, const struct zdb_line *zl,
		    struct zdb_result *r, bool *is_skipped, char *err,
		    size_t len)
{
	char path[PATH_LEN], path2[PATH_LEN];
	struct zdb_handle *h = NULL;
	struct zcow_dirent *ents;
	struct zcow_stat st;
	uint64_t nr;
	char *slash;
	int ret = 0;

	*is_skipped = false;
	if (zl->name)
		client_path(c, zl->name, path, sizeof(path));
	if (zl->name2)
		client_path(c, zl->name2, path2, sizeof(path2));
	switch ((enum zdb_op)zl->op) {
	case ZDB_CLOSE:
	case ZDB_QFILEINFO:
	case ZDB_SFILEINFO:
	case ZDB_WRITEX:
	case ZDB_READX:
	case ZDB_LOCKX:
	case ZDB_UNLOCKX:
	case ZDB_FLUSH:
		ret = find_handle(c, zl, &h, err, len);
		if (ret)
			return ret;
		break;
	default:
		break;
	}
	switch ((enum zdb_op)zl->op) {
	case ZDB_NTCREATEX:
		return do_createx(c, zl, path, err, len);
	case ZDB_CLOSE:
		ret = zcow_close(h->f);
		h->handle = 0;
		h->f = NULL;
		return ret ? step_err(c, zl, err, len, ret, "close: %s",
				      strerror(-ret)) : 0;
	case ZDB_RENAME:
		return check_status(c, zl, zcow_rename(c->fs, path, path2),
				    "rename of", path, err, len);
	case ZDB_UNLINK:
		return check_status(c, zl, zcow_unlink(c->fs, path), "unlink",
				    path, err, len);
	case ZDB_RMDIR:
		return check_status(c, zl, zcow_rmdir(c->fs, path), "rmdir",
				    path, err, len);
	case ZDB_DELTREE:
		deltree(c, path, 0);
		return 0;
	case ZDB_MKDIR:
		(void)zcow_mkdir(c->fs, path);	/* not checked (dbench) */
		return 0;
	case ZDB_QPATHINFO:
		(void)zcow_stat(c->fs, path, &st);
		return 0;
	case ZDB_QFILEINFO:
		ret = zcow_fstat(h->f, &st);
		return ret ? step_err(c, zl, err, len, ret, "fstat: %s",
				      strerror(-ret)) : 0;
	case ZDB_FIND:
		(void)zcow_stat(c->fs, path, &st);
		slash = strrchr(path, '/');
		if (!strpbrk(path, "<>*?\"") || !slash)
			return 0;
		*slash = '\0';
		if (!zcow_readdir(c->fs, path[0] ? path : "/", &ents, &nr))
			free(ents);
		return 0;
	case ZDB_WRITEX:
	case ZDB_READX:
		return do_rw(c, zl, h, r, err, len);
	case ZDB_FLUSH:
		c->flush = h->f;
		c->flush_is_dirty = h->is_dirty;
		h->is_dirty = false;
		r->step = ZDB_STEP_FLUSH;
		return 0;
	case ZDB_QFSINFO:
	case ZDB_SFILEINFO:
	case ZDB_LOCKX:
	case ZDB_UNLOCKX:
	case ZDB_NR_OPS:
		break;
	}
	*is_skipped = true;
	return 0;
}

int zdb_step(struct zdb_client *c, uint64_t now, struct zdb_result *r,
	     char *err, size_t err_len)
{
	const struct zdb_line *zl;
	bool is_skipped;
	int ret;

	memset(r, 0, sizeof(*r));
	if (c->pos == c->load->nr_lines) {
		c->pos = 0;
		c->st.passes++;
		c->pass_start = now;
		r->step = ZDB_STEP_PASS;
		return 0;
	}
	zl = &c->load->lines[c->pos];
	if (zl->at_ns && now < c->pass_start + zl->at_ns) {
		r->step = ZDB_STEP_WAIT;
		r->wait = c->pass_start + zl->at_ns;
		return 0;
	}
	c->pos++;
	r->step = ZDB_STEP_DONE;
	r->op = (enum zdb_op)zl->op;
	ret = run_line(c, zl, r, &is_skipped, err, err_len);
	if (ret)
		return ret;
	if (now < c->count_from)
		return 0;
	if (is_skipped)
		c->st.skipped[zl->op]++;
	else
		c->st.done[zl->op]++;
	if (zl->op == ZDB_WRITEX || zl->op == ZDB_READX) {
		c->st.bytes += zl->p[2];	/* the size asked (dbench) */
		c->st.read_bytes += r->read;
		c->st.write_bytes += r->written;
	}
	return 0;
}

static double per_s(uint64_t n, double secs)
{
	return secs > 0 ? (double)n / secs : 0.0;
}

void zdb_put_json(FILE *f, const struct zdb_stats *st, double secs,
		  unsigned int nr_clients, uint64_t nr_fsyncs, const char *ind)
{
	uint64_t mism = 0;
	unsigned int i;

	for (i = 0; i < ZDB_NR_OPS; i++)
		mism += st->mismatches[i];
	fprintf(f, "%s\"dbench\": {\n", ind);
	fprintf(f, "%s  \"clients\": %u,\n%s  \"mb_per_s\": %.6f,\n", ind,
		nr_clients, ind, per_s(st->bytes, secs) / 1e6);
	fprintf(f, "%s  \"seconds\": %.9f,\n%s  \"bytes\": %llu,\n", ind, secs,
		ind, (unsigned long long)st->bytes);
	fprintf(f, "%s  \"read_bytes\": %llu,\n%s  \"write_bytes\": %llu,\n",
		ind, (unsigned long long)st->read_bytes, ind,
		(unsigned long long)st->write_bytes);
	fprintf(f, "%s  \"fsyncs\": %llu,\n%s  \"fsyncs_per_s\": %.3f,\n", ind,
		(unsigned long long)nr_fsyncs, ind, per_s(nr_fsyncs, secs));
	fprintf(f, "%s  \"passes\": %llu,\n%s  \"mismatches\": %llu,\n", ind,
		(unsigned long long)st->passes, ind,
		(unsigned long long)mism);
	fprintf(f, "%s  \"ops\": {\n", ind);
	for (i = 0; i < ZDB_NR_OPS; i++)
		fprintf(f, "%s    \"%s\": {\"done\": %llu, \"skipped\": %llu, "
			   "\"mismatches\": %llu}%s\n", ind, ops[i].name,
			(unsigned long long)st->done[i],
			(unsigned long long)st->skipped[i],
			(unsigned long long)st->mismatches[i],
			i + 1 < ZDB_NR_OPS ? "," : "");
	fprintf(f, "%s  }\n%s},\n", ind, ind);
}

void zdb_put_text(FILE *f, const struct zdb_stats *st, double secs,
		  unsigned int nr_clients, uint64_t nr_fsyncs)
{
	unsigned int i;

	fprintf(f, " Operation                  Count    Skipped Mismatches\n"
		   " ---------------------------------------------------\n");
	for (i = 0; i < ZDB_NR_OPS; i++)
		fprintf(f, " %-22s %10llu %10llu %10llu\n", ops[i].name,
			(unsigned long long)st->done[i],
			(unsigned long long)st->skipped[i],
			(unsigned long long)st->mismatches[i]);
	fprintf(f, "\nFsyncs %llu (%.3f/s), %llu passes over the loadfile, "
		   "%.6f simulated seconds\n",
		(unsigned long long)nr_fsyncs, per_s(nr_fsyncs, secs),
		(unsigned long long)st->passes, secs);
	fprintf(f, "Throughput %g MB/sec  %u clients\n",
		per_s(st->bytes, secs) / 1e6, nr_clients);
}
