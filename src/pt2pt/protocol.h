/* Wire format of point-to-point traffic carried as transport active messages. */
#ifndef LM_PROTOCOL_H
#define LM_PROTOCOL_H
#include <stdint.h>

#define LM_AM_PT2PT 1

enum lm_pkt_type {
    LM_PKT_EAGER = 1, /* header + whole message */
    LM_PKT_RTS,       /* rendezvous: request to send (sender address for single copy or RMA read) */
    LM_PKT_CTS,       /* receiver ready: stream the data through cells */
    LM_PKT_DATA,      /* one chunk of a streamed message */
    LM_PKT_FIN,       /* receiver copied the data: the send is complete */
    LM_PKT_SYNC_ACK,  /* a synchronous-mode eager message was matched */
    LM_PKT_COPY_HELP, /* receiver: share the single copy (rreq: job record key, addr: receive buffer) */
    LM_PKT_PIPE,      /* receiver: fill my pipe (rreq: which, size: the bytes I take) */
    LM_PKT_CONGESTED, /* receiver on another host: send by rendezvous (size 1) or eagerly again (size 0) */
};

#define LM_PKT_FLAG_SYNC 1u
/* RTS: the sender's data has gaps (a derived type), so its address cannot
 * be read in one copy; the receiver asks for the packed stream (CTS) */
#define LM_PKT_FLAG_NONCONTIG 2u
/* RTS: the sender exposed its buffer to the network's RMA read; addr and
 * rkey name it there */
#define LM_PKT_FLAG_RKEY 4u
/* The ranks share an address space. CTS: my receive buffer (addr) is
 * contiguous: pack the first `size` bytes of your data straight into it;
 * DATA: the data is in your receive buffer already (no payload). */
#define LM_PKT_FLAG_IN_PLACE 8u

/* The matching envelope comes first and the fields only some packets need
 * last, so that an eager packet sends only its prefix: 16 bytes (24 with
 * the synchronous-mode request), which leaves a small payload in the same
 * cache line as the transport's own header. */
typedef struct lm_pkt {
    uint8_t am_id; /* LM_AM_PT2PT */
    uint8_t type;  /* enum lm_pkt_type */
    uint16_t flags;
    int32_t context;  /* matching context */
    int32_t src_rank; /* sender's rank in the communicator */
    int32_t tag;
    uint64_t sreq; /* sender's request (address in the sender) */
    uint64_t size; /* whole message in bytes (eager: the payload length) */
    uint64_t rreq; /* receiver's request (address in the receiver) */
    uint64_t addr; /* RTS: sender buffer address; DATA: offset */
    uint64_t rkey; /* RTS with LM_PKT_FLAG_RKEY: the key of the sender's exposed buffer */
} lm_pkt;

#define LM_PKT_EAGER_HDR 16      /* envelope only */
#define LM_PKT_EAGER_SYNC_HDR 24 /* envelope + sreq */

_Static_assert(sizeof(lm_pkt) <= 64, "packet header must fit an AM header");
_Static_assert(__builtin_offsetof(lm_pkt, sreq) == LM_PKT_EAGER_HDR, "eager prefix");
_Static_assert(__builtin_offsetof(lm_pkt, size) == LM_PKT_EAGER_SYNC_HDR, "sync eager prefix");

#endif
