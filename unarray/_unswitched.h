/* Unswitched's layout, shared by unarray/_gate.c (which defines the type) and unarray/_fast.c (which calls its fn
 * without the policy, where a backend's op is one). */
#ifndef UNARRAY_UNSWITCHED_H
#define UNARRAY_UNSWITCHED_H

#include <Python.h>

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *fn;
} Unswitched;

#endif
