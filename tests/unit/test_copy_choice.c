/* The choice between pipes and the single copy by measured cost
 * (src/pt2pt/copy_choice.c): the guess first, then the other way, then
 * the cheaper one with the other tried every 64th message; a first timing
 * not counted, a preemption-sized timing clipped, size classes and the
 * one-way and exchange regimes apart. */
#include <stdio.h>
#include <stdlib.h>
#include "pt2pt/copy_choice.h"

#include "unit_check.h"

#define MIB ((size_t)1 << 20)

/* One message of n bytes: the way chosen, and the time it would take at
 * the given nanoseconds per byte of each way. */
static lm_copy_way one_in(lm_copy_regime regime, size_t n, lm_copy_way guess, double pipe_ns, double single_ns)
{
    lm_copy_way w = lm_copy_choose(n, regime, guess);
    lm_copy_record(w, regime, n, (uint64_t)((w == LM_COPY_PIPE ? pipe_ns : single_ns) * (double)n));
    return w;
}

static lm_copy_way one(size_t n, lm_copy_way guess, double pipe_ns, double single_ns)
{
    return one_in(LM_COPY_ONE_WAY, n, guess, pipe_ns, single_ns);
}

int main(void)
{
    lm_copy_choice_reset();
    /* warm-up: three of the guess, three of the other */
    for (int i = 0; i < 3; i++) CHECK(one(MIB, LM_COPY_PIPE, 0.12, 0.06) == LM_COPY_PIPE);
    for (int i = 0; i < 3; i++) CHECK(one(MIB, LM_COPY_PIPE, 0.12, 0.06) == LM_COPY_SINGLE);
    /* then the cheaper way, the other one every 64th message of the class */
    int pipes = 0, singles = 0;
    for (int i = 0; i < 640; i++) {
        if (one(MIB, LM_COPY_PIPE, 0.12, 0.06) == LM_COPY_PIPE) pipes++;
        else singles++;
    }
    CHECK(pipes == 10 && singles == 630);

    /* another size class has measurements of its own: its guess first */
    CHECK(lm_copy_choose(8 * MIB, LM_COPY_ONE_WAY, LM_COPY_PIPE) == LM_COPY_PIPE);

    /* the machine changes: the single copy turns slow, the pipes fast; the
     * explorations of the pipes bring the choice back to them */
    int switched_after = -1;
    for (int i = 0; i < 64 * 8 && switched_after < 0; i++)
        if (one(MIB, LM_COPY_SINGLE, 0.03, 0.20) == LM_COPY_PIPE && i > 0 &&
            lm_copy_choose(MIB, LM_COPY_ONE_WAY, LM_COPY_SINGLE) == LM_COPY_PIPE)
            switched_after = i;
    CHECK(switched_after >= 0);

    /* a single preempted message does not turn the choice: clipped at four
     * times the average, the pipes' average stays below the single copy's */
    lm_copy_choice_reset();
    for (int i = 0; i < 6; i++) one(2 * MIB, LM_COPY_SINGLE, 0.05, 0.10);
    CHECK(lm_copy_choose(2 * MIB, LM_COPY_ONE_WAY, LM_COPY_SINGLE) == LM_COPY_PIPE);
    lm_copy_record(LM_COPY_PIPE, LM_COPY_ONE_WAY, 2 * MIB, (uint64_t)(1000.0 * 2 * MIB)); /* 2 ms a MiB */
    CHECK(lm_copy_choose(2 * MIB, LM_COPY_ONE_WAY, LM_COPY_SINGLE) == LM_COPY_PIPE);
    /* the first timing of a way is not counted: a cold first pipe message
     * of a class does not decide */
    lm_copy_choice_reset();
    CHECK(lm_copy_choose(MIB, LM_COPY_ONE_WAY, LM_COPY_PIPE) == LM_COPY_PIPE);
    lm_copy_record(LM_COPY_PIPE, LM_COPY_ONE_WAY, MIB, (uint64_t)(50.0 * MIB)); /* cold: 50 ns a byte */
    for (int i = 0; i < 2; i++) one(MIB, LM_COPY_PIPE, 0.05, 0.10);
    for (int i = 0; i < 3; i++) one(MIB, LM_COPY_PIPE, 0.05, 0.10);
    CHECK(lm_copy_choose(MIB, LM_COPY_ONE_WAY, LM_COPY_PIPE) == LM_COPY_PIPE);

    /* the exchange regime keeps measurements of its own: one-way traffic
     * finding the pipes cheaper leaves an exchange that finds the single
     * copy cheaper alone, and lm_copy_best tells each (the guess until
     * both ways are measured) */
    lm_copy_choice_reset();
    for (int i = 0; i < 6; i++) one_in(LM_COPY_ONE_WAY, MIB, LM_COPY_PIPE, 0.05, 0.10);
    CHECK(lm_copy_best(MIB, LM_COPY_EXCHANGE, LM_COPY_PIPE) == LM_COPY_PIPE);
    CHECK(lm_copy_best(MIB, LM_COPY_EXCHANGE, LM_COPY_SINGLE) == LM_COPY_SINGLE);
    for (int i = 0; i < 6; i++) one_in(LM_COPY_EXCHANGE, MIB, LM_COPY_PIPE, 0.30, 0.10);
    CHECK(lm_copy_best(MIB, LM_COPY_ONE_WAY, LM_COPY_SINGLE) == LM_COPY_PIPE);
    CHECK(lm_copy_best(MIB, LM_COPY_EXCHANGE, LM_COPY_PIPE) == LM_COPY_SINGLE);
    CHECK(lm_copy_choose(MIB, LM_COPY_ONE_WAY, LM_COPY_SINGLE) == LM_COPY_PIPE);
    CHECK(lm_copy_choose(MIB, LM_COPY_EXCHANGE, LM_COPY_PIPE) == LM_COPY_SINGLE);
    CHECK(lm_copy_class(16 << 10) == 0 && lm_copy_class(MIB) == 6 &&
          lm_copy_class((size_t)1 << 30) == LM_COPY_CLASSES - 1);
    puts("PASS copy_choice");
    return 0;
}
