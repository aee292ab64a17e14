/*
 * cmd-rules.c: the rules options shared by argus graph, diagnose and
 * debug (--rules FILE, repeated, and --no-default-rules), and the rules
 * set they make.
 *
 * struct cmd_rules_opts gathers the options during getopt_long: the
 * files in the order given (pointers into argv) and whether to start
 * from the defaults.
 */
#include <stdlib.h>

#include "cmd.h"
#include "common/array.h"
#include "common/common.h"
#include "engine/engine.h"

int
cmd_rules_option(struct cmd_rules_opts *o, int c, const char *arg)
{
	if (c == CMD_OPT_RULES) {
		DGROW(o->files, o->cap, o->nfiles + 1, 4);
		o->files[o->nfiles++] = arg;
		return 1;
	}
	if (c == CMD_OPT_NO_DEFAULT_RULES) {
		o->no_defaults = 1;
		return 1;
	}
	return 0;
}

void
cmd_rules_opts_free(struct cmd_rules_opts *o)
{
	free(o->files);
	o->files = NULL;
	o->nfiles = o->cap = 0;
}

struct rules *
cmd_rules_load(const char *name, struct cmd_rules_opts *o)
{
	struct rules *rs = rules_new();
	char *cause = NULL;
	int err = o->no_defaults ? 0 : rules_add_defaults(rs, &cause);

	for (size_t i = 0; err == 0 && i < o->nfiles; i++)
		err = rules_load_file(rs, o->files[i], &cause);
	cmd_rules_opts_free(o);
	if (err == 0)
		return rs;
	cmd_error(name, "%s", cause ? cause : graph_strerror(err));
	free(cause);
	rules_free(rs);
	return NULL;
}
