/*
 * elfaddr.h: mapping ELF files, and the reverse of a symbol lookup, for symbolizing recorded
 * stacks offline: which function of an ELF file holds a file offset.
 *
 * struct elfaddr is one file's function symbols (.symtab, else .dynsym)
 * sorted by link-time address, with its PT_LOAD headers to turn a file
 * offset (what a recorded mapping gives: address - start + pgoff) into a
 * link-time address. Names are copied: the file is not kept open.
 */
#ifndef ARGUS_ELFADDR_H
#define ARGUS_ELFADDR_H

#include <stddef.h>
#include <stdint.h>

/* A read-only mapping of a whole 64-bit ELF file. */
struct elf_file {
	const unsigned char *p;
	size_t size;
};

/*
 * Map the file at path after checking its ELF64 header. Returns 0, ENOEXEC
 * when it is not a 64-bit ELF file, or an errno value.
 */
int elf_file_map(const char *path, struct elf_file *f);
void elf_file_unmap(struct elf_file *f);

struct elfaddr;

/* Where detached debug files are looked up by build id
   ($ARGUS_DEBUG_DIR overrides it). */
#define ELFADDR_DEBUG_DIR "/usr/lib/debug"

/*
 * Read the function symbols of the 64-bit ELF file at path (its
 * .symtab; for a stripped file, those of its debug file found by build
 * id under ELFADDR_DEBUG_DIR, else its .dynsym). Returns 0 and
 * *out, ENOEXEC if it is not such a file (or has no function symbols),
 * or an errno value from opening it.
 */
int elfaddr_open(const char *path, struct elfaddr **out);
void elfaddr_free(struct elfaddr *e);

/*
 * The function holding file offset off, or NULL; *delta is off's
 * distance from the function's start. *fp (when fp is not NULL) says
 * whether the function sets up a frame pointer: 1 it does, 0 it does not
 * (so a stack unwound by frame pointers skips its caller), -1 unknown.
 */
const char *elfaddr_at_offset(const struct elfaddr *e, uint64_t off,
    uint64_t *delta, int *fp);

#endif
