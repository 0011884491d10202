/*
 * ctl_nodes.c - the node table of `ckptctl status` in a cluster: each node
 * as the daemon asked sees it (ckpt_list_nodes()), as an aligned table
 * (NODE STATE SINCE HEARD ERROR) or as the "nodes" array of --json.
 *
 * Durations are ages ("12.4 s" ago), as ckptd reports them: they do not
 * depend on the clocks of the two hosts agreeing.
 */
#include <stdio.h>

#include "ctl.h"
#include "ctl_fmt.h"
#include "ctl_json.h"

static const char *node_state_name(uint32_t state)
{
	switch (state) {
	case CKPT_NODE_DOWN:
		return "DOWN";
	case CKPT_NODE_CONNECTING:
		return "CONNECTING";
	case CKPT_NODE_UP:
		return "UP";
	case CKPT_NODE_SELF:
		return "SELF";
	default:
		return "?";
	}
}

/* "12.4 s ago", or "never". */
static char *fmt_ago(char *buf, uint64_t ms)
{
	char d[FMT_LEN];

	if (ms == CKPT_NODE_NEVER)
		snprintf(buf, FMT_LEN, "never");
	else
		snprintf(buf, FMT_LEN, "%s ago", fmt_dur(d, ms * 1000000u));
	return buf;
}

int ctl_nodes_text(const struct ckpt_node_info *nodes, int n)
{
	static const char *const heads[] = { "NODE", "STATE", "SINCE", "HEARD",
					     "ERROR" };
	char since[FMT_LEN], heard[FMT_LEN];
	const char *cells[5];
	struct tbl t;
	int i, err = 0;

	tbl_init(&t, 5, heads, "lllll");
	for (i = 0; i < n && !err; i++) {
		const struct ckpt_node_info *x = &nodes[i];

		cells[0] = x->name;
		cells[1] = node_state_name(x->state);
		cells[2] = fmt_ago(since, x->since_ms_ago);
		cells[3] = x->state == CKPT_NODE_SELF ? "-"
						       : fmt_ago(heard, x->heard_ms_ago);
		cells[4] = x->last_error ? ckpt_strerror(x->last_error) : "-";
		err = tbl_add(&t, cells);
	}
	if (!err)
		err = tbl_print(&t, stdout);
	tbl_release(&t);
	return err;
}

void ctl_nodes_json(struct jw *w, const struct ckpt_node_info *nodes, int n)
{
	const struct ckpt_node_info *x;
	int i;

	jw_key(w, "nodes");
	jw_arr(w);
	for (i = 0; i < n; i++) {
		x = &nodes[i];
		jw_obj(w);
		jw_kstr(w, "name", x->name);
		jw_kstr(w, "domain", x->domain);
		jw_kstr(w, "state", node_state_name(x->state));
		jw_ku64(w, "since_ms_ago", x->since_ms_ago);
		jw_key(w, "heard_ms_ago");
		if (x->heard_ms_ago == CKPT_NODE_NEVER)
			jw_null(w);
		else
			jw_u64(w, x->heard_ms_ago);
		jw_ki64(w, "last_errno", x->last_error);
		jw_kstr(w, "last_error",
			x->last_error ? ckpt_strerror(x->last_error) : "");
		jw_ku64(w, "lag_ms", x->lag_ms);
		jw_ku64(w, "queued_bytes", x->queued_bytes);
		jw_obj_end(w);
	}
	jw_arr_end(w);
}
