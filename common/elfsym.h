/*
 * elfsym.h: symbol lookup in ELF files for argus probe and argus watch
 * (compiled into the argus binary, not into libargus.so).
 *
 * A lookup maps the file read-only, walks .symtab then .dynsym and
 * returns the symbol's link-time address and size, plus the file offset
 * of that address (through the PT_LOAD headers), which is what uprobes
 * want. elfsym_runtime() turns a link-time address of a file mapped by a
 * live process into the address in that process.
 */
#ifndef ARGUS_ELFSYM_H
#define ARGUS_ELFSYM_H

#include <stdint.h>
#include <sys/types.h>

struct elfsym {
	uint64_t vaddr;		/* link-time address */
	uint64_t size;
	uint64_t offset;	/* file offset of vaddr (uprobe offset) */
	int is_func;		/* STT_FUNC (or IFUNC) */
};

/*
 * Look sym up in the ELF file at path. Returns 0 and *out; ENOENT if the
 * symbol is absent, ENOEXEC if the file is not a 64-bit ELF file, or an
 * errno value from opening the file.
 */
int elfsym_lookup(const char *path, const char *sym, struct elfsym *out);

/*
 * File offset of a link-time address vaddr in path (through PT_LOAD).
 * Returns 0 and *off, or an errno value (ERANGE: not in a segment).
 */
int elfsym_vaddr_to_offset(const char *path, uint64_t vaddr, uint64_t *off);

/*
 * Address in process pid of the link-time address vaddr of the file
 * mapped from path (the path as /proc/PID/maps shows it). Returns 0 and
 * *addr, ESRCH if the process is gone, ENOENT if the file is not mapped.
 */
int elfsym_runtime(pid_t pid, const char *path, uint64_t vaddr,
    uint64_t *addr);

/*
 * Look sym up in the executable of pid, then in every file it maps;
 * returns 0 with the runtime address and size, or ESRCH / ENOENT.
 * file (if not NULL, size filelen) receives the defining file's path.
 */
int elfsym_in_process(pid_t pid, const char *sym, uint64_t *addr,
    uint64_t *size, char *file, size_t filelen);

#endif
