/* Copying the v12 properties into an older layout: each version keeps the
 * fields of the one before and adds its own. */
#ifndef NET_SOCKET_VPROPS_H
#define NET_SOCKET_VPROPS_H

#include <string.h>

#define NET_SOCKET_PROPS_V6(dst, src)  \
  do {                                 \
    memset((dst), 0, sizeof(*(dst)));  \
    (dst)->name = (src)->name;         \
    (dst)->pciPath = (src)->pciPath;   \
    (dst)->guid = (src)->guid;         \
    (dst)->ptrSupport = (src)->ptrSupport; \
    (dst)->speed = (src)->speed;       \
    (dst)->port = (src)->port;         \
    (dst)->latency = (src)->latency;   \
    (dst)->maxComms = (src)->maxComms; \
    (dst)->maxRecvs = (src)->maxRecvs; \
  } while (0)

#define NET_SOCKET_PROPS_V7(dst, src)                  \
  do {                                                 \
    NET_SOCKET_PROPS_V6(dst, src);                     \
    (dst)->netDeviceType = (src)->netDeviceType;       \
    (dst)->netDeviceVersion = (src)->netDeviceVersion; \
  } while (0)

#define NET_SOCKET_PROPS_V8(dst, src)        \
  do {                                       \
    NET_SOCKET_PROPS_V7(dst, src);           \
    (dst)->regIsGlobal = (src)->regIsGlobal; \
  } while (0)

/* maxDevs: the vProps.devs capacity of dst's version. */
#define NET_SOCKET_PROPS_V9(dst, src, maxDevs)                                                    \
  do {                                                                                            \
    NET_SOCKET_PROPS_V8(dst, src);                                                                \
    (dst)->forceFlush = (src)->forceFlush;                                                        \
    (dst)->vProps.ndevs = (src)->vProps.ndevs < (maxDevs) ? (src)->vProps.ndevs : (maxDevs);      \
    for (int d_ = 0; d_ < (dst)->vProps.ndevs; d_++) (dst)->vProps.devs[d_] = (src)->vProps.devs[d_]; \
    (dst)->maxP2pBytes = (src)->maxP2pBytes;                                                      \
    (dst)->maxCollBytes = (src)->maxCollBytes;                                                    \
  } while (0)

#define NET_SOCKET_PROPS_V11(dst, src, maxDevs)              \
  do {                                                       \
    NET_SOCKET_PROPS_V9(dst, src, maxDevs);                  \
    (dst)->maxMultiRequestSize = (src)->maxMultiRequestSize; \
  } while (0)

#endif
