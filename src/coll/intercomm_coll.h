/* Collectives over intercommunicators with the standard's semantics, by a
 * simple scheme kept apart from the intracommunicator algorithms: a
 * collective on the hidden local communicator (comm/intercomm.h) plus one
 * exchange between the two leaders (local rank 0 on each side), or direct
 * point-to-point to and from a root. Traffic between the groups goes on the
 * intercommunicator's collective context. coll_api.c calls these when the
 * communicator is an intercommunicator; each raises its own errors. */
#ifndef LM_INTERCOMM_COLL_H
#define LM_INTERCOMM_COLL_H
#include "comm/comm.h"

int lm_inter_barrier(MPI_Comm comm, lm_comm *c);
int lm_inter_bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, lm_comm *c);
/* all = 1: MPI_Allreduce (root ignored), else MPI_Reduce */
int lm_inter_reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                    int all, MPI_Comm comm, lm_comm *c);
int lm_inter_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                       MPI_Datatype recvtype, MPI_Comm comm, lm_comm *c);
int lm_inter_gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                    MPI_Datatype recvtype, int root, MPI_Comm comm, lm_comm *c);
int lm_inter_scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                     MPI_Datatype recvtype, int root, MPI_Comm comm, lm_comm *c);
int lm_inter_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                      MPI_Datatype recvtype, MPI_Comm comm, lm_comm *c);

#endif
