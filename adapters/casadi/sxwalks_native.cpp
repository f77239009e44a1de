// The bulk SX reader's DAG walks in C++: the loops of adapters/casadi/sxwalks.py
// (Numba), one function each, with the same results bit for bit (uint64 arithmetic
// wraps alike); adapters/casadi/sxwalks_native.py calls them through ctypes.  Arrays
// are C-contiguous, of length n (the DAG's node count) unless said otherwise; bool
// arrays are one byte per entry.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace {

const uint64_t M1 = 0x9E3779B97F4A7C15ULL, M2 = 0xC2B2AE3D27D4EB4FULL,
               M3 = 0x165667B19E3779F9ULL;

// splitmix64's finalizer (adapters/casadi/mix64.py)
inline uint64_t fmix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// the hash of a node of op `op` over argument hashes ha, hb (0: unary)
inline uint64_t node(uint64_t op, uint64_t ha, uint64_t hb) {
  return fmix(((op + 1) * M1) ^ (ha * M2) ^ (((hb << 29) | (hb >> 35)) * M3));
}

// an inner node k's shape and value hashes from its arguments b0 and b1 (b1 < 0:
// unary); bake[k]: the second argument enters by its value's bits, not its hash
inline void hash_inner(int64_t k, uint64_t op, int64_t b0, int64_t b1, const uint8_t* bake,
                       const uint64_t* bits, uint64_t* h, uint64_t* vh) {
  uint64_t hb = 0, vb = 0;
  if (b1 >= 0) {
    hb = bake[k] ? fmix(bits[b1] ^ M3) : h[b1];
    vb = vh[b1];
  }
  h[k] = node(op, h[b0], hb);
  vh[k] = node(op, vh[b0], vb);
}

// the hashes of leaf k of kind l (kinds: LEAF_VAR, LEAF_PAR, LEAF_CONST; H their
// hashes): h = H[kind], vh = fmix(h ^ fmix(ident ^ M3)) with ident the bits of
// value + 0.0 (a constant) or max(attr, 0) (a variable or parameter); false for another
// kind (h and vh untouched)
inline bool leaf_hash(int8_t l, int64_t k, const double* value, const int64_t* attr,
                      const int64_t* kinds, const uint64_t* H, uint64_t& h, uint64_t& vh) {
  uint64_t hk = 0, ident = 0;
  if (l == kinds[0] || l == kinds[1]) {
    hk = H[l == kinds[0] ? 0 : 1];
    ident = static_cast<uint64_t>(attr[k] > 0 ? attr[k] : 0);
  } else if (l == kinds[2]) {
    hk = H[2];
    const double v = value[k] + 0.0;
    std::memcpy(&ident, &v, sizeof ident);
  } else {
    return false;
  }
  h = hk;
  vh = fmix(hk ^ fmix(ident ^ M3));
  return true;
}

// the depth from the nearest root (users before arguments), max_depth + 1 where it is
// more; D: a type holding max_depth + 1 (one byte for the usual 48: a smaller array)
template <class D>
void depths(int64_t n, const int64_t* a0, const int64_t* a1, const int8_t* leaf,
            int64_t not_leaf, const int64_t* roots, int64_t n_roots, int64_t max_depth,
            uint8_t* inner) {
  std::vector<D> depth(n, static_cast<D>(max_depth + 1));
  for (int64_t i = 0; i < n_roots; ++i) {
    if (leaf[roots[i]] == not_leaf) depth[roots[i]] = 0;
  }
  for (int64_t k = n - 1; k >= 0; --k) {
    const int64_t d = depth[k];
    if (d >= max_depth || leaf[k] != not_leaf) continue;
    const int64_t args[2] = {a0[k], a1[k]};
    for (int64_t b : args) {
      if (b >= 0 && leaf[b] == not_leaf && depth[b] > d + 1) depth[b] = static_cast<D>(d + 1);
    }
  }
  for (int64_t k = 0; k < n; ++k) inner[k] = depth[k] <= max_depth;
}

}  // namespace

// sxwalks.hash_trees: shape and value hashes of the trees under `roots`, in place;
// writes inner (0/1) and height.  Arrays of length n unless named otherwise.
extern "C" void caspar_hash_trees(int64_t n, const int64_t* op, const int64_t* a0,
                                  const int64_t* a1, const int8_t* leaf, int64_t not_leaf,
                                  uint64_t* h, uint64_t* vh, int64_t* size,
                                  const uint8_t* bake, const uint64_t* bits,
                                  const int64_t* roots, int64_t n_roots, int64_t max_depth,
                                  int64_t big, uint8_t* inner, int64_t* height) {
  if (max_depth < 255) {
    depths<uint8_t>(n, a0, a1, leaf, not_leaf, roots, n_roots, max_depth, inner);
  } else {
    depths<int64_t>(n, a0, a1, leaf, not_leaf, roots, n_roots, max_depth, inner);
  }
  for (int64_t k = 0; k < n; ++k) {              // arguments before users
    height[k] = 0;
    if (leaf[k] != not_leaf) continue;
    if (!inner[k]) {
      height[k] = big;
      size[k] = big;
      continue;
    }
    const int64_t b0 = a0[k], b1 = a1[k];
    // (an argument after its user -- never in casadi's programs -- reads height 0)
    int64_t hk = b0 < k ? height[b0] : 0;
    if (b1 >= 0 && (b1 < k ? height[b1] : 0) > hk) hk = height[b1];
    height[k] = 1 + hk < big ? 1 + hk : big;
    if (height[k] > max_depth) continue;
    hash_inner(k, static_cast<uint64_t>(op[k]), b0, b1, bake, bits, h, vh);
    const int64_t s1 = b1 >= 0 ? size[b1] : 0;
    size[k] = size[b0] + s1 < big ? size[b0] + s1 : big;
  }
}

// sxhash.term_hashes in one call: the leaves' hashes (caspar_leaf_hashes), the walk
// (caspar_hash_trees) and the flags (caspar_hash_flags), with height and size kept
// in small saturating scratch arrays instead of int64 ones: height counts to
// max_depth + 1 and size to max_leaves + 1, enough for every comparison the three
// make (max_depth < 255, max_leaves < 2^31 - 1).  Writes h, vh (uint64), hashed, ok.
extern "C" void caspar_term_hashes(int64_t n, const int64_t* op, const int64_t* a0,
                                   const int64_t* a1, const int8_t* leaf, int64_t not_leaf,
                                   const double* value, const int64_t* attr,
                                   const int64_t* kinds, const uint64_t* H,
                                   const uint8_t* bake, const uint64_t* bits,
                                   const int64_t* roots, int64_t n_roots, int64_t max_depth,
                                   int64_t max_leaves, uint64_t* h, uint64_t* vh,
                                   uint8_t* hashed, uint8_t* ok) {
  const uint8_t top = static_cast<uint8_t>(max_depth + 1);
  const uint32_t cap = static_cast<uint32_t>(max_leaves + 1);
  std::vector<uint8_t> inner(n);
  depths<uint8_t>(n, a0, a1, leaf, not_leaf, roots, n_roots, max_depth, inner.data());
  std::vector<uint8_t> height(n);
  std::vector<uint32_t> size(n);
  for (int64_t k = 0; k < n; ++k) {              // arguments before users
    height[k] = 0;
    const int8_t l = leaf[k];
    if (l != not_leaf) {
      const bool counted = leaf_hash(l, k, value, attr, kinds, H, h[k], vh[k]);
      if (!counted) h[k] = vh[k] = 0;
      size[k] = counted ? 1 : 0;
      hashed[k] = 1;
      ok[k] = size[k] <= max_leaves;
      continue;
    }
    h[k] = vh[k] = 0;
    size[k] = 0;
    hashed[k] = ok[k] = 0;
    if (!inner[k]) {
      height[k] = top;
      size[k] = cap;
      continue;
    }
    const int64_t b0 = a0[k], b1 = a1[k];
    // (an argument after its user -- never in casadi's programs -- reads height 0)
    uint8_t hg = b0 < k ? height[b0] : 0;
    if (b1 >= 0 && (b1 < k ? height[b1] : 0) > hg) hg = height[b1];
    height[k] = hg + 1 < top ? static_cast<uint8_t>(hg + 1) : top;
    if (height[k] > max_depth) continue;
    hash_inner(k, static_cast<uint64_t>(op[k]), b0, b1, bake, bits, h, vh);
    const uint32_t s1 = b1 >= 0 ? size[b1] : 0;
    const uint64_t sz = static_cast<uint64_t>(size[b0]) + s1;
    size[k] = sz < cap ? static_cast<uint32_t>(sz) : cap;
    hashed[k] = 1;
    ok[k] = size[k] <= static_cast<uint64_t>(max_leaves);
  }
}

// sxwalks.chain_heads: head[k] = head[user[k]] where fused[k], else k
extern "C" void caspar_chain_heads(int64_t n, const int64_t* user, const uint8_t* fused,
                                   int64_t* head) {
  for (int64_t k = 0; k < n; ++k) head[k] = k;
  for (int64_t k = n - 1; k >= 0; --k) {
    if (fused[k]) head[k] = head[user[k]];
  }
}

namespace {

// single_writes with writer ids of type W (int32 where the n instructions fit)
template <class W>
int64_t single_writes_t(int64_t n, int64_t size, const int64_t* w, const int64_t* a,
                        const int64_t* b, int64_t* arg0, int64_t* arg1) {
  std::unique_ptr<W[]> writer(new W[size > 0 ? size : 1]);
  std::fill(writer.get(), writer.get() + size, static_cast<W>(-1));
  // the entries after a failing instruction are -1, as the Numba loop leaves them
  auto fail = [&](int64_t k) {
    std::fill(arg0 + k + 1, arg0 + n, -1);
    std::fill(arg1 + k + 1, arg1 + n, -1);
    return 0;
  };
  for (int64_t k = 0; k < n; ++k) {
    arg0[k] = arg1[k] = -1;
    if (a[k] >= 0) {
      const W src = writer[a[k]];
      if (src < 0) return fail(k);
      arg0[k] = src;
    }
    if (b[k] >= 0) {
      const W src = writer[b[k]];
      if (src < 0) return fail(k);
      arg1[k] = src;
    }
    if (w[k] >= 0) {
      if (writer[w[k]] >= 0) return fail(k);
      writer[w[k]] = static_cast<W>(k);
    }
  }
  return 1;
}

}  // namespace

// sxwalks.single_writes: arg0/arg1 the writers of the slots read (every entry written
// here); returns 1 (ok) or 0 (a slot written twice or read before written)
extern "C" int64_t caspar_single_writes(int64_t n, const int64_t* w, const int64_t* a,
                                        const int64_t* b, int64_t* arg0, int64_t* arg1) {
  int64_t size = 0;
  for (int64_t k = 0; k < n; ++k) size = std::max({size, w[k] + 1, a[k] + 1, b[k] + 1});
  if (n <= INT32_MAX) return single_writes_t<int32_t>(n, size, w, a, b, arg0, arg1);
  return single_writes_t<int64_t>(n, size, w, a, b, arg0, arg1);
}

// sxwalks.first_of_each: the first index of each distinct key, in order of first
// occurrence, into out (length n); returns their count
extern "C" int64_t caspar_first_of_each(int64_t n, const uint64_t* key, int64_t* out) {
  int64_t T = 1;
  while (T < 2 * n) T *= 2;
  std::vector<int64_t> slot(T, -1);
  const uint64_t mask = static_cast<uint64_t>(T - 1);
  int64_t m = 0;
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t k = key[i];
    int64_t j = static_cast<int64_t>((k ^ (k >> 31)) & mask);
    while (true) {
      const int64_t s = slot[j];
      if (s < 0) {
        slot[j] = i;
        out[m++] = i;
        break;
      }
      if (key[s] == k) break;
      j = (j + 1) & (T - 1);
    }
  }
  return m;
}

// sxwalks.claims_hold over the (L, N) arrays M, F; returns 1 when every claim holds
extern "C" int64_t caspar_claims_hold(const int64_t* op, const int8_t* leaf,
                                      const int64_t* attr, const uint64_t* bits,
                                      const int64_t* a0, const int64_t* a1,
                                      const uint64_t* vh, int64_t L, int64_t N,
                                      const int64_t* M, const int64_t* F) {
  for (int64_t i = 0; i < L; ++i) {
    for (int64_t c = 0; c < N; ++c) {
      const int64_t m = M[i * N + c], s = M[F[i * N + c] * N + c];
      if (m == s) continue;                     // a node's claim on itself holds
      if (op[m] != op[s] || leaf[m] != leaf[s] || attr[m] != attr[s] || bits[m] != bits[s])
        return 0;
      int64_t x = a0[m], y = a0[s];
      if ((x < 0) != (y < 0) || vh[std::max<int64_t>(x, 0)] != vh[std::max<int64_t>(y, 0)])
        return 0;
      x = a1[m];
      y = a1[s];
      if ((x < 0) != (y < 0) || vh[std::max<int64_t>(x, 0)] != vh[std::max<int64_t>(y, 0)])
        return 0;
    }
  }
  return 1;
}

// sxwalks.spine_tour (S spine nodes sp, ascending; n_tops tops).  Writes top_of (n),
// span (n x 3) and the requested tops' items into o_* (room for 2 S); returns their
// count.  During a tree's tour span holds each node's enter and exit events and its
// parity (its own row: no per-spine-node scratch arrays), made distances when the tree
// is done.  The tour roots are the spine nodes that are not tree nodes, in sp's order;
// when the tops asked for are exactly these (dfs_order's call), the items are written
// straight into o_* in tour order, else into scratch arrays and copied out per top.
extern "C" int64_t caspar_spine_tour(int64_t n, const int64_t* op, const int64_t* a0,
                                     const int64_t* a1, const uint8_t* tree, int64_t S,
                                     const int64_t* sp, int64_t n_tops, const int64_t* tops,
                                     int64_t add, int64_t sub, int64_t neg, int64_t* top_of,
                                     int64_t* span, int64_t* o_top, int64_t* o_node,
                                     uint8_t* o_par, int64_t* o_dist, int64_t* o_host) {
  for (int64_t k = 0; k < n; ++k) {
    top_of[k] = -1;
    span[3 * k] = span[3 * k + 1] = span[3 * k + 2] = -1;
  }
  bool direct = true;
  int64_t r = 0;
  for (int64_t j = 0; j < S && direct; ++j) {
    if (tree[sp[j]]) continue;
    direct = r < n_tops && tops[r] == sp[j];
    ++r;
  }
  direct = direct && r == n_tops;
  std::vector<int64_t> b_node, b_at, b_host;
  std::vector<uint8_t> b_par;
  int64_t *it_node = o_node, *it_at = o_dist, *it_host = o_host;
  uint8_t* it_par = o_par;
  if (!direct) {
    b_node.resize(2 * S);
    b_at.resize(2 * S);
    b_host.resize(2 * S);
    b_par.resize(2 * S);
    it_node = b_node.data();
    it_at = b_at.data();
    it_host = b_host.data();
    it_par = b_par.data();
  }
  // scratch touched only as deep or as far as the tours go (no initialization)
  std::unique_ptr<int64_t[]> visit(new int64_t[S > 0 ? S : 1]);
  std::unique_ptr<int64_t[]> stack(new int64_t[S > 0 ? S : 1]);
  std::unique_ptr<uint8_t[]> state(new uint8_t[S > 0 ? S : 1]);
  std::vector<int64_t> roots, first_item, last_item, last_event;   // (!direct only)
  int64_t n_items = 0;
  for (int64_t j0 = 0; j0 < S; ++j0) {
    const int64_t root = sp[j0];
    if (tree[root]) continue;
    const int64_t i0 = n_items;
    int64_t t = 0, n_visit = 0;
    span[3 * root] = t++;
    span[3 * root + 2] = 0;
    visit[n_visit++] = root;
    int64_t depth = 0;
    stack[0] = root;
    state[0] = 0;
    while (depth >= 0) {
      const int64_t k = stack[depth];
      const uint8_t st = state[depth];
      const bool two = op[k] == add || op[k] == sub;
      if (st == 0 || (st == 1 && two)) {
        const int64_t kid = st == 0 ? a0[k] : a1[k];
        const bool flip = st == 0 ? op[k] == neg : op[k] == sub;
        const int64_t p = span[3 * k + 2] ^ (flip ? 1 : 0);
        state[depth] = st + 1;
        if (tree[kid]) {
          span[3 * kid + 2] = p;
          span[3 * kid] = t++;
          visit[n_visit++] = kid;
          ++depth;
          stack[depth] = kid;
          state[depth] = 0;
        } else {
          it_node[n_items] = kid;
          it_par[n_items] = static_cast<uint8_t>(p);
          it_at[n_items] = t++;
          it_host[n_items] = k;
          ++n_items;
        }
      } else {
        span[3 * k + 1] = t++;
        --depth;
      }
    }
    const int64_t last = t - 1;                   // the root's exit
    for (int64_t v = 0; v < n_visit; ++v) {
      const int64_t k = visit[v];
      top_of[k] = root;
      span[3 * k] = last - span[3 * k];
      span[3 * k + 1] = last - span[3 * k + 1];
    }
    if (direct) {
      for (int64_t i = i0; i < n_items; ++i) {
        o_top[i] = root;
        o_dist[i] = last - o_dist[i];
      }
    } else {
      roots.push_back(root);
      first_item.push_back(i0);
      last_item.push_back(n_items);
      last_event.push_back(last);
    }
  }
  if (direct) return n_items;
  // the items of the requested tops, in their order (a repeated top at its last
  // position): a reverse pass counts, a second one fills from the end.  A top's tour
  // is found by binary search among the roots (ascending, as sp)
  auto tour_of = [&](int64_t tp) -> int64_t {
    const auto it = std::lower_bound(roots.begin(), roots.end(), tp);
    return it != roots.end() && *it == tp ? it - roots.begin() : -1;
  };
  std::vector<uint8_t> seen(roots.size(), 0);
  int64_t n_out = 0;
  for (int64_t q = n_tops - 1; q >= 0; --q) {
    const int64_t u = tour_of(tops[q]);
    if (u >= 0 && !seen[u]) {
      seen[u] = 1;
      n_out += last_item[u] - first_item[u];
    }
  }
  std::fill(seen.begin(), seen.end(), 0);
  int64_t m = n_out;
  for (int64_t q = n_tops - 1; q >= 0; --q) {
    const int64_t u = tour_of(tops[q]);
    if (u < 0 || seen[u]) continue;
    seen[u] = 1;
    m -= last_item[u] - first_item[u];
    for (int64_t i = first_item[u]; i < last_item[u]; ++i) {
      const int64_t o = m + i - first_item[u];
      o_top[o] = tops[q];
      o_node[o] = it_node[i];
      o_par[o] = it_par[i];
      o_host[o] = it_host[i];
      o_dist[o] = last_event[u] - it_at[i];
    }
  }
  return n_out;
}

// sxchains.program_uses: uses[k] = how many arguments (a0, a1) and the n_out outputs
// read node k (uses zeroed here)
extern "C" void caspar_program_uses(int64_t n, const int64_t* a0, const int64_t* a1,
                                    int64_t n_out, const int64_t* out, int64_t* uses) {
  std::fill(uses, uses + n, 0);
  for (int64_t k = 0; k < n; ++k) {
    if (a0[k] >= 0) ++uses[a0[k]];
    if (a1[k] >= 0) ++uses[a1[k]];
  }
  for (int64_t i = 0; i < n_out; ++i) ++uses[out[i]];
}

// bulk._plain with bulk._chain_constants_ok: 1 when caspar's graph builds every node as
// it is (the rules are _plain's: no op on constants only; no constant 0 or +-1 where
// add, sub, mul, div, if_else_zero would drop it; no constant argument of neg, fmod,
// copysign, a first one of if_else_zero; no --x; no x - x, if_else_zero(x, x) by the
// canonical keys of sxmerge.canonical; at most one constant per chain of single-use
// additions (heads `head`) outside the chains `gathered`), else 0.  code: the op codes
// ADD, SUB, MUL, DIV, NEG, IF_ELSE_ZERO, FMOD, COPYSIGN, OUTPUT
extern "C" int64_t caspar_plain(int64_t n, const int64_t* op, const int64_t* a0,
                                const int64_t* a1, const int8_t* leaf, const double* value,
                                const uint64_t* vh, const uint8_t* hashed,
                                const int64_t* code, int64_t not_leaf, int64_t leaf_const,
                                const int64_t* head, int64_t n_gathered,
                                const int64_t* gathered) {
  const int64_t ADD = code[0], SUB = code[1], MUL = code[2], DIV = code[3], NEG = code[4],
                IEZ = code[5], FMOD = code[6], CPS = code[7], OUT = code[8];
  auto canon = [&](int64_t m) {
    return hashed[m] ? vh[m] : fmix(static_cast<uint64_t>(m) ^ 0x5851F42D4C957F2DULL);
  };
  std::vector<uint8_t> n_const(n, 0);      // constants per chain head, saturating at 2
  for (int64_t k = 0; k < n; ++k) {
    const int64_t o = op[k], x = a0[k], y = a1[k];
    const bool has0 = x >= 0, has1 = y >= 0;
    const bool c0 = has0 && leaf[x] == leaf_const, c1 = has1 && leaf[y] == leaf_const;
    if (leaf[k] == not_leaf && o != OUT && c0 && (!has1 || c1)) return 0;
    if (c0) {
      const double v = value[x];
      const bool zero = v == 0.0, unit = v == 1.0 || v == -1.0;
      if (((o == ADD || o == SUB || o == DIV) && zero) || (o == MUL && (zero || unit)) ||
          o == NEG || o == IEZ || o == FMOD || o == CPS)
        return 0;
    }
    if (c1) {
      const double v = value[y];
      const bool zero = v == 0.0, unit = v == 1.0 || v == -1.0;
      if (((o == ADD || o == SUB || o == IEZ) && zero) || (o == MUL && (zero || unit)) ||
          (o == DIV && v == 1.0) || o == FMOD || o == CPS)
        return 0;
    }
    if (o == NEG && has0 && op[x] == NEG) return 0;
    if (o == SUB || o == IEZ) {
      const uint64_t k0 = has0 ? canon(x) : 0, k1 = has1 ? canon(y) : 1;
      if (k0 == k1 && (o != SUB || has1)) return 0;
    }
    if (o == ADD || o == SUB) {
      uint8_t& c = n_const[head[k]];
      c = static_cast<uint8_t>(std::min(2, c + (c0 ? 1 : 0) + (c1 ? 1 : 0)));
    }
  }
  for (int64_t i = 0; i < n_gathered; ++i) n_const[gathered[i]] = 0;
  for (int64_t k = 0; k < n; ++k) {
    if (n_const[k] > 1) return 0;
  }
  return 1;
}

// sxchains.sum_chains: head[k] the head of the chain of single-use additions node k
// belongs to (k itself outside one), in_sum[k] whether k is an ADD/SUB of a chain of
// three terms or more.  A link is an ADD/SUB used once (uses), by an ADD/SUB: its user
// (unique, being its only use) follows it in instruction order -- so a forward pass
// has marked every link of node k (has_link) when it reaches k, and a backward pass
// has the head of k's user when it reaches k.  User ids int32 where the n nodes fit.
namespace {

template <class U>
void sum_chains_t(int64_t n, const int64_t* op, const int64_t* a0, const int64_t* a1,
                  const int64_t* uses, int64_t add, int64_t sub, int64_t* head,
                  uint8_t* in_sum) {
  std::unique_ptr<U[]> user(new U[n > 0 ? n : 1]);
  std::fill(user.get(), user.get() + n, static_cast<U>(-1));
  for (int64_t k = 0; k < n; ++k) {
    if (op[k] != add && op[k] != sub) continue;
    if (a0[k] >= 0) user[a0[k]] = static_cast<U>(k);
    if (a1[k] >= 0) user[a1[k]] = static_cast<U>(k);
  }
  auto fused = [&](int64_t k) {
    return (op[k] == add || op[k] == sub) && uses[k] == 1 && user[k] >= 0;
  };
  std::vector<uint8_t> has_link(n, 0);
  for (int64_t k = 0; k < n; ++k) {
    const bool f = fused(k);
    if (f) has_link[user[k]] = 1;
    in_sum[k] = f || (has_link[k] && (op[k] == add || op[k] == sub));
  }
  for (int64_t k = n - 1; k >= 0; --k) head[k] = fused(k) ? head[user[k]] : k;
}

}  // namespace

extern "C" void caspar_sum_chains(int64_t n, const int64_t* op, const int64_t* a0,
                                  const int64_t* a1, const int64_t* uses, int64_t add,
                                  int64_t sub, int64_t* head, uint8_t* in_sum) {
  if (n <= INT32_MAX) {
    sum_chains_t<int32_t>(n, op, a0, a1, uses, add, sub, head, in_sum);
  } else {
    sum_chains_t<int64_t>(n, op, a0, a1, uses, add, sub, head, in_sum);
  }
}

// sxterms._scaled: the nodes c * S, S * c (a constant first argument taken first),
// 2 * S (OP_TWICE) and S / c with S a spine node and c a constant: is_scaled, S_of
// (-1 elsewhere), c_of (0 elsewhere; 2 for OP_TWICE), divide.  code: MUL, TWICE, DIV
extern "C" void caspar_scaled(int64_t n, const int64_t* op, const int64_t* a0,
                              const int64_t* a1, const int8_t* leaf, int64_t leaf_const,
                              const double* value, const uint8_t* spine,
                              const int64_t* code, uint8_t* is_scaled, int64_t* S_of,
                              double* c_of, uint8_t* divide) {
  const int64_t MUL = code[0], TWICE = code[1], DIV = code[2];
  for (int64_t k = 0; k < n; ++k) {
    is_scaled[k] = 0;
    S_of[k] = -1;
    c_of[k] = 0.0;
    divide[k] = 0;
    const int64_t o = op[k];
    if (o != MUL && o != TWICE && o != DIV) continue;
    const int64_t b0 = a0[k], b1 = a1[k];
    const bool c0 = b0 >= 0 && leaf[b0] == leaf_const, c1 = b1 >= 0 && leaf[b1] == leaf_const;
    const bool s0 = b0 >= 0 && spine[b0], s1 = b1 >= 0 && spine[b1];
    if (o == MUL && c0 && s1) {
      S_of[k] = b1;
      c_of[k] = value[b0];
    } else if ((o == MUL && c1 && s0) || (o == DIV && c1 && s0)) {
      S_of[k] = b0;
      c_of[k] = value[b1];
      divide[k] = o == DIV;
    } else if (o == TWICE && s0) {
      S_of[k] = b0;
      c_of[k] = 2.0;
    } else {
      continue;
    }
    is_scaled[k] = 1;
  }
}

// sxdag.build_dag's per-instruction reading: leaf kind and attribute of every node
// (an input: LEAF_VAR / LEAF_PAR by its input index, the nonzero as attribute; a
// constant: LEAF_CONST; else not_leaf and -1), the output instructions in program
// order (outs, room for n).  kinds: the op kind of each code below n_kinds, then the
// kind of every other code (codes below 0 read as code 0).  code: the kinds REFUSED,
// CALL, ALIAS and the ops INPUT, CONST, OUTPUT.  info: [0] 1 unless an op is refused or
// a call or an input index is not 0 or 1 (then nothing else is written), [1] 1 where an
// alias op is met, [2] the output count, [3] 1 where the outputs' (idx, nz) already
// ascend (program order is then their order)
extern "C" void caspar_dag_nodes(int64_t n, const int64_t* op, const int64_t* idx,
                                 const int64_t* nz, int64_t n_kinds, const int64_t* kinds,
                                 const int64_t* code, const int8_t* leaves, int8_t* leaf,
                                 int64_t* attr, int64_t* outs, int64_t* info) {
  const int64_t REFUSED = code[0], CALL = code[1], ALIAS = code[2], INPUT = code[3],
                CONST = code[4], OUTPUT = code[5];
  const int8_t VAR = leaves[0], PAR = leaves[1], CST = leaves[2], NOT = leaves[3];
  info[0] = 0;
  int64_t has_alias = 0, m = 0, in_order = 1;
  for (int64_t k = 0; k < n; ++k) {
    const int64_t o = op[k];
    const int64_t kd = kinds[o < 0 ? 0 : (o > n_kinds ? n_kinds : o)];
    if (kd == REFUSED || kd == CALL) return;
    if (o == INPUT && (idx[k] < 0 || idx[k] > 1)) return;
    has_alias |= kd == ALIAS && o >= 0;
    leaf[k] = NOT;
    attr[k] = -1;
    if (o == INPUT) {
      leaf[k] = idx[k] == 0 ? VAR : PAR;
      attr[k] = nz[k];
    } else if (o == CONST) {
      leaf[k] = CST;
    } else if (o == OUTPUT) {
      if (m > 0) {
        const int64_t p = outs[m - 1];
        if (idx[k] < idx[p] || (idx[k] == idx[p] && nz[k] < nz[p])) in_order = 0;
      }
      outs[m++] = k;
    }
  }
  info[0] = 1;
  info[1] = has_alias;
  info[2] = m;
  info[3] = in_order;
}

// sxterms.split_instances' spine references: from_spine[k] how many spine edges read k
// (the argument of a spine node -- both of ADD/SUB, the one of NEG), dref[k] those plus
// the scaled nodes whose S is k, is_root, tree (a spine node with one spine parent,
// not a root: a subtree of it), toured (a spine node something reaches: a root or
// dref > 0), and the tops toured & !tree in order (room for n); returns their count
extern "C" int64_t caspar_spine_refs(int64_t n, const int64_t* op, const int64_t* a0,
                                     const int64_t* a1, const uint8_t* spine,
                                     const uint8_t* scaled, const int64_t* S_of,
                                     int64_t n_roots, const int64_t* roots, int64_t add,
                                     int64_t sub, int64_t* dref, int64_t* from_spine,
                                     uint8_t* is_root, uint8_t* tree, uint8_t* toured,
                                     int64_t* tops) {
  std::fill(from_spine, from_spine + n, 0);
  std::fill(is_root, is_root + n, 0);
  for (int64_t k = 0; k < n; ++k) {
    if (!spine[k]) continue;
    if (a0[k] >= 0) ++from_spine[a0[k]];
    if ((op[k] == add || op[k] == sub) && a1[k] >= 0) ++from_spine[a1[k]];
  }
  std::copy(from_spine, from_spine + n, dref);
  for (int64_t k = 0; k < n; ++k) {
    if (scaled[k]) ++dref[S_of[k]];
  }
  for (int64_t i = 0; i < n_roots; ++i) is_root[roots[i]] = 1;
  int64_t m = 0;
  for (int64_t k = 0; k < n; ++k) {
    tree[k] = spine[k] && dref[k] == 1 && from_spine[k] == 1 && !is_root[k];
    toured[k] = spine[k] && !(dref[k] == 0 && !is_root[k]);
    if (toured[k] && !tree[k]) tops[m++] = k;
  }
  return m;
}

// sxhash.term_hashes before and after its walk.  leaf_hashes: h = H[kind] at leaves (0
// elsewhere), vh = fmix(h ^ fmix(ident ^ M3)) with ident the bits of value + 0.0 (a
// constant) or max(attr, 0) (a variable or parameter), size = 1 at leaves, 0
// elsewhere.  kinds: LEAF_VAR, LEAF_PAR, LEAF_CONST; H: their hashes.
extern "C" void caspar_leaf_hashes(int64_t n, const int8_t* leaf, const double* value,
                                   const int64_t* attr, const int64_t* kinds,
                                   const uint64_t* H, uint64_t* h, uint64_t* vh,
                                   int64_t* size) {
  for (int64_t k = 0; k < n; ++k) {
    const bool counted = leaf_hash(leaf[k], k, value, attr, kinds, H, h[k], vh[k]);
    if (!counted) h[k] = vh[k] = 0;
    size[k] = counted ? 1 : 0;
  }
}

// hashed = a leaf, or inner within max_depth levels; ok = hashed with at most
// max_leaves leaves
extern "C" void caspar_hash_flags(int64_t n, const int8_t* leaf, int64_t not_leaf,
                                  const uint8_t* inner, const int64_t* height,
                                  const int64_t* size, int64_t max_depth,
                                  int64_t max_leaves, uint8_t* hashed, uint8_t* ok) {
  for (int64_t k = 0; k < n; ++k) {
    hashed[k] = leaf[k] != not_leaf || (inner[k] && height[k] <= max_depth);
    ok[k] = hashed[k] && size[k] <= max_leaves;
  }
}

// sxterms._walked: the spine trees reached from the roots (a root's tree; from a
// reached tree's items, the tree of a spine item and of a scaled item's S; the tree of
// a scaled root's S), widened one level a round for at most max_rounds rounds; walked
// = the spine nodes of reached trees and the scaled nodes that are roots or items of
// them.  Returns 0, or 1 (no fixed point within max_rounds), 2 (a spine node with
// spine parents that is not a tree node is walked: a partial sum shared by spines),
// 3 (a scaled node met twice, or its S referenced twice).
extern "C" int64_t caspar_spine_reach(int64_t n, const uint8_t* spine, const uint8_t* scaled,
                                      const int64_t* S_of, const int64_t* top_of,
                                      int64_t n_roots, const int64_t* roots, int64_t n_items,
                                      const int64_t* top_id, const int64_t* t_node,
                                      const uint8_t* is_root, const uint8_t* tree,
                                      const int64_t* from_spine, const int64_t* dref,
                                      int64_t max_rounds, uint8_t* walked) {
  std::vector<uint8_t> reach(n, 0);
  for (int64_t i = 0; i < n_roots; ++i) {
    if (spine[roots[i]] && top_of[roots[i]] >= 0) reach[top_of[roots[i]]] = 1;
  }
  std::vector<int64_t> fresh;
  bool fixed = false;
  for (int64_t round = 0; round < max_rounds && !fixed; ++round) {
    fresh.clear();
    auto offer = [&](int64_t t) {
      if (t >= 0 && !reach[t]) fresh.push_back(t);
    };
    for (int64_t i = 0; i < n_items; ++i) {
      if (!reach[top_id[i]]) continue;
      const int64_t m = t_node[i];
      if (spine[m]) offer(top_of[m]);
      if (scaled[m]) offer(top_of[S_of[m]]);
    }
    for (int64_t i = 0; i < n_roots; ++i) {
      if (scaled[roots[i]]) offer(top_of[S_of[roots[i]]]);
    }
    fixed = fresh.empty();
    for (int64_t t : fresh) reach[t] = 1;
  }
  if (!fixed) return 1;
  // occurrences as items of reached trees and as roots (saturating at 2)
  std::vector<uint8_t> as_item(n, 0), as_root(n, 0);
  for (int64_t i = 0; i < n_items; ++i) {
    if (reach[top_id[i]] && as_item[t_node[i]] < 2) ++as_item[t_node[i]];
  }
  for (int64_t i = 0; i < n_roots; ++i) {
    if (as_root[roots[i]] < 2) ++as_root[roots[i]];
  }
  int64_t status = 0;
  for (int64_t k = 0; k < n; ++k) {
    walked[k] = (spine[k] && top_of[k] >= 0 && reach[top_of[k]]) ||
                (scaled[k] && (as_item[k] > 0 || is_root[k]));
    if (spine[k] && !tree[k] && from_spine[k] > 0 && walked[k] && !status) status = 2;
    if (scaled[k] && (as_item[k] + as_root[k] > 1 || dref[S_of[k]] > 1) && !status) status = 3;
  }
  return status;
}
