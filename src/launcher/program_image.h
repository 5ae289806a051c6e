/* A program as ranks sharing one address space load it (leanmpi-host):
 * read, checked and made loadable once per rank. mpirun asks the same
 * question before it chooses --address-space=auto. */
#ifndef LM_LAUNCHER_PROGRAM_IMAGE_H
#define LM_LAUNCHER_PROGRAM_IMAGE_H
#include <elf.h>
#include <stddef.h>

/* A copy relocation of the program (R_X86_64_COPY: data of a library the
 * program refers to directly, copied into it at start). */
typedef struct lm_copy_reloc {
    Elf64_Addr at; /* in the program, from its load address */
    size_t size;
    char name[64];
} lm_copy_reloc;
#define LM_IMAGE_MAX_COPIES 64

typedef struct lm_program_image {
    unsigned char *bytes; /* the file, its DF_1_PIE mark cleared (dlopen refuses PIE-marked programs) */
    size_t len;
    Elf64_Addr main_at; /* main's symbol value, from the load address */
    int ncopies;
    lm_copy_reloc copies[LM_IMAGE_MAX_COPIES];
    /* PT_GNU_RELRO, from the load address (size 0: none): read-only once
     * loaded, where copies of const data (int *const MPI_UNWEIGHTED) land */
    Elf64_Addr relro_at;
    size_t relro_size;
} lm_program_image;

/* 0, or -1 with why (naming the program): not a 64-bit ELF program,
 * linked statically, not position-independent, no main symbol, malformed. */
int lm_program_image_read(const char *path, lm_program_image *im, char *why, size_t cap);
void lm_program_image_free(lm_program_image *im);

#endif
