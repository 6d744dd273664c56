// SPDX-License-Identifier: MIT
/*
 * zcow crash --merge: the results folders of the N shards of one
 * campaign (zcow crash --shard I/N, docs/crash.md "Shards") joined into
 * the folder the whole campaign's run writes.
 *
 * A shard runs the campaign's uncut-recovery states whose place k (from
 * 0, in the order the whole run takes them) has k mod N = I-1, each
 * followed by its recovery cuts, so its crash.csv is a sequence of
 * blocks (a row with recovery_cut 0, then that state's rows with
 * recovery_cut > 0): block j of shard I is the campaign's state
 * k = j*N + I-1.  The merge deals the blocks out round robin, and the
 * violations of crash.json (one line each, in row order) with the rows
 * that are violations.  The counts are summed (the workloads and crash
 * points every shard expands are the campaign's), the table printed by
 * the campaign's own printer (zcrash_print_table); seconds is the
 * longest shard's.
 *
 * Refused (-EINVAL, said on stderr): a folder without shard.json (not a
 * shard, or its run did not finish) or whose files disagree with it
 * (rows, states, violations: cut short), shards of another campaign
 * (zcow version and git revision, scenario seed, campaign hash, the
 * settings in crash.json), a shard given twice or missing.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>

#include "crash.h"
#include "results.h"

#define MAX_KEYS 64

struct shard {
	const char *dir;
	char *sj, *csv, *js;	/* shard.json, crash.csv, crash.json */
	char *keys[MAX_KEYS], *vals[MAX_KEYS];
	int nr_keys;
	uint64_t idx, of;
	/* crash.csv rows after the header, and where each block starts */
	char **rows;
	uint64_t nr_rows, *block, nr_blocks, next_block;
	/* crash.json: its head (shard line left out), violation lines */
	char *head;
	char **viol;
	uint64_t nr_viol, next_viol;
};

static char *slurp(const char *dir, const char *file)
{
	char path[4096];
	FILE *f;
	char *buf = NULL;
	long len;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "rb");
	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (len = ftell(f)) >= 0 &&
	    !fseek(f, 0, SEEK_SET)) {
		buf = malloc(len + 1);
		if (buf && fread(buf, 1, len, f) != (size_t)len) {
			free(buf);
			buf = NULL;
		} else if (buf) {
			buf[len] = 0;
		}
	}
	fclose(f);
	return buf;
}

/* Split @s in place into lines (without '\n'); the last line must end
 * in '\n'.  The lines in *@lines_ret (malloc'd).  -1: not whole. */
static int64_t split_lines(char *s, char ***lines_ret)
{
	size_t n = 0, i;
	char *p, **l;

	for (p = s; *p; p++)
		n += *p == '\n';
	if (*s && s[strlen(s) - 1] != '\n')
		return -1;
	l = calloc(n + 1, sizeof(*l));
	if (!l)
		return -1;
	for (i = 0, p = s; i < n; i++) {
		char *nl = strchr(p, '\n');

		*nl = 0;
		l[i] = p;
		p = nl + 1;
	}
	*lines_ret = l;
	return (int64_t)n;
}

/* shard.json: one "key": value a line. */
static int parse_keys(struct shard *s)
{
	char **lines;
	int64_t n = split_lines(s->sj, &lines), i;

	if (n < 0)
		return -1;
	for (i = 0; i < n && s->nr_keys < MAX_KEYS; i++) {
		char *q, *colon, *v = lines[i];

		while (*v == ' ')
			v++;
		if (*v != '"' || !(q = strchr(v + 1, '"')) || q[1] != ':')
			continue;
		*q = 0;
		colon = q + 2;
		while (*colon == ' ')
			colon++;
		q = colon + strlen(colon);
		if (q > colon && q[-1] == ',')
			*--q = 0;
		s->keys[s->nr_keys] = v + 1;
		s->vals[s->nr_keys++] = colon;
	}
	free(lines);
	return 0;
}

static const char *val(const struct shard *s, const char *key)
{
	int i;

	for (i = 0; i < s->nr_keys; i++)
		if (!strcmp(s->keys[i], key))
			return s->vals[i];
	return NULL;
}

static uint64_t num(const struct shard *s, const char *key)
{
	const char *v = val(s, key);

	return v ? strtoull(v, NULL, 10) : 0;
}

static bool same(const struct shard *a, const struct shard *b,
		 const char *key)
{
	const char *x = val(a, key), *y = val(b, key);

	return x && y && !strcmp(x, y);
}

/* The field number @n (from 0) of a crash.csv row: only the fields
 * before the message (the last, quoted) hold no comma. */
static const char *field(const char *row, int n)
{
	while (n-- > 0) {
		row = strchr(row, ',');
		if (!row)
			return NULL;
		row++;
	}
	return row;
}

static int load(struct shard *s, const char *dir)
{
	char **lines;
	int64_t n, i;
	const char *v;
	uint64_t b, of, idx, states;
	bool in_viol = false;
	size_t jlen;

	s->dir = dir;
	s->sj = slurp(dir, "shard.json");
	if (!s->sj) {
		fprintf(stderr, "zcow crash --merge: %s: no shard.json: not a shard's results folder (zcow crash --shard I/N), or its run did not finish\n",
			dir);
		return -EINVAL;
	}
	if (parse_keys(s) || !(v = val(s, "complete")) || strcmp(v, "true") ||
	    !val(s, "campaign_hash")) {
		fprintf(stderr, "zcow crash --merge: %s/shard.json: incomplete\n",
			dir);
		return -EINVAL;
	}
	s->idx = num(s, "shard");
	s->of = num(s, "of");
	s->csv = slurp(dir, "crash.csv");
	s->js = slurp(dir, "crash.json");
	if (!s->csv || !s->js) {
		fprintf(stderr, "zcow crash --merge: %s: no %s: incomplete shard\n",
			dir, s->csv ? "crash.json" : "crash.csv");
		return -EINVAL;
	}
	/* crash.csv: header + rows, the blocks */
	n = split_lines(s->csv, &s->rows);
	if (n < 1)
		goto cut;
	s->nr_rows = n - 1;
	s->block = calloc(n, sizeof(*s->block));
	if (!s->block)
		return -ENOMEM;
	for (i = 1; i < n; i++) {
		v = field(s->rows[i], 3);
		if (!v)
			goto cut;
		if (!strncmp(v, "0,", 2))
			s->block[s->nr_blocks++] = i;
	}
	/* crash.json: the head, the violations, the end */
	jlen = strlen(s->js);
	n = split_lines(s->js, &lines);
	if (n < 2 || strcmp(lines[n - 1], "}")) {
		if (n >= 0)
			free(lines);
		goto cut;
	}
	s->viol = calloc(n, sizeof(*s->viol));
	s->head = calloc(1, jlen + 1);
	if (!s->viol || !s->head) {
		free(lines);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		if (in_viol) {
			if (strncmp(lines[i], "    {", 5))
				break;
			s->viol[s->nr_viol++] = lines[i];
			continue;
		}
		if (!strncmp(lines[i], "  \"shard\": ", 11))
			continue;
		if (!strncmp(lines[i], "  \"violations\": [", 17)) {
			/* up to the "[" (the merge writes the rest); "["
			 * alone: a list follows, "]," none */
			strncat(s->head, lines[i], 17);
			if (lines[i][17])
				break;
			in_viol = true;
			continue;
		}
		strcat(s->head, lines[i]);
		strcat(s->head, "\n");
	}
	free(lines);
	for (i = 0; i + 1 < (int64_t)s->nr_viol; i++) {
		size_t l = strlen(s->viol[i]);

		if (l && s->viol[i][l - 1] == ',')
			s->viol[i][l - 1] = 0;
	}
	/* what shard.json says the files hold */
	of = s->of;
	idx = s->idx;
	states = num(s, "campaign_states");
	b = of && idx >= 1 && idx <= of && states >= idx ?
	    (states - idx) / of + 1 : 0;
	if (!of || idx < 1 || idx > of || s->nr_blocks != b || s->nr_rows != num(s, "tried") ||
	    s->nr_viol != num(s, "violations"))
		goto cut;
	return 0;
cut:
	fprintf(stderr, "zcow crash --merge: %s: incomplete shard: its crash.csv or crash.json does not hold what its shard.json counts\n",
		dir);
	return -EINVAL;
}

static void unload(struct shard *s)
{
	free(s->sj);
	free(s->csv);
	free(s->js);
	free(s->rows);
	free(s->block);
	free(s->head);
	free(s->viol);
}

/* The JSON string starting at *@p (at its opening quote) unescaped into
 * @out; *@p past it. */
static void json_unstr(const char **p, char *out, size_t len)
{
	const char *s = *p + 1;
	size_t o = 0;

	while (*s && *s != '"') {
		char c = *s++;

		if (c == '\\' && *s) {
			c = *s++;
			if (c == 'u' && strlen(s) >= 4) {
				c = (char)strtoul((char[]){ s[0], s[1], s[2], s[3], 0 },
						  NULL, 16);
				s += 4;
			}
		}
		if (o + 1 < len)
			out[o++] = c;
	}
	out[o] = 0;
	*p = *s ? s + 1 : s;
}

/* The JSON string value of @key in @out ("" when absent). */
static void str_val(const struct shard *s, const char *key, char *out,
		    size_t len)
{
	const char *v = val(s, key);

	out[0] = 0;
	if (v && *v == '"')
		json_unstr(&v, out, len);
}

/* Print a violation line as the campaign printed it. */
static void print_viol(const char *line)
{
	static char repro[2048], desc[1024], ors[128], msg[4096];
	const char *p = strstr(line, "{\"repro\": ");

	if (!p)
		return;
	p += 10;
	json_unstr(&p, repro, sizeof(repro));
	p = strstr(p, "\"workload\": ");
	if (!p)
		return;
	p += 12;
	json_unstr(&p, desc, sizeof(desc));
	p = strstr(p, "\"oracles\": ");
	if (!p)
		return;
	p += 11;
	json_unstr(&p, ors, sizeof(ors));
	p = strstr(p, "\"message\": ");
	if (!p)
		return;
	p += 11;
	json_unstr(&p, msg, sizeof(msg));
	printf("violation: %s (%s): %s\nrepro: %s\n", desc, ors, msg, repro);
}

/* Copy every file of the shard but its results (the scenario, the ops
 * file) into @dir. */
static int copy_configs(const char *dir, const char *from)
{
	DIR *d = opendir(from);
	struct dirent *e;
	char path[4096];
	int ret = 0;

	if (!d)
		return -errno;
	while (!ret && (e = readdir(d))) {
		struct stat st;

		if (e->d_name[0] == '.' || !strcmp(e->d_name, "crash.csv") ||
		    !strcmp(e->d_name, "crash.json") ||
		    !strcmp(e->d_name, "shard.json"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", from, e->d_name);
		if (stat(path, &st) || !S_ISREG(st.st_mode))
			continue;
		ret = zres_copy_config(dir, path);
	}
	closedir(d);
	return ret;
}

int zcrash_merge(char *const *dirs, int nr, const char *parent)
{
	struct shard *s = calloc(nr, sizeof(*s)), **by = NULL, *a;
	struct zcrash_summary sum;
	struct zcrash_head h;
	char name[160], pbuf[4096], *dir = NULL, *slash;
	FILE *csv = NULL, *js = NULL;
	uint64_t n, k, j, r;
	int i, ret = 0;

	memset(&sum, 0, sizeof(sum));
	if (!s)
		return -ENOMEM;
	for (i = 0; i < nr && !ret; i++)
		ret = load(&s[i], dirs[i]);
	if (ret)
		goto out;
	a = &s[0];
	n = a->of;
	for (i = 1; i < nr; i++) {
		const char *why = NULL;

		if (!same(a, &s[i], "zcow_version") ||
		    !same(a, &s[i], "git_commit"))
			why = "the zcow version";
		else if (!same(a, &s[i], "seed"))
			why = "the scenario seed";
		else if (!same(a, &s[i], "campaign_hash"))
			why = "the campaign hash (scenario, ops file, settings)";
		else if (strcmp(a->head, s[i].head))
			why = "the settings in crash.json";
		else if (s[i].of != n)
			why = "the number of shards";
		if (why) {
			fprintf(stderr, "zcow crash --merge: %s and %s are shards of different campaigns: %s differs\n",
				a->dir, s[i].dir, why);
			ret = -EINVAL;
			goto out;
		}
	}
	by = calloc(n, sizeof(*by));
	if (!by) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < nr; i++) {
		if (by[s[i].idx - 1]) {
			fprintf(stderr, "zcow crash --merge: shard %" PRIu64 "/%" PRIu64 " given twice: %s and %s\n",
				s[i].idx, n, by[s[i].idx - 1]->dir, s[i].dir);
			ret = -EINVAL;
			goto out;
		}
		by[s[i].idx - 1] = &s[i];
	}
	for (k = 0; k < n; k++)
		if (!by[k]) {
			fprintf(stderr, "zcow crash --merge: shard %" PRIu64 "/%" PRIu64 " missing\n",
				k + 1, n);
			ret = -EINVAL;
			goto out;
		}
	/* the summary: sums, and the campaign's own counts */
	memset(&h, 0, sizeof(h));
	str_val(a, "name", h.name, sizeof(h.name));
	h.quick = num(a, "quick");
	h.treelog = num(a, "treelog");
	h.replay_cuts = num(a, "replay_cuts");
	h.nr_loss = num(a, "nr_loss");
	h.nr_seeds = num(a, "nr_seeds");
	str_val(a, "workload", h.workload, sizeof(h.workload));
	h.btrfs_every = num(a, "btrfs_every");
	sum.nr_workloads = num(a, "workloads");
	sum.nr_points = num(a, "crash_points");
	/* every shard runs every workload uncut: the first one's */
	sum.nr_ops = num(a, "nr_ops");
	sum.nr_ops_ok = num(a, "nr_ops_ok");
	sum.nr_ops_enospc = num(a, "nr_ops_enospc");
	sum.nr_ops_namespace = num(a, "nr_ops_namespace");
	sum.nr_ops_other = num(a, "nr_ops_other");
	sum.nr_ops_undeclared = num(a, "nr_ops_undeclared");
	for (i = 0; i < nr; i++) {
		struct shard *x = &s[i];
		double sec = strtod(val(x, "seconds") ? val(x, "seconds") : "0", NULL);

		sum.tried += num(x, "tried");
		sum.passed += num(x, "passed");
		sum.violations += num(x, "violations");
		for (k = 1; k < ZCRASH_NR_ORACLES; k++) {
			snprintf(name, sizeof(name), "oracle_%d", (int)k);
			sum.by_oracle[k] += num(x, name);
		}
		sum.tried_treelog[0] += num(x, "tried_off");
		sum.tried_treelog[1] += num(x, "tried_on");
		sum.violations_treelog[0] += num(x, "violations_off");
		sum.violations_treelog[1] += num(x, "violations_on");
		sum.tried_replay += num(x, "tried_replay");
		sum.tried_same += num(x, "tried_same");
		sum.btrfs_states += num(x, "btrfs_states");
		sum.btrfs_images += num(x, "btrfs_images");
		sum.nr_injected += num(x, "nr_injected");
		sum.nr_zone_fails += num(x, "nr_zone_fails");
		sum.nr_faulted += num(x, "nr_faulted");
		sum.nr_errors += num(x, "nr_errors");
		sum.nr_on_target += num(x, "nr_on_target");
		sum.nr_degraded += num(x, "nr_degraded");
		if (sec > sum.seconds)
			sum.seconds = sec;
	}
	/* the folder the whole run makes, next to the first shard's */
	if (!parent) {
		snprintf(pbuf, sizeof(pbuf), "%s", a->dir);
		while (strlen(pbuf) > 1 && pbuf[strlen(pbuf) - 1] == '/')
			pbuf[strlen(pbuf) - 1] = 0;
		slash = strrchr(pbuf, '/');
		if (slash == pbuf)
			slash[1] = 0;
		else if (slash)
			*slash = 0;
		else
			snprintf(pbuf, sizeof(pbuf), ".");
		parent = pbuf;
	}
	snprintf(name, sizeof(name), "%s%s", h.name, h.quick ? "-quick" : "");
	ret = zres_make_dir(parent, name, &dir);
	if (ret) {
		fprintf(stderr, "zcow crash --merge: cannot create the results folder under '%s': %s\n",
			parent, strerror(-ret));
		goto out;
	}
	ret = copy_configs(dir, a->dir);
	if (ret) {
		fprintf(stderr, "zcow crash --merge: %s: copying the scenario: %s\n",
			dir, strerror(-ret));
		goto out;
	}
	csv = zres_open(dir, "crash.csv");
	js = csv ? zres_open(dir, "crash.json") : NULL;
	if (!csv || !js) {
		ret = -errno;
		fprintf(stderr, "zcow crash --merge: %s: %s\n", dir,
			strerror(-ret));
		goto out;
	}
	fprintf(csv, "%s\n", a->rows[0]);
	fputs(a->head, js);
	/* state k is block k / N of shard k mod N + 1 */
	for (k = 0, j = 0; k < num(a, "campaign_states"); k++) {
		struct shard *x = by[k % n];
		uint64_t b = x->next_block++;
		uint64_t end = b + 1 < x->nr_blocks ? x->block[b + 1] :
			       x->nr_rows + 1;

		for (r = x->block[b]; r < end; r++) {
			const char *res = field(x->rows[r], 6);

			fprintf(csv, "%s\n", x->rows[r]);
			if (res && !strncmp(res, "violation,", 10) &&
			    x->next_viol < x->nr_viol) {
				const char *v = x->viol[x->next_viol++];

				fprintf(js, "%s\n%s", j++ ? "," : "", v);
				print_viol(v);
			}
		}
	}
	zcrash_json_tail(js, &h, &sum, j > 0);
	zcrash_print_table(&h, &sum, dir);
	ret = sum.violations || sum.nr_ops_undeclared ? 1 : 0;
out:
	if (csv && fclose(csv) && ret >= 0)
		ret = -EIO;
	if (js && fclose(js) && ret >= 0)
		ret = -EIO;
	if (ret == -ENOMEM)
		fprintf(stderr, "zcow crash --merge: out of memory\n");
	for (i = 0; i < nr; i++)
		unload(&s[i]);
	free(s);
	free(by);
	free(dir);
	return ret;
}
