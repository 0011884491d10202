/*
 * names.c - validation of job, version and file-path names.
 *
 * Names arrive from clients, manifests and FUSE and end up as parts of local
 * and PFS paths, so the rules are deliberately narrow: a component is 1..255
 * bytes from a fixed ASCII set ([A-Za-z0-9], '.', '_', '+', '-', '=', '@',
 * ','), never "." or "..", and components are joined by single '/'.  No
 * escapes, no multi-byte characters, no leading or trailing '/': a valid
 * name can never climb out of the directory it is joined to.
 */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "ckpt.h"
#include "names.h"

#define NAME_COMPONENT_MAX 255

static bool name_char_ok(unsigned char c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9'))
		return true;
	return c != '\0' && strchr("._+-=@,", c) != NULL;
}

/*
 * Check s as components separated by '/'; allow_slash false admits exactly
 * one component.  The total length must be 1..max bytes.
 */
static int name_check(const char *s, size_t max, bool allow_slash)
{
	size_t i, start = 0, n;

	if (!s)
		return -CKPT_EBADNAME;
	n = strnlen(s, max + 1);
	if (n == 0 || n > max)
		return -CKPT_EBADNAME;
	for (i = 0; i <= n; i++) {
		size_t clen = i - start;

		if (i < n && s[i] != '/') {
			if (!name_char_ok((unsigned char)s[i]))
				return -CKPT_EBADNAME;
			continue;
		}
		if (i < n && !allow_slash)
			return -CKPT_EBADNAME;
		/* s[i] ends a component: it must be non-empty, short, and not
		 * "." or "..". */
		if (clen == 0 || clen > NAME_COMPONENT_MAX)
			return -CKPT_EBADNAME;
		if (s[start] == '.' && (clen == 1 ||
					(clen == 2 && s[start + 1] == '.')))
			return -CKPT_EBADNAME;
		start = i + 1;
	}
	return 0;
}

int name_check_job(const char *job)
{
	return name_check(job, CKPT_JOB_MAX, true);
}

int name_check_version(const char *version)
{
	return name_check(version, CKPT_VERSION_MAX, false);
}

int name_check_path(const char *path)
{
	return name_check(path, CKPT_PATH_MAX, true);
}
