/* Completion and release, for both sides: test progresses a request's comm
 * and reports it done; closeSend/closeRecv free a comm. */
#ifndef NET_SOCKET_TEST_H
#define NET_SOCKET_TEST_H

#include "nccl.h"

ncclResult_t net_socket_test(void* request, int* done, int* sizes);
ncclResult_t net_socket_close_comm(void* comm);

#endif
