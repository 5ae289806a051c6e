/* Direct modex keeps a rank's key traffic proportional to the peers it talks
 * to, never to the job: every rank exchanges its host name with its two ring
 * neighbours only, then reads the MPI_T counter boot_key_fetches (keys of
 * other hosts' processes fetched from the launcher). A rank may have fetched
 * at most 2 keys (its neighbours' network addresses) at any job size; and
 * each pair of neighbours on different hosts needs at least one fetch (the
 * side that connects first; the connection then serves both ways), so the
 * job's total is at least the number of such pairs. Run at 4, 8 and 16
 * ranks over 2 and 4 hosts: a start-up that fetched every rank's address
 * would count up to 15 per rank. argv[1]: ranks per host (the hosts of the tests
 * may be names on one machine, whose processor names are all the same);
 * argv[2], optional: keys every rank may fetch at start besides (1 under
 * another launcher: the node segment's key, tests/foreign). */
#include "mpitest.h"
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, len;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int per_host = argc > 1 ? atoi(argv[1]) : 0;
    if (per_host <= 0) {
        printf("FAIL: usage: key_fetches RANKS_PER_HOST\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char me[MPI_MAX_PROCESSOR_NAME] = {0}, left_host[MPI_MAX_PROCESSOR_NAME], right_host[MPI_MAX_PROCESSOR_NAME];
    MPI_Get_processor_name(me, &len);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Sendrecv(me, sizeof me, MPI_CHAR, right, 1, left_host, sizeof left_host, MPI_CHAR, left, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Sendrecv(me, sizeof me, MPI_CHAR, left, 2, right_host, sizeof right_host, MPI_CHAR, right, 2, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    unsigned long long fetches = mt_read_pvar("boot_key_fetches");
    int host = rank / per_host;
    int remote_neighbours = (left / per_host != host) + (right / per_host != host && right != left);
    int extra = argc > 2 ? atoi(argv[2]) : 0;
    int ok = fetches != ~0ull && fetches <= 2ull + (unsigned)extra;
    printf("%s: rank %d of %d on %s: %llu key fetches, %d neighbour(s) on other hosts\n", ok ? "PASS" : "FAIL", rank,
           size, me, fetches, remote_neighbours);
    unsigned long long total = 0;
    MPI_Reduce(&fetches, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        int crossing = 0; /* ring pairs (i, i+1) on different hosts */
        for (int i = 0; i < size && size > 1; i++)
            if (i / per_host != ((i + 1) % size) / per_host && !(size == 2 && i == 1)) crossing++;
        int all = total >= (unsigned long long)crossing;
        printf("%s: %llu key fetches in all for %d neighbour pairs across hosts\n", all ? "PASS" : "FAIL", total,
               crossing);
        ok = ok && all;
    }
    MPI_Finalize();
    return ok ? 0 : 1;
}
