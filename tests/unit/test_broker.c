/* Unit test of mpirun's broker for dynamic processes (broker.h): ports,
 * accepts and connects paired first come first paired with one tag per
 * pair, polling, a closed port failing its waiting leaders, a process that
 * ends taking its ports and tickets along, and the name service. */
#include "broker.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int failures;
#define CHECK(c)                                                         \
    do {                                                                 \
        if (!(c)) {                                                      \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #c); \
            failures++;                                                  \
        }                                                                \
    } while (0)

static void test_pairing(void)
{
    lm_broker b = {0};
    int job, rank, tag, tag2;
    CHECK(lm_broker_queue(&b, "p", 1, 0, 0) == -ENOENT); /* not open */
    CHECK(lm_broker_port_open(&b, "p", 0, 0) == 0);
    CHECK(lm_broker_port_open(&b, "p", 0, 1) == -EEXIST);
    /* two connects wait; an accept pairs with the older */
    int c1 = lm_broker_queue(&b, "p", 0, 1, 5);
    int c2 = lm_broker_queue(&b, "p", 0, 2, 7);
    CHECK(c1 > 0 && c2 > 0 && c1 != c2);
    CHECK(lm_broker_poll(&b, c1, &job, &rank, &tag) == -EAGAIN);
    int a1 = lm_broker_queue(&b, "p", 1, 0, 0);
    CHECK(lm_broker_poll(&b, a1, &job, &rank, &tag) == 0 && job == 1 && rank == 5);
    CHECK(lm_broker_poll(&b, c1, &job, &rank, &tag2) == 0 && job == 0 && rank == 0 && tag2 == tag);
    CHECK(lm_broker_poll(&b, c1, &job, &rank, &tag2) == -ENOENT); /* gone once answered */
    CHECK(lm_broker_poll(&b, c2, &job, &rank, &tag) == -EAGAIN);
    /* the second pair gets another tag */
    int a2 = lm_broker_queue(&b, "p", 1, 0, 3);
    CHECK(lm_broker_poll(&b, a2, &job, &rank, &tag2) == 0 && job == 2 && rank == 7 && tag2 != tag);
    CHECK(lm_broker_poll(&b, c2, &job, &rank, &tag) == 0 && tag == tag2 && rank == 3);
    /* closing the port fails whoever waits on it */
    int a3 = lm_broker_queue(&b, "p", 1, 0, 0);
    CHECK(lm_broker_port_close(&b, "p") == 0);
    CHECK(lm_broker_port_close(&b, "p") == -ENOENT);
    CHECK(lm_broker_poll(&b, a3, &job, &rank, &tag) == -ENOENT);
    /* a cancelled ticket is gone; an ended process takes its ports and
     * tickets along */
    CHECK(lm_broker_port_open(&b, "q", 0, 4) == 0);
    int c3 = lm_broker_queue(&b, "q", 0, 1, 1);
    lm_broker_cancel(&b, c3);
    CHECK(lm_broker_poll(&b, c3, &job, &rank, &tag) == -ENOENT);
    int c4 = lm_broker_queue(&b, "q", 0, 1, 1);
    lm_broker_forget(&b, 1, 1);
    CHECK(lm_broker_poll(&b, c4, &job, &rank, &tag) == -ENOENT);
    lm_broker_forget(&b, 0, 4);
    CHECK(lm_broker_queue(&b, "q", 0, 1, 1) == -ENOENT);
    lm_broker_free(&b);
}

static void test_names(void)
{
    lm_broker b = {0};
    char port[64];
    CHECK(lm_broker_lookup(&b, "s", port, sizeof port) == -ENOENT);
    CHECK(lm_broker_publish(&b, "s", "port-a") == 0);
    CHECK(lm_broker_publish(&b, "s", "port-b") == -EEXIST);
    CHECK(lm_broker_publish(&b, "t", "port-b") == 0);
    CHECK(lm_broker_lookup(&b, "s", port, sizeof port) == 0 && strcmp(port, "port-a") == 0);
    CHECK(lm_broker_unpublish(&b, "s", "port-b") == -ENOENT); /* under another port */
    CHECK(lm_broker_unpublish(&b, "s", "port-a") == 0);
    CHECK(lm_broker_lookup(&b, "s", port, sizeof port) == -ENOENT);
    CHECK(lm_broker_lookup(&b, "t", port, sizeof port) == 0 && strcmp(port, "port-b") == 0);
    lm_broker_free(&b);
    CHECK(b.names == NULL && b.ports == NULL && b.tickets == NULL);
}

int main(void)
{
    test_pairing();
    test_names();
    if (failures) return 1;
    printf("PASS broker\n");
    return 0;
}
