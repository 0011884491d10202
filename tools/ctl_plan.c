/*
 * ctl_plan.c - the restore plan in ckptctl: where ckptd would read each file
 * of a version from (ckpt_plan()), printed by `restore --plan`, checked by
 * restore before it writes anything (a version with a file no source can
 * serve is refused whole, the files named), and the versions `latest`
 * passed over because they cannot be read.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "ctl_fmt.h"
#include "ctl_json.h"

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct ckpt_plan_entry *)a)->name,
		      ((const struct ckpt_plan_entry *)b)->name);
}

int ctl_plan_load(struct ckpt_client *c, const char *job, const char *version,
		  struct ctl_plan *p)
{
	int n = ckpt_plan(c, job, version, &p->e, sizeof(*p->e));

	if (n < 0) {
		p->e = NULL;
		p->n = 0;
		return n;
	}
	p->n = n;
	qsort(p->e, (size_t)n, sizeof(*p->e), cmp_entry);
	return 0;
}

void ctl_plan_release(struct ctl_plan *p)
{
	free(p->e);
	p->e = NULL;
	p->n = 0;
}

const struct ckpt_plan_entry *ctl_plan_find(const struct ctl_plan *p,
					    const char *path)
{
	struct ckpt_plan_entry key;

	if (!p->e)
		return NULL;
	key.name = path;
	return bsearch(&key, p->e, (size_t)p->n, sizeof(*p->e), cmp_entry);
}

static int in_part(const struct ckpt_plan_entry *e, const char *part)
{
	return !part || !strcmp(e->node, part);
}

/* "local,shards,pfs" */
static const char *fmt_sources(char *buf, size_t cap, uint32_t sources)
{
	size_t len = 0;
	uint32_t s;

	buf[0] = '\0';
	for (s = CKPT_SRC_LOCAL; s <= CKPT_SRC_PFS; s++)
		if (sources & 1u << s)
			len += (size_t)snprintf(buf + len, len < cap ? cap - len : 0,
						"%s%s", len ? "," : "",
						ckpt_source_name(s));
	if (!len)
		snprintf(buf, cap, "-");
	return buf;
}

int ctl_plan_lost(const struct ctl_plan *p, const char *part)
{
	int i, n = 0;

	for (i = 0; i < p->n; i++)
		n += in_part(&p->e[i], part) &&
		     p->e[i].source == CKPT_SRC_NONE;
	return n;
}

void ctl_plan_report_lost(const struct ctl_plan *p, const char *part,
			  const char *job, const char *version)
{
	int i, shown = 0, lost = ctl_plan_lost(p, part);

	fprintf(stderr, "ckptctl: %s/%s is unrecoverable: %d of %d files have no source left\n",
		job, version, lost, p->n);
	for (i = 0; i < p->n && shown < 10; i++) {
		if (!in_part(&p->e[i], part) || p->e[i].source != CKPT_SRC_NONE)
			continue;
		fprintf(stderr, "  %s (part of %s): %s\n", p->e[i].name,
			p->e[i].node[0] ? p->e[i].node : "this node",
			p->e[i].why);
		shown++;
	}
	if (lost > shown)
		fprintf(stderr, "  ... and %d more\n", lost - shown);
}

int ctl_plan_print(struct ctl *ctl, const char *job, const char *version,
		   const struct ctl_plan *p, const char *part)
{
	static const char *const heads[] = { "PATH", "SIZE", "SOURCE", "NODE",
					     "FALLBACKS", "WHY" };
	char size[FMT_LEN], srcs[64];
	const char *cells[6];
	struct tbl t;
	struct jw w;
	int i, n = 0, err = 0;

	for (i = 0; i < p->n; i++)
		n += in_part(&p->e[i], part);
	if (part && !n)
		return ctl_failx("restore %s/%s: no file of the version is in a part of node '%s'",
				 job, version, part);
	if (ctl->json) {
		jw_init(&w, stdout);
		jw_obj(&w);
		jw_kstr(&w, "job", job);
		jw_kstr(&w, "version", version);
		jw_key(&w, "files");
		jw_arr(&w);
		for (i = 0; i < p->n; i++) {
			const struct ckpt_plan_entry *e = &p->e[i];

			if (!in_part(e, part))
				continue;
			jw_obj(&w);
			jw_kstr(&w, "path", e->name);
			jw_ku64(&w, "size", e->size);
			jw_kstr(&w, "source", ckpt_source_name(e->source));
			jw_kstr(&w, "sources",
				fmt_sources(srcs, sizeof(srcs), e->sources));
			jw_kstr(&w, "node", e->node);
			jw_kstr(&w, "why", e->why);
			jw_obj_end(&w);
		}
		jw_arr_end(&w);
		jw_ku64(&w, "lost", (uint64_t)ctl_plan_lost(p, part));
		jw_obj_end(&w);
		jw_done(&w);
	} else {
		tbl_init(&t, 6, heads, "lrllll");
		for (i = 0; i < p->n && !err; i++) {
			const struct ckpt_plan_entry *e = &p->e[i];

			if (!in_part(e, part))
				continue;
			cells[0] = e->name;
			cells[1] = fmt_size(size, e->size);
			cells[2] = e->source ? ckpt_source_name(e->source)
					     : "LOST";
			cells[3] = e->node[0] ? e->node : "-";
			cells[4] = fmt_sources(srcs, sizeof(srcs), e->sources);
			cells[5] = e->why;
			err = tbl_add(&t, cells);
		}
		if (!err)
			err = tbl_print(&t, stdout);
		tbl_release(&t);
		if (err)
			return ctl_fail(err, "restore --plan");
	}
	return ctl_plan_lost(p, part) ? CTL_EXIT_FAIL : CTL_EXIT_OK;
}

int ctl_plan_passed_over(struct ckpt_client *c, const char *job,
			 const char *chosen)
{
	struct ckpt_version_info *vs = NULL, *pick = NULL;
	struct ctl_plan p;
	int i, n, passed = 0;

	n = ckpt_list_versions2(c, job, &vs, sizeof(*vs));
	for (i = 0; i < n; i++)
		if (!strcmp(vs[i].version, chosen))
			pick = &vs[i];
	for (i = 0; pick && i < n; i++) {
		if (vs[i].state != CKPT_ST_SEALED ||
		    vs[i].sealed_ns <= pick->sealed_ns ||
		    ctl_plan_load(c, job, vs[i].version, &p) < 0)
			continue;
		if (ctl_plan_lost(&p, NULL)) {
			ctl_plan_report_lost(&p, NULL, job, vs[i].version);
			passed++;
		}
		ctl_plan_release(&p);
	}
	free(vs);
	return passed;
}
