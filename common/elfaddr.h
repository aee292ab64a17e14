/*
 * elfaddr.h: the reverse of a symbol lookup, for symbolizing recorded
 * stacks offline: which function of an ELF file holds a file offset.
 *
 * struct elfaddr is one file's function symbols (.symtab, else .dynsym)
 * sorted by link-time address, with its PT_LOAD headers to turn a file
 * offset (what a recorded mapping gives: address - start + pgoff) into a
 * link-time address. Names are copied: the file is not kept open.
 */
#ifndef ARGUS_ELFADDR_H
#define ARGUS_ELFADDR_H

#include <stdint.h>

struct elfaddr;

/*
 * Read the function symbols of the 64-bit ELF file at path. Returns 0 and
 * *out, ENOEXEC if it is not such a file (or has no function symbols),
 * or an errno value from opening it.
 */
int elfaddr_open(const char *path, struct elfaddr **out);
void elfaddr_free(struct elfaddr *e);

/*
 * The function holding file offset off, or NULL; *delta is off's
 * distance from the function's start.
 */
const char *elfaddr_at_offset(const struct elfaddr *e, uint64_t off,
    uint64_t *delta);

#endif
