// stof_eager: the compiled eager path of stof.attention (a CPython module over torch's C++ API).
//
// Holds the bound launches of python/stof/_eager.py keyed by call signature, and `call`: for a
// repeated eager call it builds the signature, finds the launch, allocates the output and calls
// the C API's stof_run_bound, all in C++. What the Python bound path paid per call and this one
// does not: the signature tuple and dict lookup, torch.empty_like from Python and ctypes'
// argument conversion (measured: docs/benchmarks.md, "Python package: Hugging Face backends
// and the bridge (issue 18)", the fourth GPU run).
//
// Who uses it: python/stof/_eager.py (remember / clear / call), python/stof/extension.py builds
// it with torch.utils.cpp_extension. It links no STOF library: stof_run_bound's address comes
// from the ctypes-loaded libstof_capi.so at setup, so both paths run the same library.
//
// Everything this module cannot decide (a type it does not know, a mode or autograd that must
// see the op, an unaligned address, a signature not seen yet, any failure) returns None and
// the Python path runs: that path gives every error its message, so none is made here.

#include <Python.h>

#include <ATen/ops/empty.h>
#include <c10/core/GradMode.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/csrc/autograd/python_variable.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <unordered_map>

namespace {

// stof_run_bound (kernels/capi/stof_capi.h, C API version 5).
using RunBound = int (*)(const void* bound, const void* q, const void* k, const void* v,
                         void* o, void* stream, char* err, size_t err_len);

struct Setup {
  PyObject* tensor_type = nullptr;    // torch.Tensor (exact type: subclasses go to Python)
  PyObject* mask_type = nullptr;      // stof.Mask
  PyObject* dispatch_depth = nullptr; // torch._C._len_torch_dispatch_stack
  PyObject* function_mode = nullptr;  // torch._C._is_torch_function_mode_enabled
  PyObject* key_attr = nullptr;       // "key" (Mask's content key)
  PyObject* handle_attr = nullptr;    // "_h" (BoundViews' handle, None once released)
  RunBound run_bound = nullptr;
};
Setup g_setup;

// One remembered launch: the Python BoundViews (a strong reference: it owns the stof_bound)
// and its raw handle, valid while the object's _h is not None.
struct Entry {
  PyObject* bound;
  const void* handle;
};
std::unordered_map<std::string, Entry> g_launches;
uint64_t g_hits = 0, g_misses = 0, g_declined = 0;

void Append(std::string& key, const void* p, size_t n) {
  key.append(static_cast<const char*>(p), n);
}

template <typename T>
void AppendValue(std::string& key, T value) {
  Append(key, &value, sizeof value);
}

bool AppendString(std::string& key, PyObject* s) {
  if (!PyUnicode_CheckExact(s)) return false;
  Py_ssize_t n = 0;
  const char* text = PyUnicode_AsUTF8AndSize(s, &n);
  if (text == nullptr) {
    PyErr_Clear();
    return false;
  }
  AppendValue<int64_t>(key, n);
  Append(key, text, static_cast<size_t>(n));
  return true;
}

bool AppendInt(std::string& key, PyObject* i) {
  if (!PyLong_CheckExact(i)) return false;
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(i, &overflow);
  if (overflow != 0 || (v == -1 && PyErr_Occurred())) {
    PyErr_Clear();
    return false;
  }
  AppendValue<int64_t>(key, v);
  return true;
}

// The signature of a call (q, k, v, mask, layout, scale, kernel, block), as _eager.signature
// has it: everything the checks, plan and strides depend on but the addresses. False when an
// argument is of a type only the Python path handles.
bool SignatureOf(PyObject* const* args, std::string& key, const at::Tensor* tensors[3]) {
  key.clear();
  for (int i = 0; i < 3; ++i) {
    PyObject* t = args[i];
    if (reinterpret_cast<PyObject*>(Py_TYPE(t)) != g_setup.tensor_type) return false;
    const at::Tensor& tensor = THPVariable_Unpack(t);
    if (tensor.dim() != 4) return false;
    for (int64_t s : tensor.sizes()) AppendValue(key, s);
    for (int64_t s : tensor.strides()) AppendValue(key, s);
    AppendValue(key, static_cast<int32_t>(tensor.scalar_type()));
    AppendValue(key, static_cast<int32_t>(tensor.device().type()));
    AppendValue(key, static_cast<int32_t>(tensor.device().index()));
    tensors[i] = &tensor;
  }
  PyObject* mask = args[3];
  if (mask == Py_None) {
    AppendValue<int64_t>(key, -1);
  } else {
    if (reinterpret_cast<PyObject*>(Py_TYPE(mask)) != g_setup.mask_type) return false;
    PyObject* content = PyObject_GetAttr(mask, g_setup.key_attr);
    if (content == nullptr) {
      PyErr_Clear();
      return false;
    }
    const bool ok = AppendString(key, content);
    Py_DECREF(content);
    if (!ok) return false;
  }
  if (!AppendString(key, args[4])) return false;  // layout
  PyObject* scale = args[5];
  double s = 0.0;  // None: 1/sqrt(d), as attention() passes it (0.0)
  if (PyFloat_CheckExact(scale)) {
    s = PyFloat_AS_DOUBLE(scale);
  } else if (PyLong_CheckExact(scale)) {
    s = PyLong_AsDouble(scale);
    if (s == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
      return false;
    }
  } else if (scale != Py_None) {
    return false;
  }
  AppendValue(key, s);
  if (!AppendString(key, args[6])) return false;  // kernel
  PyObject* block = args[7];
  if (!PyTuple_CheckExact(block) || PyTuple_GET_SIZE(block) != 3) return false;
  for (int i = 0; i < 3; ++i)
    if (!AppendInt(key, PyTuple_GET_ITEM(block, i))) return false;
  return true;
}

// Whether something must see the op: a torch-dispatch or torch-function mode (a tracer, a
// FlopCounterMode, FakeTensorMode) or autograd recording (the op has no backward). The same
// questions _eager.direct_ok asks, through the same torch functions.
bool SomethingMustSeeTheOp(const at::Tensor* const tensors[3]) {
  if (c10::GradMode::is_enabled() && (tensors[0]->requires_grad() ||
                                      tensors[1]->requires_grad() ||
                                      tensors[2]->requires_grad()))
    return true;
  PyObject* depth = PyObject_CallNoArgs(g_setup.dispatch_depth);
  if (depth == nullptr) {
    PyErr_Clear();
    return true;
  }
  const long n = PyLong_AsLong(depth);
  Py_DECREF(depth);
  if (n != 0) {
    PyErr_Clear();
    return true;
  }
  PyObject* mode = PyObject_CallNoArgs(g_setup.function_mode);
  if (mode == nullptr) {
    PyErr_Clear();
    return true;
  }
  const bool on = mode != Py_False;
  Py_DECREF(mode);
  return on;
}

// The handle of an entry while its BoundViews still holds it (stof.clear_cache releases it).
const void* LiveHandle(const Entry& e) {
  PyObject* h = PyObject_GetAttr(e.bound, g_setup.handle_attr);
  if (h == nullptr) {
    PyErr_Clear();
    return nullptr;
  }
  const bool live = h != Py_None;
  Py_DECREF(h);
  return live ? e.handle : nullptr;
}

bool Aligned(const at::Tensor* const tensors[3]) {
  uintptr_t bits = 0;
  for (int i = 0; i < 3; ++i) bits |= reinterpret_cast<uintptr_t>(tensors[i]->data_ptr());
  return (bits & 15) == 0;
}

void TakeSetup(PyObject* obj, PyObject*& slot) {
  Py_INCREF(obj);
  PyObject* old = slot;
  slot = obj;
  Py_XDECREF(old);
}

// setup(torch.Tensor, stof.Mask, len_dispatch_stack, is_function_mode_enabled,
//       stof_run_bound address)
PyObject* SetupFn(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 5) {
    PyErr_SetString(PyExc_TypeError, "stof_eager.setup: expected 5 arguments");
    return nullptr;
  }
  if (!PyCallable_Check(args[2]) || !PyCallable_Check(args[3])) {
    PyErr_SetString(PyExc_TypeError, "stof_eager.setup: the mode queries must be callable");
    return nullptr;
  }
  void* fn = PyLong_AsVoidPtr(args[4]);
  if (fn == nullptr) {
    if (!PyErr_Occurred())
      PyErr_SetString(PyExc_ValueError, "stof_eager.setup: stof_run_bound's address is 0");
    return nullptr;
  }
  TakeSetup(args[0], g_setup.tensor_type);
  TakeSetup(args[1], g_setup.mask_type);
  TakeSetup(args[2], g_setup.dispatch_depth);
  TakeSetup(args[3], g_setup.function_mode);
  g_setup.run_bound = reinterpret_cast<RunBound>(fn);
  Py_RETURN_NONE;
}

bool Ready() {
  if (g_setup.run_bound != nullptr) return true;
  PyErr_SetString(PyExc_RuntimeError, "stof_eager: setup() was not called");
  return false;
}

// call(q, k, v, mask, layout, scale, kernel, block) -> the output, or None (the Python path).
PyObject* CallFn(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 8) {
    PyErr_SetString(PyExc_TypeError, "stof_eager.call: expected 8 arguments");
    return nullptr;
  }
  if (!Ready()) return nullptr;
  static std::string key;  // the GIL serialises calls; keeps its capacity
  const at::Tensor* t[3] = {nullptr, nullptr, nullptr};
  auto it = SignatureOf(args, key, t) ? g_launches.find(key) : g_launches.end();
  if (it == g_launches.end()) {
    ++g_misses;
    Py_RETURN_NONE;
  }
  const void* handle = LiveHandle(it->second);
  if (handle == nullptr || !Aligned(t) || SomethingMustSeeTheOp(t)) {
    ++g_declined;
    Py_RETURN_NONE;
  }
  try {
    // Packed in q's layout, like q (what the Python path allocates).
    at::Tensor out = at::empty(t[0]->sizes(), t[0]->options());
    cudaStream_t stream = c10::cuda::getCurrentCUDAStream(t[0]->device().index()).stream();
    char err[256];
    if (g_setup.run_bound(handle, t[0]->data_ptr(), t[1]->data_ptr(), t[2]->data_ptr(),
                          out.data_ptr(), stream, err, sizeof err) != 0) {
      ++g_declined;  // the Python path runs the call again and reports the error
      Py_RETURN_NONE;
    }
    ++g_hits;
    return THPVariable_Wrap(std::move(out));
  } catch (...) {  // an allocation failure: the Python path raises torch's own error
    ++g_declined;
    Py_RETURN_NONE;
  }
}

// remember(q, k, v, mask, layout, scale, kernel, block, bound) -> whether it was remembered.
PyObject* RememberFn(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 9) {
    PyErr_SetString(PyExc_TypeError, "stof_eager.remember: expected 9 arguments");
    return nullptr;
  }
  if (!Ready()) return nullptr;
  std::string key;
  const at::Tensor* t[3];
  if (!SignatureOf(args, key, t)) Py_RETURN_FALSE;
  PyObject* h = PyObject_GetAttr(args[8], g_setup.handle_attr);
  if (h == nullptr) return nullptr;
  PyObject* value = h == Py_None ? nullptr : PyObject_GetAttrString(h, "value");
  Py_DECREF(h);
  if (value == nullptr) {
    PyErr_Clear();
    Py_RETURN_FALSE;
  }
  const void* handle = value == Py_None ? nullptr : PyLong_AsVoidPtr(value);
  Py_DECREF(value);
  if (handle == nullptr) {
    PyErr_Clear();
    Py_RETURN_FALSE;
  }
  Py_INCREF(args[8]);
  auto [it, added] = g_launches.try_emplace(std::move(key), Entry{args[8], handle});
  if (!added) {  // a newer launch of the same signature replaces the old one
    Py_DECREF(it->second.bound);
    it->second = Entry{args[8], handle};
  }
  Py_RETURN_TRUE;
}

PyObject* ClearFn(PyObject*, PyObject*) {
  auto launches = std::move(g_launches);
  g_launches.clear();
  for (auto& [key, e] : launches) Py_DECREF(e.bound);  // may run __del__: table already empty
  Py_RETURN_NONE;
}

PyObject* SizeFn(PyObject*, PyObject*) {
  return PyLong_FromSize_t(g_launches.size());
}

// stats() -> (hits, misses, declined): launches made here, signatures not found, and calls
// found but handed back (a mode, autograd, alignment, a released plan, a failed launch).
PyObject* StatsFn(PyObject*, PyObject*) {
  return Py_BuildValue("(KKK)", static_cast<unsigned long long>(g_hits),
                       static_cast<unsigned long long>(g_misses),
                       static_cast<unsigned long long>(g_declined));
}

PyMethodDef g_methods[] = {
    {"setup", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(SetupFn)),
     METH_FASTCALL, "setup(tensor_type, mask_type, dispatch_depth, function_mode, run_bound)"},
    {"call", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(CallFn)), METH_FASTCALL,
     "call(q, k, v, mask, layout, scale, kernel, block) -> Tensor or None"},
    {"remember", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(RememberFn)),
     METH_FASTCALL, "remember(q, k, v, mask, layout, scale, kernel, block, bound) -> bool"},
    {"clear", ClearFn, METH_NOARGS, "forget every launch"},
    {"size", SizeFn, METH_NOARGS, "the number of remembered launches"},
    {"stats", StatsFn, METH_NOARGS, "(hits, misses, declined) since the module loaded"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef g_module = {PyModuleDef_HEAD_INIT, "stof_eager",
                        "The compiled eager path of stof.attention (python/stof/_eager.py).",
                        -1, g_methods, nullptr, nullptr, nullptr, nullptr};

}  // namespace

PyMODINIT_FUNC PyInit_stof_eager() {
  PyObject* m = PyModule_Create(&g_module);
  if (m == nullptr) return nullptr;
  g_setup.key_attr = PyUnicode_InternFromString("key");
  g_setup.handle_attr = PyUnicode_InternFromString("_h");
  if (g_setup.key_attr == nullptr || g_setup.handle_attr == nullptr ||
      PyModule_AddIntConstant(m, "ABI", 1) != 0) {
    Py_DECREF(m);
    return nullptr;
  }
  return m;
}
