/* How a message is cut into chunks across the data sockets of a comm.
 * The sender chooses the chunk size and puts it in the message header; both
 * ends then derive the same chunks, and walk the data sockets round-robin
 * from a counter they advance identically, message after message. */
#ifndef NET_SOCKET_CHUNK_H
#define NET_SOCKET_CHUNK_H

#include <stddef.h>

/* Chunk size for a message of `size` bytes over nSocks sockets: the message
 * spread evenly, but no chunk under minChunk (one socket for small ones). */
size_t net_socket_chunk_size(size_t size, int nSocks, size_t minChunk);

/* Chunks of chunkSize covering `size` bytes (0 for an empty message). */
int net_socket_chunk_count(size_t size, size_t chunkSize);

/* Offset and length of chunk i. */
void net_socket_chunk_get(size_t size, size_t chunkSize, int i, size_t* offset, size_t* length);

#endif
