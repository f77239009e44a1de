// The instruction program of a casadi SXFunction as arrays, read through casadi's public
// per-instruction API (casadi::Function::instruction_id / _input / _output / _constant)
// in C++ loops: what the Python API hands out one SWIG call at a time, about 0.1 us an
// instruction here, without printing the program as text and parsing it back.
//
// For instruction k, with in = instruction_input(k) and out = instruction_output(k),
// it writes the fields of caspar's Algorithm (adapters/casadi/sxdecode.py), -1 where a
// field does not apply:
//
//   op_input    w = out[0]  a = -1     b = -1     idx = in[0]   nz = in[1]
//   op_output   w = -1      a = in[0]  b = -1     idx = out[0]  nz = out[1]
//   others      w = out[0]  a = in[0]  b = in[1]  idx = -1      nz = -1
//
// op[k] is casadi's op code, or canon[code] where a map canon (n_canon codes) is given,
// and value[k] the constant of op_const (0 elsewhere).
// `threads` threads each read one contiguous range of instructions (the calls only read
// the Function).  Returns 0; k + 2 when instruction k has more than two inputs or
// outputs (a call: the caller reads such a program another way); 1 when casadi throws
// or the instruction count differs; -1 when a code is outside canon or maps to -1.
#include <casadi/core/function.hpp>

#include <cstdint>
#include <thread>
#include <vector>

namespace {

struct Out {
  int64_t *op, *w, *a, *b, *idx, *nz;
  double* value;
  int64_t op_input, op_output, op_const;
  const int64_t* canon;
  int64_t n_canon;
};

int64_t read_range(const casadi::Function& f, const Out& o, int64_t lo, int64_t hi) {
  try {
    for (int64_t k = lo; k < hi; ++k) {
      const casadi_int code = f.instruction_id(k);
      const std::vector<casadi_int> in = f.instruction_input(k);
      const std::vector<casadi_int> out = f.instruction_output(k);
      if (in.size() > 2 || out.size() > 2) return k + 2;
      const int64_t in0 = in.size() > 0 ? in[0] : -1, in1 = in.size() > 1 ? in[1] : -1;
      const int64_t out0 = out.size() > 0 ? out[0] : -1;
      const int64_t out1 = out.size() > 1 ? out[1] : -1;
      if (o.canon == nullptr) {
        o.op[k] = code;
      } else {
        if (code < 0 || code >= o.n_canon || o.canon[code] < 0) return -1;
        o.op[k] = o.canon[code];
      }
      o.value[k] = code == o.op_const ? f.instruction_constant(k) : 0.0;
      if (code == o.op_input) {
        o.w[k] = out0; o.a[k] = -1; o.b[k] = -1; o.idx[k] = in0; o.nz[k] = in1;
      } else if (code == o.op_output) {
        o.w[k] = -1; o.a[k] = in0; o.b[k] = -1; o.idx[k] = out0; o.nz[k] = out1;
      } else {
        o.w[k] = out0; o.a[k] = in0; o.b[k] = in1; o.idx[k] = -1; o.nz[k] = -1;
      }
    }
    return 0;
  } catch (...) {
    return 1;
  }
}

}  // namespace

extern "C" int64_t caspar_sx_instructions(const void* function, int64_t n, int64_t* op,
                                          int64_t* w, int64_t* a, int64_t* b,
                                          int64_t* idx, int64_t* nz, double* value,
                                          int64_t op_input, int64_t op_output,
                                          int64_t op_const, int64_t threads,
                                          const int64_t* canon, int64_t n_canon) {
  try {
    const casadi::Function& f = *static_cast<const casadi::Function*>(function);
    if (f.n_instructions() != n) return 1;
    const Out o{op, w, a, b, idx, nz, value, op_input, op_output, op_const, canon, n_canon};
    if (threads < 2) return read_range(f, o, 0, n);
    std::vector<int64_t> status(threads, 0);
    std::vector<std::thread> pool;
    for (int64_t t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        status[t] = read_range(f, o, n * t / threads, n * (t + 1) / threads);
      });
    }
    for (auto& th : pool) th.join();
    for (int64_t s : status) {
      if (s) return s;
    }
    return 0;
  } catch (...) {
    return 1;
  }
}
