/*
 * test-rules.c: criterion tests of the rules file parser (argus-rules(5)).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine.h"

Test(rules, defaults_parse)
{
	struct rules *rs = rules_new();

	cr_assert_eq(rules_add_defaults(rs, NULL), 0);
	cr_assert_gt(rules_count(rs), 5);
	rules_free(rs);
}

Test(rules, every_verb)
{
	struct rules *rs = rules_new();
	char *cause = NULL;
	const char *text =
	    "# a comment line\n"
	    "\n"
	    "split event user:mark=frame   # trailing comment\n"
	    "split event sys_enter:futex\n"
	    "split symbol g_main_dispatch\n"
	    "batch process dbus-daemon\n"
	    "ignore process gnome-*\n"
	    "ignore thread kworker/*\n"
	    "ignore wakeup irq_entry=eth0\n"
	    "cull process systemd\n"
	    "cull thread rcu_*\n"
	    "cull wakeup timer_expire\n"
	    "connect user:flag_write user:flag_read key\n"
	    "connect user:probe=a user:probe=b any\n"
	    "input read:tty\n"
	    "\tinput  user:input\r\n";

	cr_assert_eq(rules_parse(rs, text, "x.rules", &cause), 0, "%s",
	    cause ? cause : "");
	cr_assert_eq(rules_count(rs), 14);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	rules_write(rs, f);
	fclose(f);
	cr_assert(strstr(buf, "input user:input\n") != NULL);
	cr_assert(strstr(buf, "#") == NULL);
	free(buf);
	rules_free(rs);
}

static void
expect_error(const char *text, const char *want)
{
	struct rules *rs = rules_new();
	char *cause = NULL;

	rules_parse(rs, "batch process x\n", "ok", NULL);
	cr_assert_eq(rules_parse(rs, text, "my.rules", &cause), GRAPH_ESYNTAX,
	    "'%s' must be refused", text);
	cr_assert_not_null(cause);
	cr_assert(strncmp(cause, want, strlen(want)) == 0,
	    "got '%s', want '%s...'", cause, want);
	cr_assert_eq(rules_count(rs), 1, "nothing applied half-way");
	free(cause);
	rules_free(rs);
}

Test(rules, errors_name_file_line_column)
{
	expect_error("frobnicate all\n", "my.rules:1:1: unknown rule");
	expect_error("batch process a\n  split event nosuch\n",
	    "my.rules:2:15: unknown event type 'nosuch'");
	expect_error("split event user:nokind\n",
	    "my.rules:1:18: unknown user event kind");
	expect_error("input read:floppy", "my.rules:1:12: unknown fd kind");
	expect_error("split event user:mark=\n", "my.rules:1:23: expected a "
	    "name");
	expect_error("split\n", "my.rules:1:7: expected");
	expect_error("batch thread x\n", "my.rules:1:7: expected 'process'");
	expect_error("cull wakeup\n", "my.rules:1:13: expected");
	expect_error("connect user:flag_write user:flag_read maybe\n",
	    "my.rules:1:40: expected 'key' or 'any'");
	expect_error("input user:input extra\n", "my.rules:1:18: unexpected "
	    "'extra'");
	expect_error("cull nothing x\n", "my.rules:1:6: expected");
	expect_error("split event sys_exit:nosyscall\n",
	    "my.rules:1:22: unknown syscall");
}

Test(rules, load_file)
{
	char path[] = "/tmp/argus-rules-XXXXXX";
	int fd = mkstemp(path);
	char *cause = NULL;
	struct rules *rs = rules_new();

	cr_assert_geq(fd, 0);
	const char *text = "split symbol a\nsplit symbol\n";
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	cr_assert_eq(rules_load_file(rs, path, &cause), GRAPH_ESYNTAX);
	char want[128];
	snprintf(want, sizeof(want), "%s:2:", path);
	cr_assert(strncmp(cause, want, strlen(want)) == 0, "%s", cause);
	cr_assert_eq(rules_count(rs), 0);
	free(cause);
	cause = NULL;
	unlink(path);
	cr_assert_neq(rules_load_file(rs, path, &cause), 0);
	cr_assert(strstr(cause, path) != NULL);
	free(cause);
	rules_free(rs);
}
