/* Control variables: every tunable is read from the environment as
 * LEANMPI_<NAME> once at init, described once in LM_CVAR_LIST below (the
 * enum, the table in lm_cvar.c, leanmpi-info --params and the MPI_T control
 * variables all come from it). */
#ifndef LM_CVAR_H
#define LM_CVAR_H
#include <stddef.h>

/* Where a variable belongs (its MPI_T category) and who it is for. */
enum lm_cvar_group { LM_CVAR_GROUP_CORE, LM_CVAR_GROUP_TRANSPORT, LM_CVAR_GROUP_PT2PT, LM_CVAR_GROUP_MEMORY };
enum lm_cvar_audience { LM_CVAR_USER, LM_CVAR_TUNER };

/* X(NAME, default, min, max, group, audience, writable, description)
 *   NAME      the environment variable without its LEANMPI_ prefix
 *   writable  1: read after init, so MPI_T_cvar_write may change it (scope
 *             LOCAL); 0: read once at init (scope READONLY) */
#define LM_CVAR_LIST(X)                                                                               \
    X(EAGER_LIMIT, 16384, 0, 1L << 30, PT2PT, USER, 0,                                                \
      "messages up to this many bytes are sent eagerly; larger ones by rendezvous")                   \
    X(CMA_ENABLE, 1, 0, 1, TRANSPORT, USER, 0,                                                        \
      "copy large intra-node messages once with process_vm_readv when permitted")                     \
    X(FASTBOX_THRESHOLD, 8, 0, 1L << 30, TRANSPORT, TUNER, 0,                                         \
      "messages sent to one peer before a fast box is claimed for the pair")                          \
    X(FASTBOX_MAX, 8, 0, 64, TRANSPORT, TUNER, 0, "fast boxes one receiver serves at most")           \
    X(FASTBOX_PEERS, 0, 0, 1L << 30, CORE, TUNER, 0,                                                  \
      "peers one rank sends to through fast boxes at most (0: no limit; resource-saving mode: 1024)") \
    X(UNEXPECTED_LIMIT, 64L << 20, 0, 1L << 40, PT2PT, TUNER, 0,                                      \
      "eager bytes a receiver may hold unmatched before senders switch to rendezvous")                \
    X(PIPELINE_CHUNK, 0, 0, 1L << 30, PT2PT, TUNER, 0,                                                \
      "bytes per chunk when large data goes through cells (0: the cell payload size)")                \
    X(MEMREPORT, 0, 0, 1, MEMORY, USER, 1, "print the per-component memory table at MPI_Finalize")    \
    X(SHM_ARENA_SIZE, 1L << 20, 4096, 1L << 34, CORE, TUNER, 0,                                       \
      "bytes of node-shared memory per rank for one-sided access (read by mpirun)")                   \
    X(COOP_COPY_MIN, 256L << 10, 0, 1L << 40, PT2PT, TUNER, 0,                                        \
      "single-copy messages of at least this many bytes are copied by receiver and sender together "  \
      "(0: the receiver copies alone)")                                                               \
    X(COOP_COPY_CHUNK, 128L << 10, 4096, 1L << 30, PT2PT, TUNER, 0,                                   \
      "smallest piece of a shared copy (each side claims one half of the message)")                   \
    X(LARGE_COPY, 0, 0, 2, PT2PT, USER, 0,                                                            \
      "how rendezvous messages between ranks of a node are copied: 0 through the receiver's pipes "   \
      "(two copies, pipelined) up to PIPE_MAX bytes while every rank has a core of its own (all of "  \
      "them where PIPE_COPY_RATIO says the single copy is slow), by single copy otherwise where "     \
      "permitted; 1 by single copy where permitted; 2 through pipes")                                 \
    X(PIPE_MAX, 128L << 10, 0, 1L << 40, PT2PT, TUNER, 0,                                             \
      "largest message that LARGE_COPY=0 sends through a pipe when a single copy is permitted")       \
    X(PIPE_COPY_RATIO, 3, 0, 1000, PT2PT, TUNER, 0,                                                   \
      "LARGE_COPY=0 sends every message through pipes, of any size and where ranks share cores, "     \
      "where a single copy takes at least this many times as long as a memcpy "                       \
      "(probed once; 0: never)")                                                                      \
    X(LARGE_COPY_ADAPT, 1, 0, 1, PT2PT, TUNER, 0,                                                     \
      "LARGE_COPY=0, ranks with cores of their own: rendezvous messages go the way (pipes or "        \
      "single copy) that has cost least so far, timed by the receiver, the other way every 64th "     \
      "message; in an exchange the lower rank of the pair chooses for both "                          \
      "(0: PIPE_COPY_RATIO's probe alone decides)")                                                   \
    X(SHARED_COPY_MAX, 1L << 20, 0, 1L << 40, PT2PT, TUNER, 0,                                        \
      "between ranks of one address space (mpirun --address-space=shared), messages up to this size " \
      "are one memcpy (halves by both sides where both are there), larger ones go through pipes")     \
    X(OFI_MR_CACHE, 32, 0, 4096, TRANSPORT, TUNER, 0,                                                 \
      "memory registrations of the network transport kept for reuse once their message is done "      \
      "(0: none); only with providers whose registrations do not pin memory (tcp, net, ...)")         \
    X(ALLTOALL_INPLACE_COPY_MAX, 1L << 20, 0, 1L << 40, CORE, TUNER, 0,                               \
      "an in-place MPI_Alltoall of up to this many bytes in all copies its buffer aside and posts "   \
      "every block; a larger one exchanges block by block through two blocks of scratch")             \
    X(RMA_NETWORK, 1, 0, 1, TRANSPORT, TUNER, 0,                                                      \
      "windows across hosts move Put and Get data by the network's RMA where it has one (ofi with "   \
      "FI_RMA; 0: the owner of the memory carries every operation out)")                              \
    X(COLL_SHM, 1, 0, 1, CORE, TUNER, 0,                                                              \
      "collectives on communicators within one node may use node shared-memory mailboxes "            \
      "(0: point-to-point algorithms only)")                                                          \
    X(FAULT_SEND_AFTER, 0, 0, 1L << 40, TRANSPORT, TUNER, 0,                                          \
      "fault injection for tests: after this many active-message sends, every later send of this "    \
      "process fails as if its transport had broken (0: off)")                                        \
    X(FAULT_INIT_STEP, 0, 0, 64, CORE, TUNER, 0,                                                      \
      "fault injection for tests: the first MPI_Init or MPI_Session_init fails at this start step "   \
      "(1: the first; 0: off), after unwinding the steps before it")                                  \
    X(ACP_STARTER_SIZE, 65536, 0, 1L << 34, MEMORY, USER, 0,                                          \
      "bytes of ACP starter memory per process (acprun --acp-startermemsize sets it too)")            \
    X(ACP_CACHE, 1024, 1, 1L << 20, MEMORY, USER, 0,                                                  \
      "registration tables of other processes one ACP process keeps at most (least recently used "    \
      "goes first)")

enum lm_cvar_id {
#define LM_CVAR_ENUM(name, def, lo, hi, group, audience, writable, text) LM_CVAR_##name,
    LM_CVAR_LIST(LM_CVAR_ENUM)
#undef LM_CVAR_ENUM
        LM_CVAR_COUNT
};

typedef struct lm_cvar_desc {
    const char *name; /* without the LEANMPI_ prefix, e.g. "EAGER_LIMIT" */
    long default_value;
    long min_value, max_value;
    enum lm_cvar_group group;
    enum lm_cvar_audience audience;
    int writable;
    const char *description;
} lm_cvar_desc;

extern const lm_cvar_desc lm_cvar_table[LM_CVAR_COUNT];

/* For leanmpi-info: the description and current value of cvar i (NULL past the end). */
const lm_cvar_desc *lm_cvar_describe(int i, long *value);
void lm_cvar_load(void); /* read the environment (idempotent) */
long lm_cvar(enum lm_cvar_id id);
/* For MPI_T_cvar_write: 0, or -1 when value is outside [min, max]. Only
 * writable variables (read after init) may be changed this way. */
int lm_cvar_set(enum lm_cvar_id id, long value);
/* String-valued parameters, e.g. LEANMPI_PROTOCOL; NULL if unset. */
const char *lm_param_string(const char *name);

#endif
