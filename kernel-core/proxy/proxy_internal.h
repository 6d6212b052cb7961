#ifndef MKCCL_PROXY_INTERNAL_H
#define MKCCL_PROXY_INTERNAL_H

#include "proxy/proxy.h"

struct proxy_loop {
  op_queue_t queue;
  proxy_op_t* activeHead;
  proxy_op_t* activeTail;
  int nActive;
};

#endif
