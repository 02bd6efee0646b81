/* unarray._fast: the C path of the front end's common calls (unarray/_hot.py), and the hot calls the backends
 * declare (unarray/_backends/hot_calls.py, HotCall), read here by field name when a backend binds one.
 *
 * Written in C because the front end's own frame, on a tiny array, costs as much as the kernel: the Python
 * reference stays the op's definition, and every call this path does not take goes to it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include "_cobject.h"
#include "_unswitched.h"

/* unarray._gate.Unswitched, read at import (NULL where that module is not built: no call is recognised as one) */
static PyTypeObject *UNSWITCHED;

/* Hot: the C path of a whole front-end call (ua.matmul, ua.sum, ua.add, ...), made by unarray/_hot.py.
 *
 * A Hot is a builtin function (a subtype of builtin_function_or_method, so that a tracer that substitutes
 * builtins, torch.compile's, takes it) built from the op's Python reference. Called as the reference is,
 * where the arrays are of one type found in the lookup's table, the other arguments are the declared ones
 * and an axis is None or an int in range, it calls getattr(backend, name)(*arrays, *params[, policy])
 * itself. Anything else, and any Exception the backend raises, goes to the reference with the original
 * arguments: it runs the call again and frames its error, so the reference stays the one source of the
 * op's checks and messages. The table and the backend's ops are read at each call, never cached here.
 */
#define HOT_MAX 8

typedef struct {
    PyCFunctionObject base;
    PyObject *ref;       /* the Python reference: the slow path, __wrapped__, and the source of the metadata */
    PyObject *by_type;   /* dict: type -> backend (unarray._lookup.BY_TYPE) */
    PyObject *name;      /* the backend's method */
    PyObject *params;    /* tuple of str: the other parameters, in the backend's order */
    PyObject *defaults;  /* tuple: their defaults, `missing` where one is required */
    PyObject *missing;
    PyObject *policy;    /* the precision scope's ContextVar, or NULL for an op that takes no policy */
    PyObject *policies;  /* tuple of str: the valid precision= values */
    PyObject *fname;     /* the reference's __name__ (holds def.ml_name) */
    Py_ssize_t arrays;   /* the leading array positionals (1 or 2) */
    Py_ssize_t npos;     /* how many of params may also come positionally */
    Py_ssize_t axis;     /* index in params of the axis argument, or -1 */
    PyMethodDef def;
} Hot;

static PyTypeObject HotType;
static PyObject *PRECISION;  /* "precision" */

static PyObject *
hot_unused(PyObject *self, PyObject *const *args, Py_ssize_t n, PyObject *kwnames)
{
    PyErr_SetString(PyExc_TypeError, "unarray._fast.Hot is called through its vectorcall only");
    return NULL;
}

/* The axis as the backend takes it (new reference): None as is, an int in [-ndim, ndim) made non-negative;
 * NULL without an error for anything the reference must check (unarray/_axes.py::many). */
static PyObject *
hot_axis(PyObject *x, PyObject *axis)
{
    if (axis == Py_None)
        return Py_NewRef(axis);
    if (!PyLong_CheckExact(axis))
        return NULL;
    PyObject *ndim = PyObject_GetAttrString(x, "ndim");
    if (ndim == NULL) {
        PyErr_Clear();
        return NULL;
    }
    if (!PyLong_CheckExact(ndim)) {
        Py_DECREF(ndim);
        return NULL;
    }
    Py_ssize_t nd = PyLong_AsSsize_t(ndim);
    Py_DECREF(ndim);
    Py_ssize_t a = PyLong_AsSsize_t(axis);
    if ((nd == -1 || a == -1) && PyErr_Occurred()) {
        PyErr_Clear();
        return NULL;
    }
    if (a < -nd || a >= nd)
        return NULL;
    return a >= 0 ? Py_NewRef(axis) : PyLong_FromSsize_t(a + nd);
}

static PyObject *GETATTRIBUTE;  /* "__getattribute__" */
static PyObject *OBJECT_GETATTRIBUTE;  /* object.__getattribute__ */

/* getattr(b, name) (new reference), without the bound method where getattr would build one: where b's class
 * keeps object's __getattribute__ (a __getattr__ hook only answers misses) and name is a function of the class
 * not shadowed by b's own dict, that function with *unbound set (the caller passes b first); where the class has no
 * name at all, b's own dict's entry, without the hook's steps. Anything else is PyObject_GetAttr's. */
static PyObject *
hot_method(PyObject *b, PyObject *name, int *unbound)
{
#if PY_VERSION_HEX < 0x030D0000
    PyTypeObject *tp = Py_TYPE(b);
    PyObject *descr = _PyType_Lookup(tp, name);  /* borrowed */
    if (descr == NULL && _PyType_Lookup(tp, GETATTRIBUTE) == OBJECT_GETATTRIBUTE) {
        PyObject **dictptr = _PyObject_GetDictPtr(b);
        PyObject *own = dictptr != NULL && *dictptr != NULL ? PyDict_GetItemWithError(*dictptr, name) : NULL;
        if (own != NULL || PyErr_Occurred())
            return Py_XNewRef(own);
    }
    else if (descr != NULL && PyFunction_Check(descr) && _PyType_Lookup(tp, GETATTRIBUTE) == OBJECT_GETATTRIBUTE) {
        Py_INCREF(descr);  /* the class may change while its instance dict is read */
        PyObject **dictptr = _PyObject_GetDictPtr(b);
        PyObject *own = dictptr != NULL && *dictptr != NULL ? PyDict_GetItemWithError(*dictptr, name) : NULL;
        if (own != NULL) {
            Py_DECREF(descr);
            return Py_NewRef(own);
        }
        if (PyErr_Occurred()) {
            Py_DECREF(descr);
            return NULL;
        }
        *unbound = 1;
        return descr;
    }
#endif
    return PyObject_GetAttr(b, name);
}

/* The hot calls the backends declare (unarray/_backends/hot_calls.py): fn (the op HotCall.bind wrote, a Python
 * function, which stays what every other caller and a tracer run) -> its entry, read once from the HotCall's named
 * fields by register(fn, call, general). Where the call is the declared branch, native runs without fn's frame;
 * elsewhere general (fn less the branch) runs, as fn would run it.
 * ONE_DTYPE (arrays 2, no policy): two arrays of exactly cls with one dtype object go to native(x1, x2).
 * ONE_DEFAULT (arrays 1): exactly cls, every other parameter the declaration's default (by identity) and a dtype in
 * dtypes (None: any, none read) go to native(x, **keywords), or then(native(x, **keywords)) where then is given
 * (keywords None: none); with max_size (same, on, size, limit), only where also
 * x.<same[0]> is same[1] (same not None) and x.<size> < limit wherever x.<on> is true (on None: everywhere).
 * device: None, or (attr, sub, current) for a library whose calls run on the current device rather than the
 * array's: the branch is taken only where x.attr.sub == current() for the first array.
 * ONE_GATED (policy a Gated: matmul through the precision switch): one dtype object; a dtype in anywhere goes to
 * native anywhere; in on_host, where x1.<host> is true; in reducible, where also flags.<flag> is false and, for
 * limit >= 0, x1.numel() * x2.numel() <= limit * max(1, x1.shape[-1]) (a product below the size at which a
 * reduced-precision pass can run). The policy is not read for those calls: it cannot change their result. With a
 * gate, a reducible dtype's other calls run gate(wants[(x1.<host>, policy)], native, x1, x2): the precision
 * switch's call, as fn makes it. host None: x1.<host> is taken as false (a library of one kind of device: CuPy).
 * ONE_POLICY (policy a Keyword: its native takes the policy's value as a keyword, JAX's precision=): two arrays of
 * exactly cls with one dtype object go to native(x1, x2, <name>=values[policy]), the policy the call's precision=
 * or else the scope's. */
static PyObject *ONE_DTYPE;  /* dict */
static PyObject *ONE_DEFAULT;  /* dict */
static PyObject *ONE_GATED;  /* dict */
static PyObject *ONE_POLICY;  /* dict */
/* An entry's slots: every table's first three; ONE_DTYPE's (4 slots) and ONE_DEFAULT's (10: keywords as kwnames
 * and values tuples, both None for none); ONE_GATED's (11: its
 * dtypes as one dict, dtype -> G_ANYWHERE, G_LOCAL, or a reducible dtype's itemsize negated, so that a call looks its
 * dtype up once and reads x2's element count as its nbytes over the itemsize, without building its shape);
 * ONE_POLICY's (5: the keyword as a kwnames tuple, and the policy -> value dict). */
enum { E_NATIVE, E_CLS, E_GENERAL };
enum { E_HERE = 3, E_DTYPES, E_BOUND, E_DEFAULTS, E_THEN, E_KWNAMES, E_KWVALUES };
enum { G_KINDS = 3, G_WHERE, G_LIMIT, G_FLAGS, G_FLAG, G_GATE, G_WANTS, G_HERE };
enum { G_ANYWHERE, G_LOCAL, G_REDUCIBLE, G_NONE };  /* a dtype's kind in G_KINDS (G_REDUCIBLE: its itemsize, negated) */
enum { P_KWNAMES = 3, P_VALUES };
static PyObject *DTYPE;  /* "dtype" */
static PyObject *SHAPE;  /* "shape" */
static PyObject *NBYTES;  /* "nbytes" */

/* o.<name> as a tuple of fields (new reference; a field None stays None): None for o None */
static PyObject *
fields(PyObject *o, const char *const *names, Py_ssize_t n)
{
    if (o == Py_None)
        return Py_NewRef(o);
    PyObject *t = PyTuple_New(n);
    for (Py_ssize_t i = 0; t != NULL && i < n; i++) {
        PyObject *v = PyObject_GetAttrString(o, names[i]);
        if (v == NULL)
            Py_CLEAR(t);
        else
            PyTuple_SET_ITEM(t, i, v);
    }
    return t;
}

/* here as it is kept: None, or a tuple (str, str, callable) */
static int
here_ok(PyObject *here)
{
    if (here == Py_None || (PyTuple_CheckExact(here) && PyTuple_GET_SIZE(here) == 3
                            && PyUnicode_Check(PyTuple_GET_ITEM(here, 0)) && PyUnicode_Check(PyTuple_GET_ITEM(here, 1))
                            && PyCallable_Check(PyTuple_GET_ITEM(here, 2))))
        return 1;
    PyErr_SetString(PyExc_TypeError, "register: device is None or a Here (attr: str, sub: str, current: callable)");
    return 0;
}

/* bound as it is kept: None, or (same, on, size, limit) with same None or (str, object), on None or a str, size a
 * str and limit an int */
static int
bound_ok(PyObject *bound)
{
    if (bound == Py_None)
        return 1;
    if (PyTuple_CheckExact(bound) && PyTuple_GET_SIZE(bound) == 4) {
        PyObject *same = PyTuple_GET_ITEM(bound, 0), *on = PyTuple_GET_ITEM(bound, 1);
        if ((same == Py_None || (PyTuple_CheckExact(same) && PyTuple_GET_SIZE(same) == 2
                                 && PyUnicode_Check(PyTuple_GET_ITEM(same, 0))))
            && (on == Py_None || PyUnicode_Check(on)) && PyUnicode_Check(PyTuple_GET_ITEM(bound, 2))
            && PyLong_CheckExact(PyTuple_GET_ITEM(bound, 3)))
            return 1;
    }
    PyErr_SetString(PyExc_TypeError, "register: max_size is None or a Bound (same: None or (str, object), on: None or "
                    "str, size: str, limit: int)");
    return 0;
}

/* A Gated policy's entry (new reference), its wants kept as (policy -> want where x1.<host> is false, the same where
 * true): no key is built per call. */
static PyObject *
gated_entry(PyObject *native, PyObject *cls, PyObject *general, PyObject *g, PyObject *here)
{
    static const char *const names[] = {"anywhere", "on_host", "reducible", "host", "limit", "flags", "flag", "gate",
                                        "wants"};
    PyObject *f = fields(g, names, 9);
    if (f == NULL)
        return NULL;
    PyObject *host = PyTuple_GET_ITEM(f, 3), *gate = PyTuple_GET_ITEM(f, 7), *wants = PyTuple_GET_ITEM(f, 8);
    if (!PyFrozenSet_CheckExact(PyTuple_GET_ITEM(f, 0)) || !PyFrozenSet_CheckExact(PyTuple_GET_ITEM(f, 1))
        || !PyFrozenSet_CheckExact(PyTuple_GET_ITEM(f, 2)) || (host != Py_None && !PyUnicode_Check(host))
        || !PyLong_CheckExact(PyTuple_GET_ITEM(f, 4)) || !PyUnicode_Check(PyTuple_GET_ITEM(f, 6))
        || (gate == Py_None) != (wants == Py_None) || (gate != Py_None && (!PyCallable_Check(gate)
                                                                         || !PyDict_Check(wants)))) {
        PyErr_SetString(PyExc_TypeError, "register: a Gated policy holds three frozensets of dtypes, host (an "
                        "attribute's name or None), limit (int), flags and flag (str), and gate and wants (both None, "
                        "or a callable and a dict)");
        Py_DECREF(f);
        return NULL;
    }
    PyObject *by_where = Py_None;
    if (wants != Py_None) {
        PyObject *off = PyDict_New(), *on = PyDict_New(), *key, *want;
        Py_ssize_t pos = 0;
        int rc = off != NULL && on != NULL ? 0 : -1;
        while (rc == 0 && PyDict_Next(wants, &pos, &key, &want)) {
            if (!PyTuple_Check(key) || PyTuple_GET_SIZE(key) != 2 || !PyBool_Check(PyTuple_GET_ITEM(key, 0))) {
                PyErr_SetString(PyExc_TypeError, "register: a Gated policy's wants is keyed by (bool, policy)");
                rc = -1;
            }
            else
                rc = PyDict_SetItem(PyTuple_GET_ITEM(key, 0) == Py_True ? on : off, PyTuple_GET_ITEM(key, 1), want);
        }
        by_where = rc == 0 ? PyTuple_Pack(2, off, on) : NULL;
        Py_XDECREF(off);
        Py_XDECREF(on);
        if (by_where == NULL) {
            Py_DECREF(f);
            return NULL;
        }
    }
    else
        Py_INCREF(by_where);
    /* (a dtype in two of the sets takes the first's kind, as the Python op tests them in that order) */
    PyObject *kinds = PyDict_New(), *d;
    for (int k = G_REDUCIBLE; kinds != NULL && k >= G_ANYWHERE; k--) {
        PyObject *kind = PyLong_FromLong(k), *it = kind == NULL ? NULL : PyObject_GetIter(PyTuple_GET_ITEM(f, k));
        int rc = it == NULL ? -1 : 0;
        while (rc == 0 && (d = PyIter_Next(it)) != NULL) {
            PyObject *size = k == G_REDUCIBLE ? PyObject_GetAttrString(d, "itemsize") : Py_NewRef(kind);
            long n = size != NULL && PyLong_Check(size) ? PyLong_AsLong(size) : 0;
            if (k == G_REDUCIBLE && n > 0)
                Py_SETREF(size, PyLong_FromLong(-n));
            else if (k == G_REDUCIBLE && size != NULL) {
                PyErr_SetString(PyExc_TypeError, "register: a Gated policy's reducible dtypes have a positive itemsize");
                Py_CLEAR(size);
            }
            rc = size == NULL ? -1 : PyDict_SetItem(kinds, d, size);
            Py_XDECREF(size);
            Py_DECREF(d);
        }
        if (rc < 0 || PyErr_Occurred())
            Py_CLEAR(kinds);
        Py_XDECREF(it);
        Py_XDECREF(kind);
    }
    PyObject *entry = kinds == NULL ? NULL : PyTuple_Pack(11, native, cls, general, kinds, host, PyTuple_GET_ITEM(f, 4),
                                                          PyTuple_GET_ITEM(f, 5), PyTuple_GET_ITEM(f, 6), gate,
                                                          by_where, here);
    Py_XDECREF(kinds);
    Py_DECREF(by_where);
    Py_DECREF(f);
    return entry;
}

/* register(fn, call, general): fn's entry from the HotCall call (its fields read by name). */
static PyObject *
hot_register(PyObject *module, PyObject *args)
{
    PyObject *fn, *call, *general;
    if (!PyArg_ParseTuple(args, "OOO:register", &fn, &call, &general))
        return NULL;
    if (!PyFunction_Check(fn) || !PyCallable_Check(general)) {
        PyErr_SetString(PyExc_TypeError, "register: fn a Python function, general a callable");
        return NULL;
    }
    static const char *const names[] = {"native", "cls", "arrays", "dtypes", "defaults", "device", "max_size",
                                        "policy", "then", "keywords"};
    enum { F_NATIVE, F_CLS, F_ARRAYS, F_DTYPES, F_DEFAULTS, F_DEVICE, F_MAX_SIZE, F_POLICY, F_THEN, F_KEYWORDS };
    static const char *const here_names[] = {"attr", "sub", "current"};
    static const char *const bound_names[] = {"same", "on", "size", "limit"};
    static const char *const keyword_names[] = {"keyword", "values"};
    PyObject *f = fields(call, names, 10);
    if (f == NULL)
        return NULL;
    PyObject *native = PyTuple_GET_ITEM(f, F_NATIVE), *cls = PyTuple_GET_ITEM(f, F_CLS);
    PyObject *dtypes = PyTuple_GET_ITEM(f, F_DTYPES), *defaults = PyTuple_GET_ITEM(f, F_DEFAULTS);
    PyObject *policy = PyTuple_GET_ITEM(f, F_POLICY), *then = PyTuple_GET_ITEM(f, F_THEN);
    PyObject *keywords = PyTuple_GET_ITEM(f, F_KEYWORDS);
    long arrays = PyLong_AsLong(PyTuple_GET_ITEM(f, F_ARRAYS));
    PyObject *here = fields(PyTuple_GET_ITEM(f, F_DEVICE), here_names, 3);
    PyObject *bound = here == NULL ? NULL : fields(PyTuple_GET_ITEM(f, F_MAX_SIZE), bound_names, 4);
    PyObject *entry = NULL, *table = NULL;
    if (bound == NULL || !here_ok(here) || !bound_ok(bound))
        goto done;
    if (!PyCallable_Check(native) || !PyType_Check(cls) || (arrays != 1 && arrays != 2)
        || (dtypes != Py_None && !PyFrozenSet_CheckExact(dtypes)) || !PyTuple_CheckExact(defaults)
        || (then != Py_None && (arrays != 1 || !PyCallable_Check(then)))
        || (keywords != Py_None && (arrays != 1 || !PyDict_CheckExact(keywords) || PyDict_GET_SIZE(keywords) > HOT_MAX))) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "register: native a callable, cls a type, arrays 1 or 2, dtypes a "
                            "frozenset or None (every dtype), defaults a tuple; then None or (one array) a callable, "
                            "keywords None or (one array) a dict of at most 8");
        goto done;
    }
    if (policy == Py_None && arrays == 2) {
        table = ONE_DTYPE;
        entry = PyTuple_Pack(4, native, cls, general, here);
    }
    else if (policy == Py_None) {
        table = ONE_DEFAULT;
        PyObject *kwnames = Py_None, *values = Py_None;
        if (keywords != Py_None && PyDict_GET_SIZE(keywords) > 0) {
            kwnames = PySequence_Tuple(keywords);
            PyObject *v = kwnames == NULL ? NULL : PyDict_Values(keywords);
            values = v == NULL ? NULL : PyList_AsTuple(v);
            Py_XDECREF(v);
        }
        else {
            Py_INCREF(kwnames);
            Py_INCREF(values);
        }
        if (kwnames != NULL && values != NULL)
            entry = PyTuple_Pack(10, native, cls, general, here, dtypes, bound, defaults, then, kwnames, values);
        Py_XDECREF(kwnames);
        Py_XDECREF(values);
    }
    else if (arrays != 2)
        PyErr_SetString(PyExc_TypeError, "register: a call with a policy takes two arrays");
    else if (PyObject_HasAttrString(policy, "keyword")) {
        PyObject *k = fields(policy, keyword_names, 2);
        if (k == NULL)
            goto done;
        if (!PyUnicode_Check(PyTuple_GET_ITEM(k, 0)) || !PyDict_Check(PyTuple_GET_ITEM(k, 1)) || here != Py_None)
            PyErr_SetString(PyExc_TypeError, "register: a Keyword policy is (keyword: str, values: dict), with no "
                            "device rule");
        else {
            PyObject *kwnames = PyTuple_Pack(1, PyTuple_GET_ITEM(k, 0));
            if (kwnames != NULL) {
                table = ONE_POLICY;
                entry = PyTuple_Pack(5, native, cls, general, kwnames, PyTuple_GET_ITEM(k, 1));
                Py_DECREF(kwnames);
            }
        }
        Py_DECREF(k);
    }
    else {
        table = ONE_GATED;
        entry = gated_entry(native, cls, general, policy, here);
    }
done:
    Py_DECREF(f);
    Py_XDECREF(here);
    Py_XDECREF(bound);
    if (entry == NULL)
        return NULL;
    int rc = PyDict_SetItem(table, fn, entry);
    Py_DECREF(entry);
    if (rc < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* x.<name> (new reference), as PyObject_GetAttr reads it: where x's class keeps object's attribute lookup and name is
 * a C getter of the class (the arrays' dtype, shape, device flags), the getter itself, without the generic lookup's
 * steps (a data descriptor wins over the instance dict, so the answer is the same). */
static PyObject *
attr_of(PyObject *x, PyObject *name)
{
#if PY_VERSION_HEX < 0x030D0000
    PyTypeObject *tp = Py_TYPE(x);
    if (tp->tp_getattro == PyObject_GenericGetAttr) {
        PyObject *d = _PyType_Lookup(tp, name);  /* borrowed */
        if (d != NULL && Py_IS_TYPE(d, &PyGetSetDescr_Type) && ((PyGetSetDescrObject *)d)->d_getset->get != NULL
            && PyObject_TypeCheck(x, PyDescr_TYPE(d))) {
            PyGetSetDef *gs = ((PyGetSetDescrObject *)d)->d_getset;
            return gs->get(x, gs->closure);
        }
    }
#endif
    return PyObject_GetAttr(x, name);
}

/* x's dtype (new reference), or NULL without an error where it has none readable. */
static PyObject *
dtype_of(PyObject *x)
{
    PyObject *d = attr_of(x, DTYPE);
    if (d == NULL)
        PyErr_Clear();
    return d;
}

/* Whether x1 and x2 have one dtype: 1 (also where either has none readable), 0, or -1 with an error. An identical
 * object is the common answer; a library whose arrays make a new dtype object per read (MLX) compares them. */
static int
one_dtype_pair(PyObject *x1, PyObject *x2)
{
    PyObject *d1 = dtype_of(x1);
    if (d1 == NULL)
        return 1;
    PyObject *d2 = dtype_of(x2);
    if (d2 == NULL) {
        Py_DECREF(d1);
        return 1;
    }
    int one = d1 == d2 ? 1 : PyObject_RichCompareBool(d1, d2, Py_EQ);
    Py_DECREF(d1);
    Py_DECREF(d2);
    return one;
}

/* The dtype object (borrowed: the arrays hold it) that the first `arrays` of a share where each is exactly cls; NULL
 * without an error where one is not, has no readable dtype, or has another dtype object. With read 0, no dtype is
 * read: None where each is exactly cls. */
static PyObject *
common_dtype(PyObject **a, Py_ssize_t arrays, PyObject *cls, int read)
{
    for (Py_ssize_t i = 0; i < arrays; i++)
        if ((PyObject *)Py_TYPE(a[i]) != cls)
            return NULL;
    if (!read)
        return Py_None;
    PyObject *d = NULL;
    for (Py_ssize_t i = 0; i < arrays; i++) {
        PyObject *di = dtype_of(a[i]);
        if (di == NULL)
            return NULL;
        Py_DECREF(di);  /* (identity and membership only are read; the array holds its dtype) */
        if (d != NULL && di != d)
            return NULL;
        d = di;
    }
    return d;
}

/* table[policy] (new reference), the policy the call's precision= or else the scope's; NULL with *taken 0 where the
 * scope has none set (the reference's path) or the table has no entry for it, NULL with *taken 1 on an error. */
static PyObject *
policy_value(PyObject *table, PyObject *scope, PyObject *precision, int *taken)
{
    PyObject *policy = NULL;
    if (precision != Py_None)
        policy = Py_NewRef(precision);
    else if (PyContextVar_Get(scope, NULL, &policy) < 0) {
        *taken = 1;
        return NULL;
    }
    if (policy == NULL)
        return NULL;
    PyObject *value = PyDict_GetItemWithError(table, policy);  /* borrowed */
    Py_DECREF(policy);
    if (value == NULL) {
        *taken = PyErr_Occurred() != NULL;
        return NULL;
    }
    return Py_NewRef(value);
}

/* Whether x is within bound (None, or (same, on, size, limit): x.<same[0]> is same[1] where same is given, and
 * x.<size> < limit wherever on is None or x.<on> is true); an attribute x lacks is a no, -1 on another error. */
static int
in_bound(PyObject *x, PyObject *bound)
{
    if (bound == Py_None)
        return 1;
    PyObject *same = PyTuple_GET_ITEM(bound, 0), *on = PyTuple_GET_ITEM(bound, 1);
    if (same != Py_None) {
        PyObject *v = PyObject_GetAttr(x, PyTuple_GET_ITEM(same, 0));
        if (v == NULL) {
            PyErr_Clear();
            return 0;
        }
        Py_DECREF(v);  /* (identity only) */
        if (v != PyTuple_GET_ITEM(same, 1))
            return 0;
    }
    if (on != Py_None) {
        PyObject *v = PyObject_GetAttr(x, on);
        if (v == NULL) {
            PyErr_Clear();
            return 0;
        }
        int t = PyObject_IsTrue(v);
        Py_DECREF(v);
        if (t <= 0)
            return t < 0 ? -1 : 1;  /* (the size rule does not apply) */
    }
    PyObject *n = PyObject_GetAttr(x, PyTuple_GET_ITEM(bound, 2));
    if (n == NULL) {
        PyErr_Clear();
        return 0;
    }
    int ok = PyLong_Check(n) ? PyObject_RichCompareBool(n, PyTuple_GET_ITEM(bound, 3), Py_LT) : 0;
    Py_DECREF(n);
    return ok;
}

/* Whether x is on the current device by here (None, or (attr, sub, current): x.attr.sub == current()); -1 on an
 * error of current() (an attribute x lacks is a no). */
static int
is_here(PyObject *x, PyObject *here)
{
    if (here == Py_None)
        return 1;
    PyObject *d = PyObject_GetAttr(x, PyTuple_GET_ITEM(here, 0));
    if (d == NULL) {
        PyErr_Clear();
        return 0;
    }
    PyObject *id = PyObject_GetAttr(d, PyTuple_GET_ITEM(here, 1));
    Py_DECREF(d);
    if (id == NULL) {
        PyErr_Clear();
        return 0;
    }
    PyObject *now = PyObject_CallNoArgs(PyTuple_GET_ITEM(here, 2));
    if (now == NULL) {
        Py_DECREF(id);
        return -1;
    }
    int same = PyObject_RichCompareBool(id, now, Py_EQ);
    Py_DECREF(id);
    Py_DECREF(now);
    return same;
}

/* The product of x.shape's sizes (and the last one, 1 for none) as C sizes, or -1 without an error where the shape is
 * no tuple of ints or the product overflows. */
static Py_ssize_t
numel_of(PyObject *x, Py_ssize_t *last)
{
    PyObject *shape = attr_of(x, SHAPE);
    if (shape == NULL) {
        PyErr_Clear();
        return -1;
    }
    Py_ssize_t n = PyTuple_Check(shape) ? 1 : -1;
    *last = 1;
    for (Py_ssize_t i = 0; n >= 0 && i < PyTuple_GET_SIZE(shape); i++) {
        PyObject *o = PyTuple_GET_ITEM(shape, i);
        Py_ssize_t k = PyLong_Check(o) ? PyLong_AsSsize_t(o) : -1;
        if (k < 0 || (k > 0 && n > PY_SSIZE_T_MAX / k))
            n = -1;
        else
            n *= k, *last = k;
    }
    Py_DECREF(shape);
    if (n < 0)
        PyErr_Clear();
    return n;
}

/* Whether a reducible dtype's call to a ONE_GATED native is one a precision policy cannot change: the flag off and
 * the product of the element counts within the limit times the contracted length (-1 on an error); x2's count is its
 * nbytes over the dtype's itemsize. */
static int
gated_small(PyObject *x1, PyObject *x2, PyObject *entry, long itemsize)
{
    PyObject *flags = PyTuple_GET_ITEM(entry, G_FLAGS), *name = PyTuple_GET_ITEM(entry, G_FLAG), *f;
    if (PyModule_CheckExact(flags))  /* a module's attribute read from its dict, without the lookup's steps */
        f = Py_XNewRef(PyDict_GetItemWithError(PyModule_GetDict(flags), name));
    else
        f = PyObject_GetAttr(flags, name);
    if (f == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetObject(PyExc_AttributeError, name);
        return -1;
    }
    int on = PyObject_IsTrue(f);
    Py_DECREF(f);
    if (on != 0)
        return on < 0 ? -1 : 0;
    Py_ssize_t limit = PyLong_AsSsize_t(PyTuple_GET_ITEM(entry, G_LIMIT));
    if (limit < 0)
        return 1;
    Py_ssize_t last, n1 = numel_of(x1, &last), n2 = -1;
    PyObject *nbytes = n1 < 0 ? NULL : attr_of(x2, NBYTES);
    if (nbytes != NULL) {
        n2 = PyLong_Check(nbytes) ? PyLong_AsSsize_t(nbytes) : -1;
        n2 = n2 < 0 ? -1 : n2 / itemsize;
        Py_DECREF(nbytes);
    }
    if (n1 < 0 || n2 < 0) {
        PyErr_Clear();
        return 0;
    }
    if (last < 1)
        last = 1;
    return n1 == 0 || n2 == 0 || (limit <= PY_SSIZE_T_MAX / last && n1 <= (limit * last) / n2);
}

static PyObject *
entry_call(PyObject *entry, PyObject **a, Py_ssize_t arrays, Py_ssize_t np, PyObject *scope, PyObject *precision,
           int *taken);
static PyObject *
policy_call(PyObject *entry, PyObject **a, PyObject *scope, PyObject *precision, int *taken);

/* native(*a) (new reference) where fn is registered in its table and the call is the declared branch; NULL with
 * *taken 0 where not (no error; *general then the entry's general op, a new reference, where fn has an entry), NULL
 * with *taken 1 on an error. arrays: 1 (ONE_DEFAULT, a[1..np] the other parameters) or 2 (ONE_DTYPE, or ONE_GATED
 * and ONE_POLICY where scope, the policy's ContextVar, is given with the call's precision= or None). */
static PyObject *
native_call(PyObject *fn, PyObject **a, Py_ssize_t arrays, Py_ssize_t np, PyObject *scope, PyObject *precision,
            int *taken, PyObject **general)
{
    *taken = 0;
    *general = NULL;
    if (!PyFunction_Check(fn))
        return NULL;
    PyObject *table = scope != NULL ? ONE_GATED : arrays == 1 ? ONE_DEFAULT : ONE_DTYPE;
    PyObject *entry = PyDict_GetItemWithError(table, fn);  /* borrowed */
    int keyword = 0;
    if (entry == NULL && scope != NULL && !PyErr_Occurred()) {
        entry = PyDict_GetItemWithError(ONE_POLICY, fn);
        keyword = 1;
    }
    if (entry == NULL) {
        *taken = PyErr_Occurred() != NULL;
        return NULL;
    }
    Py_INCREF(entry);  /* (a registration while the call reads attributes may replace it in the table) */
    PyObject *res = keyword ? policy_call(entry, a, scope, precision, taken)
                            : entry_call(entry, a, arrays, np, scope, precision, taken);
    if (res == NULL && !*taken)
        *general = Py_NewRef(PyTuple_GET_ITEM(entry, E_GENERAL));
    Py_DECREF(entry);
    return res;
}

/* native_call's work on a ONE_POLICY entry. */
static PyObject *
policy_call(PyObject *entry, PyObject **a, PyObject *scope, PyObject *precision, int *taken)
{
    if (common_dtype(a, 2, PyTuple_GET_ITEM(entry, E_CLS), 1) == NULL)
        return NULL;
    PyObject *value = policy_value(PyTuple_GET_ITEM(entry, P_VALUES), scope, precision, taken);
    if (value == NULL)
        return NULL;
    PyObject *argv[4] = {NULL, a[0], a[1], value};
    *taken = 1;
    PyObject *res = PyObject_Vectorcall(PyTuple_GET_ITEM(entry, E_NATIVE), argv + 1,
                                        2 | PY_VECTORCALL_ARGUMENTS_OFFSET, PyTuple_GET_ITEM(entry, P_KWNAMES));
    Py_DECREF(value);
    return res;
}

/* The precision switch's call for a ONE_GATED entry, as fn makes it: gate(wants[(x1.<where>, policy)], native, x1,
 * x2), with at_where x1.<where>'s truth. */
static PyObject *
switch_call(PyObject *entry, PyObject **a, int at_where, PyObject *scope, PyObject *precision, int *taken)
{
    PyObject *want = policy_value(PyTuple_GET_ITEM(PyTuple_GET_ITEM(entry, G_WANTS), at_where > 0), scope, precision,
                                  taken);
    if (want == NULL)
        return NULL;
    PyObject *call[5] = {NULL, want, PyTuple_GET_ITEM(entry, E_NATIVE), a[0], a[1]};
    *taken = 1;
    PyObject *res = PyObject_Vectorcall(PyTuple_GET_ITEM(entry, G_GATE), call + 1, 4 | PY_VECTORCALL_ARGUMENTS_OFFSET,
                                        NULL);
    Py_DECREF(want);
    return res;
}

/* native_call's work on fn's entry. */
static PyObject *
entry_call(PyObject *entry, PyObject **a, Py_ssize_t arrays, Py_ssize_t np, PyObject *scope, PyObject *precision,
           int *taken)
{
    int gated = scope != NULL;
    if (arrays == 1) {
        PyObject *defaults = PyTuple_GET_ITEM(entry, E_DEFAULTS);
        if (PyTuple_GET_SIZE(defaults) != np)
            return NULL;
        for (Py_ssize_t i = 0; i < np; i++)
            if (a[1 + i] != PyTuple_GET_ITEM(defaults, i))
                return NULL;
    }
    /* (a one-array entry for every dtype reads no dtype: exactly cls is the whole test) */
    int any = !gated && arrays == 1 && PyTuple_GET_ITEM(entry, E_DTYPES) == Py_None;
    PyObject *d = common_dtype(a, arrays, PyTuple_GET_ITEM(entry, E_CLS), !any);
    if (d == NULL)
        return NULL;
    int ok;
    if (gated) {
        /* every branch, native or the gate, only on the current device (here None: anywhere) */
        if ((ok = is_here(a[0], PyTuple_GET_ITEM(entry, G_HERE))) <= 0) {
            *taken = ok < 0;
            return NULL;
        }
        PyObject *kind = PyDict_GetItemWithError(PyTuple_GET_ITEM(entry, G_KINDS), d);  /* borrowed */
        if (kind == NULL && PyErr_Occurred()) {
            *taken = 1;
            return NULL;
        }
        long k = kind == NULL ? G_NONE : PyLong_AsLong(kind);
        if ((ok = k == G_ANYWHERE) == 0) {
            int reducible = k < 0;
            if (k == G_LOCAL || reducible) {
                int at_where = 0;
                if (PyTuple_GET_ITEM(entry, G_WHERE) != Py_None) {
                    PyObject *w = attr_of(a[0], PyTuple_GET_ITEM(entry, G_WHERE));
                    if (w == NULL) {
                        PyErr_Clear();
                        return NULL;
                    }
                    at_where = PyObject_IsTrue(w);
                    Py_DECREF(w);
                }
                ok = at_where;
                if (at_where > 0 && reducible)
                    ok = gated_small(a[0], a[1], entry, -k);
                if (ok == 0 && reducible && PyTuple_GET_ITEM(entry, G_GATE) != Py_None)
                    return switch_call(entry, a, at_where, scope, precision, taken);
            }
        }
    }
    else {
        ok = arrays == 1 && !any ? PySet_Contains(PyTuple_GET_ITEM(entry, E_DTYPES), d) : 1;
        if (ok > 0 && arrays == 1)
            ok = in_bound(a[0], PyTuple_GET_ITEM(entry, E_BOUND));
        if (ok > 0)
            ok = is_here(a[0], PyTuple_GET_ITEM(entry, E_HERE));
    }
    if (ok < 0) {
        *taken = 1;
        return NULL;
    }
    if (!ok)
        return NULL;
    *taken = 1;
    PyObject *kwnames = arrays == 1 ? PyTuple_GET_ITEM(entry, E_KWNAMES) : Py_None, *res;
    if (kwnames != Py_None) {
        PyObject *argv[2 + HOT_MAX];  /* (argv[0] free for the callee: PY_VECTORCALL_ARGUMENTS_OFFSET) */
        PyObject *values = PyTuple_GET_ITEM(entry, E_KWVALUES);
        argv[1] = a[0];
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(values); i++)
            argv[2 + i] = PyTuple_GET_ITEM(values, i);
        res = PyObject_Vectorcall(PyTuple_GET_ITEM(entry, E_NATIVE), argv + 1, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET,
                                  kwnames);
    }
    else
        res = PyObject_Vectorcall(PyTuple_GET_ITEM(entry, E_NATIVE), a, arrays | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
    if (res != NULL && arrays == 1 && PyTuple_GET_ITEM(entry, E_THEN) != Py_None)
        Py_SETREF(res, PyObject_CallOneArg(PyTuple_GET_ITEM(entry, E_THEN), res));
    return res;
}

/* unarray._names.keyword_error, once unarray/_hot.py sets it: the typed error of a call whose keyword the
 * reference does not take (dim=, keepdim=, ddof=...), built only after the reference has raised its TypeError. */
static PyObject *KEYWORD_ERROR;

/* The reference's TypeError replaced by keyword_error(ref, kwnames, first)'s error, where it returns one. */
static void
keyword_error(PyObject *ref, PyObject *kwnames, PyObject *first)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyObject *err = PyObject_CallFunctionObjArgs(KEYWORD_ERROR, ref, kwnames, first, NULL);
    if (err == NULL || err == Py_None || !PyExceptionInstance_Check(err)) {
        if (err == NULL)
            PyErr_Clear();
        Py_XDECREF(err);
        PyErr_Restore(type, value, tb);
        return;
    }
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    PyException_SetCause(err, NULL);  /* raise err from None: the bare TypeError says nothing more */
    PyErr_SetObject((PyObject *)Py_TYPE(err), err);
    Py_DECREF(err);
}

static PyObject *
set_keyword_error(PyObject *module, PyObject *fn)
{
    Py_XSETREF(KEYWORD_ERROR, Py_NewRef(fn));
    Py_RETURN_NONE;
}

static PyObject *
hot_call(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Hot *h = (Hot *)self;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    Py_ssize_t np = PyTuple_GET_SIZE(h->params);
    Py_ssize_t nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    PyObject *res;
    if (n < h->arrays || n > h->arrays + h->npos)
        goto slow;
    PyTypeObject *t = Py_TYPE(args[0]);
    for (Py_ssize_t i = 1; i < h->arrays; i++)
        if (Py_TYPE(args[i]) != t)
            goto slow;
    PyObject *b = PyDict_GetItemWithError(h->by_type, (PyObject *)t);
    if (b == NULL) {
        if (PyErr_Occurred())
            return NULL;
        goto slow;
    }
    /* argv[0] is free for the bound method's self (PY_VECTORCALL_ARGUMENTS_OFFSET) */
    PyObject *argv[1 + 2 + HOT_MAX + 1];
    PyObject **a = argv + 1;
    for (Py_ssize_t i = 0; i < h->arrays; i++)
        a[i] = args[i];
    for (Py_ssize_t i = 0; i < np; i++)
        a[h->arrays + i] = i + h->arrays < n ? args[h->arrays + i] : PyTuple_GET_ITEM(h->defaults, i);
    PyObject *precision = Py_None;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, k);
        Py_ssize_t i = 0;
        for (; i < np; i++) {
            PyObject *p = PyTuple_GET_ITEM(h->params, i);
            if (p == key || PyUnicode_Compare(p, key) == 0)
                break;
        }
        if (i < np) {
            if (i + h->arrays < n)  /* given twice: the reference's TypeError */
                goto slow;
            a[h->arrays + i] = args[n + k];
        }
        else if (h->policy != NULL && (key == PRECISION || PyUnicode_Compare(key, PRECISION) == 0))
            precision = args[n + k];
        else
            goto slow;
    }
    for (Py_ssize_t i = 0; i < np; i++)
        if (a[h->arrays + i] == h->missing)
            goto slow;
    if (precision != Py_None) {
        if (!PyUnicode_CheckExact(precision))
            goto slow;
        int ok = PySequence_Contains(h->policies, precision);
        if (ok < 0)
            return NULL;
        if (!ok)
            goto slow;
    }
    Py_ssize_t total = h->arrays + np;
    PyObject *axis = NULL;
    if (h->axis >= 0) {
        axis = hot_axis(args[0], a[h->arrays + h->axis]);
        if (axis == NULL) {
            if (PyErr_Occurred())
                return NULL;
            goto slow;
        }
        a[h->arrays + h->axis] = axis;
    }
    Py_INCREF(b);  /* the table may be cleared while the op runs */
    /* getattr(b, name) without building a bound method where name is a function of b's class (unbound: b is
     * passed as the first argument, in the slot before the arrays). */
    int unbound = 0;
    PyObject *fn = hot_method(b, h->name, &unbound);
    if (fn == NULL) {
        Py_DECREF(b);
        Py_XDECREF(axis);
        goto failed;
    }
    /* (a one-array op is a method of the backend class, unbound; a binary one is the backend's own function, or
     * with a policy a method) */
    int gated = h->policy != NULL && unbound && h->arrays == 2 && total == 2;
    if (gated || (h->policy == NULL && (h->arrays == 1 ? unbound : total == 2 && !unbound))) {
        int taken;
        PyObject *general;
        res = native_call(fn, a, h->arrays, np, gated ? h->policy : NULL, precision, &taken, &general);
        if (taken) {
            Py_DECREF(b);
            Py_DECREF(fn);
            Py_XDECREF(axis);
            if (res != NULL)
                return res;
            goto failed;
        }
        if (general != NULL)
            Py_SETREF(fn, general);  /* fn less its declared branch: what fn runs for this call */
    }
    /* Two arrays of two dtypes: the reference promotes them (unarray's rule for mixed kinds and its refusals), not
     * the backend's op. */
    if (h->arrays == 2) {
        int one = one_dtype_pair(a[0], a[1]);
        if (one <= 0) {
            Py_DECREF(b);
            Py_DECREF(fn);
            Py_XDECREF(axis);
            if (one < 0)
                goto failed;
            goto slow;
        }
    }
    PyObject *target = fn, *policy = NULL;
    if (h->policy != NULL) {
        if (!unbound && UNSWITCHED != NULL && Py_IS_TYPE(fn, UNSWITCHED))
            target = ((Unswitched *)fn)->fn;  /* no policy changes its result: the scope is not read */
        else if (precision != Py_None)
            a[total++] = precision;
        else {
            if (PyContextVar_Get(h->policy, NULL, &policy) < 0) {
                Py_DECREF(b);
                Py_DECREF(fn);
                Py_XDECREF(axis);
                return NULL;
            }
            if (policy == NULL) {
                Py_DECREF(b);
                Py_DECREF(fn);
                Py_XDECREF(axis);
                goto slow;
            }
            a[total++] = policy;
        }
    }
    if (unbound) {
        argv[0] = b;
        res = PyObject_Vectorcall(target, argv, total + 1, NULL);
    }
    else
        res = PyObject_Vectorcall(target, a, total | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
    Py_DECREF(b);
    Py_DECREF(fn);
    Py_XDECREF(axis);
    Py_XDECREF(policy);
    if (res != NULL)
        return res;
failed:
    /* An Exception: the reference runs the call again and frames it; a BaseException (KeyboardInterrupt) goes on. */
    if (!PyErr_ExceptionMatches(PyExc_Exception))
        return NULL;
    PyErr_Clear();
slow:
    res = PyObject_Vectorcall(h->ref, args, nargsf, kwnames);
    if (res == NULL && nkw > 0 && KEYWORD_ERROR != NULL && PyErr_ExceptionMatches(PyExc_TypeError))
        keyword_error(h->ref, kwnames, args[0]);  /* (the first argument given, by name too) */
    return res;
}

static PyObject *
hot_new(PyObject *module, PyObject *args, PyObject *kwds)
{
    static char *names[] = {"reference", "by_type", "name", "arrays", "params", "defaults", "npos", "axis",
                            "policy", "policies", "missing", NULL};
    PyObject *ref, *by_type, *name, *params, *defaults, *policy, *policies, *missing;
    Py_ssize_t arrays, npos, axis;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO!UnO!O!nnOO!O:hot", names, &ref, &PyDict_Type, &by_type, &name,
                                     &arrays, &PyTuple_Type, &params, &PyTuple_Type, &defaults, &npos, &axis, &policy,
                                     &PyTuple_Type, &policies, &missing))
        return NULL;
    Py_ssize_t np = PyTuple_GET_SIZE(params);
    if (arrays < 1 || arrays > 2 || np > HOT_MAX || PyTuple_GET_SIZE(defaults) != np || npos < 0 || npos > np
        || axis < -1 || axis >= np) {
        PyErr_SetString(PyExc_ValueError, "hot: 1 or 2 arrays, at most 8 parameters with as many defaults");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < np; i++)
        if (!PyUnicode_CheckExact(PyTuple_GET_ITEM(params, i))) {
            PyErr_SetString(PyExc_TypeError, "hot: the parameters are names (str)");
            return NULL;
        }
    PyObject *fname = PyObject_GetAttrString(ref, "__name__");
    if (fname == NULL)
        return NULL;
    PyObject *mod = PyObject_GetAttrString(ref, "__module__");
    const char *cname = PyUnicode_Check(fname) ? PyUnicode_AsUTF8(fname) : NULL;
    if (mod == NULL || cname == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "hot: the reference's __name__ is not a str");
        Py_DECREF(fname);
        Py_XDECREF(mod);
        return NULL;
    }
    Hot *h = PyObject_GC_New(Hot, &HotType);
    if (h == NULL) {
        Py_DECREF(fname);
        Py_DECREF(mod);
        return NULL;
    }
    h->def.ml_name = cname;
    h->def.ml_meth = (PyCFunction)(void (*)(void))hot_unused;
    h->def.ml_flags = METH_FASTCALL | METH_KEYWORDS;
    h->def.ml_doc = NULL;
    h->base.m_ml = &h->def;
    h->base.m_self = NULL;
    h->base.m_module = mod;
    h->base.m_weakreflist = NULL;
    h->base.vectorcall = hot_call;
    h->ref = Py_NewRef(ref);
    h->by_type = Py_NewRef(by_type);
    h->name = Py_NewRef(name);
    PyUnicode_InternInPlace(&h->name);
    h->params = Py_NewRef(params);
    h->defaults = Py_NewRef(defaults);
    h->missing = Py_NewRef(missing);
    h->policy = policy == Py_None ? NULL : Py_NewRef(policy);
    h->policies = Py_NewRef(policies);
    h->fname = fname;
    h->arrays = arrays;
    h->npos = npos;
    h->axis = axis;
    PyObject_GC_Track(h);
    return (PyObject *)h;
}

static const Py_ssize_t hot_fields[] = {offsetof(Hot, base.m_module), offsetof(Hot, ref), offsetof(Hot, by_type),
                                        offsetof(Hot, defaults), offsetof(Hot, missing), offsetof(Hot, policy),
                                        offsetof(Hot, policies), -1};
GC_FIELDS(hot)

static void
hot_dealloc(Hot *h)
{
    PyObject_GC_UnTrack(h);
    if (h->base.m_weakreflist != NULL)
        PyObject_ClearWeakRefs((PyObject *)h);
    hot_clear((PyObject *)h);
    Py_CLEAR(h->name);
    Py_CLEAR(h->params);
    Py_CLEAR(h->fname);  /* last: it holds def.ml_name */
    PyObject_GC_Del(h);
}

static PyObject *
hot_ref_attr(Hot *h, const char *attr)
{
    return h->ref == NULL ? Py_NewRef(Py_None) : PyObject_GetAttrString(h->ref, attr);
}

static PyObject *hot_doc(Hot *h, void *c) { return hot_ref_attr(h, "__doc__"); }
static PyObject *hot_name(Hot *h, void *c) { return hot_ref_attr(h, "__name__"); }
static PyObject *hot_qualname(Hot *h, void *c) { return hot_ref_attr(h, "__qualname__"); }
static PyObject *hot_annotations(Hot *h, void *c) { return hot_ref_attr(h, "__annotations__"); }
static PyObject *hot_wrapped(Hot *h, void *c) { return Py_NewRef(h->ref == NULL ? Py_None : h->ref); }

static PyGetSetDef hot_getset[] = {
    {"__wrapped__", (getter)hot_wrapped, NULL, "the Python reference: the slow path and the documentation", NULL},
    {"__doc__", (getter)hot_doc, NULL, NULL, NULL},
    {"__name__", (getter)hot_name, NULL, NULL, NULL},
    {"__qualname__", (getter)hot_qualname, NULL, NULL, NULL},
    {"__annotations__", (getter)hot_annotations, NULL, NULL, NULL},
    {NULL},
};

static PyObject *
hot_reduce(Hot *h, PyObject *unused)
{
    /* pickled by name, as a function is */
    return hot_ref_attr(h, "__qualname__");
}

static PyMethodDef hot_methods[] = {
    {"__reduce__", (PyCFunction)hot_reduce, METH_NOARGS, NULL},
    {NULL},
};

static PyObject *
hot_repr(Hot *h)
{
    PyObject *q = hot_ref_attr(h, "__qualname__");
    if (q == NULL)
        return NULL;
    PyObject *r = PyUnicode_FromFormat("<function %S at %p>", q, (void *)h);
    Py_DECREF(q);
    return r;
}

static PyTypeObject HotType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "unarray._fast.Hot",
    .tp_basicsize = sizeof(Hot),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_dealloc = (destructor)hot_dealloc,
    .tp_traverse = hot_traverse,
    .tp_clear = hot_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(PyCFunctionObject, vectorcall),
    .tp_weaklistoffset = offsetof(PyCFunctionObject, m_weakreflist),
    .tp_repr = (reprfunc)hot_repr,
    .tp_getset = hot_getset,
    .tp_methods = hot_methods,
};

static PyMethodDef module_methods[] = {
    {"hot", (PyCFunction)(void (*)(void))hot_new, METH_VARARGS | METH_KEYWORDS,
     "hot(reference, by_type, name, arrays, params, defaults, npos, axis, policy, policies, missing): the C path "
     "of a front-end call (unarray/_hot.py)"},
    {"set_keyword_error", (PyCFunction)set_keyword_error, METH_O,
     "set_keyword_error(fn): where a hot call's reference raises TypeError for a call with keywords, "
     "fn(reference, kwnames, first_argument) returns the error to raise instead (None: the TypeError stands)"},
    {"register", (PyCFunction)hot_register, METH_VARARGS,
     "register(fn, call, general): on the hot path, the backend op fn (a Python function HotCall.bind wrote) takes "
     "the branch the HotCall call declares (its fields read by name: native, cls, arrays, dtypes, defaults, device, "
     "max_size, policy) without fn's frame, and general (fn less that branch) elsewhere"},
    {NULL},
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "unarray._fast", "The front end's hot calls in C, and the backends' declared hot calls "
    "(see unarray/_hot.py, unarray/_backends/hot_calls.py).", -1, module_methods,
};

PyMODINIT_FUNC
PyInit__fast(void)
{
    /* A Hot is a builtin function to every tool; identity is its equality and hash (the base compares m_self). */
    HotType.tp_base = &PyCFunction_Type;
    HotType.tp_hash = PyBaseObject_Type.tp_hash;
    HotType.tp_richcompare = PyBaseObject_Type.tp_richcompare;
    if (PyType_Ready(&HotType) < 0)
        return NULL;
    if (UNSWITCHED == NULL) {
        /* (held for the process, as the interned names; without the gate's module no op is an Unswitched) */
        PyObject *gate = PyImport_ImportModule("unarray._gate");
        PyObject *t = gate == NULL ? NULL : PyObject_GetAttrString(gate, "Unswitched");
        Py_XDECREF(gate);
        if (t != NULL && PyType_Check(t))
            UNSWITCHED = (PyTypeObject *)t;
        else {
            Py_XDECREF(t);
            PyErr_Clear();
        }
    }
    if (PRECISION == NULL && (PRECISION = PyUnicode_InternFromString("precision")) == NULL)
        return NULL;
    if (GETATTRIBUTE == NULL && (GETATTRIBUTE = PyUnicode_InternFromString("__getattribute__")) == NULL)
        return NULL;
    if (OBJECT_GETATTRIBUTE == NULL) {
        /* (a type lookup, as hot_method compares: a static builtin type's tp_dict is NULL from Python 3.12) */
        PyObject *o = _PyType_Lookup(&PyBaseObject_Type, GETATTRIBUTE);  /* borrowed */
        if (o == NULL) {
            PyErr_SetString(PyExc_RuntimeError, "object has no __getattribute__");
            return NULL;
        }
        OBJECT_GETATTRIBUTE = Py_NewRef(o);
    }
    if (DTYPE == NULL && (DTYPE = PyUnicode_InternFromString("dtype")) == NULL)
        return NULL;
    if (ONE_DTYPE == NULL && (ONE_DTYPE = PyDict_New()) == NULL)
        return NULL;
    if (ONE_DEFAULT == NULL && (ONE_DEFAULT = PyDict_New()) == NULL)
        return NULL;
    if (ONE_GATED == NULL && (ONE_GATED = PyDict_New()) == NULL)
        return NULL;
    if (ONE_POLICY == NULL && (ONE_POLICY = PyDict_New()) == NULL)
        return NULL;
    if (SHAPE == NULL && (SHAPE = PyUnicode_InternFromString("shape")) == NULL)
        return NULL;
    if (NBYTES == NULL && (NBYTES = PyUnicode_InternFromString("nbytes")) == NULL)
        return NULL;
    return module_of(&moduledef, (PyTypeObject *[]){&HotType, NULL});
}
