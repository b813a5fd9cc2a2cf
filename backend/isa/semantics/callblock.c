/*
 * A CPython entry for the compiled runners' per-bundle call of a certified kernel's block
 * entry (ptoc_arith_block or ptoc_fold_block of arith.c, loaded and certified through
 * ctypes): call(entry, block, a1, a2, a3) stores the three operand addresses in words 1..3
 * of the argument block at address ``block`` and returns entry(block). It computes
 * nothing itself; what it saves is ctypes' argument conversion, which for a small tile
 * costs about as much as the kernel.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

typedef int64_t (*block_entry)(const int64_t *);

static PyObject *call(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "call(entry, block, a1, a2, a3) takes 5 integers");
        return NULL;
    }
    block_entry entry = (block_entry)PyLong_AsVoidPtr(args[0]);
    int64_t *block = (int64_t *)PyLong_AsVoidPtr(args[1]);
    const long long a1 = PyLong_AsLongLong(args[2]);
    const long long a2 = PyLong_AsLongLong(args[3]);
    const long long a3 = PyLong_AsLongLong(args[4]);
    if (PyErr_Occurred())
        return NULL;
    if (entry == NULL || block == NULL) {
        PyErr_SetString(PyExc_ValueError, "call: a null entry or argument block");
        return NULL;
    }
    block[1] = a1;
    block[2] = a2;
    block[3] = a3;
    return PyLong_FromLongLong(entry(block));
}

static PyMethodDef methods[] = {
    {"call", (PyCFunction)(void (*)(void))call, METH_FASTCALL,
     "call(entry, block, a1, a2, a3): entry(block) with words 1..3 of block set"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_ptoc_callblock", NULL, -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__ptoc_callblock(void) { return PyModule_Create(&module); }
