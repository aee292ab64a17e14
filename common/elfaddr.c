/*
 * elfaddr.c: function lookup by file offset in ELF files (see elfaddr.h).
 *
 * The file is mapped read-only while elfaddr_open() reads it; every
 * offset taken from it is checked against the file size, so a damaged
 * file gives ENOEXEC, never a fault. The result keeps a sorted array of
 * (address, size, name, whether it sets up a frame pointer) and a copy
 * of the PT_LOAD headers. A stripped file's symbols come from its
 * detached debug file when one is installed (found by its build id),
 * else from its dynamic symbol table.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"
#include "elfaddr.h"

struct efunc {
	uint64_t addr, size;
	char *name;
	int fp;		/* elfaddr_at_offset()'s *fp */
};

struct eload {
	uint64_t off, filesz, vaddr;
};

struct elfaddr {
	struct efunc *fn;
	size_t nfn;
	struct eload *ld;
	size_t nld;
};

static int
fits(size_t size, uint64_t off, uint64_t len)
{
	return off <= size && len <= size - off;
}

static int
by_addr(const void *x, const void *y)
{
	const struct efunc *a = x, *b = y;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/* Function symbols of the first section of type type; 0 when none. */
static size_t
read_syms(const unsigned char *p, size_t size, unsigned type,
    struct elfaddr *e)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)p;

	if (!fits(size, eh->e_shoff, (uint64_t)eh->e_shnum *
	    sizeof(Elf64_Shdr)))
		return 0;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(p + eh->e_shoff);
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != type || sh[i].sh_link >= eh->e_shnum)
			continue;
		const Elf64_Shdr *str = &sh[sh[i].sh_link];
		if (!fits(size, sh[i].sh_offset, sh[i].sh_size) ||
		    !fits(size, str->sh_offset, str->sh_size))
			return 0;
		const Elf64_Sym *s = (const Elf64_Sym *)(p + sh[i].sh_offset);
		const char *names = (const char *)p + str->sh_offset;
		size_t n = sh[i].sh_size / sizeof(*s);
		e->fn = xreallocarray(NULL, n ? n : 1, sizeof(*e->fn));
		for (size_t j = 0; j < n; j++) {
			unsigned t = ELF64_ST_TYPE(s[j].st_info);
			if ((t != STT_FUNC && t != STT_GNU_IFUNC) ||
			    s[j].st_shndx == SHN_UNDEF || s[j].st_value == 0 ||
			    s[j].st_name >= str->sh_size)
				continue;
			const char *nm = names + s[j].st_name;
			size_t len = strnlen(nm, str->sh_size - s[j].st_name);
			/* "sem_post@@GLIBC_2.34": the function, not the
			   version of it */
			const char *at = memchr(nm, '@', len);
			if (at != NULL && at > nm)
				len = (size_t)(at - nm);
			struct efunc *f = &e->fn[e->nfn++];
			f->addr = s[j].st_value;
			f->size = s[j].st_size;
			f->name = xmalloc(len + 1);
			memcpy(f->name, nm, len);
			f->name[len] = '\0';
		}
		return e->nfn;
	}
	return 0;
}

int
elf_file_map(const char *path, struct elf_file *f)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return errno;
	if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		close(fd);
		return ENOEXEC;
	}
	f->size = (size_t)st.st_size;
	f->p = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (f->p == MAP_FAILED)
		return errno;
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)f->p;

	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64) {
		elf_file_unmap(f);
		return ENOEXEC;
	}
	return 0;
}

void
elf_file_unmap(struct elf_file *f)
{
	if (f->p != NULL && f->p != MAP_FAILED)
		munmap((void *)f->p, f->size);
	f->p = NULL;
	f->size = 0;
}

/* Bytes at a function's start in which x86-64 code that keeps a frame
   pointer saves it (after an endbr64, a stack check, a few pushes). */
#define PROLOGUE_SCAN 32

/*
 * Whether function fn of the mapped file p (size bytes) sets up a frame
 * pointer (mov %rsp,%rbp near its start): 1 it does, 0 it
 * does not, -1 unknown (its code is not in the file).
 */
static int
keeps_fp(const struct elfaddr *e, const unsigned char *p, size_t size,
    const struct efunc *fn)
{
	/* mov %rsp,%rbp: compilers may schedule it a few instructions
	   after the push of %rbp */
	static const unsigned char setup[] = { 0x48, 0x89, 0xe5 };

	for (size_t i = 0; i < e->nld; i++) {
		const struct eload *l = &e->ld[i];
		if (fn->addr < l->vaddr || fn->addr - l->vaddr >= l->filesz)
			continue;
		uint64_t off = fn->addr - l->vaddr + l->off;
		uint64_t n = fn->size != 0 && fn->size < PROLOGUE_SCAN ?
		    fn->size : PROLOGUE_SCAN;
		if (!fits(size, off, n))
			return -1;
		return memmem(p + off, n, setup, sizeof(setup)) != NULL;
	}
	return -1;
}

/*
 * The GNU build id of the mapped file p as lower-case hex into hex (at
 * least 2 * 64 + 1 bytes): 1, or 0 when it has none.
 */
static int
build_id(const unsigned char *p, size_t size, char *hex)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)p;

	if (!fits(size, eh->e_phoff, (uint64_t)eh->e_phnum *
	    sizeof(Elf64_Phdr)))
		return 0;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(p + eh->e_phoff);
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type != PT_NOTE ||
		    !fits(size, ph[i].p_offset, ph[i].p_filesz))
			continue;
		uint64_t o = ph[i].p_offset, end = o + ph[i].p_filesz;
		while (o + sizeof(Elf64_Nhdr) <= end) {
			const Elf64_Nhdr *n = (const Elf64_Nhdr *)(p + o);
			uint64_t name = o + sizeof(*n);
			uint64_t desc = name + ((n->n_namesz + 3) & ~3u);
			uint64_t next = desc + ((n->n_descsz + 3) & ~3u);
			if (next > end)
				break;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    memcmp(p + name, "GNU", 4) == 0 &&
			    n->n_descsz > 0 && n->n_descsz <= 64) {
				for (unsigned k = 0; k < n->n_descsz; k++)
					snprintf(hex + 2 * k, 3, "%02x",
					    p[desc + k]);
				return 1;
			}
			o = next;
		}
	}
	return 0;
}

/*
 * The function symbols of the detached debug file of the mapped file p
 * (ELFADDR_DEBUG_DIR, or $ARGUS_DEBUG_DIR: .build-id/xx/rest.debug, as
 * Debian's -dbg and -dbgsym packages install them) into e: 1 when it
 * has a symbol table, else 0 (e unchanged).
 */
static int
debug_syms(const unsigned char *p, size_t size, struct elfaddr *e)
{
	char hex[2 * 64 + 1], *path;
	const char *dir = getenv("ARGUS_DEBUG_DIR");
	struct elf_file d;
	int got = 0;

	if (!build_id(p, size, hex))
		return 0;
	if (dir == NULL || *dir == '\0')
		dir = ELFADDR_DEBUG_DIR;
	path = xasprintf("%s/.build-id/%.2s/%s.debug", dir, hex, hex + 2);
	if (elf_file_map(path, &d) == 0) {
		struct efunc *fn = e->fn;
		size_t nfn = e->nfn;

		e->fn = NULL;
		e->nfn = 0;
		if (read_syms(d.p, d.size, SHT_SYMTAB, e) > 0) {
			for (size_t i = 0; i < nfn; i++)
				free(fn[i].name);
			free(fn);
			got = 1;
		} else {
			free(e->fn);
			e->fn = fn;
			e->nfn = nfn;
		}
		elf_file_unmap(&d);
	}
	free(path);
	return got;
}

int
elfaddr_open(const char *path, struct elfaddr **out)
{
	struct elf_file f;
	int err = elf_file_map(path, &f);

	if (err)
		return err;
	const unsigned char *p = f.p;
	size_t size = f.size;
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)p;
	struct elfaddr *e = xcalloc(1, sizeof(*e));

	err = ENOEXEC;
	if (!fits(size, eh->e_phoff, (uint64_t)eh->e_phnum *
	    sizeof(Elf64_Phdr)))
		goto out;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(p + eh->e_phoff);
	e->ld = xreallocarray(NULL, eh->e_phnum ? eh->e_phnum : 1,
	    sizeof(*e->ld));
	for (unsigned i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD)
			e->ld[e->nld++] = (struct eload){ .off = ph[i].p_offset,
			    .filesz = ph[i].p_filesz, .vaddr = ph[i].p_vaddr };
	if (read_syms(p, size, SHT_SYMTAB, e) == 0) {
		/* stripped: its debug file's symbols, else the dynamic
		   ones (the exported functions only) */
		free(e->fn);
		e->fn = NULL;
		e->nfn = 0;
		(void)read_syms(p, size, SHT_DYNSYM, e);
		if (!debug_syms(p, size, e) && e->nfn == 0)
			goto out;
	}
	qsort(e->fn, e->nfn, sizeof(*e->fn), by_addr);
	for (size_t i = 0; i < e->nfn; i++)
		e->fn[i].fp = eh->e_machine == EM_X86_64 ?
		    keeps_fp(e, p, size, &e->fn[i]) : -1;
	err = 0;
out:
	elf_file_unmap(&f);
	if (err != 0) {
		elfaddr_free(e);
		return err;
	}
	*out = e;
	return 0;
}

void
elfaddr_free(struct elfaddr *e)
{
	if (e == NULL)
		return;
	for (size_t i = 0; i < e->nfn; i++)
		free(e->fn[i].name);
	free(e->fn);
	free(e->ld);
	free(e);
}

const char *
elfaddr_at_offset(const struct elfaddr *e, uint64_t off, uint64_t *delta,
    int *fp)
{
	uint64_t va = 0;
	size_t i;

	for (i = 0; i < e->nld; i++)
		if (off >= e->ld[i].off && off - e->ld[i].off < e->ld[i].filesz) {
			va = off - e->ld[i].off + e->ld[i].vaddr;
			break;
		}
	if (i == e->nld)
		return NULL;
	/* the last function starting at or before va */
	size_t lo = 0, hi = e->nfn;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (e->fn[mid].addr <= va)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	const struct efunc *f = &e->fn[lo - 1];
	if (f->size != 0 && va - f->addr >= f->size)
		return NULL;
	*delta = va - f->addr;
	if (fp != NULL)
		*fp = f->fp;
	return f->name;
}
