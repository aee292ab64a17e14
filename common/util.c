/*
 * util.c: allocation wrappers, growable-array capacity, size and duration
 * parsing, formatting.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "array.h"
#include "common.h"

static void
oom(size_t size)
{
	fprintf(stderr, "argus: out of memory (allocating %zu bytes)\n", size);
	abort();
}

void *
xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (p == NULL)
		oom(size);
	return p;
}

void *
xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);

	if (p == NULL)
		oom(nmemb * size);
	return p;
}

void *
xrealloc(void *ptr, size_t size)
{
	void *p = realloc(ptr, size ? size : 1);

	if (p == NULL)
		oom(size);
	return p;
}

void *
xreallocarray(void *ptr, size_t nmemb, size_t size)
{
	if (size != 0 && nmemb > SIZE_MAX / size)
		oom(SIZE_MAX);
	return xrealloc(ptr, nmemb * size);
}

size_t
darr_cap(size_t cap, size_t need, size_t first)
{
	if (cap == 0)
		cap = first ? first : 1;
	while (cap < need) {
		if (cap > SIZE_MAX / 2)
			oom(SIZE_MAX);
		cap *= 2;
	}
	return cap;
}

size_t
darr_cap_big(size_t cap, size_t need, size_t first, size_t size)
{
	if (cap == 0)
		cap = first ? first : 1;
	while (cap < need) {
		if (cap > SIZE_MAX / 2)
			oom(SIZE_MAX);
		cap += size != 0 && cap > DARR_BIG / size ? cap / 2 : cap;
	}
	return cap;
}

char *
xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;

	return memcpy(xmalloc(n), s, n);
}

char *
xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		oom(strlen(fmt));
	va_end(ap);
	return s;
}

int
parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (s == NULL || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return -1;
	*out = v;
	return 0;
}

int
parse_size(const char *s, uint64_t *out)
{
	char *end;
	double v;
	uint64_t mul = 1;

	if (s == NULL || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s)
		return -1;
	switch (*end) {
	case 'k': case 'K': mul = 1ULL << 10; end++; break;
	case 'm': case 'M': mul = 1ULL << 20; end++; break;
	case 'g': case 'G': mul = 1ULL << 30; end++; break;
	case 't': case 'T': mul = 1ULL << 40; end++; break;
	default: break;
	}
	if (mul != 1 && *end == 'i')
		end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end != '\0')
		return -1;
	v *= (double)mul;
	if (v >= 18446744073709551615.0 || v < 0)
		return -1;
	*out = (uint64_t)v;
	return 0;
}

int
parse_duration(const char *s, uint64_t *out_ns)
{
	char *end;
	double v, mul = 1e9;

	if (s == NULL || ((*s < '0' || *s > '9') && *s != '.'))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || v < 0)
		return -1;
	if (*end == '\0' || strcmp(end, "s") == 0)
		mul = 1e9;
	else if (strcmp(end, "ms") == 0)
		mul = 1e6;
	else if (strcmp(end, "us") == 0)
		mul = 1e3;
	else if (strcmp(end, "ns") == 0)
		mul = 1;
	else if (strcmp(end, "m") == 0 || strcmp(end, "min") == 0)
		mul = 60e9;
	else if (strcmp(end, "h") == 0)
		mul = 3600e9;
	else
		return -1;
	v *= mul;
	if (v >= 18446744073709551615.0)
		return -1;
	*out_ns = (uint64_t)(v + 0.5);
	return 0;
}

int
parse_time_at(const char *s, uint64_t base, uint64_t *out)
{
	uint64_t v;

	if (s[0] == '@') {
		if (parse_u64(s + 1, &v) != 0)
			return -1;
		*out = v;
		return 0;
	}
	if (parse_duration(s, &v) != 0)
		return -1;
	*out = base + v;
	return 0;
}

const char *
fmt_bytes(char *buf, size_t len, uint64_t bytes)
{
	static const char *units[] = { "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	int u = -1;

	if (bytes < 1024) {
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
		return buf;
	}
	while (v >= 1024 && u < 3) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%.1f %s", v, units[u]);
	return buf;
}

const char *
fmt_duration(char *buf, size_t len, uint64_t ns)
{
	if (ns >= 1000000000ULL)
		snprintf(buf, len, "%.3f s", (double)ns / 1e9);
	else if (ns >= 1000000ULL)
		snprintf(buf, len, "%.3f ms", (double)ns / 1e6);
	else if (ns >= 1000ULL)
		snprintf(buf, len, "%.1f us", (double)ns / 1e3);
	else
		snprintf(buf, len, "%llu ns", (unsigned long long)ns);
	return buf;
}

uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t
fnv64(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ULL;
	return h;
}
