#include "net_socket_chunk.h"

size_t net_socket_chunk_size(size_t size, int nSocks, size_t minChunk) {
  if (minChunk == 0) minChunk = 1;
  if (nSocks < 1) nSocks = 1;
  size_t even = (size + (size_t)nSocks - 1) / (size_t)nSocks;
  return even > minChunk ? even : minChunk;
}

int net_socket_chunk_count(size_t size, size_t chunkSize) {
  if (size == 0 || chunkSize == 0) return 0;
  /* Not (size + chunkSize - 1) / chunkSize: a chunk size from the wire near
   * SIZE_MAX wrapped that to 0 chunks (fuzz_net_socket). */
  return (int)(size / chunkSize + (size % chunkSize != 0));
}

void net_socket_chunk_get(size_t size, size_t chunkSize, int i, size_t* offset, size_t* length) {
  size_t off = (size_t)i * chunkSize;
  size_t left = off < size ? size - off : 0;
  *offset = off < size ? off : size;
  *length = left < chunkSize ? left : chunkSize;
}
