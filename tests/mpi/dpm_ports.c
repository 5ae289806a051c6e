/* Ports, names and join: MPI_Open_port / MPI_Close_port, MPI_Comm_accept
 * and MPI_Comm_connect between the two halves of MPI_COMM_WORLD (the port
 * found through MPI_Publish_name / MPI_Lookup_name), point-to-point and a
 * merged allreduce over the result, the same with the roles swapped and a
 * root other than rank 0, MPI_Comm_join over a TCP connection on the
 * loopback interface, and the errors: a name published twice
 * (MPI_ERR_SERVICE), looked up or unpublished when it is not there
 * (MPI_ERR_NAME, MPI_ERR_SERVICE), a port closed twice and a connect to a
 * closed port (MPI_ERR_PORT). */
#include "mpitest.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

static int wrank, wsize;

static void names(void)
{
    char port[MPI_MAX_PORT_NAME], found[MPI_MAX_PORT_NAME], service[64];
    snprintf(service, sizeof service, "leanmpi-test-%d", wrank);
    CHECK_MPI(MPI_Open_port(MPI_INFO_NULL, port));
    CHECK_MPI(MPI_Publish_name(service, MPI_INFO_NULL, port));
    CHECK_ERRCLASS(MPI_Publish_name(service, MPI_INFO_NULL, port), MPI_ERR_SERVICE);
    CHECK_MPI(MPI_Lookup_name(service, MPI_INFO_NULL, found));
    CHECK(strcmp(port, found) == 0, "looked up '%.200s', published '%.200s'", found, port);
    CHECK_MPI(MPI_Unpublish_name(service, MPI_INFO_NULL, port));
    CHECK_ERRCLASS(MPI_Lookup_name(service, MPI_INFO_NULL, found), MPI_ERR_NAME);
    CHECK_ERRCLASS(MPI_Unpublish_name(service, MPI_INFO_NULL, port), MPI_ERR_SERVICE);
    CHECK_MPI(MPI_Close_port(port));
    CHECK_ERRCLASS(MPI_Close_port(port), MPI_ERR_PORT);
    MPI_Comm ic;
    CHECK_ERRCLASS(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic), MPI_ERR_PORT);
    CHECK(ic == MPI_COMM_NULL, "no communicator after a failed connect");
    mt_pass("names and ports, and their errors");
}

/* The low half accepts (root: its rank `aroot`), the high half connects
 * (root: its rank `croot`); if swap, the roles change sides. */
static void accept_connect(int swap, int aroot, int croot)
{
    int half = wsize / 2, low = wrank < half;
    MPI_Comm side;
    CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, low, wrank, &side));
    int accepting = swap ? !low : low;
    int root = accepting ? aroot % mt_size(side) : croot % mt_size(side);
    char port[MPI_MAX_PORT_NAME] = "", service[64];
    snprintf(service, sizeof service, "leanmpi-test-ac-%d", swap);
    if (accepting && mt_rank(side) == root) {
        CHECK_MPI(MPI_Open_port(MPI_INFO_NULL, port));
        CHECK_MPI(MPI_Publish_name(service, MPI_INFO_NULL, port));
    }
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD)); /* published before anyone looks */
    MPI_Comm ic;
    if (accepting) {
        CHECK_MPI(MPI_Comm_accept(port, MPI_INFO_NULL, root, side, &ic));
    } else {
        if (mt_rank(side) == root) CHECK_MPI(MPI_Lookup_name(service, MPI_INFO_NULL, port));
        CHECK_MPI(MPI_Comm_connect(mt_rank(side) == root ? port : NULL, MPI_INFO_NULL, root, side, &ic));
    }
    int rsize;
    CHECK_MPI(MPI_Comm_remote_size(ic, &rsize));
    CHECK_EQ(rsize, wsize - mt_size(side));
    /* every process sends its world rank to every remote one */
    for (int i = 0; i < rsize; i++) CHECK_MPI(MPI_Send(&wrank, 1, MPI_INT, i, 5, ic));
    for (int i = 0; i < rsize; i++) {
        int v;
        MPI_Status st;
        CHECK_MPI(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 5, ic, &st));
        CHECK_EQ(v, low ? half + st.MPI_SOURCE : st.MPI_SOURCE);
    }
    MPI_Comm merged;
    CHECK_MPI(MPI_Intercomm_merge(ic, !low, &merged));
    CHECK_EQ(mt_rank(merged), wrank);
    int sum = 0;
    CHECK_MPI(MPI_Allreduce(&wrank, &sum, 1, MPI_INT, MPI_SUM, merged));
    CHECK_EQ(sum, wsize * (wsize - 1) / 2);
    CHECK_MPI(MPI_Comm_free(&merged));
    CHECK_MPI(MPI_Comm_disconnect(&ic));
    if (accepting && mt_rank(side) == root) {
        CHECK_MPI(MPI_Unpublish_name(service, MPI_INFO_NULL, port));
        CHECK_MPI(MPI_Close_port(port));
    }
    CHECK_MPI(MPI_Comm_free(&side));
}

static void join(void)
{
    int fd = -1;
    if (wrank == 0) {
        int ls = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof a;
        CHECK(ls >= 0 && bind(ls, (struct sockaddr *)&a, sizeof a) == 0 && listen(ls, 1) == 0 &&
                  getsockname(ls, (struct sockaddr *)&a, &len) == 0,
              "listening socket on the loopback interface");
        int port = ntohs(a.sin_port);
        CHECK_MPI(MPI_Send(&port, 1, MPI_INT, 1, 9, MPI_COMM_WORLD));
        fd = accept(ls, NULL, NULL);
        CHECK(fd >= 0, "accept");
        close(ls);
    } else if (wrank == 1) {
        int port;
        CHECK_MPI(MPI_Recv(&port, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {
            .sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        CHECK(fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0, "connect to rank 0");
    }
    if (fd >= 0) {
        MPI_Comm ic;
        CHECK_MPI(MPI_Comm_join(fd, &ic));
        close(fd);
        int rsize, other = 1 - wrank, v = -1;
        CHECK_MPI(MPI_Comm_remote_size(ic, &rsize));
        CHECK_EQ(rsize, 1);
        CHECK_MPI(MPI_Sendrecv(&wrank, 1, MPI_INT, 0, 3, &v, 1, MPI_INT, 0, 3, ic, MPI_STATUS_IGNORE));
        CHECK_EQ(v, other);
        CHECK_MPI(MPI_Comm_disconnect(&ic));
    }
    mt_pass("MPI_Comm_join over a loopback TCP connection");
}

int main(int argc, char **argv)
{
    CHECK_MPI(MPI_Init(&argc, &argv));
    mt_errors_return();
    wrank = mt_rank(MPI_COMM_WORLD);
    wsize = mt_size(MPI_COMM_WORLD);
    names();
    if (!mt_skip_unless(2, "accept/connect and join")) {
        accept_connect(0, 0, 0);
        accept_connect(1, 1, 2);
        mt_pass("accept and connect between the halves of MPI_COMM_WORLD");
        join();
    }
    CHECK_MPI(MPI_Finalize());
    return 0;
}
