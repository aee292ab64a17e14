/*
 * common.h: small helpers shared by every part of argus.
 *
 * Memory helpers abort on allocation failure (the only place argus aborts);
 * parsers return 0 on success and -1 on malformed input, never exit.
 */
#ifndef ARGUS_COMMON_H
#define ARGUS_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define ARGUS_VERSION "0.1.0"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define UNUSED __attribute__((unused))
#define PRINTFLIKE(f, a) __attribute__((format(printf, f, a)))

/* Allocation wrappers: never return NULL; abort with a message on OOM. */
void *xmalloc(size_t size);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *ptr, size_t size);
/* realloc of nmemb elements of size bytes; aborts on overflow or OOM. */
void *xreallocarray(void *ptr, size_t nmemb, size_t size);
char *xstrdup(const char *s);
/* Allocated printf; never NULL. */
char *xasprintf(const char *fmt, ...) PRINTFLIKE(1, 2);

/*
 * Parse "64M", "2G", "512k", "1048576" (binary units, optional "iB"/"B").
 * Returns 0 and stores bytes, or -1 on a malformed or overflowing value.
 */
int parse_size(const char *s, uint64_t *out);
/*
 * Parse a duration in seconds with an optional unit: "1.5", "250ms",
 * "10s", "2m", "1h", "800us", "100ns". Stores nanoseconds.
 */
int parse_duration(const char *s, uint64_t *out_ns);
/*
 * Parse a time given by a user: seconds after base with an optional unit
 * ("1.5", "250ms"), or absolute nanoseconds after '@' ("@123456").
 */
int parse_time_at(const char *s, uint64_t base, uint64_t *out);
/* Parse an unsigned decimal integer fitting in 64 bits. */
int parse_u64(const char *s, uint64_t *out);

/* Format bytes as "12.3 MiB" into buf (at least 16 bytes). */
const char *fmt_bytes(char *buf, size_t len, uint64_t bytes);
/* Format a duration in ns as "1.234 s", "12.5 ms", "800 us". */
const char *fmt_duration(char *buf, size_t len, uint64_t ns);

/* Monotonic clock in nanoseconds. */
uint64_t now_ns(void);

/* The 64-bit FNV-1a hash of n bytes at p. */
uint64_t fnv64(const void *p, size_t n);
/*
 * Sort key[] (and idx[] along with it) by the low bits of each key,
 * stably (common/radix.c): sorting by a second key first, then by a
 * first, sorts by both.
 */
void radix_sort64(uint64_t *key, uint32_t *idx, size_t n, unsigned bits);
/* Sort n records of size bytes at v by the key first() gives (its low
   first_bits), records alike there by then() (then_bits), stably. */
void radix_sort_records(void *v, size_t n, size_t size,
    uint64_t (*first)(const void *), unsigned first_bits,
    uint64_t (*then)(const void *), unsigned then_bits);

/*
 * Open PATH (relative to DIRFD, as openat) for writing (FLAGS: O_WRONLY
 * or O_RDWR, with O_TRUNC to empty a file it replaces), never through a
 * symbolic link at its end. A new file is created with MODE (less the
 * umask). An existing one is used only if it is a regular file of the
 * effective user with a single link, or a character device with a single
 * link (/dev/null; written to, not truncated). Returns the descriptor
 * (close-on-exec), or -1 with *WHY saying why in a few words.
 */
int out_open(int dirfd, const char *path, int flags, mode_t mode,
    const char **why);
/* out_open(AT_FDCWD, PATH, O_WRONLY | O_TRUNC, 0666) as a stdio stream. */
FILE *out_fopen(const char *path, const char **why);

#endif
