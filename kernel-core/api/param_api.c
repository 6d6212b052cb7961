/* NCCL 2.30's parameter API: parameters by name, as typed values or
 * strings. Not implemented yet (mkccl-info --params lists mkccl's table). */
#include "api/api.h"
#include "base/err.h"

#define PARAMS "NCCL 2.30's parameter API"

MK_API(ncclResult_t, ParamBind, ncclParamHandle_t* out, const char* key) {
  (void)out, (void)key;
  return api_not_implemented("ncclParamBind", PARAMS);
}

/* The typed getters, one per type. */
#define PARAM_GETTER(suffix, ctype)                                   \
  MK_API(ncclResult_t, ParamGet##suffix, ncclParamHandle_t h, ctype* out) { \
    (void)h, (void)out;                                               \
    return api_not_implemented("ncclParamGet" #suffix, PARAMS);       \
  }
PARAM_GETTER(I8, int8_t)
PARAM_GETTER(I16, int16_t)
PARAM_GETTER(I32, int32_t)
PARAM_GETTER(I64, int64_t)
PARAM_GETTER(U8, uint8_t)
PARAM_GETTER(U16, uint16_t)
PARAM_GETTER(U32, uint32_t)
PARAM_GETTER(U64, uint64_t)
PARAM_GETTER(Str, const char*)

MK_API(ncclResult_t, ParamGet, ncclParamHandle_t h, void* out, int maxLen, int* len) {
  (void)h, (void)out, (void)maxLen, (void)len;
  return api_not_implemented("ncclParamGet", PARAMS);
}

MK_API(ncclResult_t, ParamGetParameter, const char* key, const char** value, int* valueLen) {
  (void)key, (void)value, (void)valueLen;
  return api_not_implemented("ncclParamGetParameter", PARAMS);
}

MK_API(ncclResult_t, ParamGetAllParameterKeys, const char*** table, int* tableLen) {
  (void)table, (void)tableLen;
  return api_not_implemented("ncclParamGetAllParameterKeys", PARAMS);
}

/* No result to return: the warning and the last-error text say it. */
MK_API(void, ParamDumpAll, void) { (void)api_not_implemented("ncclParamDumpAll", PARAMS); }
