/* Choosing pipes or the single copy by measured cost: see copy_choice.h. */
#include "pt2pt/copy_choice.h"
#include <string.h>
#include <time.h>

#define CLASSES LM_COPY_CLASSES /* below 32 KiB, below 64 KiB, ..., below 8 MiB, the rest */
#define FIRST_CLASS_LOG 14
#define WARM 3      /* timings of a way before its average counts; the first is dropped */
#define EXPLORE 64  /* every EXPLORE-th message of a class takes the other way */
#define WEIGHT 0.25 /* of a new timing in the moving average */
#define OUTLIER 4.0 /* a timing counts as at most this many times the average (a preemption) */

typedef struct way_stats {
    double ns_per_byte; /* moving average */
    unsigned timings;   /* recorded so far */
} way_stats;

static struct {
    way_stats way[2][CLASSES][2]; /* [regime][class][way] */
    unsigned messages[2][CLASSES];
    uint64_t last_done[2][2]; /* [regime][way]: when its last overlapped message completed */
} S;

int lm_copy_class(size_t n)
{
    int c = 0;
    while (c < CLASSES - 1 && (n >> (FIRST_CLASS_LOG + c + 1)) != 0) c++;
    return c;
}

uint64_t lm_copy_clock_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

lm_copy_way lm_copy_best(size_t n, lm_copy_regime regime, lm_copy_way guess)
{
    const way_stats *w = S.way[regime][lm_copy_class(n)];
    if (w[LM_COPY_PIPE].timings < WARM || w[LM_COPY_SINGLE].timings < WARM) return guess;
    return w[LM_COPY_PIPE].ns_per_byte < w[LM_COPY_SINGLE].ns_per_byte ? LM_COPY_PIPE : LM_COPY_SINGLE;
}

lm_copy_way lm_copy_choose(size_t n, lm_copy_regime regime, lm_copy_way guess)
{
    int c = lm_copy_class(n);
    const way_stats *w = S.way[regime][c];
    lm_copy_way other = guess == LM_COPY_PIPE ? LM_COPY_SINGLE : LM_COPY_PIPE;
    unsigned k = ++S.messages[regime][c];
    if (w[guess].timings < WARM) return guess;
    if (w[other].timings < WARM) return other;
    lm_copy_way best = lm_copy_best(n, regime, guess);
    if (k % EXPLORE == 0) return best == LM_COPY_PIPE ? LM_COPY_SINGLE : LM_COPY_PIPE;
    return best;
}

void lm_copy_record(lm_copy_way way, lm_copy_regime regime, size_t n, uint64_t ns)
{
    if (n == 0) return;
    way_stats *w = &S.way[regime][lm_copy_class(n)][way];
    double x = (double)ns / (double)n;
    /* the first timing of a way pays for first touches (pipe pages, the
     * kernel's page walk of a new buffer): not counted */
    if (w->timings++ == 0) return;
    if (w->timings == 2) {
        w->ns_per_byte = x;
        return;
    }
    if (x > OUTLIER * w->ns_per_byte) x = OUTLIER * w->ns_per_byte;
    w->ns_per_byte += WEIGHT * (x - w->ns_per_byte);
}

void lm_copy_record_overlapped(lm_copy_way way, lm_copy_regime regime, size_t n, uint64_t started)
{
    uint64_t now = lm_copy_clock_ns();
    uint64_t *last = &S.last_done[regime][way];
    uint64_t from = started > *last ? started : *last;
    *last = now;
    lm_copy_record(way, regime, n, now > from ? now - from : 0);
}

void lm_copy_choice_reset(void) { memset(&S, 0, sizeof S); }
