/* Type layouts: what a derived type's data is, as loops rather than lists.
 *
 * A layout is a short list of segments in typemap order; a segment is
 * `count` copies, `stride` bytes apart from `disp` on, of either a leaf (a
 * run of bytes of one predefined type) or another layout (shared, counted
 * references). A vector of a million ints is one segment, a struct of
 * vectors a few segments with children: a type's description stays
 * proportional to the constructor calls that made it, never to its element
 * count. Appending merges what is regular (adjacent runs, equal blocks at
 * equal distances) so that flat-looking types stay flat.
 *
 * Positions in the packed stream (and in the list of basic elements) are
 * found by division through the counts and a binary search through each
 * level's segments, so any piece of a message is packed or unpacked on
 * its own at any offset (rendezvous chunks) without walking what comes
 * before it. */
#ifndef LM_TYPEMAP_H
#define LM_TYPEMAP_H
#include "datatype/datatype.h"

typedef struct lm_layout lm_layout;

typedef struct lm_seg {
    MPI_Aint disp;    /* the first copy's displacement */
    MPI_Aint stride;  /* between copies (count > 1) */
    MPI_Count count;  /* copies, > 0 */
    MPI_Count size;   /* data bytes of one copy, > 0 */
    MPI_Count pos;    /* where the segment starts in one element's stream */
    MPI_Count epos;   /* basic elements before it in one element */
    lm_layout *child; /* one copy: a layout, or NULL for a leaf ... */
    int basic;        /* ... of `size` bytes of this predefined type */
    int basic_size;
} lm_seg;

struct lm_layout {
    int refs; /* < 0: a predefined type's, never freed */
    int nseg, cap;
    lm_seg *seg;
    /* sealed (lm_tm_seal): totals of one copy */
    MPI_Count size, nelems;
    MPI_Aint tlb, tub; /* where the data lies (size > 0) */
    int basic;         /* the one predefined type throughout; -1 when mixed */
    bool dense;        /* the stream is memory [dense_lb, dense_lb + size) */
    MPI_Aint dense_lb;
    /* a flat layout (every segment one run: struct and indexed types of
     * predefined types) also has its runs with neighbours merged whatever
     * their types, for moving whole elements in one tight loop */
    int nruns;
    struct lm_run_span {
        MPI_Aint disp;
        MPI_Count len;
    } * runs;
};

void lm_layout_retain(lm_layout *l);
void lm_layout_release(lm_layout *l);

/* A predefined type's layout: one leaf, or a pair's two members at their
 * offsets (the padding is not data). Written into l (static storage). */
void lm_layout_builtin(lm_layout *l, lm_seg *segs, int basic, MPI_Count size, int first, int second,
                       MPI_Aint second_offset);

/* Building a derived type. */
typedef struct lm_tm_builder {
    lm_layout *l;
    MPI_Aint lb, ub;
    bool any, explicit_bounds, failed;
    int align;
} lm_tm_builder;

/* A finished part of a type with the bounds of one copy, for repeating it
 * (lm_tm_add_piece); from lm_tm_seal or lm_tm_piece_of. */
typedef struct lm_tm_piece {
    lm_layout *l;
    MPI_Aint lb, ub;
    bool explicit_bounds;
    int align;
} lm_tm_piece;

/* count copies of piece p, stride bytes apart, the first at byte shift. */
void lm_tm_add_piece(lm_tm_builder *b, const lm_tm_piece *p, MPI_Aint shift, MPI_Count count, MPI_Aint stride);
/* reps consecutive copies of old (each old->extent apart), the first at shift. */
void lm_tm_add(lm_tm_builder *b, const lm_datatype *old, MPI_Aint shift, MPI_Count reps);
/* old as a piece (borrowing its layout: valid while old is). */
lm_tm_piece lm_tm_piece_of(const lm_datatype *old);
/* The builder's contents as a piece (the builder is empty afterwards);
 * MPI_ERR_NO_MEM if an append failed. Release with lm_tm_piece_release. */
int lm_tm_seal(lm_tm_builder *b, lm_tm_piece *p);
void lm_tm_piece_release(lm_tm_piece *p);
/* Move the result into t (size, bounds, layout); MPI_ERR_NO_MEM if any
 * append failed. The builder is empty afterwards. */
int lm_tm_finish(lm_tm_builder *b, lm_datatype *t);
void lm_tm_discard(lm_tm_builder *b);

/* The runs of predefined data of count elements of t, in typemap order:
 * visit(arg, disp, size, basic, reps, stride) stands for reps runs of
 * `size` bytes of predefined type `basic`, the k-th at disp + k * stride
 * (displacements from the start of the buffer). */
typedef void (*lm_tm_visit)(void *arg, MPI_Aint disp, MPI_Count size, int basic, MPI_Count reps, MPI_Aint stride);
void lm_typemap_walk(const lm_datatype *t, MPI_Count count, lm_tm_visit visit, void *arg);
/* The sum over one element's leaves of per_leaf(basic, elements of that
 * leaf, arg) times its repetitions, without walking the repetitions; -1
 * as soon as per_leaf returns a negative value. */
MPI_Count lm_typemap_fold(const lm_datatype *t, MPI_Count (*per_leaf)(int basic, MPI_Count elems, void *arg),
                          void *arg);

#endif
