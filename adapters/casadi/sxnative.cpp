// Compiled loops of the bulk SX reader that need no Numba start: the same loops as
// adapters/casadi/sxwalks.py (Numba), in C++, for programs below the Numba threshold
// (adapters/casadi/sxnative.py says which and why).  Results are those of the Numba
// and NumPy versions bit for bit (uint64 arithmetic wraps alike).
#include <cstdint>
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

}  // namespace

// sxwalks.hash_trees: shape and value hashes of the trees under `roots`, in place;
// writes inner (0/1) and height.  Arrays of length n unless named otherwise.
extern "C" void caspar_hash_trees(int64_t n, const int64_t* op, const int64_t* a0,
                                  const int64_t* a1, const int8_t* leaf, int64_t not_leaf,
                                  uint64_t* h, uint64_t* vh, int64_t* size,
                                  const uint8_t* bake, const uint64_t* bits,
                                  const int64_t* roots, int64_t n_roots, int64_t max_depth,
                                  int64_t big, uint8_t* inner, int64_t* height) {
  std::vector<int64_t> depth(n, max_depth + 1);
  for (int64_t i = 0; i < n_roots; ++i) {
    if (leaf[roots[i]] == not_leaf) depth[roots[i]] = 0;
  }
  for (int64_t k = n - 1; k >= 0; --k) {         // users before arguments
    const int64_t d = depth[k];
    if (d >= max_depth || leaf[k] != not_leaf) continue;
    const int64_t args[2] = {a0[k], a1[k]};
    for (int64_t b : args) {
      if (b >= 0 && leaf[b] == not_leaf && depth[b] > d + 1) depth[b] = d + 1;
    }
  }
  for (int64_t k = 0; k < n; ++k) {
    inner[k] = depth[k] <= max_depth;
    height[k] = 0;
  }
  for (int64_t k = 0; k < n; ++k) {              // arguments before users
    if (leaf[k] != not_leaf) continue;
    if (!inner[k]) {
      height[k] = big;
      size[k] = big;
      continue;
    }
    const int64_t b0 = a0[k], b1 = a1[k];
    int64_t hk = height[b0];
    if (b1 >= 0 && height[b1] > hk) hk = height[b1];
    height[k] = 1 + hk < big ? 1 + hk : big;
    if (height[k] > max_depth) continue;
    uint64_t hb = 0, vb = 0;
    int64_t s1 = 0;
    if (b1 >= 0) {
      hb = bake[k] ? fmix(bits[b1] ^ M3) : h[b1];
      vb = vh[b1];
      s1 = size[b1];
    }
    h[k] = node(static_cast<uint64_t>(op[k]), h[b0], hb);
    vh[k] = node(static_cast<uint64_t>(op[k]), vh[b0], vb);
    size[k] = size[b0] + s1 < big ? size[b0] + s1 : big;
  }
}
