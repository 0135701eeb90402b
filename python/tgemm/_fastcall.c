/* tgemmGemmEx called from Python without ctypes: ctypes spends microseconds converting a
 * call's 19 arguments, more than libtgemm's own cached-call cost. This module only makes the
 * call: it is handed the function's address by tgemm/_library.py (which loaded libtgemm with
 * ctypes), so it links nothing and, built on the stable ABI, one build serves every Python
 * from 3.10 on. Optional: without it the package calls through ctypes. */
#define PY_SSIZE_T_CLEAN
#define Py_LIMITED_API 0x030A0000
#include <Python.h>
#include <limits.h>

/* tgemmGemmEx (include/tgemm/tgemm_c.h): the enums are C ints, cudaStream_t a pointer. */
typedef int (*GemmEx)(void* handle, int op_a, int op_b, int m, int n, int k, const void* alpha,
                      const void* a, int a_type, int lda, const void* b, int b_type, int ldb,
                      const void* beta, void* c, int c_type, int ldc, int compute, void* stream);

static GemmEx gemm_ex = NULL;

enum {
  HANDLE,
  OP_A,
  OP_B,
  M,
  N,
  K,
  ALPHA,
  A,
  A_TYPE,
  LDA,
  B,
  B_TYPE,
  LDB,
  BETA,
  C,
  C_TYPE,
  LDC,
  COMPUTE,
  STREAM,
  ARGUMENTS
};

static PyObject* bind(PyObject* module, PyObject* address) {
  (void)module;
  void* function = PyLong_AsVoidPtr(address);
  if (function == NULL) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "bind: a null function address");
    return NULL;
  }
  gemm_ex = (GemmEx)function;
  Py_RETURN_NONE;
}

static int int_at(PyObject* const* args, int at, int* value) {
  long read = PyLong_AsLong(args[at]);
  if (read == -1 && PyErr_Occurred()) return 0;
  if (read < INT_MIN || read > INT_MAX) {
    PyErr_Format(PyExc_OverflowError, "gemm: argument %d (%ld) does not fit a C int", at, read);
    return 0;
  }
  *value = (int)read;
  return 1;
}

static int pointer_at(PyObject* const* args, int at, void** value) {
  *value = args[at] == Py_None ? NULL : PyLong_AsVoidPtr(args[at]);
  return !PyErr_Occurred();
}

/* gemm(handle, op_a, op_b, m, n, k, alpha, A, a_type, lda, B, b_type, ldb, beta, C, c_type,
 *      ldc, compute, stream) -> status: tgemmGemmEx's arguments in its order, pointers as
 * ints, alpha and beta as numbers (passed as float, as the f32 compute types take them). */
static PyObject* gemm(PyObject* module, PyObject* const* args, Py_ssize_t count) {
  (void)module;
  if (count != ARGUMENTS) {
    PyErr_Format(PyExc_TypeError, "gemm takes %d arguments (%zd given)", ARGUMENTS, count);
    return NULL;
  }
  if (gemm_ex == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "gemm: bind(tgemmGemmEx's address) first");
    return NULL;
  }
  static const int int_args[] = {OP_A, OP_B,   M,   N,      K,   A_TYPE,
                                 LDA,  B_TYPE, LDB, C_TYPE, LDC, COMPUTE};
  static const int pointer_args[] = {HANDLE, A, B, C, STREAM};
  int ints[ARGUMENTS] = {0};
  void* pointers[ARGUMENTS] = {NULL};
  for (size_t i = 0; i < sizeof int_args / sizeof *int_args; ++i)
    if (!int_at(args, int_args[i], &ints[int_args[i]])) return NULL;
  for (size_t i = 0; i < sizeof pointer_args / sizeof *pointer_args; ++i)
    if (!pointer_at(args, pointer_args[i], &pointers[pointer_args[i]])) return NULL;
  float alpha = (float)PyFloat_AsDouble(args[ALPHA]);
  if (PyErr_Occurred()) return NULL;
  float beta = (float)PyFloat_AsDouble(args[BETA]);
  if (PyErr_Occurred()) return NULL;
  PyThreadState* const saved = PyEval_SaveThread();  // the launch runs without the GIL
  const int status =
      gemm_ex(pointers[HANDLE], ints[OP_A], ints[OP_B], ints[M], ints[N], ints[K], &alpha,
              pointers[A], ints[A_TYPE], ints[LDA], pointers[B], ints[B_TYPE], ints[LDB], &beta,
              pointers[C], ints[C_TYPE], ints[LDC], ints[COMPUTE], pointers[STREAM]);
  PyEval_RestoreThread(saved);
  return PyLong_FromLong(status);
}

static PyMethodDef methods[] = {
    {"bind", bind, METH_O, "bind(address): the tgemmGemmEx that gemm calls."},
    {"gemm", (PyCFunction)(void (*)(void))gemm, METH_FASTCALL,
     "gemm(handle, op_a, op_b, m, n, k, alpha, A, a_type, lda, B, b_type, ldb, beta, C, "
     "c_type, ldc, compute, stream) -> tgemmStatus_t"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, .m_name = "_fastcall",
                                    .m_doc = "tgemmGemmEx called without ctypes.", .m_size = -1,
                                    .m_methods = methods};

PyMODINIT_FUNC PyInit__fastcall(void) { return PyModule_Create(&module); }
