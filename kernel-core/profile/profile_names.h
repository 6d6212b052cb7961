/* NCCL's names for functions, datatypes, algorithms and protocols, as the
 * profiler ABI passes them (v2+ take strings, v1 numbers). */
#ifndef MKCCL_PROFILE_NAMES_H
#define MKCCL_PROFILE_NAMES_H

const char* profile_func_str(int func);         /* "AllReduce"; "Unknown" out of range */
const char* profile_datatype_str(int datatype); /* "ncclFloat32" */
const char* profile_algo_str(int algo);         /* "Ring" */
const char* profile_proto_str(int proto);       /* "Simple" */
/* The reverse (for v1's numeric fields); 0xff when unknown or NULL. */
unsigned profile_func_code(const char* s);
unsigned profile_datatype_code(const char* s);
unsigned profile_algo_code(const char* s);
unsigned profile_proto_code(const char* s);

#endif
