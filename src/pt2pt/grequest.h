/* Generalized requests: the hooks the completion calls use. Each returns the
 * error code of the user callback it ran (MPI_SUCCESS when there is none). */
#ifndef LM_GREQUEST_H
#define LM_GREQUEST_H
#include "pt2pt/request.h"

/* query_fn into st (MPI_STATUS_IGNORE allowed); the request stays. */
int lm_grequest_query(lm_request *r, MPI_Status *st);
/* A completed request: query_fn, then free_fn; the request is released and
 * *h set to MPI_REQUEST_NULL. The first failing callback's code is returned. */
int lm_grequest_retire(MPI_Request *h, lm_request *r, MPI_Status *st);
/* MPI_Request_free: free_fn now when complete, else at MPI_Grequest_complete. */
int lm_grequest_free(lm_request *r);
/* MPI_Cancel: cancel_fn with whether the request is complete. */
int lm_grequest_cancel(lm_request *r);

#endif
