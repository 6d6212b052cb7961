/* Between the profile module's files. */
#ifndef MKCCL_PROFILE_INTERNAL_H
#define MKCCL_PROFILE_INTERNAL_H

#include <stdatomic.h>

#include "profile/profile.h"

/* The process's profiler table (NULL when none): the net callback's stops
 * and updates carry no communicator. */
extern const ncclProfiler_v6_t* _Atomic profile_process_prof;

#endif
