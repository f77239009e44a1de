// Array kernels of the bulk SX reader's grouping (adapters/casadi/sxgroup.py) and merge
// check (adapters/casadi/sxmerge.py): loops over the (positions x instances) matrices of
// a bucket and over the spine items, one function each, with the NumPy passes' results
// bit for bit (uint64 arithmetic wraps alike); adapters/casadi/sxkernels_native.py
// calls them through ctypes.  Arrays are C-contiguous, matrices row-major; bool arrays
// are one byte per entry.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

namespace {

const uint64_t M1 = 0x9E3779B97F4A7C15ULL;

// splitmix64's finalizer (adapters/casadi/mix64.py)
inline uint64_t fmix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

}  // namespace

namespace {

// the first occurrence of each value along the columns (caspar_first_occurrence);
// value(i) the value at flat index i = p * N + c.  Columns go in tiles of kTile, each
// column of a tile with its own small hash table, and a tile is read row by row: the
// row-major matrix is then read in runs of kTile consecutive entries, not one entry per
// cache line (a bucket can hold 10^4-10^5 instances)
constexpr int64_t kTile = 32;

template <class Value>
void first_occurrences(int64_t L, int64_t N, Value value, int64_t* F, uint8_t* differs) {
  int64_t T = 1;
  while (T < 2 * L) T *= 2;
  const uint64_t mask = static_cast<uint64_t>(T - 1);
  std::vector<uint64_t> key(kTile * T);
  std::vector<int64_t> pos(kTile * T), stamp(kTile * T, -1);
  std::fill(differs, differs + N, 0);
  for (int64_t c0 = 0; c0 < N; c0 += kTile) {
    const int64_t c1 = std::min(N, c0 + kTile);
    for (int64_t p = 0; p < L; ++p) {
      for (int64_t c = c0; c < c1; ++c) {
        const int64_t base = (c - c0) * T;    // this column's table
        const uint64_t v = value(p * N + c);
        int64_t j = static_cast<int64_t>(fmix(v) & mask);
        while (stamp[base + j] == c && key[base + j] != v) j = (j + 1) & (T - 1);
        if (stamp[base + j] != c) {
          stamp[base + j] = c;
          key[base + j] = v;
          pos[base + j] = p;
        }
        F[p * N + c] = pos[base + j];
        differs[c] |= pos[base + j] != F[p * N];
      }
    }
  }
}

}  // namespace

// sxgroup._first_occurrence over the (L, N) row-major V: F[p, c] the smallest q with
// V[q, c] == V[p, c] (q <= p); differs[c] = 1 where column c of F is not column 0's.
// Per column, each value looked up in a small hash table of the column's values met so
// far (entries stamped with their column: no clearing).
extern "C" void caspar_first_occurrence(int64_t L, int64_t N, const uint64_t* V,
                                        int64_t* F, uint8_t* differs) {
  first_occurrences(L, N, [V](int64_t i) { return V[i]; }, F, differs);
}

// the same of V = vh[M] (M: node ids), without V
extern "C" void caspar_first_occurrence_of(int64_t L, int64_t N, const int64_t* M,
                                           const uint64_t* vh, int64_t* F,
                                           uint8_t* differs) {
  first_occurrences(L, N, [M, vh](int64_t i) { return vh[M[i]]; }, F, differs);
}

// sxgroup._gather and the op/leaf part of sxgroup._mismatch in one pass per position:
// M (L x N) the node of position p of each instance (row 0 `first`; row p the argument
// arg[p] of row parent[p]; -1 below a missing argument), bad[c] = 1 where a position of
// instance c is missing or differs from the representative's nodes `rep` in op or leaf
extern "C" void caspar_gather_positions(int64_t L, int64_t N, const int64_t* parent,
                                        const int64_t* arg, const int64_t* rep,
                                        const int64_t* a0, const int64_t* a1,
                                        const int64_t* op, const int8_t* leaf,
                                        const int64_t* first, int64_t* M, uint8_t* bad) {
  std::fill(bad, bad + N, 0);
  for (int64_t p = 0; p < L; ++p) {
    int64_t* row = M + p * N;
    if (p == 0) {
      std::copy(first, first + N, row);
    } else {
      const int64_t* src = arg[p] == 0 ? a0 : a1;
      const int64_t* up = M + parent[p] * N;
      for (int64_t c = 0; c < N; ++c) row[c] = up[c] >= 0 ? src[up[c]] : -1;
    }
    const int64_t o = op[rep[p]];
    const int8_t l = leaf[rep[p]];
    for (int64_t c = 0; c < N; ++c) {
      const int64_t m = row[c];
      if (m < 0 || op[m] != o || leaf[m] != l) bad[c] = 1;
    }
  }
}

// sxgroup._patterns: the distinct columns of the (R, N) X, in order of first
// occurrence (columns hashed, equal hashes compared in full): first[j] the first
// column of pattern j, inv[c] the pattern of column c; returns the pattern count
extern "C" int64_t caspar_distinct_columns(int64_t R, int64_t N, const int64_t* X,
                                           int64_t* first, int64_t* inv) {
  int64_t T = 1;
  while (T < 2 * N) T *= 2;
  std::vector<int64_t> slot(T, -1);             // a pattern id
  std::vector<uint64_t> code(N);
  const uint64_t mask = static_cast<uint64_t>(T - 1);
  for (int64_t c = 0; c < N; ++c) code[c] = 0;
  for (int64_t r = 0; r < R; ++r) {
    const int64_t* x = X + r * N;
    for (int64_t c = 0; c < N; ++c) code[c] = fmix(code[c] * M1 ^ static_cast<uint64_t>(x[c]));
  }
  int64_t P = 0;
  for (int64_t c = 0; c < N; ++c) {
    int64_t j = static_cast<int64_t>(code[c] & mask);
    while (true) {
      const int64_t s = slot[j];
      if (s < 0) {
        slot[j] = P;
        first[P] = c;
        inv[c] = P++;
        break;
      }
      const int64_t f = first[s];
      bool same = code[f] == code[c];
      for (int64_t r = 0; same && r < R; ++r) same = X[r * N + f] == X[r * N + c];
      if (same) {
        inv[c] = s;
        break;
      }
      j = (j + 1) & (T - 1);
    }
  }
  return P;
}

// sxmerge.merge_candidates' keys met more than once: twice[i] = 1 where key[i] equals
// another key (a hash table of first indices and counts)
extern "C" void caspar_repeated(int64_t n, const uint64_t* key, uint8_t* twice) {
  int64_t T = 1;
  while (T < 2 * n) T *= 2;
  std::vector<int64_t> slot(T, -1);
  std::vector<int64_t> where(n);                 // the slot of each key
  std::vector<uint8_t> many(T, 0);
  const uint64_t mask = static_cast<uint64_t>(T - 1);
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t k = key[i];
    int64_t j = static_cast<int64_t>(fmix(k) & mask);
    while (slot[j] >= 0 && key[slot[j]] != k) j = (j + 1) & (T - 1);
    if (slot[j] < 0) {
      slot[j] = i;
    } else {
      many[j] = 1;
    }
    where[i] = j;
  }
  for (int64_t i = 0; i < n; ++i) twice[i] = many[where[i]];
}

// sxmerge.merge_candidates after its inputs (see there): the signature of each node it
// signs (walked, and a spine node heading its chain (head) or a scaled node) -- a spine
// node: the rolling hash of the non-constant items of its
// subtree (x_j = +-fmix(item hash), sum of x_j B^(j - lo), negated on an odd parity,
// plus the item count times C); a scaled node: fmix(its S's signature ^ the factor's
// bits) ^ 3 -- then out[k] = 1 where a node's signature is another's, n_out[k] the
// item count of a spine node.  The items come grouped by tree, each tree's in tour
// order (dist falling); returns 0 where they do not (the caller takes its NumPy
// passes), else 1.
extern "C" int64_t caspar_merge_signatures(
    int64_t K, const int64_t* op, const int8_t* leaf, int64_t leaf_const,
    const uint64_t* vh, const uint8_t* hashed, int64_t n_it, const int64_t* top_id,
    const int64_t* t_node, const uint8_t* t_par, const int64_t* t_dist,
    const int64_t* head, const uint8_t* walked, const uint8_t* spine, const uint8_t* scaled,
    const int64_t* top_of, const int64_t* span, const int64_t* S_of, const double* c_of,
    uint8_t* out, int64_t* n_out) {
  const uint64_t B = 0x100000001B3ULL, C = 0xC2B2AE3D27D4EB4FULL;
  uint64_t Binv = 1;                            // B^-1 mod 2^64 (Newton's iteration)
  for (int i = 0; i < 6; ++i) Binv *= 2 - B * Binv;
  // the nodes signed: walked chain heads, unfused additions, NEG, scaled spines
  auto signed_node = [&](int64_t k) {
    return walked[k] && ((spine[k] && head[k] == k) || scaled[k]);
  };
  std::vector<int64_t> idx;                     // ascending
  for (int64_t k = 0; k < K; ++k) {
    out[k] = 0;
    n_out[k] = 0;
    if (signed_node(k)) idx.push_back(k);
  }
  std::vector<uint64_t> P, ipw;                 // prefix sums of x_j B^j; B^-j
  std::vector<int64_t> td, start;               // items' dists; each tree's first item
  P.reserve(n_it + 1);
  ipw.reserve(n_it + 1);
  td.reserve(n_it);
  P.push_back(0);
  ipw.push_back(1);
  // each tree's run of items (a tree seen in two runs: not grouped); int32 where the
  // runs fit
  std::vector<int32_t> rank(K, -1);
  uint64_t pw = 1;
  int64_t prev_top = -1;
  for (int64_t i = 0; i < n_it; ++i) {
    const int64_t n = t_node[i];
    if (leaf[n] == leaf_const) continue;
    const int64_t t = top_id[i], j = static_cast<int64_t>(td.size());
    if (j == 0 || t != prev_top) {
      if (rank[t] >= 0) return 0;               // a tree's items in two runs
      if (start.size() >= static_cast<size_t>(INT32_MAX)) return 0;
      rank[t] = static_cast<int32_t>(start.size());
      start.push_back(j);
      prev_top = t;
    } else if (t_dist[i] >= td.back()) {
      return 0;                                 // not in tour order
    }
    uint64_t x = fmix(hashed[n] ? vh[n] : fmix(static_cast<uint64_t>(op[n]) + 7));
    if (t_par[i]) x = 0 - x;
    P.push_back(P.back() + x * pw);
    pw *= B;
    ipw.push_back(ipw.back() * Binv);
    td.push_back(t_dist[i]);
  }
  start.push_back(static_cast<int64_t>(td.size()));
  // the first item of [b, e) whose dist is at most d (dists fall along a tree)
  auto first_at_most = [&](int64_t b, int64_t e, int64_t d) {
    while (b < e) {
      const int64_t m = b + (e - b) / 2;
      if (td[m] <= d) e = m; else b = m + 1;
    }
    return b;
  };
  // signatures of the signed nodes (sig[i] of idx[i]): spine nodes first ...
  const size_t n_sig = idx.size();
  std::vector<uint64_t> sig(n_sig, 0);
  for (size_t i = 0; i < n_sig; ++i) {
    const int64_t k = idx[i];
    if (!spine[k]) continue;
    const int64_t t = top_of[k], r = t >= 0 ? rank[t] : -1;
    int64_t lo = 0, hi = 0;
    if (r >= 0) {
      lo = first_at_most(start[r], start[r + 1], span[3 * k]);
      hi = first_at_most(start[r], start[r + 1], span[3 * k + 1]);
    }
    uint64_t rel = (P[hi] - P[lo]) * ipw[lo];
    if (span[3 * k + 2] > 0) rel = 0 - rel;
    sig[i] = rel + static_cast<uint64_t>(hi - lo) * C;
    n_out[k] = hi - lo;
  }
  // ... then the scaled ones, from their S's (0 where S is not signed)
  for (size_t i = 0; i < n_sig; ++i) {
    const int64_t k = idx[i];
    if (!scaled[k]) continue;
    const int64_t s = S_of[k];
    const auto at = std::lower_bound(idx.begin(), idx.end(), s);
    const uint64_t ss = at != idx.end() && *at == s && spine[s] ? sig[at - idx.begin()] : 0;
    const double c = c_of[k] + 0.0;
    uint64_t bits;
    std::memcpy(&bits, &c, sizeof bits);
    sig[i] = fmix(ss ^ bits) ^ 3;
  }
  std::vector<uint8_t> twice(n_sig);
  caspar_repeated(static_cast<int64_t>(n_sig), sig.data(), twice.data());
  for (size_t i = 0; i < n_sig; ++i) out[idx[i]] = twice[i];
  return 1;
}

namespace {

// a set of uint64 keys (open addressing, the keys themselves in the table, 0 marking
// an empty slot and the key 0 kept aside); add() says whether the key is new,
// prefetch() asks for a key's first slot ahead of its add (the table is far larger
// than the caches: a miss a key otherwise)
class KeySet {
 public:
  explicit KeySet(int64_t n) {
    int64_t T = 1;
    while (T < 2 * n) T *= 2;
    keys_.assign(T, 0);
    mask_ = static_cast<uint64_t>(T - 1);
  }
  void prefetch(uint64_t k) const { __builtin_prefetch(&keys_[slot(k)], 1); }
  bool add(uint64_t k) {
    if (k == 0) {
      const bool fresh = !zero_;
      zero_ = true;
      return fresh;
    }
    uint64_t j = slot(k);
    while (keys_[j] != 0) {
      if (keys_[j] == k) return false;
      j = (j + 1) & mask_;
    }
    keys_[j] = k;
    return true;
  }

 private:
  uint64_t slot(uint64_t k) const { return (k ^ (k >> 31)) & mask_; }
  std::vector<uint64_t> keys_;
  uint64_t mask_;
  bool zero_ = false;
};

}  // namespace

// sxsharing.sharing_allows' counts per root r < R over the instances i < I with
// split[i] (its bincounts and first_of_each passes in one loop each):
//   n_terms[r]  the split instances of r,   total[r]  their ops_of,
//   pos_total[r]  their first_nl,
//   term_total[r]  ops_of of the first instance of each distinct term key
//                  (hashed node ? vh : fmix(node ^ 0x5851F42D)) ^ wrap * wrap_mul
//                  ^ bits(c + 0.0) ^ fmix(r + ROOT), node -1 read as 0,
//   distinct[r]  the distinct keys vh[node] ^ fmix(r + ROOT) of the split instances
//                with a node (node >= 0),
// ROOT = 0x632BE59BD9B4E019; the sums of ops as float64 (NumPy's weighted bincount:
// integers, exact).
extern "C" void caspar_sharing_counts(int64_t I, int64_t R, const int64_t* root,
                                      const int64_t* node, const int8_t* wrap,
                                      const double* c, const uint8_t* split,
                                      const int64_t* ops_of, const int64_t* first_nl,
                                      const uint8_t* hashed, const uint64_t* vh,
                                      uint64_t wrap_mul, double* total, int64_t* n_terms,
                                      double* pos_total, double* term_total,
                                      int64_t* distinct) {
  const uint64_t ROOT = 0x632BE59BD9B4E019ULL;
  std::fill(total, total + R, 0.0);
  std::fill(n_terms, n_terms + R, 0);
  std::fill(pos_total, pos_total + R, 0.0);
  std::fill(term_total, term_total + R, 0.0);
  std::fill(distinct, distinct + R, 0);
  int64_t n_split = 0;
  for (int64_t i = 0; i < I; ++i) n_split += split[i] ? 1 : 0;
  // the split instances' two keys, then each key set filled with its slots fetched
  // PREFETCH keys ahead
  const int64_t PREFETCH = 16;
  std::vector<int64_t> at;
  std::vector<uint64_t> th, tk;
  at.reserve(n_split);
  th.reserve(n_split);
  tk.reserve(n_split);
  for (int64_t i = 0; i < I; ++i) {
    if (!split[i]) continue;
    const int64_t r = root[i], nd = node[i] > 0 ? node[i] : 0;
    total[r] += static_cast<double>(ops_of[i]);
    n_terms[r] += 1;
    pos_total[r] += static_cast<double>(first_nl[i]);
    const double ci = c[i] + 0.0;
    uint64_t bits;
    std::memcpy(&bits, &ci, sizeof bits);
    const uint64_t rk = fmix(static_cast<uint64_t>(r) + ROOT), v = vh[nd];
    at.push_back(i);
    th.push_back((hashed[nd] ? v : fmix(static_cast<uint64_t>(nd) ^ 0x5851F42DULL))
                 ^ (static_cast<uint64_t>(static_cast<int64_t>(wrap[i])) * wrap_mul)
                 ^ bits ^ rk);
    tk.push_back(v ^ rk);
  }
  {
    KeySet terms(n_split);
    for (int64_t q = 0; q < n_split; ++q) {
      if (q + PREFETCH < n_split) terms.prefetch(th[q + PREFETCH]);
      const int64_t i = at[q];
      if (terms.add(th[q])) term_total[root[i]] += static_cast<double>(ops_of[i]);
    }
  }
  KeySet tops(n_split);
  for (int64_t q = 0; q < n_split; ++q) {
    if (q + PREFETCH < n_split) tops.prefetch(tk[q + PREFETCH]);
    const int64_t i = at[q];
    if (node[i] >= 0 && tops.add(tk[q])) distinct[root[i]] += 1;
  }
}

// sxterms.split_instances' second level: the L first-level items in order, each a row
// of the output, but a distributed scaled item (dist[i]; d-th such) the n_in[d] items
// of its S in tour order, s_sorted[starts[d] + j] (j < n_in[d]), each of them wrapped
// by the scaled node's factor: wrap mul or div (div_of), c c_of, parity xor the item's,
// k2 minus its dist, host its host, outer the item's parity.  Rows elsewhere copy the
// item (k2 0, wrap 0, c 0, outer 0).  Returns the row count.
extern "C" int64_t caspar_expand_items(
    int64_t L, const int64_t* lvl_root, const int64_t* lvl_node, const uint8_t* lvl_par,
    const int64_t* lvl_k1, const int64_t* lvl_host, const uint8_t* dist,
    const int64_t* starts, const int64_t* n_in, const int64_t* s_sorted,
    const int64_t* t_node, const uint8_t* t_par, const int64_t* t_dist,
    const int64_t* t_host, const uint8_t* div_of, const double* c_of, int64_t mul,
    int64_t div, int64_t* node, uint8_t* par, int8_t* wrap, double* cc, int64_t* k1,
    int64_t* k2, int64_t* host, int64_t* root, uint8_t* outer) {
  int64_t q = 0, d = 0;
  for (int64_t i = 0; i < L; ++i) {
    if (!dist[i]) {
      node[q] = lvl_node[i];
      par[q] = lvl_par[i];
      wrap[q] = 0;
      cc[q] = 0.0;
      k1[q] = lvl_k1[i];
      k2[q] = 0;
      host[q] = lvl_host[i];
      root[q] = lvl_root[i];
      outer[q] = 0;
      ++q;
      continue;
    }
    const int64_t scn = lvl_node[i], st = starts[d], m = n_in[d];
    ++d;
    const int8_t w = static_cast<int8_t>(div_of[scn] ? div : mul);
    for (int64_t j = 0; j < m; ++j) {
      const int64_t src = s_sorted[st + j];
      node[q] = t_node[src];
      par[q] = lvl_par[i] ^ t_par[src];
      wrap[q] = w;
      cc[q] = c_of[scn];
      k1[q] = lvl_k1[i];
      k2[q] = -t_dist[src];
      host[q] = t_host[src];
      root[q] = lvl_root[i];
      outer[q] = lvl_par[i];
      ++q;
    }
  }
  return q;
}
