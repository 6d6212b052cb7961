/* Which root serves which ranks when there are several (as NCCL's
 * rootIdFromRank): the first nRanks % nRoots roots take one rank more. */
#include "bootstrap/bootstrap.h"

int bootstrap_root_of_rank(int rank, int nRanks, int nRoots) {
  if (nRoots <= 0 || rank < 0 || rank >= nRanks) return -1;
  int rmr = nRanks % nRoots, rpr = nRanks / nRoots;
  int d = rmr * (rpr + 1);
  return rank < d ? rank / (rpr + 1) : (rank - d) / rpr + rmr;
}

int bootstrap_root_first_rank(int root, int nRanks, int nRoots) {
  int rmr = nRanks % nRoots, rpr = nRanks / nRoots;
  return root < rmr ? root * (rpr + 1) : rmr * (rpr + 1) + (root - rmr) * rpr;
}

int bootstrap_root_rank_count(int root, int nRanks, int nRoots) {
  return nRanks / nRoots + (root < nRanks % nRoots ? 1 : 0);
}
