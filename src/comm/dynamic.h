/* Dynamic processes (comm/dynamic.c): what the runtime calls. */
#ifndef LM_COMM_DYNAMIC_H
#define LM_COMM_DYNAMIC_H

/* In MPI_Init of a spawned job: connect to the parent job
 * (LEANMPI_PARENT_PORT), collective over MPI_COMM_WORLD; MPI_SUCCESS when
 * this job has no parent. */
int lm_dynamic_connect_parent(void);

#endif
