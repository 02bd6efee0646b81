/* unarray.interop._speedups: ua.to's hot path in C (optional; unarray/interop/_routes.py and _public.py are the reference).
 *
 * ua.to(x, backend) with neither device nor copy given is a dict lookup on (type(x), backend)
 * and one route: an uncached route calls the native entry point (torch.from_numpy,
 * Tensor.numpy, ...), where a guard allows it (guard_passes: the checks the converter would make,
 * read in C); a cached route checks the weak cache (the entry _public and _cache keep:
 * [weakref, signature, {target: (view, view signature[, device])}, refs]), reading the signatures and the
 * stream order in C where _streams gives their reads, and may take a first sight of an array the
 * guarded way too. Everything else (a miss, a refusal, keywords, a first handoff of a pair) goes to
 * the Python code, which this module only short-cuts: _routes.fast's pure-Python closures and the
 * converters make the same checks, step by step.
 *
 * Written in C because those steps cost less than the Python frames around them.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../_cobject.h"
#ifdef UNARRAY_NUMPY
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>  /* buffer_array and the buffer guard; the C API is loaded on first use */

static int
numpy_api(void)
{
    /* 1 once NumPy's C API is loaded (importing NumPy, which a NumPy or JAX array in hand has done). */
    static int loaded;
    if (!loaded) {
        if (_import_array() < 0) {
            PyErr_Clear();
            return 0;
        }
        loaded = 1;
    }
    return 1;
}
#endif

static PyObject *FAST;      /* dict: (source type, target name) -> route (Handoff or callable(x, op)) */
static PyObject *PYTO;      /* interop's Python ua.to: everything off the fast path */
static PyObject *CACHE;     /* dict: id(x) -> [weakref, signature, {target: (view, view signature[, device])}, refs] */
static PyObject *REFUSALS;  /* exception types a native entry point refuses an array with */
static PyObject *S_DEVICE, *S_COPY, *S_OP, *S_TO, *S_GET_DEVICE, *S_READONLY;
/* The last (type, backend) looked up and its route: a loop handing over one kind of array skips the
 * key tuple and the dict lookup. FAST's entries never change once set (one route per pair). */
static PyObject *LAST_TYPE, *LAST_BACKEND, *LAST_ROUTE;

/* A route: what ua.to does for one (source library, target library). */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    int cached;
    PyObject *first;  /* the native entry point called on x (uncached, or a first sight with seen) */
    PyObject *slow;   /* the Python rest: slow(x, op) (uncached) or slow(x, op, had_entry) (cached) */
    PyObject *sig;    /* source signature: function or reads (same_signature), or NULL (nothing can change) */
    PyObject *osig;   /* view signature, the same way, or NULL */
    PyObject *order;  /* stream order: order(x, target) or its reads (order_streams), or NULL */
    PyObject *dst;    /* target library name */
    PyObject *guard;  /* what x must pass before `first` runs on it (guard_passes), or NULL */
    PyObject *seen;   /* cached route: the ids handed over before (_cache.SEEN), or NULL: a first
                       * sight of an array then runs guard + first in C, as an uncached route does */
    Py_ssize_t max_seen;
    int readonly;     /* mark an ndarray that `first` returns read-only (an immutable source's view) */
    Py_ssize_t made;  /* zero-copy conversions done here (ua.stats() adds the Python side's) */
    Py_ssize_t hits;  /* cache hits */
} Handoff;

static PyTypeObject HandoffType;

static PyObject *
read_value(PyObject *obj, PyObject *name, PyObject *call)
{
    /* obj.name, or obj.name() where call is true (binding no method object, as Python's call does).
     * Where the type reads attributes the generic way, the type's own descriptor is called directly
     * (found through the type's attribute cache): a C getter, or a C method called unbound. That
     * skips the instance lookup (a torch cache hit makes up to nine reads). A method
     * is the type's even where an instance attribute shadows it: a signature reads the array's
     * metadata, never a per-object override. */
    PyTypeObject *tp = Py_TYPE(obj);
    if (tp->tp_getattro == PyObject_GenericGetAttr) {
        PyObject *d = _PyType_Lookup(tp, name);  /* borrowed: held while it runs */
        PyTypeObject *dt = d == NULL ? NULL : Py_TYPE(d);
        if (dt == (call == Py_True ? &PyMethodDescr_Type : &PyGetSetDescr_Type)) {
            Py_INCREF(d);
            PyObject *r = call == Py_True ? PyObject_Vectorcall(d, &obj, 1, NULL)
                                          : dt->tp_descr_get(d, obj, (PyObject *)tp);
            Py_DECREF(d);
            return r;
        }
    }
    if (call == Py_True) {
        PyObject *self[2] = {NULL, obj};  /* self[0]: the slot PY_VECTORCALL_ARGUMENTS_OFFSET lends */
        return PyObject_VectorcallMethod(name, self + 1, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
    }
    return PyObject_GetAttr(obj, name);
}

static void *
data_pointer(PyObject *obj)
{
    /* A read (name, None): an ndarray's data pointer, NULL (0) for anything else (a NumPy scalar is
     * immutable), as _cache.sig_numpy reads it; the buffer __setstate__ replaces in place. */
#ifdef UNARRAY_NUMPY
    if (numpy_api() && PyArray_Check(obj))
        return PyArray_DATA((PyArrayObject *)obj);
#endif
    return NULL;
}

static int
same_signature(PyObject *fn, PyObject *obj, PyObject *want)
{
    /* 1 when obj's signature is want, 0 when not, -1 on error. fn is the signature function, or the
     * reads it makes ((name, call) pairs, _cache.SIGNATURE_READS): then each value is compared
     * with want's item as it is read, with no tuple built and no Python frame. A pair (name, ...)
     * is a check instead (_cache.CHECKED_READS): want's item is a guard, and where want[i].name(obj)
     * is True the signature matches (the reads after it are skipped); where it is not (or the guard
     * is None), the reads after it decide. want may hold more items than fn reads. */
    if (PyTuple_CheckExact(fn)) {
        Py_ssize_t n = PyTuple_GET_SIZE(fn);
        if (!PyTuple_Check(want) || PyTuple_GET_SIZE(want) < n)
            return 0;
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *step = PyTuple_GET_ITEM(fn, i);
            if (!PyTuple_CheckExact(step) || PyTuple_GET_SIZE(step) != 2) {
                PyErr_SetString(PyExc_TypeError, "a signature read is a (name, call) pair");
                return -1;
            }
            PyObject *name = PyTuple_GET_ITEM(step, 0), *item = PyTuple_GET_ITEM(want, i);
            if (PyTuple_GET_ITEM(step, 1) == Py_Ellipsis) {
                if (item == Py_None)
                    continue;
                PyObject *args[3] = {NULL, item, obj};
                PyObject *ok = PyObject_VectorcallMethod(name, args + 1, 2 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
                if (ok == NULL)
                    return -1;
                Py_DECREF(ok);
                if (ok == Py_True)
                    return 1;
                continue;
            }
            if (PyTuple_GET_ITEM(step, 1) == Py_None) {
                /* the data pointer, compared as an address: no int is made on a hit */
                void *want_ptr = PyLong_Check(item) ? PyLong_AsVoidPtr(item) : NULL;
                if (want_ptr == NULL && PyErr_Occurred())
                    PyErr_Clear();
                if (want_ptr != data_pointer(obj))
                    return 0;
                continue;
            }
            PyObject *got = read_value(obj, name, PyTuple_GET_ITEM(step, 1));
            if (got == NULL)
                return -1;
            int eq = PyObject_RichCompareBool(item, got, Py_EQ);
            Py_DECREF(got);
            if (eq <= 0)
                return eq;
        }
        return 1;
    }
    PyObject *got = PyObject_CallOneArg(fn, obj);
    if (got == NULL)
        return -1;
    int eq = PyObject_RichCompareBool(want, got, Py_EQ);
    Py_DECREF(got);
    return eq;
}

static PyObject *
referent(PyObject *ref)
{
    /* A new reference to the weakref's object (None when dead), or NULL on error. */
#if PY_VERSION_HEX >= 0x030D0000
    PyObject *obj;
    if (PyWeakref_GetRef(ref, &obj) < 0)
        return NULL;
    return obj == NULL ? Py_NewRef(Py_None) : obj;
#else
    PyObject *obj = PyWeakref_GetObject(ref);
    if (obj == NULL)
        return NULL;
    Py_INCREF(obj);
    return obj;
#endif
}

static int order_streams(PyObject *order, PyObject *x, PyObject *dst, PyObject *device);

static PyObject *
cache_hit(Handoff *h, PyObject *x, PyObject *entry)
{
    /* The cached view of x if still valid (new reference); NULL with no error on a miss.
     * The signature calls run Python code, so every item read is held while they run. */
    PyObject *ref = NULL, *want = NULL, *views = NULL, *held = NULL, *out = NULL;
    if (!PyList_CheckExact(entry) || PyList_GET_SIZE(entry) < 3)
        return NULL;
    ref = Py_NewRef(PyList_GET_ITEM(entry, 0));
    want = Py_NewRef(PyList_GET_ITEM(entry, 1));
    views = Py_NewRef(PyList_GET_ITEM(entry, 2));
    if (!PyWeakref_Check(ref) || !PyDict_CheckExact(views))
        goto done;
    PyObject *obj = referent(ref);
    if (obj == NULL)
        goto done;
    Py_DECREF(obj);
    if (obj != x)
        goto done;
    if (h->sig != NULL) {
        int eq = same_signature(h->sig, x, want);
        if (eq <= 0)
            goto done;
    }
    held = PyDict_GetItemWithError(views, h->dst);
    if (held == NULL || !PyTuple_CheckExact(held) || PyTuple_GET_SIZE(held) < 2) {
        held = NULL;
        goto done;
    }
    Py_INCREF(held);
    PyObject *view = PyTuple_GET_ITEM(held, 0);
    if (h->osig != NULL) {
        int eq = same_signature(h->osig, view, PyTuple_GET_ITEM(held, 1));
        if (eq <= 0)
            goto done;
    }
    if (h->order != NULL) {
        /* the source's device, where the store kept it with the view (a torch source's pointer,
         * checked above, pins its device): else order_streams asks x */
        PyObject *dev = PyTuple_GET_SIZE(held) > 2 ? PyTuple_GET_ITEM(held, 2) : NULL;
        if (order_streams(h->order, x, h->dst, dev != NULL && PyLong_CheckExact(dev) ? dev : NULL) < 0)
            goto done;
    }
    h->hits++;
    out = Py_NewRef(view);
done:
    Py_XDECREF(held);
    Py_DECREF(views);
    Py_DECREF(want);
    Py_DECREF(ref);
    return out;
}

/* A C function exported by a consumer library (a Cython module's __pyx_capi__ entry): its current
 * stream on a device, as a handle. CuPy's cupy_backends.cuda.stream.get_stream_ptr is one: called
 * directly, it spares get_current_stream(device) finding the Stream object and the read of its .ptr. */
#define STREAM_READER "intptr_t (int)"

static PyObject *
reader_stream(PyObject *reader, long device)
{
    /* reader(device) as an int (a new reference), or NULL on error: the capsule must be named as its
     * signature, STREAM_READER; the function may raise (Cython's "except *": checked after each call). */
    intptr_t (*current)(int) = (intptr_t (*)(int))PyCapsule_GetPointer(reader, STREAM_READER);
    if (current == NULL)
        return NULL;
    if (device > INT_MAX) {
        PyErr_SetString(PyExc_OverflowError, "a device index beyond int");
        return NULL;
    }
    intptr_t handle = current((int)device);
    if (PyErr_Occurred())
        return NULL;
    return PyLong_FromSsize_t((Py_ssize_t)handle);
}

static PyObject *
stream_of(PyObject *module, PyObject *args)
{
    PyObject *reader;
    long device;
    if (!PyArg_ParseTuple(args, "O!l:stream_of", &PyCapsule_Type, &reader, &device))
        return NULL;
    return reader_stream(reader, device);
}

static int
order_streams(PyObject *order, PyObject *x, PyObject *dst, PyObject *device)
{
    /* A cache hit's stream order (0, or -1 on error). order is either a function order(x, dst) or the
     * reads it makes, (raw, consumer, attr, wait) (_streams.ORDER_READS): where x is on a GPU
     * (device, or else x.get_device(), is >= 0) and raw(device), the producer's current stream, is
     * not the consumer's (consumer itself where it is an int, else consumer(device), or its
     * attribute attr; a capsule consumer is a C function of the device, see reader_stream), wait(x, dst). */
    if (!PyTuple_CheckExact(order)) {
        PyObject *args[2] = {x, dst};
        PyObject *r = PyObject_Vectorcall(order, args, 2, NULL);
        Py_XDECREF(r);
        return r == NULL ? -1 : 0;
    }
    if (PyTuple_GET_SIZE(order) != 4) {
        PyErr_SetString(PyExc_TypeError, "stream-order reads are (raw, consumer, attr, wait)");
        return -1;
    }
    PyObject *raw = PyTuple_GET_ITEM(order, 0), *consumer = PyTuple_GET_ITEM(order, 1);
    PyObject *attr = PyTuple_GET_ITEM(order, 2), *wait = PyTuple_GET_ITEM(order, 3);
    PyObject *dev = device != NULL ? Py_NewRef(device) : read_value(x, S_GET_DEVICE, Py_True);
    if (dev == NULL)
        return -1;
    long index = PyLong_AsLong(dev);
    if (index < 0) {
        Py_DECREF(dev);
        return index == -1 && PyErr_Occurred() ? -1 : 0;  /* -1: a CPU tensor, nothing to order */
    }
    PyObject *producer = PyObject_CallOneArg(raw, dev);
    if (producer == NULL) {
        Py_DECREF(dev);
        return -1;
    }
    PyObject *theirs;
    if (PyLong_CheckExact(consumer)) {
        theirs = Py_NewRef(consumer);
    } else if (PyCapsule_CheckExact(consumer)) {
        theirs = reader_stream(consumer, index);
    } else {
        theirs = PyObject_CallOneArg(consumer, dev);
        if (theirs != NULL && attr != Py_None)
            Py_SETREF(theirs, read_value(theirs, attr, Py_False));
    }
    Py_DECREF(dev);
    int same = theirs == NULL ? -1 : PyObject_RichCompareBool(producer, theirs, Py_EQ);
    Py_DECREF(producer);
    Py_XDECREF(theirs);
    if (same != 0)
        return same < 0 ? -1 : 0;
    PyObject *args[2] = {x, dst};
    PyObject *r = PyObject_Vectorcall(wait, args, 2, NULL);
    Py_XDECREF(r);
    return r == NULL ? -1 : 0;
}

enum { GUARD_ATTR = 1, GUARD_BUFFER = 2, GUARD_WRITABLE = 3 };

static int
guard_passes(PyObject *guard, PyObject *x)
{
    /* 1 when x passes the route's guard, 0 when not (the Python converter then decides, with its
     * own errors). Two kinds, set by _routes.GUARDED:
     *   (GUARD_ATTR, type, name, call, allowed): type(x) is type (or type is None) and
     *       allowed[x.name (called if call)] is True; e.g. a TensorFlow tensor's device, one the
     *       converter has seen on the CPU.
     *   (GUARD_BUFFER, align): x exports a writable C-contiguous buffer whose address is a
     *       multiple of align (or empty); e.g. an ndarray TensorFlow can alias.
     *   (GUARD_WRITABLE, 0): x is a writable ndarray (any layout); e.g. one torch.from_numpy may
     *       alias, as torch has no read-only tensors.
     * Never raises: whatever goes wrong here is left for the converter to report. */
    if (guard == NULL)
        return 1;
    if (!PyTuple_CheckExact(guard) || PyTuple_GET_SIZE(guard) < 2)
        return 0;
    long kind = PyLong_AsLong(PyTuple_GET_ITEM(guard, 0));
    if (kind == GUARD_ATTR && PyTuple_GET_SIZE(guard) == 5) {
        PyObject *type = PyTuple_GET_ITEM(guard, 1);
        if (type != Py_None && (PyObject *)Py_TYPE(x) != type)
            return 0;
        PyObject *v = read_value(x, PyTuple_GET_ITEM(guard, 2), PyTuple_GET_ITEM(guard, 3));
        int ok = 0;
        if (v != NULL && PyDict_CheckExact(PyTuple_GET_ITEM(guard, 4))) {
            PyObject *allowed = PyDict_GetItemWithError(PyTuple_GET_ITEM(guard, 4), v);
            ok = allowed == Py_True;
        }
        Py_XDECREF(v);
        PyErr_Clear();
        return ok;
    }
    if (kind == GUARD_WRITABLE && PyTuple_GET_SIZE(guard) == 2) {
#ifdef UNARRAY_NUMPY
        if (numpy_api() && PyArray_Check(x))
            return PyArray_ISWRITEABLE((PyArrayObject *)x);
#endif
        Py_buffer view;
        if (PyObject_GetBuffer(x, &view, PyBUF_STRIDES | PyBUF_WRITABLE) < 0) {
            PyErr_Clear();
            return 0;
        }
        PyBuffer_Release(&view);
        return 1;
    }
    if (kind == GUARD_BUFFER && PyTuple_GET_SIZE(guard) == 2) {
        Py_ssize_t align = PyLong_AsSsize_t(PyTuple_GET_ITEM(guard, 1));
#ifdef UNARRAY_NUMPY
        if (align > 0 && numpy_api() && PyArray_CheckExact(x)) {
            /* An ndarray's own flags, as its buffer export would check them, without building the
             * export's format string. */
            PyArrayObject *a = (PyArrayObject *)x;
            int need = NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_WRITEABLE;
            return (PyArray_FLAGS(a) & need) == need
                && (PyArray_NBYTES(a) == 0 || (uintptr_t)PyArray_DATA(a) % (uintptr_t)align == 0);
        }
#endif
        Py_buffer view;
        if (align <= 0 || PyObject_GetBuffer(x, &view, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0) {
            PyErr_Clear();
            return 0;
        }
        int ok = view.len == 0 || (uintptr_t)view.buf % (uintptr_t)align == 0;
        PyBuffer_Release(&view);
        return ok;
    }
    PyErr_Clear();
    return 0;
}

static PyObject *
made_read_only(Handoff *h, PyObject *out)
{
    /* out, marked read-only where the route says so (the view of an immutable source). */
#ifdef UNARRAY_NUMPY
    if (out != NULL && h->readonly && numpy_api() && PyArray_Check(out))
        PyArray_CLEARFLAGS((PyArrayObject *)out, NPY_ARRAY_WRITEABLE);
#endif
    return out;
}

static PyObject *
guarded_first(Handoff *h, PyObject *x)
{
    /* The route's first call on x, if x passes the guard: a new reference, or NULL with no error set
     * when the Python converter must take over (a guard not passed, or any failure of the first
     * call: the converter repeats it with its own checks and errors). */
    if (!guard_passes(h->guard, x))
        return NULL;
    PyObject *out = PyObject_CallOneArg(h->first, x);
    if (out == NULL && PyErr_ExceptionMatches(PyExc_Exception))
        PyErr_Clear();
    return made_read_only(h, out);
}

static PyObject *
handoff_run(Handoff *h, PyObject *x, PyObject *op)
{
    if (!h->cached) {
        PyObject *out;
        if (h->guard != NULL) {
            out = guarded_first(h, x);
            if (out == NULL && PyErr_Occurred())
                return NULL;
        } else {
            out = made_read_only(h, PyObject_CallOneArg(h->first, x));
            if (out == NULL) {
                if (!PyErr_ExceptionMatches(REFUSALS))
                    return NULL;
                PyErr_Clear();  /* a refused layout or dtype: the converter's full path (copy=None) */
            }
        }
        if (out != NULL) {
            h->made++;
            return out;
        }
        PyObject *args[2] = {x, op};
        return PyObject_Vectorcall(h->slow, args, 2, NULL);
    }
    PyObject *key = PyLong_FromVoidPtr(x);  /* id(x) */
    if (key == NULL)
        return NULL;
    PyObject *entry = PyDict_GetItemWithError(CACHE, key);
    if (entry == NULL && PyErr_Occurred()) {
        Py_DECREF(key);
        return NULL;
    }
    if (entry != NULL) {
        Py_DECREF(key);
        Py_INCREF(entry);
        PyObject *out = cache_hit(h, x, entry);
        Py_DECREF(entry);
        if (out != NULL || PyErr_Occurred())
            return out;
    } else if (h->seen != NULL) {
        /* A first sight (interop's admit): convert without storing, as the converter would. */
        int before = PySet_Contains(h->seen, key);
        PyObject *out = before == 0 ? guarded_first(h, x) : NULL;
        if (out != NULL) {
            if (PySet_GET_SIZE(h->seen) >= h->max_seen)
                PySet_Clear(h->seen);
            if (PySet_Add(h->seen, key) < 0) {
                Py_DECREF(out);
                out = NULL;
            } else {
                h->made++;
            }
        }
        Py_DECREF(key);
        if (out != NULL || PyErr_Occurred())
            return out;
    } else {
        Py_DECREF(key);
    }
    PyObject *args[3] = {x, op, entry != NULL ? Py_True : Py_False};
    return PyObject_Vectorcall(h->slow, args, 3, NULL);
}

static PyObject *
handoff_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    /* route(x, op): what interop's Python ua.to calls after its own lookup. */
    if (PyVectorcall_NARGS(nargsf) != 2 || kwnames != NULL) {
        PyErr_SetString(PyExc_TypeError, "a handoff route takes (x, op)");
        return NULL;
    }
    return handoff_run((Handoff *)self, args[0], args[1]);
}

static PyObject *
none_to_null(PyObject *o)
{
    return o == Py_None ? NULL : Py_NewRef(o);
}

static PyObject *
handoff_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *names[] = {"cached", "first", "slow", "sig", "osig", "order", "dst", "guard", "seen", "max_seen",
                            "readonly", NULL};
    int cached, readonly = 0;
    PyObject *first, *slow, *sig, *osig, *order, *dst, *guard = Py_None, *seen = Py_None;
    Py_ssize_t max_seen = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "pOOOOOU|OOnp:Handoff", names, &cached, &first, &slow, &sig, &osig,
                                     &order, &dst, &guard, &seen, &max_seen, &readonly))
        return NULL;
    if (seen != Py_None && (!PySet_CheckExact(seen) || max_seen <= 0)) {
        PyErr_SetString(PyExc_TypeError, "Handoff: seen must be a set, with max_seen > 0");
        return NULL;
    }
    Handoff *h = (Handoff *)type->tp_alloc(type, 0);
    if (h == NULL)
        return NULL;
    h->vectorcall = handoff_vectorcall;
    h->cached = cached;
    h->first = Py_NewRef(first);
    h->slow = Py_NewRef(slow);
    h->sig = none_to_null(sig);
    h->osig = none_to_null(osig);
    h->order = none_to_null(order);
    h->dst = Py_NewRef(dst);
    h->guard = none_to_null(guard);
    h->seen = none_to_null(seen);
    h->max_seen = max_seen;
    h->readonly = readonly;
    return (PyObject *)h;
}

static const Py_ssize_t handoff_fields[] = {offsetof(Handoff, first), offsetof(Handoff, slow), offsetof(Handoff, sig),
                                            offsetof(Handoff, osig), offsetof(Handoff, order), offsetof(Handoff, dst),
                                            offsetof(Handoff, guard), offsetof(Handoff, seen), -1};
GC_FIELDS(handoff)

static PyObject *
handoff_repr(Handoff *h)
{
    return PyUnicode_FromFormat("<unarray handoff route to %U (%s)>", h->dst, h->cached ? "cached" : "uncached");
}

static PyObject *
handoff_counters(Handoff *h, PyObject *args)
{
    int reset = 0;
    if (!PyArg_ParseTuple(args, "|p:counters", &reset))
        return NULL;
    PyObject *out = Py_BuildValue("(nn)", h->made, h->hits);
    if (out != NULL && reset)
        h->made = h->hits = 0;
    return out;
}

static PyMethodDef handoff_methods[] = {
    {"counters", (PyCFunction)handoff_counters, METH_VARARGS,
     "counters(reset=False) -> (zero-copy conversions, cache hits) made by this route in C"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject HandoffType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "unarray.interop._speedups.Handoff",
    .tp_doc = "Handoff(cached, first, slow, sig, osig, order, dst, guard=None, seen=None, max_seen=0, readonly=False): "
              "one ua.to route (see interop._fast).",
    VECTORCALL_GC_SLOTS(Handoff, handoff),
    .tp_repr = (reprfunc)handoff_repr,
    .tp_methods = handoff_methods,
};

static int
is_name(PyObject *name, PyObject *interned)
{
    return name == interned || PyUnicode_Compare(name, interned) == 0;
}

static PyObject *
to(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    /* ua.to(x, backend, *, device=None, copy=None, readonly=False): the route for (type(x), backend), or
     * for (type(x), backend, True) with readonly=True (the promise routes), else Python. */
    PyObject *op = S_TO;
    int readonly = 0;
    if (nargs != 2 || FAST == NULL)
        goto python;
    if (kwnames != NULL) {
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(kwnames); i++) {
            PyObject *name = PyTuple_GET_ITEM(kwnames, i), *value = args[nargs + i];
            if (is_name(name, S_OP))
                op = value;
            else if (is_name(name, S_READONLY) && (value == Py_True || value == Py_False))
                readonly = value == Py_True;
            else if (value != Py_None || !(is_name(name, S_DEVICE) || is_name(name, S_COPY)))
                goto python;
        }
    }
    PyObject *type = (PyObject *)Py_TYPE(args[0]), *backend = args[1], *route;
    if (!readonly && type == LAST_TYPE && backend == LAST_BACKEND) {
        route = Py_NewRef(LAST_ROUTE);
    } else {
        /* A promise's key has a third item, True; (no LAST_ for promises: the read-only check swaps their
           routes in FAST) */
        PyObject *key = PyTuple_Pack(readonly ? 3 : 2, type, backend, Py_True);
        if (key == NULL)
            return NULL;
        route = PyDict_GetItemWithError(FAST, key);
        Py_DECREF(key);
        if (route == NULL) {
            if (PyErr_Occurred()) {
                if (!PyErr_ExceptionMatches(PyExc_TypeError))
                    return NULL;
                PyErr_Clear();  /* an unhashable backend: the Python code names the error */
            }
            goto python;
        }
        Py_INCREF(route);
        if (!readonly) {
            Py_XSETREF(LAST_TYPE, Py_NewRef(type));
            Py_XSETREF(LAST_BACKEND, Py_NewRef(backend));
            Py_XSETREF(LAST_ROUTE, Py_NewRef(route));
        }
    }
    PyObject *out;
    if (Py_IS_TYPE(route, &HandoffType)) {
        out = handoff_run((Handoff *)route, args[0], op);
    } else {
        PyObject *call[2] = {args[0], op};
        out = PyObject_Vectorcall(route, call, 2, NULL);
    }
    Py_DECREF(route);
    return out;
python:
    if (PYTO == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "unarray.interop._speedups.to used before install()");
        return NULL;
    }
    return PyObject_Vectorcall(PYTO, args, nargs, kwnames);
}

#ifdef UNARRAY_NUMPY
/* buffer_array(x): np.asarray(x) for a buffer exporter (a JAX CPU array), where exporting no buffer
 * (a JAX array on a GPU: BufferError) is the device check, instead of asking x for its platform and
 * then letting np.asarray read the buffer. The array is NumPy's own reading of it (base: a memoryview
 * of x; read-only where the export is); each format's dtype is learned from NumPy's first reading. */
#define N_FORMATS 32
static struct {
    char format[16];
    PyArray_Descr *descr;
} FORMATS[N_FORMATS];
static int n_formats;

static PyArray_Descr *
known_format(const char *format)
{
    for (int i = 0; i < n_formats; i++)
        if (strcmp(FORMATS[i].format, format) == 0)
            return FORMATS[i].descr;
    return NULL;
}

/* The base of a buffer_array result: holds x's buffer export until the array dies (one object,
 * where a memoryview takes two). */
typedef struct {
    PyObject_HEAD
    Py_buffer view;
} BufferOwner;

static void
owner_dealloc(BufferOwner *o)
{
    PyBuffer_Release(&o->view);
    Py_TYPE(o)->tp_free((PyObject *)o);
}

static PyTypeObject BufferOwnerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "unarray.interop._speedups.BufferOwner",
    .tp_doc = "The exporter's buffer behind an array made by buffer_array.",
    .tp_basicsize = sizeof(BufferOwner),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)owner_dealloc,
};

static PyObject *
buffer_array(PyObject *module, PyObject *x)
{
    if (!numpy_api()) {
        PyErr_SetString(PyExc_ImportError, "buffer_array: NumPy's C API could not be loaded");
        return NULL;
    }
    BufferOwner *o = PyObject_New(BufferOwner, &BufferOwnerType);
    if (o == NULL)
        return NULL;
    if (PyObject_GetBuffer(x, &o->view, PyBUF_FULL_RO) < 0) {  /* what a memoryview asks for */
        o->view.obj = NULL;  /* nothing to release */
        Py_DECREF(o);
        return NULL;
    }
    Py_buffer *v = &o->view;
    const char *format = v->format != NULL ? v->format : "B";
    PyArray_Descr *descr = known_format(format);
    if (descr == NULL || v->ndim > NPY_MAXDIMS || v->suboffsets != NULL || (v->ndim > 0 && v->strides == NULL)
        || PyDataType_ELSIZE(descr) != v->itemsize) {
        /* NumPy's own reading, np.asarray(memoryview(x)), which names this format's dtype. */
        Py_DECREF(o);
        PyObject *mv = PyMemoryView_FromObject(x);
        if (mv == NULL)
            return NULL;
        PyObject *arr = PyArray_FromAny(mv, NULL, 0, 0, 0, NULL);
        const char *f = PyMemoryView_GET_BUFFER(mv)->format;
        f = f != NULL ? f : "B";
        if (arr != NULL && known_format(f) == NULL && n_formats < N_FORMATS && strlen(f) < sizeof FORMATS[0].format
            && PyArray_Check(arr)) {
            strcpy(FORMATS[n_formats].format, f);
            FORMATS[n_formats].descr = (PyArray_Descr *)Py_NewRef(PyArray_DESCR((PyArrayObject *)arr));
            n_formats++;
        }
        Py_DECREF(mv);
        return arr;
    }
    npy_intp dims[NPY_MAXDIMS], strides[NPY_MAXDIMS];
    for (int i = 0; i < v->ndim; i++) {
        dims[i] = v->shape[i];
        strides[i] = v->strides[i];
    }
    Py_INCREF(descr);  /* stolen by NewFromDescr */
    PyObject *arr = PyArray_NewFromDescr(&PyArray_Type, descr, v->ndim, dims, strides, v->buf,
                                         v->readonly ? 0 : NPY_ARRAY_WRITEABLE, NULL);
    if (arr == NULL) {
        Py_DECREF(o);
        return NULL;
    }
    if (PyArray_SetBaseObject((PyArrayObject *)arr, (PyObject *)o) < 0) {  /* steals o, also on failure */
        Py_DECREF(arr);
        return NULL;
    }
    return arr;
}
#endif

static PyMethodDef to_def = {"to", (PyCFunction)(void (*)(void))to, METH_FASTCALL | METH_KEYWORDS, NULL};

static PyObject *
install(PyObject *module, PyObject *args)
{
    /* install(python_to, fast, cache, refusals) -> the C ua.to, documented as python_to. */
    PyObject *pyto, *fast, *cache, *refusals;
    if (!PyArg_ParseTuple(args, "OO!O!O!:install", &pyto, &PyDict_Type, &fast, &PyDict_Type, &cache,
                          &PyTuple_Type, &refusals))
        return NULL;
    if (to_def.ml_doc == NULL) {
        /* The text signature lets inspect.signature(ua.to) read the Python one's parameters. */
        PyObject *doc = PyObject_GetAttrString(pyto, "__doc__");
        if (doc == NULL)
            return NULL;
        PyObject *full = PyUnicode_Check(doc)
            ? PyUnicode_FromFormat("to($module, x, backend, *, device=None, copy=None, chunks=None, readonly=False)"
                                   "\n--\n\n%U", doc)
            : PyUnicode_FromString("to($module, x, backend, *, device=None, copy=None, chunks=None, readonly=False)"
                                   "\n--\n\n");
        Py_DECREF(doc);
        if (full == NULL)
            return NULL;
        Py_ssize_t n;
        const char *text = PyUnicode_AsUTF8AndSize(full, &n);
        char *copy = text == NULL ? NULL : PyMem_RawMalloc(n + 1);  /* lives as long as the function */
        if (copy == NULL) {
            Py_DECREF(full);
            return text == NULL ? NULL : PyErr_NoMemory();
        }
        memcpy(copy, text, n + 1);
        Py_DECREF(full);
        to_def.ml_doc = copy;
    }
    Py_XSETREF(PYTO, Py_NewRef(pyto));
    Py_XSETREF(FAST, Py_NewRef(fast));
    Py_XSETREF(CACHE, Py_NewRef(cache));
    Py_XSETREF(REFUSALS, Py_NewRef(refusals));
    PyObject *name = PyObject_GetAttrString(pyto, "__module__");  /* where help() and doctest look */
    if (name == NULL)
        return NULL;
    PyObject *fn = PyCFunction_NewEx(&to_def, module, name);
    Py_DECREF(name);
    return fn;
}

static PyMethodDef methods[] = {
    {"install", install, METH_VARARGS, "install(python_to, fast, cache, refusals) -> the C ua.to"},
    {"stream_of", stream_of, METH_VARARGS,
     "stream_of(reader, device) -> the stream handle a consumer's exported C function (a capsule named "
     "'" STREAM_READER "') gives for a device, as the C route's stream order calls it"},
#ifdef UNARRAY_NUMPY
    {"buffer_array", buffer_array, METH_O,
     "buffer_array(x) -> np.asarray(x) for an object exporting the buffer protocol (BufferError where x exports "
     "none); built where NumPy's headers were found"},
#endif
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "unarray.interop._speedups", "ua.to's hot path in C (see unarray/interop/_routes.py).", -1, methods,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    S_DEVICE = PyUnicode_InternFromString("device");
    S_COPY = PyUnicode_InternFromString("copy");
    S_OP = PyUnicode_InternFromString("_op");
    S_TO = PyUnicode_InternFromString("to");
    S_GET_DEVICE = PyUnicode_InternFromString("get_device");
    S_READONLY = PyUnicode_InternFromString("readonly");
    if (!S_DEVICE || !S_COPY || !S_OP || !S_TO || !S_GET_DEVICE || !S_READONLY)
        return NULL;
#ifdef UNARRAY_NUMPY
    if (PyType_Ready(&BufferOwnerType) < 0)
        return NULL;
#endif
    return module_of(&moduledef, (PyTypeObject *[]){&HandoffType, NULL});
}
