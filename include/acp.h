/* The ACP basic layer (Advanced Communication Primitives): a global
 * address space over the memory of every process, copies between any two
 * places of it, remote atomics and order handles. LeanMPI's libacp gives
 * the names, types and constants of the ACP library's basic layer; see
 * docs/ACP.md for what it supports and how a global address is laid out.
 *
 * Every call but acp_init needs an initialized library; a call that fails
 * returns the value its description names (-1, ACP_GA_NULL,
 * ACP_ATKEY_NULL, ACP_HANDLE_NULL, NULL) and prints why, naming itself. */
#ifndef ACP_H
#define ACP_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- infrastructure ---- */

/* Starts the library on every process of the job and returns when all
 * have: 0, or -1. Removes the --acp-* arguments a launcher appended from
 * *argc / *argv (either may be NULL). */
int acp_init(int *argc, char ***argv);
/* Frees what the library holds, after every process called it: 0 or -1. */
int acp_finalize(void);
/* Frees every registration, clears the starter memory and gives this
 * process the new rank (the ranks of all processes must be a permutation
 * of 0 .. acp_procs() - 1); collective: 0 or -1. */
int acp_reset(int rank);
/* Prints str and ends every process of the job. */
void acp_abort(const char *str);
/* Returns when every process has called it: 0 or -1. */
int acp_sync(void);
int acp_rank(void);  /* this process's rank, or -1 */
int acp_procs(void); /* the number of processes, or -1 */

/* ---- global memory management ---- */

typedef uint64_t acp_atkey_t; /* address translation key of a registration */
typedef uint64_t acp_ga_t;    /* global address */
#define ACP_ATKEY_NULL 0LLU
#define ACP_GA_NULL 0LLU

/* The global address of rank's starter memory; ACP_GA_NULL on failure. */
acp_ga_t acp_query_starter_ga(int rank);
/* Registers size bytes at addr with a color (0 .. acp_colors() - 1): the
 * key, or ACP_ATKEY_NULL. */
acp_atkey_t acp_register_memory(void *addr, size_t size, int color);
int acp_unregister_memory(acp_atkey_t atkey); /* 0 or -1 */
/* The global address of addr inside the registration of atkey, or
 * ACP_GA_NULL. */
acp_ga_t acp_query_ga(acp_atkey_t atkey, void *addr);
/* The address in this process of ga, which must be this process's (or
 * NULL). */
void *acp_query_address(acp_ga_t ga);
int acp_query_rank(acp_ga_t ga);  /* -1 for ACP_GA_NULL */
int acp_query_color(acp_ga_t ga); /* -1 for ACP_GA_NULL */
int acp_colors(void);             /* the number of colors */

/* ---- global memory access (GMA) ---- */

typedef int64_t acp_handle_t;
/* Every GMA invoked so far. */
#define ACP_HANDLE_ALL 0xffffffffffffffffLLU
/* The continuation of the previous GMA (here the same as ACP_HANDLE_ALL). */
#define ACP_HANDLE_CONT 0xfffffffffffffffeLLU
#define ACP_HANDLE_NULL 0x0000000000000000LLU

/* Each GMA starts once the GMA of order and every one invoked before it
 * have completed (ACP_HANDLE_NULL: at once) and returns its handle, or
 * ACP_HANDLE_NULL on failure. */
acp_handle_t acp_copy(acp_ga_t dst, acp_ga_t src, size_t size, acp_handle_t order);
/* Atomics apply to the 4- or 8-byte value at src (aligned to its size)
 * and write the value it held before to dst, which must be the caller's
 * own memory. */
acp_handle_t acp_cas4(acp_ga_t dst, acp_ga_t src, uint32_t oldval, uint32_t newval, acp_handle_t order);
acp_handle_t acp_cas8(acp_ga_t dst, acp_ga_t src, uint64_t oldval, uint64_t newval, acp_handle_t order);
acp_handle_t acp_swap4(acp_ga_t dst, acp_ga_t src, uint32_t value, acp_handle_t order);
acp_handle_t acp_swap8(acp_ga_t dst, acp_ga_t src, uint64_t value, acp_handle_t order);
acp_handle_t acp_add4(acp_ga_t dst, acp_ga_t src, uint32_t value, acp_handle_t order);
acp_handle_t acp_add8(acp_ga_t dst, acp_ga_t src, uint64_t value, acp_handle_t order);
acp_handle_t acp_xor4(acp_ga_t dst, acp_ga_t src, uint32_t value, acp_handle_t order);
acp_handle_t acp_xor8(acp_ga_t dst, acp_ga_t src, uint64_t value, acp_handle_t order);
acp_handle_t acp_or4(acp_ga_t dst, acp_ga_t src, uint32_t value, acp_handle_t order);
acp_handle_t acp_or8(acp_ga_t dst, acp_ga_t src, uint64_t value, acp_handle_t order);
acp_handle_t acp_and4(acp_ga_t dst, acp_ga_t src, uint32_t value, acp_handle_t order);
acp_handle_t acp_and8(acp_ga_t dst, acp_ga_t src, uint64_t value, acp_handle_t order);
/* Waits until the GMA of handle and every one before it have completed
 * (ACP_HANDLE_ALL: all); at once for ACP_HANDLE_NULL, a completed GMA or
 * one never invoked. */
void acp_complete(acp_handle_t handle);
/* 1 while the GMA of handle or one before it is incomplete, else 0. */
int acp_inquire(acp_handle_t handle);

#ifdef __cplusplus
}
#endif
#endif
