/* NCCL_IB_HCA parsing and matching (see net_ib_hca.h). */
#include "net_ib_hca.h"

#include <stdlib.h>
#include <string.h>

int net_ib_hca_parse(const char* text, net_ib_hca_list_t* out) {
  net_ib_hca_list_t l;
  memset(&l, 0, sizeof(l));
  const char* p = text ? text : "";
  while (*p == ' ') p++;
  if (*p == '^') l.exclude = 1, p++;
  if (*p == '=') l.exact = 1, p++;
  while (*p) {
    const char* end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len > 0) {
      if (l.n == IB_HCA_MAX) return -1;
      net_ib_hca_entry_t* e = &l.e[l.n];
      const char* colon = memchr(p, ':', len);
      size_t nameLen = colon ? (size_t)(colon - p) : len;
      if (nameLen == 0 || nameLen >= IB_HCA_NAME_MAX) return -1;
      memcpy(e->name, p, nameLen);
      e->name[nameLen] = 0;
      e->port = -1;
      if (colon) {
        char digits[16];
        size_t dl = len - nameLen - 1;
        if (dl == 0 || dl >= sizeof(digits)) return -1;
        memcpy(digits, colon + 1, dl);
        digits[dl] = 0;
        char* stop;
        long port = strtol(digits, &stop, 10);
        if (*stop || port < 0 || port > 255) return -1;
        e->port = (int)port;
      }
      l.n++;
    }
    if (!end) break;
    p = end + 1;
  }
  *out = l;
  return 0;
}

int net_ib_hca_match(const net_ib_hca_list_t* list, const char* name, int port) {
  if (list->n == 0) return 1;
  int found = 0;
  for (int i = 0; i < list->n && !found; i++) {
    const net_ib_hca_entry_t* e = &list->e[i];
    int nameOk = list->exact ? strcmp(name, e->name) == 0 : strncmp(name, e->name, strlen(e->name)) == 0;
    int portOk = e->port < 0 || port < 0 || e->port == port;
    found = nameOk && portOk;
  }
  return list->exclude ? !found : found;
}
