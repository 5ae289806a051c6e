/* Locating the program to run, the way execvp would, before anything is
 * started: a job with a missing program must not spawn a single rank. */
#ifndef LM_LAUNCHER_FIND_PROGRAM_H
#define LM_LAUNCHER_FIND_PROGRAM_H
#include <stddef.h>

/* On success writes the path to exec into out and returns 0. Otherwise
 * returns 127 (not found) or 126 (found but not executable) and prints why. */
int lm_find_program(const char *prog, const char *name, char *out, size_t cap);
/* The same, with the reason written into why instead (MPI_Comm_spawn). */
int lm_find_program_quiet(const char *name, char *out, size_t cap, char *why, size_t whycap);

#endif
