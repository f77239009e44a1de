// caspar's entry in CasADi's deserializer: lets casadi.Function.load / deserialize
// rebuild the solver node of nlpsol(..., 'caspar', ...).
//
// Why this file exists (the details are in casadi_loader.py): the solver node is a
// casadi.Callback written in Python.  CasADi serializes any Function as its class name
// followed by its body; for a Callback that is "CallbackInternal" and the body common to
// every Function (ProtoFunction + FunctionInternal fields: name, sparsities, options).
// casadi's FunctionInternal::deserialize looks the class name up in the static table
// FunctionInternal::deserialize_map, which has no "CallbackInternal" entry, so loading
// fails with "not found 'CallbackInternal'".  This library adds that entry.  Its reader
// consumes the common body exactly as casadi's FunctionInternal(DeserializingStream&)
// constructor does (versions 1-9; version 9, casadi 3.8,
// added codegen_options after jit_options), finds caspar's record in the option "jit_options"
// (where caspar stores the problem, as a casadi Function, and the nlpsol options), and
// asks Python -- through a function pointer that caspar registers with ctypes -- to
// build the solver again.  Only public CasADi headers are used; the table is reached
// through its exported symbol.
#include <casadi/core/callback.hpp>
#include <casadi/core/exception.hpp>
#include <casadi/core/function.hpp>
#include <casadi/core/generic_type.hpp>
#include <casadi/core/serializer.hpp>
#include <casadi/core/serializing_stream.hpp>

#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace casadi {
class ProtoFunction;
// Only the static table of casadi's FunctionInternal is declared: its mangled name is
// what links this library to the table inside libcasadi.
class FunctionInternal {
 public:
  static std::map<std::string, ProtoFunction* (*)(DeserializingStream&)> deserialize_map;
};
}  // namespace casadi

using casadi::CasadiException;
using casadi::DeserializingStream;
using casadi::Dict;
using casadi::Function;
using casadi::GenericType;
using casadi::Sparsity;

namespace {

// restore(payload, name, &function) -> 0 on success; on failure 1, and the message was
// handed over with caspar_loader_set_error.  `function` receives the casadi::Callback*
// of the rebuilt solver (SWIG's pointer), which Python keeps alive.
typedef int (*restore_t)(const char* payload, const char* name, void** function);

restore_t restore_hook = nullptr;
std::string last_error;  // NOLINT(runtime/string)
std::mutex install_mutex;

const char* const RECORD = "caspar_nlpsol";

// The body every Function serializes first, as far as caspar needs it.
struct Body {
  std::string name;
  Dict jit_options;
};

template <class T>
void skip(DeserializingStream& s, const std::string& descr) {
  T value;
  s.unpack(descr, value);
}

// Reads ProtoFunction (v1-2) and FunctionInternal (v1-9) serialize_body, field by
// field, in the order and with the types of casadi's deserializing constructors.
Body read_body(DeserializingStream& s) {
  Body b;
  int proto = s.version("ProtoFunction", 1, 2);
  s.unpack("ProtoFunction::name", b.name);
  skip<bool>(s, "ProtoFunction::verbose");
  skip<bool>(s, "ProtoFunction::print_time");
  skip<bool>(s, "ProtoFunction::record_time");
  if (proto >= 2) {
    skip<bool>(s, "ProtoFunction::regularity_check");
    skip<bool>(s, "ProtoFunction::error_on_fail");
  }
  int version = s.version("FunctionInternal", 1, 9);
  skip<std::vector<bool>>(s, "FunctionInternal::is_diff_in");
  skip<std::vector<bool>>(s, "FunctionInternal::is_diff_out");
  skip<std::vector<Sparsity>>(s, "FunctionInternal::sp_in");
  skip<std::vector<Sparsity>>(s, "FunctionInternal::sp_out");
  skip<std::vector<std::string>>(s, "FunctionInternal::name_in");
  skip<std::vector<std::string>>(s, "FunctionInternal::name_out");
  skip<bool>(s, "FunctionInternal::jit");
  skip<bool>(s, "FunctionInternal::jit_cleanup");
  std::string jit_serialize = "source";
  if (version >= 2) s.unpack("FunctionInternal::jit_serialize", jit_serialize);
  if (jit_serialize == "link" || jit_serialize == "embed") {
    throw CasadiException("caspar's loader: '" + b.name + "' was saved with jit_serialize='" +
                          jit_serialize + "', which a casadi.Callback does not use");
  }
  skip<bool>(s, "FunctionInternal::jit_temp_suffix");
  skip<std::string>(s, "FunctionInternal::jit_base_name");
  s.unpack("FunctionInternal::jit_options", b.jit_options);
  if (version >= 9) skip<Dict>(s, "FunctionInternal::codegen_options");
  skip<std::string>(s, "FunctionInternal::compiler_plugin");
  skip<bool>(s, "FunctionInternal::has_refcount");
  if (version >= 6) skip<Dict>(s, "FunctionInternal::cache_init");
  skip<Function>(s, "FunctionInternal::derivative_of");
  skip<double>(s, "FunctionInternal::jac_penalty");
  for (const char* f : {"enable_forward", "enable_reverse", "enable_jacobian", "enable_fd",
                        "enable_forward_op", "enable_reverse_op", "enable_jacobian_op",
                        "enable_fd_op"}) {
    skip<bool>(s, std::string("FunctionInternal::") + f);
  }
  skip<double>(s, "FunctionInternal::ad_weight");
  skip<double>(s, "FunctionInternal::ad_weight_sp");
  skip<bool>(s, "FunctionInternal::always_inline");
  skip<bool>(s, "FunctionInternal::never_inline");
  skip<casadi_int>(s, "FunctionInternal::max_num_dir");
  if (version < 3) skip<bool>(s, "FunctionInternal::regularity_check");
  skip<bool>(s, "FunctionInternal::inputs_check");
  skip<double>(s, "FunctionInternal::fd_step");
  skip<std::string>(s, "FunctionInternal::fd_method");
  skip<bool>(s, "FunctionInternal::print_in");
  skip<bool>(s, "FunctionInternal::print_out");
  if (version >= 7) skip<bool>(s, "FunctionInternal::print_canonical");
  if (version >= 4) skip<casadi_int>(s, "FunctionInternal::max_io");
  skip<bool>(s, "FunctionInternal::dump_in");
  skip<bool>(s, "FunctionInternal::dump_out");
  skip<std::string>(s, "FunctionInternal::dump_dir");
  skip<std::string>(s, "FunctionInternal::dump_format");
  skip<Dict>(s, "FunctionInternal::forward_options");
  skip<Dict>(s, "FunctionInternal::reverse_options");
  if (version >= 5) {
    skip<Dict>(s, "FunctionInternal::jacobian_options");
    skip<Dict>(s, "FunctionInternal::der_options");
  }
  skip<Function>(s, "FunctionInternal::custom_jacobian");
  if (version >= 8) skip<std::vector<Function>>(s, "FunctionInternal::registered_functions");
  for (const char* f : {"sz_arg_per", "sz_res_per", "sz_iw_per", "sz_w_per", "sz_arg_tmp",
                        "sz_res_tmp", "sz_iw_tmp", "sz_w_tmp"}) {
    skip<size_t>(s, std::string("FunctionInternal::") + f);
  }
  return b;
}

casadi::ProtoFunction* deserialize_callback(DeserializingStream& s) {
  Body b = read_body(s);
  auto it = b.jit_options.find(RECORD);
  if (it == b.jit_options.end()) {
    throw CasadiException(
        "FunctionInternal::deserialize: not found 'CallbackInternal': '" + b.name +
        "' is a casadi.Callback defined in Python, which casadi cannot save (only the "
        "solver of caspar's nlpsol is rebuilt when loaded)");
  }
  if (restore_hook == nullptr) {
    throw CasadiException("caspar's loader is not connected to Python");
  }
  casadi::StringSerializer record;
  record.pack(it->second);
  std::string payload = record.encode();
  void* out = nullptr;
  if (restore_hook(payload.c_str(), b.name.c_str(), &out) != 0 || out == nullptr) {
    throw CasadiException("caspar could not rebuild the nlpsol '" + b.name + "': " +
                          last_error);
  }
  // A handle on the rebuilt callback (Python keeps its own handle for the process).
  // (a Callback has a vtable before its Function part: the upcast moves the pointer)
  Function f = *static_cast<casadi::Callback*>(out);
  // casadi finalizes what a reader returns, and finalizing checks out memory object 0;
  // the callback was finalized when it was built, so its memory 0 is handed back first.
  f.release(0);
  return reinterpret_cast<casadi::ProtoFunction*>(f.get());
}

}  // namespace

extern "C" {

// Connects Python's restore function and adds the table entry; returns 0, or 1 when
// another reader already owns "CallbackInternal".
int caspar_loader_install(restore_t hook) {
  std::lock_guard<std::mutex> lock(install_mutex);
  restore_hook = hook;
  auto& table = casadi::FunctionInternal::deserialize_map;
  auto it = table.find("CallbackInternal");
  if (it != table.end() && it->second != &deserialize_callback) return 1;
  table["CallbackInternal"] = &deserialize_callback;
  return 0;
}

void caspar_loader_set_error(const char* message) { last_error = message ? message : ""; }

// The number of entries of casadi's table (a check that the library reached it).
int caspar_loader_table_size() {
  return static_cast<int>(casadi::FunctionInternal::deserialize_map.size());
}

}  // extern "C"
