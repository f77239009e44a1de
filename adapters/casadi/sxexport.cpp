// The instruction program of a casadi SXFunction as arrays, read through casadi's public
// per-instruction API (casadi::Function::instruction_id / _input / _output / _constant)
// in one C++ loop: what the Python API hands out one SWIG call at a time, about 0.1 us
// an instruction here, without printing the program as text and parsing it back.
//
// For instruction k, with in = instruction_input(k) and out = instruction_output(k),
// it writes the fields of caspar's Algorithm (adapters/casadi/sxdecode.py), -1 where a
// field does not apply:
//
//   op_input    w = out[0]  a = -1     b = -1     idx = in[0]   nz = in[1]
//   op_output   w = -1      a = in[0]  b = -1     idx = out[0]  nz = out[1]
//   others      w = out[0]  a = in[0]  b = in[1]  idx = -1      nz = -1
//
// op[k] is casadi's op code and value[k] the constant of op_const (0 elsewhere).
// Returns 0; k + 2 when instruction k has more than two inputs or outputs (a call: the
// caller reads such a program another way); 1 when casadi throws or the instruction
// count differs.
#include <casadi/core/function.hpp>

#include <cstdint>
#include <vector>

extern "C" int64_t caspar_sx_instructions(const void* function, int64_t n, int64_t* op,
                                          int64_t* w, int64_t* a, int64_t* b,
                                          int64_t* idx, int64_t* nz, double* value,
                                          int64_t op_input, int64_t op_output,
                                          int64_t op_const) {
  try {
    const casadi::Function& f = *static_cast<const casadi::Function*>(function);
    if (f.n_instructions() != n) return 1;
    for (int64_t k = 0; k < n; ++k) {
      const casadi_int o = f.instruction_id(k);
      const std::vector<casadi_int> in = f.instruction_input(k);
      const std::vector<casadi_int> out = f.instruction_output(k);
      if (in.size() > 2 || out.size() > 2) return k + 2;
      const int64_t in0 = in.size() > 0 ? in[0] : -1, in1 = in.size() > 1 ? in[1] : -1;
      const int64_t out0 = out.size() > 0 ? out[0] : -1;
      const int64_t out1 = out.size() > 1 ? out[1] : -1;
      op[k] = o;
      value[k] = o == op_const ? f.instruction_constant(k) : 0.0;
      if (o == op_input) {
        w[k] = out0; a[k] = -1; b[k] = -1; idx[k] = in0; nz[k] = in1;
      } else if (o == op_output) {
        w[k] = -1; a[k] = in0; b[k] = -1; idx[k] = out0; nz[k] = out1;
      } else {
        w[k] = out0; a[k] = in0; b[k] = in1; idx[k] = -1; nz[k] = -1;
      }
    }
    return 0;
  } catch (...) {
    return 1;
  }
}
