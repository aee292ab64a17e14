/*
 * fuzz-rules.c: libFuzzer target for the rules parser (argus-rules(5)),
 * which reads files a person wrote or was handed. The input is a rules
 * file: it is read through rules_load_file (the size bound, the NUL
 * check) and parsed as text by rules_parse; each must accept it or
 * refuse it with an error naming a line, and an accepted set must write
 * itself back out and parse again.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "engine/engine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	struct rules *rs, *again;
	char *cause = NULL, *text, *out = NULL;
	size_t outlen = 0;
	FILE *f;

	if (fd < 0) {
		fd = memfd_create("argus-fuzz-rules", 0);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	rs = rules_new();
	if (rules_load_file(rs, path, &cause) != 0 && cause == NULL)
		abort();		/* an error always says why */
	free(cause);
	cause = NULL;
	rules_free(rs);

	text = malloc(size + 1);
	if (text == NULL)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	rs = rules_new();
	if (rules_parse(rs, text, "fuzz", &cause) == 0) {
		/* what was accepted writes out as rules that parse again */
		f = open_memstream(&out, &outlen);
		if (f == NULL)
			abort();
		rules_write(rs, f);
		fclose(f);
		again = rules_new();
		if (rules_parse(again, out, "again", NULL) != 0 ||
		    rules_count(again) != rules_count(rs))
			abort();
		rules_free(again);
		free(out);
	} else if (cause == NULL || strncmp(cause, "fuzz:", 5) != 0) {
		abort();
	}
	free(cause);
	free(text);
	rules_free(rs);
	return 0;
}
