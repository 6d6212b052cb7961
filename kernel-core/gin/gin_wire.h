/* What one engine sends another: a header, then the payload. Messages
 * from one rank to another travel one net comm, applied in the order
 * sent: a put's signal rides its last message, so it is added after the
 * payload of this put and of every earlier one to that peer landed. */
#ifndef MKCCL_GIN_GIN_WIRE_H
#define MKCCL_GIN_GIN_WIRE_H

#include <stdint.h>

#define GIN_WIRE_MAGIC 0x4d4b4749u /* "MKGI" */

#define GIN_WIRE_SIGNAL 0x1u     /* add signalValue to signal signalId once the payload landed */

typedef struct gin_wire_hdr {
  uint32_t magic;
  uint8_t ctx;
  uint8_t flags;
  uint16_t pad;
  uint32_t signalId;
  uint32_t pad2;
  uint64_t dstWin;  /* the target window's GIN handle; 0 with no payload */
  uint64_t dstOff;  /* of this message's payload in that window */
  uint64_t bytes;   /* payload bytes after the header */
  uint64_t signalValue;
  uint64_t reserved[2];
} gin_wire_hdr_t;

_Static_assert(sizeof(gin_wire_hdr_t) == 64, "the header keeps payloads 64-byte aligned");

#endif
