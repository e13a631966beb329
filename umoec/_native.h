/* What the compiled loops share (umoec/engine/_kernels.c, umoec/codec/_cm.c, _probs.c): the
 * instruction-set clones and the checked access to numpy buffers. */
#ifndef UMOEC_NATIVE_H
#define UMOEC_NATIVE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* Loops compiled for AVX-512, AVX2 and the x86-64 baseline, chosen when the module loads
 * (x86-64 Linux with GCC; elsewhere once, for the build's target). Integer results and the
 * single IEEE operations used do not depend on the instruction set. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define CLONES
#endif

typedef struct { Py_buffer b; int held; } Buf;

/* `o` as a C-contiguous buffer of exactly `count` items of `itemsize` bytes (writable when
 * asked); None is accepted (held = 0) only when `optional`. 0 with a Python error otherwise. */
static int get(PyObject *o, Buf *buf, Py_ssize_t itemsize, Py_ssize_t count, int writable,
               int optional, const char *what) {
    buf->held = 0;
    if (o == Py_None) {
        if (optional) return 1;
        PyErr_Format(PyExc_TypeError, "%s: array required", what);
        return 0;
    }
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(o, &buf->b, flags) < 0) return 0;
    buf->held = 1;
    if (buf->b.itemsize != itemsize || buf->b.len != itemsize * count) {
        PyErr_Format(PyExc_ValueError, "%s: expected %zd items of %zd bytes, got %zd bytes", what,
                     count, itemsize, (Py_ssize_t)buf->b.len);
        return 0;
    }
    return 1;
}

static void release(Buf *bufs, int n) {
    for (int i = 0; i < n; i++)
        if (bufs[i].held) PyBuffer_Release(&bufs[i].b);
}

#endif
