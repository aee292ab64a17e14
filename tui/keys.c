/*
 * keys.c: the one key table of the debugger and the table of commands of
 * its command line. Each key row is {key, name, action, help}; several
 * keys may share an action. The help screen, `argus debug --list-keys`
 * and the man page check are all generated from these tables.
 */
#include "tui-local.h"

#define CTRL(c) ((c) & 0x1f)

const struct key_binding tui_keys[] = {
	{ 'q', "q", AC_QUIT, "quit (close the help or text screen first)" },
	{ '?', "?", AC_HELP, "show this help, generated from the key table" },
	{ '\t', "Tab", AC_NEXT_PANE, "focus the next pane" },
	{ KEY_BTAB, "S-Tab", AC_PREV_PANE, "focus the previous pane" },
	{ 'z', "z", AC_ZOOM_PANE, "show the focused pane alone (again: all)" },
	{ CTRL('L'), "C-l", AC_REDRAW, "redraw the screen" },
	{ ':', ":", AC_COMMAND, "open the command line (see COMMANDS)" },
	{ '/', "/", AC_SEARCH, "search the focused pane (lanes: thread names)" },
	{ 'n', "n", AC_SEARCH_NEXT, "next match of the last search" },
	{ 'N', "N", AC_SEARCH_PREV, "previous match of the last search" },
	{ 'k', "k", AC_UP, "move up (previous lane, row or candidate)" },
	{ KEY_UP, "Up", AC_UP, "move up" },
	{ 'j', "j", AC_DOWN, "move down (next lane, row or candidate)" },
	{ KEY_DOWN, "Down", AC_DOWN, "move down" },
	{ 'h', "h", AC_LEFT, "move the cursor left one column" },
	{ KEY_LEFT, "Left", AC_LEFT, "move the cursor left one column" },
	{ 'l', "l", AC_RIGHT, "move the cursor right one column" },
	{ KEY_RIGHT, "Right", AC_RIGHT, "move the cursor right one column" },
	{ KEY_PPAGE, "PgUp", AC_PAGE_UP, "page up" },
	{ CTRL('B'), "C-b", AC_PAGE_UP, "page up" },
	{ KEY_NPAGE, "PgDn", AC_PAGE_DOWN, "page down" },
	{ CTRL('F'), "C-f", AC_PAGE_DOWN, "page down" },
	{ ' ', "Space", AC_PAGE_DOWN, "page down" },
	{ 'g', "g", AC_FIRST, "first row; timeline: trace start" },
	{ KEY_HOME, "Home", AC_FIRST, "first row; timeline: trace start" },
	{ 'G', "G", AC_LAST, "last row; timeline: trace end" },
	{ KEY_END, "End", AC_LAST, "last row; timeline: trace end" },
	{ 'H', "H", AC_PAN_LEFT, "pan the timeline half a screen left" },
	{ 'L', "L", AC_PAN_RIGHT, "pan the timeline half a screen right" },
	{ '<', "<", AC_PREV_VERTEX, "previous vertex of the thread" },
	{ '>', ">", AC_NEXT_VERTEX, "next vertex of the thread" },
	{ '+', "+", AC_ZOOM_IN, "zoom in around the cursor" },
	{ '=', "=", AC_ZOOM_IN, "zoom in around the cursor" },
	{ '-', "-", AC_ZOOM_OUT, "zoom out around the cursor" },
	{ '0', "0", AC_ZOOM_ALL, "zoom out to the whole trace" },
	{ '\n', "Enter", AC_ENTER, "confirm the candidate, open the vertex "
	  "or row" },
	{ KEY_ENTER, "KEnter", AC_ENTER, "confirm or open (keypad)" },
	{ 'w', "w", AC_WAKER, "step to the waker (back along the chain)" },
	{ 'W', "W", AC_WAKEE, "step to what this vertex wakes (forward)" },
	{ '[', "[", AC_BACK, "back in the navigation history" },
	{ ']', "]", AC_FORWARD, "forward in the navigation history" },
	{ 'r', "r", AC_RECURSE, "recurse: diagnose the selected culprit" },
	{ 's', "s", AC_TOGGLE_SLICE, "slice-diff pane: switch diff and slice" },
	{ 'x', "x", AC_SPINNING, "back to the spinning node of the hang" },
	{ 'p', "p", AC_CPATH, "the hang's critical path (Enter: go to a "
	  "step; p, q: close)" },
	{ 'f', "f", AC_FOLD, "fold or show idle kernel threads and the "
	  "recorder" },
	{ '}', "}", AC_NEXT_HANG, "next hang" },
	{ '{', "{", AC_PREV_HANG, "previous hang" },
};
const size_t tui_nkeys = ARRAY_SIZE(tui_keys);

const struct tui_command tui_commands[] = {
	{ "goto", "TIME|#VERTEX|TID@TIME", "move to a time (seconds from the "
	  "start, @NS absolute) or a vertex" },
	{ "thread", "NAME|TID", "make a thread current (its lane first)" },
	{ "filter", "[PATTERN]", "show only lanes whose name matches "
	  "(none: all)" },
	{ "diagnose", "", "diagnose again from the vertex at the cursor" },
	{ "hang", "N", "open hang N" },
	{ "hangs", "[N]", "a big trace opened on its end: the hangs of the "
	  "whole trace, or load and open hang N of them" },
	{ "pick", "N", "confirm similar candidate N (1-based)" },
	{ "slice", "", "show the baseline slice in the slice-diff pane" },
	{ "diff", "", "show the slice diff in the slice-diff pane" },
	{ "rule", "add LINE", "add a rule, rebuild the graph and the "
	  "diagnosis in place" },
	{ "rules", "", "show the rules in force" },
	{ "report", "", "show the text report of every hang" },
	{ "write", "FILE", "save the report to FILE; FILE.json: the window as "
	  "JSON for Perfetto" },
	{ "help", "", "show the help screen" },
	{ "quit", "", "quit" },
};
const size_t tui_ncommands = ARRAY_SIZE(tui_commands);

enum action
tui_key_action(int key)
{
	if (key == '\r')
		key = '\n';
	for (size_t i = 0; i < tui_nkeys; i++)
		if (tui_keys[i].key == key)
			return tui_keys[i].action;
	return AC_NONE;
}

void
tui_list_keys(FILE *f)
{
	for (size_t i = 0; i < tui_nkeys; i++)
		fprintf(f, "%s\t%s\n", tui_keys[i].name, tui_keys[i].help);
	fprintf(f, "commands\n");
	for (size_t i = 0; i < tui_ncommands; i++)
		fprintf(f, "%s\t%s\n", tui_commands[i].name,
		    tui_commands[i].help);
}
