/* Placement for topology constructors called with reorder = 1: the vertices
 * of the topology's graph go onto the processes so that as many edges as
 * the greedy finds lie within a host, by the same method as leanmpi-map's
 * greedy engine (docs/MAPPING.md), here on unit edge weights.
 *
 * Every process computes the same placement from the same arguments and
 * the job's layout, so no message is needed: each takes as its key (the
 * new rank) the vertex placed on it. Hosts are filled one at a time, in
 * the order their first process appears: a seed with the fewest unplaced
 * neighbours (a vertex on the graph's edge, so that the host's part grows
 * compactly), then, while the host has room, the unplaced vertex that adds
 * most edges within the host less the edges it leaves to other unplaced
 * vertices (ties to the lowest vertex). The placement is kept only when
 * fewer edges cross hosts than in the rank order, so reordering never makes
 * a topology worse by that count. On one host, or for graphs above
 * MAP_MAX vertices (the greedy takes O(n^2) steps), ranks keep their
 * order. Memory: O(n + edges), freed before returning. */
#include "comm/topo_map.h"
#include "boot/boot.h"
#include "util/lm_mem.h"
#include <string.h>

#define MAP_MAX 16384

/* Edges (u, v) with u and v on different hosts, each listed once per
 * direction in the adjacency. */
static long cut(int n, const int *xadj, const int *adj, const int *host_of_vertex)
{
    long c = 0;
    for (int u = 0; u < n; u++)
        for (int e = xadj[u]; e < xadj[u + 1]; e++) c += host_of_vertex[u] != host_of_vertex[adj[e]];
    return c;
}

int lm_topo_map_wanted(const lm_comm *p, int n)
{
    return n >= 3 && n <= MAP_MAX && n <= p->size && lm_boot_node_count() > 1;
}

int lm_topo_map_key(lm_comm *p, int n, const int *xadj, const int *adj, int *key)
{
    *key = p->rank;
    if (!lm_topo_map_wanted(p, n) || p->rank >= n) return MPI_SUCCESS;
    /* scratch: the host of each process (numbered by first appearance),
     * the vertex on each process, the host of each vertex, the gains,
     * placed flags, processes per host */
    int nodes = lm_boot_node_count();
    int *s = lm_calloc(LM_MEM_COMM, 6 * (size_t)n + (size_t)nodes, sizeof(int));
    if (!s) return MPI_ERR_NO_MEM;
    int *host = s, *vertex_on = s + n, *host_of_vertex = s + 2 * n, *gain = s + 3 * n, *placed = s + 4 * n,
        *room = s + 5 * n, *host_of_node = s + 6 * n;
    int hosts = 0;
    for (int q = 0; q < n; q++) {
        int node = lm_boot_node_of(lm_comm_world_rank(p, q));
        if (node < 0 || node >= nodes) goto keep_order;        /* a process of another job: no layout to use */
        if (!host_of_node[node]) host_of_node[node] = ++hosts; /* numbered as met, from 1 */
        host[q] = host_of_node[node] - 1;
        room[host[q]]++;
    }
    if (hosts < 2) goto keep_order;
    for (int h = 0; h < hosts; h++) {
        /* gain[v]: edges from v into this host's vertices, less those to
         * other unplaced vertices */
        for (int v = 0; v < n; v++) {
            gain[v] = 0;
            if (placed[v]) continue;
            for (int e = xadj[v]; e < xadj[v + 1]; e++) gain[v] -= !placed[adj[e]];
        }
        for (int k = 0; k < room[h]; k++) {
            int best = -1;
            for (int v = 0; v < n; v++)
                if (!placed[v] && (best < 0 || gain[v] > gain[best])) best = v;
            placed[best] = 1;
            host_of_vertex[best] = h;
            /* its neighbours gain an edge into the host and lose one to the
             * unplaced (+2), except that the edge now counts once */
            for (int e = xadj[best]; e < xadj[best + 1]; e++)
                if (!placed[adj[e]]) gain[adj[e]] += 2;
        }
    }
    /* vertices of each host onto that host's processes, both in rank order */
    for (int h = 0; h < hosts; h++) {
        int v = 0;
        for (int q = 0; q < n; q++) {
            if (host[q] != h) continue;
            while (host_of_vertex[v] != h) v++;
            vertex_on[q] = v++;
        }
    }
    long mapped = cut(n, xadj, adj, host_of_vertex);
    /* the rank order: vertex q on process q */
    for (int q = 0; q < n; q++) host_of_vertex[q] = host[q];
    if (mapped < cut(n, xadj, adj, host_of_vertex)) *key = vertex_on[p->rank];
keep_order:
    lm_free(LM_MEM_COMM, s);
    return MPI_SUCCESS;
}
