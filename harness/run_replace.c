// SPDX-License-Identifier: MIT
/*
 * A device replace while a scenario's jobs run (replace_target=,
 * replace_devid=, replace_at=; docs/devices.md): the new device is opened
 * with a timing model of the same profile as the first, the replace
 * starts at simulated time replace_at and then copies a piece of at most
 * ZRUN_REPLACE_PIECE bytes per event, one event after the other, while
 * the jobs' operations run alongside (their device commands share the
 * devices' resources in the timing model); an event that began a group
 * committed, and is held like a commit (every other operation waits for
 * it).  The finish follows the last group.  A replace still running when the jobs end runs to its end
 * after them.  What it took goes to summary.json ("replace").
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "devlist.h"
#include "results.h"
#include "run.h"
#include "zsim.h"
#include "ztime.h"

int zrun_replace_open(struct zrun *run)
{
	struct ztime_profile prof;
	int ret;

	run->rp_phase = 0;
	run->rp_steps = 0;
	run->rp_start_ns = run->rp_end_ns = 0;
	memset(&run->rp_st, 0, sizeof(run->rp_st));
	if (!run->set.replace_target[0])
		return 0;
	if (!run->ops->replace) {
		zrun_errf(run, "replace_target= needs the fs target (target=%s)",
			  run->ops->name);
		return -EINVAL;
	}
	if (zdevs_is_list(run->set.replace_target)) {
		zrun_errf(run, "replace_target '%s' is a list of devices: a replace target is one device",
			  run->set.replace_target);
		return -EINVAL;
	}
	ret = zdev_open(run->set.replace_target, &run->rp_dev);
	if (ret) {
		zrun_errf(run, "cannot open the replace target '%s': %s",
			  run->set.replace_target, strerror(-ret));
		return ret;
	}
	if (run->time) {
		if (!zsim_from_dev(run->rp_dev)) {
			zrun_errf(run, "replace target '%s': a simulated run needs a simulated target",
				  run->set.replace_target);
			return -EINVAL;
		}
		ret = ztime_profile_get(run->set.profile, &prof);
		ret = ret ?: ztime_create(&prof, &run->rp_dev->info,
					  &run->rp_time);
		ret = ret ?: ztime_attach(run->rp_dev, run->rp_time);
		if (ret) {
			zrun_errf(run, "timing model of the replace target: %s",
				  strerror(-ret));
			return ret;
		}
	}
	run->rp_phase = 1;
	run->rp_due = run->set.replace_at_ns;
	return 0;
}

uint64_t zrun_replace_due(const struct zrun *run)
{
	return run->rp_phase == 1 || run->rp_phase == 2 ? run->rp_due :
							  UINT64_MAX;
}

int zrun_replace_event(struct zrun *run, uint64_t t)
{
	uint64_t done = t;
	bool finished = false;
	int ret;

	ret = run->ops->replace(run, run->rp_phase == 2, t, &done, &finished);
	if (ret)
		return ret;
	if (done < t)
		done = t;
	if (run->rp_phase == 1) {
		run->rp_start_ns = t;
		run->rp_phase = 2;
	} else {
		run->rp_steps++;
	}
	if (finished) {
		run->rp_end_ns = done;
		run->rp_phase = 3;
	}
	run->rp_due = done;
	return 0;
}

void zrun_replace_summary(const struct zrun *run, FILE *f)
{
	const struct zcow_replace_status *st = &run->rp_st;

	if (!run->set.replace_target[0])
		return;
	fprintf(f, "  \"replace\": {\n");
	fprintf(f, "    \"target\": ");
	zres_json_str(f, run->set.replace_target);
	fprintf(f, ",\n    \"devid\": %" PRIu64 ",\n", run->set.replace_devid);
	fprintf(f, "    \"finished\": %s,\n",
		run->rp_phase == 3 ? "true" : "false");
	fprintf(f, "    \"start_s\": %.6f,\n", run->rp_start_ns / 1e9);
	fprintf(f, "    \"end_s\": %.6f,\n", run->rp_end_ns / 1e9);
	fprintf(f, "    \"duration_s\": %.6f,\n",
		run->rp_phase == 3 ?
			(run->rp_end_ns - run->rp_start_ns) / 1e9 : 0.0);
	fprintf(f, "    \"groups_to_copy\": %" PRIu64 ",\n", st->nr_to_copy);
	fprintf(f, "    \"groups_copied\": %" PRIu64 ",\n", st->nr_copied);
	fprintf(f, "    \"bytes_copied\": %" PRIu64 ",\n", st->bytes_copied);
	fprintf(f, "    \"bytes_zeroed\": %" PRIu64 ",\n", st->bytes_zeroed);
	fprintf(f, "    \"bytes_cloned\": %" PRIu64 "\n", st->bytes_cloned);
	fprintf(f, "  },\n");
}

int zrun_replace_close(struct zrun *run)
{
	int ret = 0;

	if (run->rp_dev) {
		if (run->rp_time)
			(void)ztime_attach(run->rp_dev, NULL);
		ret = zdev_close(run->rp_dev);
		if (ret)
			zrun_errf(run, "closing the replace target: %s",
				  strerror(-ret));
	}
	run->rp_dev = NULL;
	ztime_destroy(run->rp_time);
	run->rp_time = NULL;
	return ret;
}
