// The instruction program of a casadi SXFunction as arrays, read through casadi's public
// per-instruction API (casadi::Function::instruction_id / _input / _output / _constant)
// in one C++ loop: what the Python API hands out one SWIG call at a time, about 0.1 us
// an instruction here, without printing the program as text and parsing it back.
//
// For instruction k it writes op[k] (casadi's op code), the first two entries of its
// input list (in0, in1) and of its output list (out0, out1), -1 where the list is
// shorter, and value[k] (the constant of op_const, else 0).  Returns 0; k + 2 when
// instruction k has more than two inputs or outputs (a call: the caller reads such a
// program another way); 1 when casadi throws or the instruction count differs.
#include <casadi/core/function.hpp>

#include <cstdint>
#include <vector>

extern "C" int64_t caspar_sx_instructions(const void* function, int64_t n, int64_t* op,
                                          int64_t* in0, int64_t* in1, int64_t* out0,
                                          int64_t* out1, double* value, int64_t op_const) {
  try {
    const casadi::Function& f = *static_cast<const casadi::Function*>(function);
    if (f.n_instructions() != n) return 1;
    for (int64_t k = 0; k < n; ++k) {
      const casadi_int o = f.instruction_id(k);
      const std::vector<casadi_int> i = f.instruction_input(k);
      const std::vector<casadi_int> w = f.instruction_output(k);
      if (i.size() > 2 || w.size() > 2) return k + 2;
      op[k] = o;
      in0[k] = i.size() > 0 ? i[0] : -1;
      in1[k] = i.size() > 1 ? i[1] : -1;
      out0[k] = w.size() > 0 ? w[0] : -1;
      out1[k] = w.size() > 1 ? w[1] : -1;
      value[k] = o == op_const ? f.instruction_constant(k) : 0.0;
    }
    return 0;
  } catch (...) {
    return 1;
  }
}
