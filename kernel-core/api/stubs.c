/* Entry points whose implementation has not landed yet. Each returns
 * ncclInvalidUsage and says so in the last-error text; the README's status
 * table lists them. An entry leaves this file when it is implemented. */
#include "api/api.h"

#pragma GCC diagnostic ignored "-Wunused-parameter" /* stubs ignore their arguments */

#define MK_STUB(name, what, ...) \
  MK_API(ncclResult_t, name, __VA_ARGS__) { return api_not_implemented("nccl" #name, what); }

#define GPU_WORK "GPU memory and registration"

MK_STUB(CommWindowRegister, GPU_WORK, ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win,
        int winFlags)
MK_STUB(CommWindowDeregister, GPU_WORK, ncclComm_t comm, ncclWindow_t win)
