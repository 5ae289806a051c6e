/* Forwarding of the ranks' stdout/stderr to mpirun's own.
 *
 * Whole lines are written at once, so lines of different ranks never mix
 * inside a line; a partial line waits for its end (or for the stream's end,
 * so the last line is never lost even without a newline; if another rank's
 * text follows such an unfinished last line, a newline is put between them,
 * otherwise output is passed on byte for byte). With tagging each
 * line gets Open MPI's prefix "[1,RANK]<stdout>:" / "[1,RANK]<stderr>:" so
 * tools that parse Open MPI's tagged output keep working. */
#ifndef LM_LAUNCHER_OUTPUT_FORWARD_H
#define LM_LAUNCHER_OUTPUT_FORWARD_H
#include <stddef.h>

typedef struct lm_outstream {
    int fd;  /* read end of the rank's pipe (non-blocking); -1 once closed */
    int dst; /* 1 or 2 */
    int rank;
    char *partial; /* an unfinished line, allocated only when one exists */
    size_t partial_len;
} lm_outstream;

void lm_out_init(lm_outstream *s, int fd, int dst, int rank);
void lm_out_set_tagging(int on);
/* Read what is available now and forward complete lines. At end of stream
 * (or a read error) the pending partial line is written and the fd closed.
 * Returns 1 while the stream is open, 0 once closed. */
int lm_out_pump(lm_outstream *s);
/* The same for a stream whose bytes arrive by other means (a rank on
 * another host, through its launch agent): len = 0 is the end of stream. */
void lm_out_feed(lm_outstream *s, const char *data, size_t len);

#endif
