/* NCCL's algorithm, protocol and function names, for tuners, NCCL_ALGO /
 * NCCL_PROTO and logs. ABI headers only, like the model. */
#ifndef MKCCL_COSTMODEL_COSTMODEL_NAMES_H
#define MKCCL_COSTMODEL_COSTMODEL_NAMES_H

#include <stddef.h>

#include "tuner/nccl_tuner.h"

/* Lower-case names ("tree", "ring", "collnetdirect", "collnetchain", "nvls",
 * "nvlstree", "pat"; "ll", "ll128", "simple"; "broadcast", "reduce",
 * "allgather", "reducescatter", "allreduce", "sendrecv", "send", "recv"),
 * "?" when out of range. */
const char* costmodel_algo_name(int algo);
const char* costmodel_proto_name(int proto);
const char* costmodel_func_name(int func);
/* Case-insensitive lookups of the names above over text[0..len); -1 if none. */
int costmodel_algo_parse(const char* text, size_t len);
int costmodel_proto_parse(const char* text, size_t len);
int costmodel_func_parse(const char* text, size_t len);

#endif
