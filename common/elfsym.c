/*
 * elfsym.c: ELF symbol lookup (see elfsym.h). The file is mapped
 * read-only for the duration of one call; every offset read from it is
 * bounds-checked against the file size, so a damaged file gives ENOEXEC,
 * never a fault.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfaddr.h"
#include "elfsym.h"
#include "procmaps.h"

static int
in_file(const struct elf_file *m, uint64_t off, uint64_t len)
{
	return off <= m->size && len <= m->size - off;
}

static int
phdr_offset(const struct elf_file *m, uint64_t vaddr, uint64_t *off)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)m->p;

	if (!in_file(m, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr)))
		return ENOEXEC;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(m->p + eh->e_phoff);
	for (unsigned i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && vaddr >= ph[i].p_vaddr &&
		    vaddr < ph[i].p_vaddr + ph[i].p_memsz) {
			*off = vaddr - ph[i].p_vaddr + ph[i].p_offset;
			return 0;
		}
	return ERANGE;
}

static uint64_t
first_load_vaddr(const struct elf_file *m)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)m->p;

	if (!in_file(m, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr)))
		return 0;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(m->p + eh->e_phoff);
	for (unsigned i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD)
			return ph[i].p_vaddr & ~(uint64_t)0xfff;
	return 0;
}

static int
find_in(const struct elf_file *m, unsigned type, const char *sym,
    struct elfsym *out)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)m->p;

	if (!in_file(m, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr)))
		return ENOEXEC;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(m->p + eh->e_shoff);
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != type || sh[i].sh_link >= eh->e_shnum)
			continue;
		const Elf64_Shdr *str = &sh[sh[i].sh_link];
		if (!in_file(m, sh[i].sh_offset, sh[i].sh_size) ||
		    !in_file(m, str->sh_offset, str->sh_size))
			return ENOEXEC;
		const Elf64_Sym *s = (const Elf64_Sym *)(m->p + sh[i].sh_offset);
		size_t n = sh[i].sh_size / sizeof(*s);
		const char *names = (const char *)m->p + str->sh_offset;
		size_t want = strlen(sym);
		for (size_t j = 0; j < n; j++) {
			if (s[j].st_name >= str->sh_size ||
			    s[j].st_shndx == SHN_UNDEF || s[j].st_value == 0)
				continue;
			const char *nm = names + s[j].st_name;
			size_t room = str->sh_size - s[j].st_name;
			if (want >= room || strncmp(nm, sym, want) != 0 ||
			    (nm[want] != 0 && nm[want] != '@'))
				continue;
			unsigned t = ELF64_ST_TYPE(s[j].st_info);
			out->vaddr = s[j].st_value;
			out->size = s[j].st_size;
			out->is_func = t == STT_FUNC || t == STT_GNU_IFUNC;
			return 0;
		}
	}
	return ENOENT;
}

int
elfsym_lookup(const char *path, const char *sym, struct elfsym *out)
{
	struct elf_file m;
	int err = elf_file_map(path, &m);

	if (err)
		return err;
	err = find_in(&m, SHT_SYMTAB, sym, out);
	if (err == ENOENT)
		err = find_in(&m, SHT_DYNSYM, sym, out);
	if (err == 0 && phdr_offset(&m, out->vaddr, &out->offset) != 0)
		out->offset = out->vaddr;
	elf_file_unmap(&m);
	return err;
}

int
elfsym_vaddr_to_offset(const char *path, uint64_t vaddr, uint64_t *off)
{
	struct elf_file m;
	int err = elf_file_map(path, &m);

	if (err)
		return err;
	err = phdr_offset(&m, vaddr, off);
	elf_file_unmap(&m);
	return err;
}

struct map_walk {
	int (*fn)(void *, uint64_t, uint64_t, const char *);
	void *ctx;
};

static int
file_map(void *c, const struct procmap *m)
{
	struct map_walk *w = c;

	return m->path[0] == '/' ? w->fn(w->ctx, m->start, m->off, m->path) :
	    0;
}

/* Call fn for each file-backed mapping line of pid; stop when it returns 1. */
static int
each_map(pid_t pid, int (*fn)(void *, uint64_t, uint64_t, const char *),
    void *ctx)
{
	struct map_walk w = { fn, ctx };
	int found = procmap_each(pid, file_map, &w);

	if (found < 0)
		return ESRCH;
	return found ? 0 : ENOENT;
}

struct base_ctx {
	const char *path;
	uint64_t start;
};

static int
base_fn(void *c, uint64_t start, uint64_t off, const char *file)
{
	struct base_ctx *b = c;

	if (off != 0 || strcmp(file, b->path) != 0)
		return 0;
	b->start = start;
	return 1;
}

int
elfsym_runtime(pid_t pid, const char *path, uint64_t vaddr, uint64_t *addr)
{
	struct base_ctx b = { path, 0 };
	struct elf_file m;
	const Elf64_Ehdr *eh;
	int err = each_map(pid, base_fn, &b);

	if (err)
		return err;
	if ((err = elf_file_map(path, &m)) != 0)
		return err;
	eh = (const Elf64_Ehdr *)m.p;
	if (eh->e_type == ET_EXEC)
		*addr = vaddr;
	else
		*addr = b.start - first_load_vaddr(&m) + vaddr;
	elf_file_unmap(&m);
	return 0;
}

struct sym_ctx {
	pid_t pid;
	const char *sym;
	uint64_t addr, size;
	char *file;
	size_t filelen;
};

static int
sym_fn(void *c, uint64_t start, uint64_t off, const char *file)
{
	struct sym_ctx *s = c;
	struct elfsym es;

	(void)start;
	if (off != 0 || elfsym_lookup(file, s->sym, &es) != 0)
		return 0;
	if (elfsym_runtime(s->pid, file, es.vaddr, &s->addr) != 0)
		return 0;
	s->size = es.size;
	if (s->file)
		snprintf(s->file, s->filelen, "%s", file);
	return 1;
}

int
elfsym_in_process(pid_t pid, const char *sym, uint64_t *addr,
    uint64_t *size, char *file, size_t filelen)
{
	struct sym_ctx s = { pid, sym, 0, 0, file, filelen };
	char exe[64], real[4096];
	ssize_t n;
	int err;

	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	n = readlink(exe, real, sizeof(real) - 1);
	if (n < 0)
		return errno == ENOENT ? ESRCH : errno;
	real[n] = 0;
	/* the executable first, then every mapped file in maps order */
	if (sym_fn(&s, 0, 0, real) == 0)
		err = each_map(pid, sym_fn, &s);
	else
		err = 0;
	if (err)
		return err;
	*addr = s.addr;
	*size = s.size;
	return 0;
}
