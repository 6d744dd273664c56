// SPDX-License-Identifier: MIT
/*
 * The fs-tree part of zcow check (issue 5), run by zcow_check() on the
 * last committed state, read from the device through temporary trees:
 *   - every INODE_REF has its DIR_ITEM and DIR_INDEX in a directory that
 *     exists, and every DIR_INDEX points at an inode that refers back;
 *   - link counts equal the names the INODE_REF items hold (one item per
 *     parent packs every name there); every DIR_INDEX and DIR_ITEM entry
 *     is a name of its inode's INODE_REF of that directory, of the entry
 *     type of the inode's mode (1 file, 2 directory, 7 symlink);
 *   - a symlink's target is one plain inline extent at 0 of its size,
 *     its nbytes that length (btrfs_symlink);
 *   - XATTR_ITEM entries are well formed: type FT_XATTR, location
 *     zeroed, the key offset the name's hash, a name of 1..255 bytes,
 *     name + value within BTRFS_MAX_XATTR_SIZE;
 *   - a file's nbytes is what
 *     its extents hold (btrfs check's rule); a directory's size is
 *     2 x the sum of its entries' name lengths (btrfs); no orphan inodes;
 *   - file extents are regular, do not overlap, end within the size
 *     (rounded up to a block), lie in a data block group below its
 *     allocation offset and below its zone's write pointer;
 *   - every data extent has checksums for every block;
 *   (every data EXTENT_ITEM's backrefs against the file extents of the
 *   leaves that point at it: core/check.c, which sees the shared leaves);
 *   - a subvolume entry (location a ROOT_ITEM) names a root that has
 *     one; every ROOT_REF has its DIR_ITEM and DIR_INDEX in the fs tree;
 *   - what btrfs-progs' mkfs makes and btrfs check expects: the root
 *     directory 256 of the fs tree and of the data relocation tree, the
 *     fs tree's uuid in the uuid tree, the root tree's "default" entry.
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "csum.h"
#include "files.h"
#include "grow.h"
#include "volumes.h"

struct fck {
	struct zcow_fs *fs;
	void (*report)(void *arg, const char *msg);
	void *arg;
	int nr;
	bool is_nomem;
	uint64_t *zone_wp;
	struct zcow_tree *root, *extent, *csum;
};

static void problem(struct fck *ck, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void problem(struct fck *ck, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ck->nr++;
	if (ck->report)
		ck->report(ck->arg, msg);
}

static int open_tree(struct zcow_fs *fs, struct zcow_tree *root,
		     uint64_t id, struct zcow_tree *t)
{
	struct zcow_key k;
	uint8_t item[ZCOW_ROOT_ITEM_SIZE];
	int err;

	err = zcow_root_item_find(root, id, &k, item, NULL);
	if (err)
		return err;
	err = zcow_tree_init(t, &fs->store, id, get64(item + 176),
			     item[238], get64(item + 160));
	t->share_gen = get64(item + 200);	/* last_snapshot */
	return err;
}

/* The committed root tree and, through it, the extent and csum trees. */
static int open_committed(struct zcow_fs *fs, struct zcow_tree *root,
			  struct zcow_tree *extent, struct zcow_tree *csum)
{
	int err = zcow_tree_init(root, &fs->store, ZCOW_ROOT_TREE_OBJECTID,
				 le64toh(fs->sb.root), fs->sb.root_level, 0);

	if (!err)
		err = open_tree(fs, root, ZCOW_EXTENT_TREE_OBJECTID, extent);
	if (!err)
		err = open_tree(fs, root, ZCOW_CSUM_TREE_OBJECTID, csum);
	return err;
}

/* Does DIR_ITEM (dir, hash(name)) hold name -> ino? */
static bool has_dir_item(struct zcow_tree *t, uint64_t dir, const char *name,
			 uint16_t nlen, uint64_t ino)
{
	struct zcow_key k = { dir, ZCOW_DIR_ITEM_KEY,
			      zcow_name_hash(name, nlen) };
	uint8_t buf[4096];
	uint32_t size, off = 0;

	if (zcow_tree_search(t, &k, buf, sizeof(buf), &size) ||
	    size > sizeof(buf))
		return false;
	while (off + ZCOW_DIR_ITEM_HDR <= size) {
		uint16_t l = get16(buf + off + 27);

		if (l == nlen && !memcmp(buf + off + ZCOW_DIR_ITEM_HDR, name, l))
			return get64(buf + off) == ino;
		off += ZCOW_DIR_ITEM_HDR + l + get16(buf + off + 25);
	}
	return false;
}

static void check_fext(struct fck *ck, uint64_t root, uint64_t ino,
		       const struct zcow_fext *fe)
{
	struct zcow_fs *fs = ck->fs;
	struct zcow_bg *bg = zcow_bg_lookup(fs, fe->disk_bytenr);
	uint64_t end = fe->disk_bytenr + fe->disk_num_bytes, i;

	if (fe->disk_bytenr % ZCOW_SECTORSIZE ||
	    fe->disk_num_bytes % ZCOW_SECTORSIZE || !fe->disk_num_bytes ||
	    fe->offset + fe->num_bytes > fe->disk_num_bytes || !fe->num_bytes) {
		problem(ck, "root %" PRIu64 " inode %" PRIu64 " extent at %" PRIu64 ": bad geometry",
			root, ino, fe->file_off);
		return;
	}
	if (!bg || end > bg->start + bg->length ||
	    !(bg->flags & ZCOW_BG_DATA)) {
		problem(ck, "root %" PRIu64 " inode %" PRIu64 " extent %" PRIu64 ": not in a data block group",
			root, ino, fe->disk_bytenr);
		return;
	}
	if (end > bg->start + bg->alloc_offset)
		problem(ck, "root %" PRIu64 " inode %" PRIu64 " extent %" PRIu64 ": beyond the allocation offset",
			root, ino, fe->disk_bytenr);
	for (i = 0; i < fs->nr_bgs; i++)
		if (fs->bgs[i] == bg && bg->is_seq &&
		    bg->physical + (end - bg->start) > ck->zone_wp[i])
			problem(ck, "root %" PRIu64 " inode %" PRIu64 " extent %" PRIu64 ": beyond its zone's write pointer",
				root, ino, fe->disk_bytenr);
	if (zcow_csum_lookup(ck->csum, fe->disk_bytenr, fe->disk_num_bytes,
			     NULL))
		problem(ck, "data extent %" PRIu64 ": checksums missing", fe->disk_bytenr);
}

/*
 * A subvolume entry (DIR_INDEX @d of @dir in root @root, location
 * (id, ROOT_ITEM, -1)) has no inode in its tree: it names a directory
 * and a root that has a ROOT_ITEM (btrfs check: "root ... missing").
 */
static void check_subvol_entry(struct fck *ck, uint64_t root, uint64_t dir,
			       const uint8_t *d, uint16_t nlen)
{
	struct zcow_key rk;
	const char *name = (const char *)d + ZCOW_DIR_ITEM_HDR;

	if (d[29] != ZCOW_FT_DIR || get64(d + 9) != UINT64_MAX)
		problem(ck, "root %" PRIu64 " dir %" PRIu64 ": subvolume entry '%.*s' not a directory entry of offset -1",
			root, dir, (int)nlen, name);
	/* A snapshot's copies of entries of the fs tree may outlive the
	 * subvolumes they name (a later delete leaves them, as btrfs's
	 * does): only the fs tree's entries have their ROOT_REF. */
	if (root == ZCOW_FS_TREE_OBJECTID &&
	    zcow_root_item_find(ck->root, get64(d), &rk, NULL, NULL))
		problem(ck, "root %" PRIu64 " dir %" PRIu64 ": subvolume entry '%.*s' -> root %" PRIu64 " without root item",
			root, dir, (int)nlen, name, get64(d));
}

/*
 * Every ROOT_REF (5, ROOT_REF, id) of the root tree has its entry in the
 * fs tree @t: DIR_INDEX (dirid, sequence) and the DIR_ITEM of its name,
 * both of location (id, ROOT_ITEM, -1) (btrfs check: an unreferenced
 * subvolume otherwise).
 */
struct root_ref_ck {
	struct fck *ck;
	struct zcow_tree *t;
};

static int check_root_ref(void *arg, uint64_t id,
			  const struct zcow_root_ref *ref)
{
	struct root_ref_ck *rc = arg;
	struct zcow_key ik;
	uint8_t buf[ZCOW_DIR_ITEM_HDR + 256];
	uint32_t sz;
	bool ok;

	if (!ref) {
		problem(rc->ck, "root ref of root %" PRIu64 ": bad item", id);
		return 0;
	}
	ik.objectid = ref->dirid;
	ik.type = ZCOW_DIR_INDEX_KEY;
	ik.offset = ref->sequence;
	ok = !zcow_tree_search(rc->t, &ik, buf, sizeof(buf), &sz) &&
	     sz == ZCOW_DIR_ITEM_HDR + ref->nlen && get64(buf) == id &&
	     buf[8] == ZCOW_ROOT_ITEM_KEY && get16(buf + 27) == ref->nlen &&
	     !memcmp(buf + ZCOW_DIR_ITEM_HDR, ref->name, ref->nlen);
	if (!ok)
		problem(rc->ck, "root %" PRIu64 " '%.*s': no dir index %" PRIu64 " in dir %" PRIu64 " of root 5 for its root ref",
			id, (int)ref->nlen, ref->name, ik.offset, ik.objectid);
	if (!has_dir_item(rc->t, ik.objectid, ref->name, ref->nlen, id))
		problem(rc->ck, "root %" PRIu64 " '%.*s': no dir item in dir %" PRIu64 " of root 5 for its root ref",
			id, (int)ref->nlen, ref->name, ik.objectid);
	return 0;
}

static void check_root_refs(struct fck *ck, struct zcow_tree *t)
{
	struct root_ref_ck rc = { ck, t };
	int err = zcow_root_refs_walk(ck->root, check_root_ref, &rc);

	if (err)
		problem(ck, "root tree unreadable (%d)", err);
}

/* A btrfs_timespec's nanoseconds are below 10^9, as every time the
 * kernel stores (timespec64). */
static void check_times(struct fck *ck, uint64_t root,
			const struct zcow_inode *in)
{
	const struct {
		const char *name;
		const struct zcow_timespec *ts;
	} t[] = { { "atime", &in->atime }, { "ctime", &in->ctime },
		  { "mtime", &in->mtime }, { "otime", &in->otime } };
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i].ts->nsec >= 1000000000u)
			problem(ck, "root %" PRIu64 " inode %" PRIu64 ": %s nanoseconds %u out of range",
				root, in->ino, t[i].name, t[i].ts->nsec);
}

/* Is @name (@nlen bytes) a name of @ino's INODE_REF of @dir, with index
 * @index (UINT64_MAX: any)? */
static bool has_ref_name(struct zcow_tree *t, uint64_t ino, uint64_t dir,
			 const char *name, uint16_t nlen, uint64_t index)
{
	struct zcow_key k = { ino, ZCOW_INODE_REF_KEY, dir };
	uint32_t max = zcow_leaf_max_item_size(t->store->nodesize), size;
	uint8_t *buf = malloc(max);
	uint64_t found;
	bool ok;

	if (!buf)
		return false;
	ok = !zcow_tree_search(t, &k, buf, max, &size) && size <= max &&
	     !zcow_inode_ref_find(buf, size, name, nlen, NULL, NULL, &found) &&
	     (index == UINT64_MAX || found == index);
	free(buf);
	return ok;
}

/* The entries of XATTR_ITEM @k (@d, @len bytes). */
static void check_xattr_item(struct fck *ck, uint64_t root,
			     const struct zcow_key *k, const uint8_t *d,
			     uint32_t len)
{
	static const uint8_t zero[17];
	uint32_t off = 0;

	while (off + ZCOW_DIR_ITEM_HDR <= len) {
		const uint8_t *e = d + off;
		uint16_t dlen = get16(e + 25), nlen = get16(e + 27);
		const char *name = (const char *)e + ZCOW_DIR_ITEM_HDR;

		if (off + ZCOW_DIR_ITEM_HDR + nlen + dlen > len)
			break;
		if (e[29] != ZCOW_FT_XATTR || memcmp(e, zero, sizeof(zero)) ||
		    !nlen || nlen > 255 ||
		    (uint32_t)nlen + dlen > zcow_xattr_max(ck->fs) ||
		    zcow_name_hash(name, nlen) != k->offset)
			problem(ck, "root %" PRIu64 " inode %" PRIu64 ": bad xattr entry '%.*s' (type %u, name %u, value %u bytes)",
				root, k->objectid, (int)(nlen > 255 ? 255 : nlen),
				name, e[29], nlen, dlen);
		off += ZCOW_DIR_ITEM_HDR + nlen + dlen;
	}
	if (off != len)
		problem(ck, "root %" PRIu64 " inode %" PRIu64 ": xattr item %" PRIu64 " of %u bytes overrun",
			root, k->objectid, k->offset, len);
}

/* Check one fs tree (the fs tree or a snapshot). */
static void check_root(struct fck *ck, struct zcow_tree *t, uint64_t root)
{
	struct zcow_key start = { 0, 0, 0 }, k;
	struct zcow_tree_iter it;
	struct zcow_inode cur;
	bool have = false, have_ref = false;
	uint64_t nrefs = 0, dir_bytes = 0, ext_end = 0, found_bytes = 0;
	int64_t inline_len = -1;	/* a symlink's target, -1: none */
	const void *data;
	uint32_t len;
	int err;

	memset(&cur, 0, sizeof(cur));
	zcow_tree_iter_init(&it, t, &start);
	for (;;) {
		const uint8_t *d;

		err = zcow_tree_iter_next(&it, &k, &data, &len);
		if (err || k.objectid != cur.ino) {
			/* Finish the previous inode. */
			if (have) {
				/* nlink 0 with an orphan item: unlinked
				 * while open (inode.c), as btrfs check */
				if (cur.ino != ZCOW_ROOT_DIR_INO &&
				    !have_ref &&
				    !(cur.nlink == 0 &&
				      zcow_has_orphan_item(t, cur.ino)))
					problem(ck, "root %" PRIu64 " inode %" PRIu64 ": orphan (no reference)",
						root, cur.ino);
				if (!S_ISDIR(cur.mode) && cur.nlink != nrefs)
					problem(ck, "root %" PRIu64 " inode %" PRIu64 ": nlink %u, %" PRIu64 " references",
						root, cur.ino, cur.nlink, nrefs);
				/* btrfs check: "nbytes wrong" */
				if (S_ISLNK(cur.mode) &&
				    (inline_len < 0 ||
				     (uint64_t)inline_len != cur.size ||
				     ext_end != cur.size))
					problem(ck, "root %" PRIu64 " symlink %" PRIu64 ": size %" PRIu64 ", target %" PRId64 " (one inline extent)",
						root, cur.ino, cur.size,
						inline_len);
				if ((S_ISREG(cur.mode) || S_ISLNK(cur.mode)) &&
				    cur.nbytes != found_bytes)
					problem(ck, "root %" PRIu64 " inode %" PRIu64 ": nbytes %" PRIu64 ", extents hold %" PRIu64,
						root, cur.ino, cur.nbytes,
						found_bytes);
				if (S_ISDIR(cur.mode) && cur.size != dir_bytes)
					problem(ck, "root %" PRIu64 " dir %" PRIu64 ": size %" PRIu64 ", entries sum to %" PRIu64,
						root, cur.ino, cur.size,
						dir_bytes);
				if (ext_end > (cur.size + ZCOW_SECTORSIZE - 1) /
						      ZCOW_SECTORSIZE *
						      ZCOW_SECTORSIZE)
					problem(ck, "root %" PRIu64 " inode %" PRIu64 ": extents end at %" PRIu64 " beyond size %" PRIu64,
						root, cur.ino, ext_end,
						cur.size);
			}
			if (err)
				break;
			have = have_ref = false;
			nrefs = dir_bytes = ext_end = found_bytes = 0;
			inline_len = -1;
			memset(&cur, 0, sizeof(cur));
			cur.ino = k.objectid;
		}
		d = data;
		switch (k.type) {
		case ZCOW_INODE_ITEM_KEY:
			if (len != ZCOW_INODE_ITEM_SIZE) {
				problem(ck, "root %" PRIu64 " inode %" PRIu64 ": bad inode item", root, k.objectid);
				break;
			}
			zcow_inode_decode(d, k.objectid, &cur);
			have = true;
			check_times(ck, root, &cur);
			break;
		case ZCOW_INODE_REF_KEY: {
			uint32_t off = 0;

			if (!have)
				problem(ck, "root %" PRIu64 " inode %" PRIu64 ": reference without inode item", root, k.objectid);
			while (off + ZCOW_INODE_REF_HDR <= len) {
				uint64_t index = get64(d + off);
				uint16_t nlen = get16(d + off + 8);
				const char *name = (const char *)d + off +
						   ZCOW_INODE_REF_HDR;
				struct zcow_key ik = { k.offset,
						       ZCOW_DIR_INDEX_KEY,
						       index };
				uint8_t buf[ZCOW_DIR_ITEM_HDR + 256];
				uint32_t sz;

				if (off + ZCOW_INODE_REF_HDR + nlen > len)
					break;
				off += ZCOW_INODE_REF_HDR + nlen;
				if (k.objectid == ZCOW_ROOT_DIR_INO &&
				    k.offset == ZCOW_ROOT_DIR_INO)
					continue;	/* ".." of the root */
				have_ref = true;
				nrefs++;
				if (!has_dir_item(t, k.offset, name, nlen,
						  k.objectid))
					problem(ck, "root %" PRIu64 " inode %" PRIu64 ": no dir item in dir %" PRIu64 " for '%.*s'",
						root, k.objectid, k.offset,
						(int)nlen, name);
				if (zcow_tree_search(t, &ik, buf, sizeof(buf),
						     &sz) ||
				    sz < ZCOW_DIR_ITEM_HDR ||
				    get64(buf) != k.objectid)
					problem(ck, "root %" PRIu64 " inode %" PRIu64 ": no dir index %" PRIu64 " in dir %" PRIu64,
						root, k.objectid, index,
						k.offset);
			}
			break;
		}
		case ZCOW_DIR_INDEX_KEY: {
			struct zcow_key rk;
			struct zcow_inode target;
			uint16_t nlen;

			if (len < ZCOW_DIR_ITEM_HDR)
				break;
			nlen = get16(d + 27);
			dir_bytes += 2ULL * nlen;
			if (!have || !S_ISDIR(cur.mode))
				problem(ck, "root %" PRIu64 " entry in %" PRIu64 ", not a directory",
					root, k.objectid);
			rk.objectid = get64(d);
			if (d[8] == ZCOW_ROOT_ITEM_KEY) {
				check_subvol_entry(ck, root, k.objectid, d,
						   nlen);
				break;
			}
			rk.type = ZCOW_INODE_REF_KEY;
			rk.offset = k.objectid;
			if (zcow_inode_get(t, rk.objectid, &target))
				problem(ck, "root %" PRIu64 " dir %" PRIu64 ": entry '%.*s' -> missing inode %" PRIu64,
					root, k.objectid, (int)nlen,
					(const char *)d + ZCOW_DIR_ITEM_HDR,
					rk.objectid);
			else if (d[29] != zcow_ft_of_mode(target.mode))
				problem(ck, "root %" PRIu64 " dir %" PRIu64 ": entry type of %" PRIu64 " wrong",
					root, k.objectid, rk.objectid);
			else if (zcow_tree_search(t, &rk, NULL, 0, NULL))
				problem(ck, "root %" PRIu64 " inode %" PRIu64 ": entry in dir %" PRIu64 " without inode ref",
					root, rk.objectid, k.objectid);
			else if (ZCOW_DIR_ITEM_HDR + nlen <= len &&
				 !has_ref_name(t, rk.objectid, k.objectid,
					       (const char *)d +
						       ZCOW_DIR_ITEM_HDR,
					       nlen, k.offset))
				problem(ck, "root %" PRIu64 " inode %" PRIu64 ": dir index %" PRIu64 " '%.*s' of dir %" PRIu64 " not in its inode ref",
					root, rk.objectid, k.offset, (int)nlen,
					(const char *)d + ZCOW_DIR_ITEM_HDR,
					k.objectid);
			break;
		}
		case ZCOW_DIR_ITEM_KEY: {
			uint32_t off = 0;

			while (off + ZCOW_DIR_ITEM_HDR <= len) {
				const uint8_t *e = d + off;
				uint16_t nlen = get16(e + 27);
				const char *name = (const char *)e +
						   ZCOW_DIR_ITEM_HDR;

				if (off + ZCOW_DIR_ITEM_HDR + nlen +
					    get16(e + 25) > len)
					break;
				off += ZCOW_DIR_ITEM_HDR + nlen +
				       get16(e + 25);
				if (e[8] == ZCOW_ROOT_ITEM_KEY)
					continue;	/* a subvolume's */
				if (!has_ref_name(t, get64(e), k.objectid,
						  name, nlen, UINT64_MAX))
					problem(ck, "root %" PRIu64 " dir %" PRIu64 ": dir item '%.*s' -> %" PRIu64 " not in its inode ref",
						root, k.objectid, (int)nlen,
						name, get64(e));
			}
			break;
		}
		case ZCOW_ORPHAN_ITEM_KEY: {
			struct zcow_inode oi;

			if (k.objectid != ZCOW_ORPHAN_OBJECTID)
				break;
			if (len)
				problem(ck, "root %" PRIu64 " orphan item of inode %" PRIu64 ": %u bytes of data",
					root, k.offset, len);
			if (zcow_inode_get(t, k.offset, &oi))
				problem(ck, "root %" PRIu64 " orphan item of inode %" PRIu64 ": no inode",
					root, k.offset);
			break;
		}
		case ZCOW_XATTR_ITEM_KEY:
			if (!have)
				problem(ck, "root %" PRIu64 " inode %" PRIu64 ": xattr without inode item",
					root, k.objectid);
			check_xattr_item(ck, root, &k, d, len);
			break;
		case ZCOW_EXTENT_DATA_KEY: {
			struct zcow_fext fe;

			if (len >= 21 && d[20] == 0 && !d[16] && !d[17] &&
			    !d[18] && !d[19]) {
				/* inline (the kernel writes them, zcow
				 * reads them): the only extent, at 0, of
				 * its ram_bytes, below one block */
				if (k.offset || get64(d + 8) != len - 21 ||
				    len - 21 >= ZCOW_SECTORSIZE)
					problem(ck, "root %" PRIu64 " inode %" PRIu64 ": inline extent at %" PRIu64 " of %u bytes, ram_bytes %" PRIu64,
						root, k.objectid, k.offset,
						len - 21, get64(d + 8));
				ext_end = k.offset + (len - 21);
				found_bytes += get64(d + 8);
				if (!k.offset)
					inline_len = len - 21;
				break;
			}
			if (S_ISLNK(cur.mode))
				problem(ck, "root %" PRIu64 " symlink %" PRIu64 ": extent at %" PRIu64 " not inline",
					root, k.objectid, k.offset);
			if (len != ZCOW_FILE_EXTENT_SIZE || d[20] != 1) {
				problem(ck, "root %" PRIu64 " inode %" PRIu64 ": file extent at %" PRIu64 " not regular",
					root, k.objectid, k.offset);
				break;
			}
			if (zcow_fext_decode(d, len, k.offset, &fe)) {
				problem(ck, "root %" PRIu64 " inode %" PRIu64 ": file extent at %" PRIu64 " not decodable",
					root, k.objectid, k.offset);
				break;
			}
			if (k.offset < ext_end)
				problem(ck, "root %" PRIu64 " inode %" PRIu64 ": extents overlap at %" PRIu64,
					root, k.objectid, k.offset);
			ext_end = k.offset + fe.num_bytes;
			if (fe.disk_bytenr)
				found_bytes += fe.num_bytes;
			check_fext(ck, root, k.objectid, &fe);
			break;
		}
		default:
			break;
		}
	}
	if (err != -ENOENT)
		problem(ck, "root %" PRIu64 ": unreadable (%d)", root, err);
}

/*
 * The root directory of tree @id (the fs tree, the data relocation tree)
 * as btrfs's mkfs makes it and btrfs check requires it: the root item
 * names 256 as root_dirid, inode 256 is a directory with an INODE_REF
 * ".." (index 0) to itself.  0 when it is there, else 1 (reported).
 */
static int check_root_dir(struct fck *ck, struct zcow_tree *root,
			  struct zcow_tree *t, uint64_t id)
{
	struct zcow_key k = { id, ZCOW_ROOT_ITEM_KEY, 0 };
	uint8_t item[ZCOW_ROOT_ITEM_SIZE], ref[ZCOW_INODE_REF_HDR + 2];
	struct zcow_inode rd;
	uint32_t size;
	int err;

	if (!zcow_tree_search(root, &k, item, sizeof(item), &size) &&
	    get64(item + 168) != ZCOW_ROOT_DIR_INO)
		problem(ck, "root %" PRIu64 ": root_dirid %" PRIu64 ", not 256",
			id, get64(item + 168));
	err = zcow_inode_get(t, ZCOW_ROOT_DIR_INO, &rd);
	if (err) {
		problem(ck, "root %" PRIu64 " root dir 256 not found", id);
		return 1;
	}
	if (!S_ISDIR(rd.mode)) {
		problem(ck, "root %" PRIu64 " root dir 256 is not a directory",
			id);
		return 1;
	}
	k.objectid = ZCOW_ROOT_DIR_INO;
	k.type = ZCOW_INODE_REF_KEY;
	k.offset = ZCOW_ROOT_DIR_INO;
	if (zcow_tree_search(t, &k, ref, sizeof(ref), &size) ||
	    size != sizeof(ref) || get64(ref) != 0 || get16(ref + 8) != 2 ||
	    memcmp(ref + ZCOW_INODE_REF_HDR, "..", 2))
		problem(ck, "root %" PRIu64 " root dir 256: no \"..\" reference",
			id);
	return 0;
}

/* The uuid tree maps @uuid (subvolume @id's) to @id. */
static void check_uuid_entry(struct fck *ck, struct zcow_tree *root,
			     uint64_t id, const uint8_t *uuid)
{
	struct zcow_tree t;
	struct zcow_key k = { get64(uuid), ZCOW_UUID_KEY_SUBVOL,
			      get64(uuid + 8) };
	uint8_t buf[64];
	uint32_t size;

	memset(&t, 0, sizeof(t));
	if (open_tree(ck->fs, root, ZCOW_UUID_TREE_OBJECTID, &t)) {
		problem(ck, "uuid tree root item missing");
		return;
	}
	if (zcow_tree_search(&t, &k, buf, sizeof(buf), &size) || size != 8 ||
	    get64(buf) != id)
		problem(ck, "uuid tree: no entry of root %" PRIu64 "'s uuid",
			id);
	zcow_tree_release(&t);
}

/*
 * The rest of what mkfs makes (docs/format.md, "mkfs"): the data
 * relocation tree's root directory; the fs tree's uuid, entered in the
 * uuid tree; the root tree's directory 6 with its entry "default" for the
 * fs tree and the fs tree's INODE_REF back to it.
 */
static void check_mkfs_items(struct fck *ck, struct zcow_tree *root)
{
	static const uint8_t zero[ZCOW_UUID_SIZE];
	uint8_t item[ZCOW_ROOT_ITEM_SIZE], buf[64];
	const uint8_t *uuid = item + 247;
	struct zcow_tree t;
	struct zcow_inode rd;
	struct zcow_key k;
	uint32_t size;

	memset(&t, 0, sizeof(t));
	if (open_tree(ck->fs, root, ZCOW_DATA_RELOC_TREE_OBJECTID, &t)) {
		problem(ck, "data relocation tree root item missing");
	} else {
		check_root_dir(ck, root, &t, ZCOW_DATA_RELOC_TREE_OBJECTID);
		zcow_tree_release(&t);
	}
	if (!zcow_root_item_find(root, ZCOW_FS_TREE_OBJECTID, &k, item,
				 NULL)) {
		if (!memcmp(uuid, zero, sizeof(zero)))
			problem(ck, "root 5: no uuid in its root item");
		else
			check_uuid_entry(ck, root, ZCOW_FS_TREE_OBJECTID,
					 uuid);
	}
	if (zcow_inode_get(root, ZCOW_ROOT_TREE_DIR_OBJECTID, &rd) ||
	    !S_ISDIR(rd.mode))
		problem(ck, "root tree: directory 6 missing");
	k.objectid = ZCOW_ROOT_TREE_DIR_OBJECTID;
	k.type = ZCOW_DIR_ITEM_KEY;
	k.offset = zcow_name_hash(ZCOW_DEFAULT_SUBVOL_NAME, 7);
	if (zcow_tree_search(root, &k, buf, sizeof(buf), &size) ||
	    size != ZCOW_DIR_ITEM_HDR + 7 ||
	    get64(buf) != ZCOW_FS_TREE_OBJECTID ||
	    buf[8] != ZCOW_ROOT_ITEM_KEY || get64(buf + 9) != UINT64_MAX ||
	    get16(buf + 27) != 7 || buf[29] != ZCOW_FT_DIR ||
	    memcmp(buf + ZCOW_DIR_ITEM_HDR, ZCOW_DEFAULT_SUBVOL_NAME, 7))
		problem(ck, "root tree: no dir item \"default\" for root 5");
	k.objectid = ZCOW_FS_TREE_OBJECTID;
	k.type = ZCOW_INODE_REF_KEY;
	k.offset = ZCOW_ROOT_TREE_DIR_OBJECTID;
	if (zcow_tree_search(root, &k, buf, sizeof(buf), &size) ||
	    size != ZCOW_INODE_REF_HDR + 7 || get16(buf + 8) != 7 ||
	    memcmp(buf + ZCOW_INODE_REF_HDR, ZCOW_DEFAULT_SUBVOL_NAME, 7))
		problem(ck, "root tree: no inode ref \"default\" of root 5");
}

int zcow_files_check(struct zcow_fs *fs,
		     void (*report)(void *arg, const char *msg), void *arg)
{
	struct fck ck = { .fs = fs, .report = report, .arg = arg };
	struct zcow_tree root, extent, csum, t;
	struct zcow_key start = { 256, ZCOW_ROOT_ITEM_KEY, 0 }, k;
	struct zcow_tree_iter it;
	uint64_t *ids = NULL, nr_ids = 0, cap_ids = 0, i;
	int err;

	memset(&root, 0, sizeof(root));
	memset(&extent, 0, sizeof(extent));
	memset(&csum, 0, sizeof(csum));
	ck.zone_wp = calloc(fs->nr_bgs ? fs->nr_bgs : 1, sizeof(*ck.zone_wp));
	if (!ck.zone_wp)
		return -ENOMEM;
	for (i = 0; i < fs->nr_bgs; i++) {
		struct zdev_zone z;

		if (!zdev_report_zone(zcow_bg_zdev(fs->bgs[i]),
				      fs->bgs[i]->physical, &z))
			ck.zone_wp[i] = z.cond == ZDEV_COND_FULL ?
						z.start + z.capacity :
						z.wp;
	}
	err = open_committed(fs, &root, &extent, &csum);
	if (err) {
		problem(&ck, "file layer: trees unreadable (%d)", err);
		goto out;
	}
	ck.root = &root;
	ck.extent = &extent;
	ck.csum = &csum;
	memset(&t, 0, sizeof(t));
	if (open_tree(fs, &root, ZCOW_FS_TREE_OBJECTID, &t)) {
		problem(&ck, "fs tree root item missing");
	} else {
		if (!check_root_dir(&ck, &root, &t, ZCOW_FS_TREE_OBJECTID))
			check_root(&ck, &t, ZCOW_FS_TREE_OBJECTID);
		check_root_refs(&ck, &t);
		zcow_tree_release(&t);
	}
	check_mkfs_items(&ck, &root);
	/* Snapshots: every ROOT_ITEM with objectid in [256, -256). */
	zcow_tree_iter_init(&it, &root, &start);
	while (!(err = zcow_tree_iter_next(&it, &k, NULL, NULL))) {
		if (k.objectid >= (uint64_t)-256)
			break;
		if (k.type != ZCOW_ROOT_ITEM_KEY)
			continue;
		if (ZCOW_GROW_ONE(&ids, nr_ids, &cap_ids)) {
			ck.is_nomem = true;
			break;
		}
		ids[nr_ids++] = k.objectid;
	}
	for (i = 0; i < nr_ids; i++) {
		memset(&t, 0, sizeof(t));
		if (open_tree(fs, &root, ids[i], &t)) {
			problem(&ck, "snapshot %" PRIu64 " unreadable", ids[i]);
			continue;
		}
		err = zcow_tree_search(&t, &(struct zcow_key){
					       ZCOW_ROOT_DIR_INO,
					       ZCOW_INODE_ITEM_KEY, 0 },
				       NULL, 0, NULL);
		if (err)
			problem(&ck, "snapshot %" PRIu64 ": root directory unreadable (%d)",
				ids[i], err);
		else
			check_root(&ck, &t, ids[i]);
		{
			static const uint8_t zero[ZCOW_UUID_SIZE];
			uint8_t item[ZCOW_ROOT_ITEM_SIZE];
			struct zcow_key rk;

			/* (snapshots of older zcow versions have none) */
			if (!zcow_root_item_find(&root, ids[i], &rk, item,
						 NULL) &&
			    memcmp(item + 247, zero, sizeof(zero)))
				check_uuid_entry(&ck, &root, ids[i],
						 item + 247);
		}
		zcow_tree_release(&t);
	}
out:
	zcow_tree_release(&root);
	zcow_tree_release(&extent);
	zcow_tree_release(&csum);
	free(ids);
	free(ck.zone_wp);
	return ck.is_nomem ? -ENOMEM : ck.nr;
}

int zcow_nr_orphans(struct zcow_fs *fs, uint64_t *nr_ret)
{
	struct zcow_key start = { ZCOW_ORPHAN_OBJECTID, ZCOW_ORPHAN_ITEM_KEY,
				  0 }, k;
	struct zcow_tree root, extent, csum, t;
	struct zcow_tree_iter it;
	int err;

	*nr_ret = 0;
	if (!fs->has_trees)
		return -EINVAL;
	memset(&root, 0, sizeof(root));
	memset(&extent, 0, sizeof(extent));
	memset(&csum, 0, sizeof(csum));
	memset(&t, 0, sizeof(t));
	err = open_committed(fs, &root, &extent, &csum);
	if (!err)
		err = open_tree(fs, &root, ZCOW_FS_TREE_OBJECTID, &t);
	if (!err) {
		zcow_tree_iter_init(&it, &t, &start);
		while (!(err = zcow_tree_iter_next(&it, &k, NULL, NULL)) &&
		       k.objectid == ZCOW_ORPHAN_OBJECTID &&
		       k.type == ZCOW_ORPHAN_ITEM_KEY)
			(*nr_ret)++;
		if (err == -ENOENT || !err)
			err = 0;
	}
	if (t.hash)
		zcow_tree_release(&t);
	zcow_tree_release(&root);
	zcow_tree_release(&extent);
	zcow_tree_release(&csum);
	return err;
}

/* ---- zcow check --data ------------------------------------------------- */

/* Bytes of data read per device command by zcow_check_data(). */
#define DATA_READ_MAX	(1u << 20)

/* Put @n bytes of @s before the string in @buf; false if it does not
 * fit (@buf unchanged). */
static bool prepend(char *buf, size_t size, const char *s, size_t n)
{
	size_t cur = strlen(buf);

	if (cur + n + 1 > size)
		return false;
	memmove(buf + n, buf, cur + 1);
	memcpy(buf, s, n);
	return true;
}

/*
 * The path of inode @ino in @t, followed up its INODE_REFs to the root
 * directory, into @buf ("/?" for a reference that is missing).
 */
static void inode_path(struct zcow_tree *t, uint64_t ino, char *buf,
		       size_t size)
{
	int depth;

	buf[0] = '\0';
	if (ino == ZCOW_ROOT_DIR_INO)
		prepend(buf, size, "/", 1);
	for (depth = 0; ino != ZCOW_ROOT_DIR_INO && depth < 64; depth++) {
		struct zcow_key k = { ino, ZCOW_INODE_REF_KEY, 0 };
		struct zcow_tree_iter it;
		const uint8_t *d;
		const void *data;
		uint32_t len;
		uint16_t nlen;

		zcow_tree_iter_init(&it, t, &k);
		if (zcow_tree_iter_next(&it, &k, &data, &len) ||
		    k.objectid != ino || k.type != ZCOW_INODE_REF_KEY ||
		    len < ZCOW_INODE_REF_HDR) {
			prepend(buf, size, "/?", 2);
			return;
		}
		d = data;
		nlen = get16(d + 8);
		if (nlen > len - ZCOW_INODE_REF_HDR)
			nlen = (uint16_t)(len - ZCOW_INODE_REF_HDR);
		if (!prepend(buf, size, (const char *)d + ZCOW_INODE_REF_HDR,
			     nlen) ||
		    !prepend(buf, size, "/", 1))
			return;
		ino = k.offset;
	}
}

/*
 * Verify the blocks of data extent @bytenr (@len bytes) against its
 * checksum item; name a mismatch by the file of the first inline
 * reference in @d (@dlen bytes of the extent item).
 */
static void check_extent_data(struct fck *ck, struct zcow_tree *root,
			      uint64_t bytenr, uint64_t len, const uint8_t *d,
			      uint32_t dlen, uint8_t *buf)
{
	uint64_t nr = len / ZCOW_SECTORSIZE, done, i;
	uint64_t ref_root = 0, ref_ino = 0, ref_off = 0;
	uint8_t *csums;
	int err;

	if (dlen >= 24 + 29 && d[24] == ZCOW_EXTENT_DATA_REF_KEY) {
		ref_root = get64(d + 25);
		ref_ino = get64(d + 33);
		ref_off = get64(d + 41);
	}
	csums = malloc(nr ? nr * 4 : 1);
	if (!csums) {
		ck->is_nomem = true;
		return;
	}
	if (zcow_csum_lookup(ck->csum, bytenr, len, (uint32_t *)csums)) {
		problem(ck, "data extent %" PRIu64 ": checksums missing", bytenr);
		goto out;
	}
	for (done = 0; done < len; done += DATA_READ_MAX) {
		uint64_t n = len - done < DATA_READ_MAX ? len - done :
							  DATA_READ_MAX;
		struct zdev *dev;
		uint64_t phys;

		err = zcow_map_logical_dev(ck->fs, bytenr + done, n, &dev,
					   &phys);
		if (!err)
			err = zdev_read(dev, buf, n, phys, ZDEV_CLASS_DATA);
		if (err) {
			problem(ck, "data extent %" PRIu64 ": unreadable at %" PRIu64 " (%d)",
				bytenr, bytenr + done, err);
			goto out;
		}
		for (i = 0; i < n / ZCOW_SECTORSIZE; i++) {
			uint64_t blk = (done / ZCOW_SECTORSIZE) + i;
			uint32_t want = get32(csums + 4 * blk);
			uint32_t got = zcow_crc32c(buf + i * ZCOW_SECTORSIZE,
						   ZCOW_SECTORSIZE);
			struct zcow_tree t, *tp = &t;
			char path[512];

			if (want == got)
				continue;
			memset(&t, 0, sizeof(t));
			path[0] = '\0';
			if (ref_root == ZCOW_FS_TREE_OBJECTID ||
			    (ref_root >= ZCOW_FIRST_FREE_OBJECTID &&
			     ref_root < (uint64_t)-256)) {
				if (!open_tree(ck->fs, root, ref_root, tp)) {
					inode_path(tp, ref_ino, path,
						   sizeof(path));
					zcow_tree_release(tp);
				}
			}
			problem(ck, "data csum mismatch: file %s offset %" PRIu64 " (root %" PRIu64 " ino %" PRIu64 ", bytenr %" PRIu64 "): expected csum 0x%08x, found 0x%08x: %s",
				path[0] ? path : "?",
				ref_off + blk * ZCOW_SECTORSIZE, ref_root,
				ref_ino, bytenr + blk * ZCOW_SECTORSIZE, want,
				got, strerror(EUCLEAN));
		}
	}
out:
	free(csums);
}

int zcow_check_data(struct zcow_fs *fs,
		    void (*report)(void *arg, const char *msg), void *arg)
{
	struct fck ck = { .fs = fs, .report = report, .arg = arg };
	struct zcow_key start = { 0, 0, 0 }, k;
	struct zcow_tree root, extent, csum;
	struct zcow_tree_iter it;
	const void *data;
	uint8_t *buf;
	uint32_t len;
	int err;

	if (!fs->has_trees) {
		if (report)
			report(arg, "no trees: the superblock's trees could not be loaded");
		return -EINVAL;
	}
	buf = malloc(DATA_READ_MAX);
	if (!buf)
		return -ENOMEM;
	memset(&root, 0, sizeof(root));
	memset(&extent, 0, sizeof(extent));
	memset(&csum, 0, sizeof(csum));
	err = open_committed(fs, &root, &extent, &csum);
	if (err) {
		problem(&ck, "data: trees unreadable (%d)", err);
		goto out;
	}
	ck.csum = &csum;
	zcow_tree_iter_init(&it, &extent, &start);
	while (!(err = zcow_tree_iter_next(&it, &k, &data, &len))) {
		const uint8_t *d = data;

		if (k.type != ZCOW_EXTENT_ITEM_KEY || len < 24 ||
		    !(get64(d + 16) & ZCOW_EXTENT_FLAG_DATA))
			continue;
		if (k.offset % ZCOW_SECTORSIZE || !k.offset) {
			problem(&ck, "data extent %" PRIu64 ": length %" PRIu64 " not whole blocks",
				k.objectid, k.offset);
			continue;
		}
		check_extent_data(&ck, &root, k.objectid, k.offset, d, len,
				  buf);
		if (ck.is_nomem)
			break;
	}
	if (err != -ENOENT && !ck.is_nomem)
		problem(&ck, "extent tree unreadable (%d)", err);
out:
	zcow_tree_release(&root);
	zcow_tree_release(&extent);
	zcow_tree_release(&csum);
	free(buf);
	return ck.is_nomem ? -ENOMEM : ck.nr;
}
