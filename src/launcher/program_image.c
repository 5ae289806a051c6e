/* Reading a program for ranks that share one address space (see
 * program_image.h); every offset the file gives is checked against its
 * size, so a malformed file is refused, not followed. */
#include "program_image.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int refuse(char *why, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int refuse(char *why, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, cap, fmt, ap);
    va_end(ap);
    return -1;
}

/* [off, off + n * size) lies in the file */
static int inside(const lm_program_image *im, uint64_t off, uint64_t n, uint64_t size)
{
    return off <= im->len && (size == 0 || n <= (im->len - off) / size);
}

static void find_main(lm_program_image *im, const Elf64_Ehdr *eh, const Elf64_Shdr *sh)
{
    for (int i = 0; i < eh->e_shnum && !im->main_at; i++) {
        if (sh[i].sh_type != SHT_SYMTAB && sh[i].sh_type != SHT_DYNSYM) continue;
        if (sh[i].sh_link >= eh->e_shnum) continue;
        const Elf64_Shdr *str = &sh[sh[i].sh_link];
        size_t n = sh[i].sh_size / sizeof(Elf64_Sym);
        if (!inside(im, sh[i].sh_offset, n, sizeof(Elf64_Sym)) || !inside(im, str->sh_offset, str->sh_size, 1))
            continue;
        const Elf64_Sym *sym = (const Elf64_Sym *)(im->bytes + sh[i].sh_offset);
        const char *names = (const char *)(im->bytes + str->sh_offset);
        for (size_t k = 0; k < n; k++)
            if (ELF64_ST_TYPE(sym[k].st_info) == STT_FUNC && sym[k].st_value && sym[k].st_name + 5 <= str->sh_size &&
                !memcmp(names + sym[k].st_name, "main", 5))
                im->main_at = sym[k].st_value;
    }
}

static int find_copies(lm_program_image *im, const Elf64_Ehdr *eh, const Elf64_Shdr *sh, char *why, size_t cap)
{
    for (int i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_RELA || sh[i].sh_link >= eh->e_shnum) continue;
        const Elf64_Shdr *symsec = &sh[sh[i].sh_link];
        if (symsec->sh_link >= eh->e_shnum) continue;
        const Elf64_Shdr *str = &sh[symsec->sh_link];
        size_t nrel = sh[i].sh_size / sizeof(Elf64_Rela), nsym = symsec->sh_size / sizeof(Elf64_Sym);
        if (!inside(im, sh[i].sh_offset, nrel, sizeof(Elf64_Rela)) ||
            !inside(im, symsec->sh_offset, nsym, sizeof(Elf64_Sym)) || !inside(im, str->sh_offset, str->sh_size, 1))
            return refuse(why, cap, "its relocations are malformed");
        const Elf64_Rela *rel = (const Elf64_Rela *)(im->bytes + sh[i].sh_offset);
        const Elf64_Sym *sym = (const Elf64_Sym *)(im->bytes + symsec->sh_offset);
        for (size_t k = 0; k < nrel; k++) {
            if (ELF64_R_TYPE(rel[k].r_info) != R_X86_64_COPY) continue;
            size_t s = ELF64_R_SYM(rel[k].r_info);
            if (s >= nsym || sym[s].st_name >= str->sh_size) return refuse(why, cap, "its relocations are malformed");
            if (im->ncopies == LM_IMAGE_MAX_COPIES)
                return refuse(why, cap, "it has more than %d copy relocations", LM_IMAGE_MAX_COPIES);
            lm_copy_reloc *c = &im->copies[im->ncopies++];
            c->at = rel[k].r_offset;
            c->size = sym[s].st_size;
            snprintf(c->name, sizeof c->name, "%.*s", (int)(str->sh_size - sym[s].st_name),
                     (const char *)im->bytes + str->sh_offset + sym[s].st_name);
        }
    }
    return 0;
}

static int check(lm_program_image *im, char *why, size_t cap)
{
    Elf64_Ehdr *eh = (Elf64_Ehdr *)im->bytes;
    if (im->len < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_machine != EM_X86_64)
        return refuse(why, cap, "it is not a 64-bit x86 ELF program");
    if (!inside(im, eh->e_phoff, eh->e_phnum, sizeof(Elf64_Phdr)) ||
        !inside(im, eh->e_shoff, eh->e_shnum, sizeof(Elf64_Shdr)))
        return refuse(why, cap, "its headers are malformed");
    Elf64_Phdr *ph = (Elf64_Phdr *)(im->bytes + eh->e_phoff);
    Elf64_Dyn *dyn = NULL;
    size_t ndyn = 0;
    int interp = 0;
    for (int i = 0; i < eh->e_phnum; i++) {
        if (ph[i].p_type == PT_DYNAMIC && inside(im, ph[i].p_offset, ph[i].p_filesz / sizeof *dyn, sizeof *dyn)) {
            dyn = (Elf64_Dyn *)(im->bytes + ph[i].p_offset);
            ndyn = ph[i].p_filesz / sizeof *dyn;
        }
        interp |= ph[i].p_type == PT_INTERP;
        if (ph[i].p_type == PT_GNU_RELRO) {
            im->relro_at = ph[i].p_vaddr;
            im->relro_size = ph[i].p_memsz;
        }
    }
    if (!dyn || !interp) return refuse(why, cap, "it is linked statically (a dynamically linked program is needed)");
    if (eh->e_type != ET_DYN)
        return refuse(why, cap, "it is not position-independent (ET_EXEC; build it with -fPIE -pie, as mpicc does)");
    for (size_t i = 0; i < ndyn && dyn[i].d_tag != DT_NULL; i++)
        if (dyn[i].d_tag == DT_FLAGS_1) dyn[i].d_un.d_val &= ~(Elf64_Xword)DF_1_PIE;
    Elf64_Shdr *sh = (Elf64_Shdr *)(im->bytes + eh->e_shoff);
    find_main(im, eh, sh);
    if (!im->main_at) return refuse(why, cap, "it has no symbol main (stripped)");
    return find_copies(im, eh, sh, why, cap);
}

int lm_program_image_read(const char *path, lm_program_image *im, char *why, size_t cap)
{
    memset(im, 0, sizeof *im);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size <= 0) {
        snprintf(why, cap, "cannot read %s: %s", path, fd < 0 ? strerror(errno) : "empty");
        if (fd >= 0) close(fd);
        return -1;
    }
    im->len = (size_t)st.st_size;
    im->bytes = malloc(im->len);
    size_t got = 0;
    while (im->bytes && got < im->len) {
        ssize_t n = read(fd, im->bytes + got, im->len - got);
        if (n <= 0) break;
        got += (size_t)n;
    }
    close(fd);
    char reason[400] = "out of memory";
    int rc = got == im->len && im->bytes ? check(im, reason, sizeof reason) : -1;
    if (rc) {
        snprintf(why, cap, "%s cannot be loaded once per rank: %s", path, reason);
        lm_program_image_free(im);
    }
    return rc;
}

void lm_program_image_free(lm_program_image *im)
{
    free(im->bytes);
    im->bytes = NULL;
}
