/* What unarray's C extension types share (unarray/_fast.c, unarray/_gate.c, unarray/interop/_speedups.c).
 *
 * A type lists the objects it holds once, as offsets ending in -1 (P_fields); GC_FIELDS(P) writes its
 * tp_traverse and tp_clear (P_traverse, P_clear) from that list, gc_dealloc frees a GC type that holds nothing
 * else, VECTORCALL_GC_SLOTS fills the slots of a GC type called by vectorcall, and module_of makes the module
 * that holds the types.
 */
#ifndef UNARRAY_COBJECT_H
#define UNARRAY_COBJECT_H

#include <Python.h>

#define COBJECT_FIELD(self, offset) (*(PyObject **)((char *)(self) + (offset)))

static inline int
fields_traverse(PyObject *self, const Py_ssize_t *fields, visitproc visit, void *arg)
{
    for (; *fields >= 0; fields++)
        Py_VISIT(COBJECT_FIELD(self, *fields));
    return 0;
}

static inline int
fields_clear(PyObject *self, const Py_ssize_t *fields)
{
    for (; *fields >= 0; fields++)
        Py_CLEAR(COBJECT_FIELD(self, *fields));
    return 0;
}

#define GC_FIELDS(P)                                                                                    \
    static int P##_traverse(PyObject *self, visitproc visit, void *arg)                                 \
    {                                                                                                   \
        return fields_traverse(self, P##_fields, visit, arg);                                           \
    }                                                                                                   \
    static int P##_clear(PyObject *self) { return fields_clear(self, P##_fields); }

static inline void
gc_dealloc(PyObject *self)
{
    PyObject_GC_UnTrack(self);
    Py_TYPE(self)->tp_clear(self);
    Py_TYPE(self)->tp_free(self);
}

/* type T, made by P_new, called through its `vectorcall` field */
#define VECTORCALL_GC_SLOTS(T, P)                                                                       \
    .tp_basicsize = sizeof(T),                                                                          \
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,                   \
    .tp_new = P##_new, .tp_dealloc = gc_dealloc, .tp_traverse = P##_traverse, .tp_clear = P##_clear,    \
    .tp_call = PyVectorcall_Call, .tp_vectorcall_offset = offsetof(T, vectorcall)

/* the module of def, holding types (NULL-ended), each under the last part of its tp_name */
static inline PyObject *
module_of(PyModuleDef *def, PyTypeObject **types)
{
    PyObject *m = PyModule_Create(def);
    for (; m != NULL && *types != NULL; types++)
        if (PyModule_AddType(m, *types) < 0)
            Py_CLEAR(m);
    return m;
}

#endif
