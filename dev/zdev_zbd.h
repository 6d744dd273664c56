/* SPDX-License-Identifier: MIT */
/*
 * zdev_zbd: internals of the real-device backend (dev/zdev_zbd.c) that are
 * pure functions, exposed so tests can pin them without a zoned device.
 *
 * Not an interface for the core: the core opens real devices through
 * zdev_open("/dev/...").  Who may include this: dev/zdev_zbd.c and tests.
 * These helpers are built with or without libzbd.
 */
#ifndef ZCOW_ZDEV_ZBD_H
#define ZCOW_ZDEV_ZBD_H

#include <stddef.h>

/*
 * Map an NVMe completion status, as NVME_IOCTL_IO64_CMD returns it
 * (SC | SCT << 8 | CRD << 11 | MORE << 13 | DNR << 14), to the errno the
 * Linux block layer gives for the same status (measured, see
 * docs/device-spec.md):
 *   0x000 Success                          -> 0
 *   0x002 Invalid Field in Command         -> -EINVAL (append not at zone
 *                                             start, above zasl)
 *   0x080 LBA Out of Range                 -> -EINVAL
 *   0x001 Invalid Command Opcode           -> -EOPNOTSUPP
 *   0x1b8 Zone Boundary Error              -> -EIO
 *   0x1b9 Zone Is Full                     -> -EIO
 *   0x1ba Zone Is Read Only                -> -EIO
 *   0x1bb Zone Is Offline                  -> -EIO
 *   0x1bc Zone Invalid Write               -> -EIO
 *   0x1bd Too Many Active Zones            -> -EOVERFLOW
 *   0x1be Too Many Open Zones              -> -ETOOMANYREFS
 *   0x1bf Invalid Zone State Transition    -> -EIO
 *   anything else                          -> -EIO
 */
int zdev_zbd_nvme_status_errno(int status);

/*
 * Derive the NVMe generic char device of a namespace block device:
 * "/dev/nvme0n1" -> "/dev/ng0n1" (the directory is kept).  Partitions
 * ("nvme0n1p1") and non-NVMe names give -EINVAL; a too small @buf gives
 * -ENAMETOOLONG.  Returns 0.
 */
int zdev_zbd_ng_path(const char *blk_path, char *buf, size_t buf_len);

#endif /* ZCOW_ZDEV_ZBD_H */
