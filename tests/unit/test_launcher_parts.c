/* Unit tests of the launcher's pieces for jobs across hosts: the frame link
 * (whole frames out of partial reads, a malformed frame ends the link), the
 * payload codec and the job description, the tree's shape, and host lists
 * with their placement; and of its broker for dynamic processes: ports,
 * accepts and connects paired first come first paired with one tag per
 * pair, polling, a closed port failing its waiting leaders, a process that
 * ends taking its ports and tickets along, and the name service. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pipe2 */
#endif
#include "agent_link.h"
#include "agent_tree.h"
#include "broker.h"
#include "hosts.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures;
#define CHECK(c)                                                         \
    do {                                                                 \
        if (!(c)) {                                                      \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #c); \
            failures++;                                                  \
        }                                                                \
    } while (0)

static void test_link(void)
{
    int p[2];
    CHECK(pipe2(p, O_NONBLOCK) == 0);
    lm_link out, in;
    lm_link_init(&out, -1, p[1]);
    lm_link_init(&in, p[0], -1);
    char big[5000];
    for (size_t i = 0; i < sizeof big; i++) big[i] = (char)(i * 7);
    CHECK(lm_link_send(&out, LM_FRAME_OUT, 3, 17, 1, "hello", 5) == 0);
    CHECK(lm_link_send(&out, LM_FRAME_STDIN, 0, -1, 0, NULL, 0) == 0);
    CHECK(lm_link_send(&out, LM_FRAME_OUT, 1, 2, 2, big, sizeof big) == 0);
    CHECK(lm_link_read(&in) == 0);
    lm_frame f;
    const char *pl;
    CHECK(lm_link_next(&in, &f, &pl) == 1);
    CHECK(f.type == LM_FRAME_OUT && f.node == 3 && f.rank == 17 && f.value == 1 && f.len == 5);
    CHECK(memcmp(pl, "hello", 5) == 0);
    CHECK(lm_link_next(&in, &f, &pl) == 1);
    CHECK(f.type == LM_FRAME_STDIN && f.len == 0);
    CHECK(lm_link_next(&in, &f, &pl) == 1);
    CHECK(f.len == sizeof big && memcmp(pl, big, sizeof big) == 0);
    CHECK(lm_link_next(&in, &f, &pl) == 0);
    CHECK(in.frames_in == 3);

    /* a frame that arrives in pieces is handed out only when whole */
    lm_frame h = {.len = 4, .type = LM_FRAME_FAIL, .node = 2, .rank = -1};
    CHECK(write(p[1], &h, 10) == 10);
    CHECK(lm_link_read(&in) == 0);
    CHECK(lm_link_next(&in, &f, &pl) == 0);
    CHECK(write(p[1], (char *)&h + 10, sizeof h - 10) == (ssize_t)(sizeof h - 10));
    CHECK(write(p[1], "ab", 2) == 2);
    CHECK(lm_link_read(&in) == 0);
    CHECK(lm_link_next(&in, &f, &pl) == 0);
    CHECK(write(p[1], "c", 2) == 2);
    CHECK(lm_link_read(&in) == 0);
    CHECK(lm_link_next(&in, &f, &pl) == 1);
    CHECK(f.type == LM_FRAME_FAIL && f.node == 2 && strcmp(pl, "abc") == 0);

    /* a length no frame of ours has: the link counts as broken */
    lm_frame bad = {.len = LM_FRAME_PAYLOAD_MAX + 1, .type = LM_FRAME_OUT};
    CHECK(write(p[1], &bad, sizeof bad) == (ssize_t)sizeof bad);
    CHECK(lm_link_read(&in) == 0);
    CHECK(lm_link_next(&in, &f, &pl) == 0);
    CHECK(in.rfd < 0);
    CHECK(lm_link_read(&in) == -1);

    /* the writer's end: the reader gone, a send fails */
    lm_link_close(&in);
    CHECK(lm_link_send(&out, LM_FRAME_OUT, 0, 0, 1, "x", 1) == -1);
    lm_link_close(&out);
}

static void test_codec_and_job(void)
{
    lm_wbuf w = {0};
    lm_wbuf_int(&w, -5);
    lm_wbuf_str(&w, "two words");
    lm_wbuf_int(&w, (int64_t)1 << 40);
    CHECK(!w.failed);
    lm_rbuf r = {.p = w.p, .len = w.len};
    CHECK(lm_rbuf_int(&r) == -5);
    CHECK(strcmp(lm_rbuf_str(&r), "two words") == 0);
    CHECK(lm_rbuf_int(&r) == (int64_t)1 << 40);
    CHECK(!r.failed);
    lm_rbuf_int(&r); /* past the end */
    CHECK(r.failed);
    free(w.p);

    const char *hosts[] = {"a", "b", "c"};
    int nranks[] = {2, 2, 1};
    const char *argv[] = {"./app", "-x", ""};
    const char *env[] = {"A=1", "B=two"};
    lm_job_desc d = {.job_id = "j1",
                     .cwd = "/tmp",
                     .path = "/bin/app",
                     .agent_exe = "/opt/bin/mpirun",
                     .launch_agent = "ssh {host}",
                     .fanout = 2,
                     .world_size = 5,
                     .reported_world_size = 8,
                     .universe_size = 9,
                     .ranks_per_node = 2,
                     .nhosts = 3,
                     .host_names = hosts,
                     .host_nranks = nranks,
                     .argc = 3,
                     .argv = argv,
                     .nenv = 2,
                     .env = env};
    lm_wbuf b = {0};
    lm_job_encode(&d, &b);
    CHECK(!b.failed);
    lm_job_desc e;
    CHECK(lm_job_decode(b.p, b.len, &e) == 0);
    CHECK(strcmp(e.job_id, "j1") == 0 && strcmp(e.path, "/bin/app") == 0 && strcmp(e.cwd, "/tmp") == 0);
    CHECK(strcmp(e.launch_agent, "ssh {host}") == 0 && strcmp(e.agent_exe, "/opt/bin/mpirun") == 0);
    CHECK(e.fanout == 2 && e.world_size == 5 && e.reported_world_size == 8 && e.universe_size == 9);
    CHECK(e.ranks_per_node == 2 && e.nhosts == 3 && strcmp(e.host_names[2], "c") == 0 && e.host_nranks[2] == 1);
    CHECK(e.argc == 3 && strcmp(e.argv[1], "-x") == 0 && strcmp(e.argv[2], "") == 0);
    CHECK(e.nenv == 2 && strcmp(e.env[1], "B=two") == 0);
    lm_job_desc_free(&e);
    CHECK(lm_job_decode(b.p, b.len / 2, &e) != 0); /* cut short */
    free(b.p);
}

static void test_tree(void)
{
    /* fanout 3: mpirun (-1) starts 0..2; node 0 starts 3..5, node 1 6..8 */
    CHECK(lm_tree_first_child(-1, 3) == 0 && lm_tree_first_child(0, 3) == 3 && lm_tree_first_child(1, 3) == 6);
    CHECK(lm_tree_parent(0, 3) == -1 && lm_tree_parent(2, 3) == -1 && lm_tree_parent(5, 3) == 0);
    CHECK(lm_tree_parent(6, 3) == 1 && lm_tree_parent(20, 3) == 5);
    /* node 20's parent is 5, whose parent is 0, a child of mpirun */
    CHECK(lm_tree_child_toward(-1, 20, 3) == 0);
    CHECK(lm_tree_child_toward(0, 20, 3) == 5);
    CHECK(lm_tree_child_toward(1, 20, 3) == -1); /* not below node 1 */
    /* fanout 1: a chain */
    CHECK(lm_tree_parent(3, 1) == 2 && lm_tree_child_toward(0, 3, 1) == 1 && lm_tree_child_toward(-1, 3, 1) == 0);
}

static void test_hosts(void)
{
    lm_hostlist hl = {0};
    CHECK(lm_hosts_parse_list("t", "a:2,b,c:3", &hl) == 0);
    CHECK(hl.n == 3 && hl.h[0].slots == 2 && hl.h[1].slots == 1 && hl.h[2].slots == 3);
    CHECK(lm_hosts_total_slots(&hl) == 6);
    lm_hosts_free(&hl);

    /* the slots of every host but the last filled equally */
    lm_hostlist eq = {0};
    CHECK(lm_hosts_parse_list("t", "a:2,b:2,c:2", &eq) == 0);
    int n = 5, rpn = 0;
    CHECK(lm_hosts_place("t", &eq, &n, 0, &rpn) == 0);
    CHECK(n == 5 && rpn == 2 && eq.n == 3 && eq.h[2].nranks == 1);
    lm_hosts_free(&eq);

    lm_hostlist few = {0};
    CHECK(lm_hosts_parse_list("t", "a:1,b:1", &few) == 0);
    n = 3;
    fprintf(stderr, "(three refusals expected below)\n");
    CHECK(lm_hosts_place("t", &few, &n, 0, &rpn) != 0); /* more ranks than slots */
    n = 5;
    CHECK(lm_hosts_place("t", &few, &n, 1, &rpn) == 0 && rpn == 3 && few.h[1].nranks == 2);
    lm_hosts_free(&few);

    /* unequal slots: accepted while the runs of equal counts fit a layout */
    lm_hostlist uneven = {0};
    CHECK(lm_hosts_parse_list("t", "a:1,b:3,c:3", &uneven) == 0);
    n = 0;
    CHECK(lm_hosts_place("t", &uneven, &n, 0, &rpn) == 0 && n == 7 && uneven.h[1].nranks == 3);
    lm_hosts_free(&uneven);
    lm_hostlist runs = {0};
    CHECK(lm_hosts_parse_list("t", "a:1,b:2,c:1,d:2,e:1,f:2,g:1,h:2,i:1", &runs) == 0);
    n = 0;
    CHECK(lm_hosts_place("t", &runs, &n, 0, &rpn) != 0); /* 9 runs */
    lm_hosts_free(&runs);

    lm_hostlist dup = {0};
    CHECK(lm_hosts_parse_list("t", "a,a", &dup) != 0);
    lm_hosts_free(&dup);

    char path[] = "/tmp/lm-hostfile-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    const char *text = "# comment\n\nx slots=3 max_slots=8\ny:2   # trailing\nz\n";
    CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    lm_hostlist f = {0};
    CHECK(lm_hosts_parse_file("t", path, &f) == 0);
    CHECK(f.n == 3 && f.h[0].slots == 3 && f.h[1].slots == 2 && f.h[2].slots == 1);
    CHECK(strcmp(f.h[1].name, "y") == 0);
    lm_hosts_free(&f);
    unlink(path);

    CHECK(lm_host_is_local("localhost"));
    CHECK(!lm_host_is_local("no-such-host-name.invalid"));
}

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
    CHECK(lm_broker_poll(&b, c1, &job, &rank, &tag, NULL, 0) == -EAGAIN);
    int a1 = lm_broker_queue(&b, "p", 1, 0, 0);
    CHECK(lm_broker_poll(&b, a1, &job, &rank, &tag, NULL, 0) == 0 && job == 1 && rank == 5);
    CHECK(lm_broker_poll(&b, c1, &job, &rank, &tag2, NULL, 0) == 0 && job == 0 && rank == 0 && tag2 == tag);
    CHECK(lm_broker_poll(&b, c1, &job, &rank, &tag2, NULL, 0) == -ENOENT); /* gone once answered */
    CHECK(lm_broker_poll(&b, c2, &job, &rank, &tag, NULL, 0) == -EAGAIN);
    /* the second pair gets another tag */
    int a2 = lm_broker_queue(&b, "p", 1, 0, 3);
    CHECK(lm_broker_poll(&b, a2, &job, &rank, &tag2, NULL, 0) == 0 && job == 2 && rank == 7 && tag2 != tag);
    CHECK(lm_broker_poll(&b, c2, &job, &rank, &tag, NULL, 0) == 0 && tag == tag2 && rank == 3);
    /* closing the port fails whoever waits on it */
    int a3 = lm_broker_queue(&b, "p", 1, 0, 0);
    CHECK(lm_broker_port_close(&b, "p") == 0);
    CHECK(lm_broker_port_close(&b, "p") == -ENOENT);
    CHECK(lm_broker_poll(&b, a3, &job, &rank, &tag, NULL, 0) == -ENOENT);
    /* a failed port tells the waiting why */
    CHECK(lm_broker_port_open(&b, "f", 0, 0) == 0);
    int a4 = lm_broker_queue(&b, "f", 1, 0, 0);
    CHECK(lm_broker_port_fail(&b, "f", "child died") == 0);
    char why[32] = "";
    CHECK(lm_broker_poll(&b, a4, &job, &rank, &tag, why, sizeof why) == -ECONNABORTED &&
          strcmp(why, "child died") == 0);
    CHECK(lm_broker_queue(&b, "f", 1, 0, 0) == -ENOENT);
    /* a cancelled ticket is gone; an ended process takes its ports and
     * tickets along */
    CHECK(lm_broker_port_open(&b, "q", 0, 4) == 0);
    int c3 = lm_broker_queue(&b, "q", 0, 1, 1);
    lm_broker_cancel(&b, c3);
    CHECK(lm_broker_poll(&b, c3, &job, &rank, &tag, NULL, 0) == -ENOENT);
    int c4 = lm_broker_queue(&b, "q", 0, 1, 1);
    lm_broker_forget(&b, 1, 1);
    CHECK(lm_broker_poll(&b, c4, &job, &rank, &tag, NULL, 0) == -ENOENT);
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
    signal(SIGPIPE, SIG_IGN); /* as mpirun: a closed reader is an error code */
    test_link();
    test_codec_and_job();
    test_tree();
    test_hosts();
    test_pairing();
    test_names();
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("PASS launcher parts: frame link, codec, job description, tree, host lists, broker\n");
    return 0;
}
