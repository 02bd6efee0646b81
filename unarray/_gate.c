/* unarray._gate: the lock-free fast path of unarray._precision.Switch in C (optional; the Python
 * Switch.enter/leave are the reference and run where this module is not built), and Unswitched, the switch of a
 * backend whose results no policy changes (the front end's fast path, unarray/_fast.c, calls through it).
 *
 * A Gate is called as gate(want, fn, *args). Where the switch is open (no call holds it changed or
 * waits to change it) and the framework's setting in force already gives `want`, it registers the
 * calling thread in the switch's list of fast calls, re-checks that the switch is still open, reads
 * the setting, runs fn(*args) and unregisters: the same steps, in the same order, as
 * Switch.enter/leave's fast path (see there for why that order keeps a fast call from overlapping a
 * swap). Everything else (the switch closed, a `want` without a read in the table, a setting that
 * does not give `want`, a read that fails) goes to the Python path, slow(want, fn, *args).
 *
 * Written in C because the fast path is on every float32 matmul of a backend whose precision switch
 * can matter (torch on CUDA, or on a CPU with oneDNN's bf16 path): in Python its four frames cost
 * more than the read of the setting they guard.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <pythread.h>

#include "_cobject.h"
#include "_unswitched.h"

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    int closed;       /* the Switch's flag: a locked-path call holds the switch or waits to change it */
    PyObject *fast;   /* list: the thread ids of the fast calls in flight (the Switch's _fast) */
    PyObject *reads;  /* dict: want -> (read, read's arguments, the states that give want) */
    PyObject *slow;   /* slow(want, fn, *args): the Python path */
    PyObject *wake;   /* wake(): tell a call draining the fast calls that one left */
    unsigned long last;  /* the thread id of `tid` */
    PyObject *tid;    /* the last calling thread's id as an int, reused while the same thread calls (NULL: none) */
} Gate;

static int
leave(Gate *g, PyObject *tid)
{
    /* Unregister this call (its own id object, appended last by it) and wake a drainer. */
    PyObject *fast = g->fast;
    int rc = -1;
    for (Py_ssize_t i = PyList_GET_SIZE(fast) - 1; i >= 0; i--) {
        if (PyList_GET_ITEM(fast, i) == tid) {
            rc = PyList_SetSlice(fast, i, i + 1, NULL);
            break;
        }
    }
    if (rc < 0 && !PyErr_Occurred())
        PyErr_SetString(PyExc_RuntimeError, "unarray precision switch: a fast call was unregistered twice");
    Py_DECREF(tid);
    if (rc == 0 && g->closed) {
        PyObject *r = PyObject_CallNoArgs(g->wake);
        if (r == NULL)
            return -1;
        Py_DECREF(r);
    }
    return rc;
}

/* A want's read in the gate's table: (read, read's arguments, the states that give want). */
enum { R_READ, R_ARGS, R_STATES };

static int
gives(PyObject *entry)
{
    /* 1 when the setting in force is one of the entry's states, 0 when not or the read failed with
     * RuntimeError (torch's, when its legacy and new precision APIs disagree: the Python path reads
     * it again and decides), -1 on any other error. */
    PyObject *args = PyTuple_GET_ITEM(entry, R_ARGS);
    PyObject *state = PyObject_Vectorcall(PyTuple_GET_ITEM(entry, R_READ), &PyTuple_GET_ITEM(args, 0),
                                          PyTuple_GET_SIZE(args), NULL);
    if (state == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_RuntimeError))
            return -1;
        PyErr_Clear();
        return 0;
    }
    int ok = PySequence_Contains(PyTuple_GET_ITEM(entry, R_STATES), state);
    Py_DECREF(state);
    return ok;
}

/* The calling thread's id as an int (new reference), the same object while one thread calls: leave() finds a call's
 * entry by identity, and a thread's entries are interchangeable. */
static PyObject *
thread_id(Gate *g)
{
    unsigned long ident = PyThread_get_thread_ident();
    if (g->tid == NULL || g->last != ident) {
        PyObject *tid = PyLong_FromUnsignedLong(ident);
        if (tid == NULL)
            return NULL;
        Py_XSETREF(g->tid, tid);
        g->last = ident;
    }
    return Py_NewRef(g->tid);
}

static PyObject *
gate_call(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Gate *g = (Gate *)self;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (n < 2 || (kwnames != NULL && PyTuple_GET_SIZE(kwnames))) {
        PyErr_SetString(PyExc_TypeError, "a precision gate is called as gate(want, fn, *args)");
        return NULL;
    }
    if (!g->closed) {
        PyObject *entry = PyDict_GetItemWithError(g->reads, args[0]);  /* borrowed */
        if (entry == NULL && PyErr_Occurred())
            return NULL;
        if (entry != NULL) {
            if (!PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) != 3 || !PyTuple_Check(PyTuple_GET_ITEM(entry, R_ARGS))) {
                PyErr_SetString(PyExc_TypeError, "a precision gate's read is (read, args tuple, states)");
                return NULL;
            }
            Py_INCREF(entry);  /* the table may change while the read runs */
            PyObject *tid = thread_id(g);
            if (tid == NULL || PyList_Append(g->fast, tid) < 0) {
                Py_XDECREF(tid);
                Py_DECREF(entry);
                return NULL;
            }
            int ok = g->closed ? 0 : gives(entry);
            Py_DECREF(entry);
            if (ok != 0) {
                /* The setting gives want: run fn (ok 1); or the read failed (ok -1). Either way leave
                 * with the result or the exception, which leave's own work must not clobber. */
                PyObject *res = ok == 1 ? PyObject_Vectorcall(args[1], args + 2, n - 2, NULL) : NULL;
                PyObject *type, *value, *tb;
                PyErr_Fetch(&type, &value, &tb);
                if (leave(g, tid) < 0) {
                    Py_XDECREF(res);
                    Py_XDECREF(type);
                    Py_XDECREF(value);
                    Py_XDECREF(tb);
                    return NULL;
                }
                PyErr_Restore(type, value, tb);
                return res;
            }
            if (leave(g, tid) < 0)
                return NULL;
        }
    }
    return PyObject_Vectorcall(g->slow, args, n, NULL);
}

static PyObject *
gate_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *names[] = {"fast", "reads", "slow", "wake", NULL};
    PyObject *fast, *reads, *slow, *wake;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!O!OO:Gate", names, &PyList_Type, &fast, &PyDict_Type, &reads,
                                     &slow, &wake))
        return NULL;
    Gate *g = (Gate *)type->tp_alloc(type, 0);
    if (g == NULL)
        return NULL;
    g->vectorcall = gate_call;
    g->fast = Py_NewRef(fast);
    g->reads = Py_NewRef(reads);
    g->slow = Py_NewRef(slow);
    g->wake = Py_NewRef(wake);
    return (PyObject *)g;
}

static const Py_ssize_t gate_fields[] = {offsetof(Gate, fast), offsetof(Gate, reads), offsetof(Gate, slow),
                                         offsetof(Gate, wake), offsetof(Gate, tid), -1};
GC_FIELDS(gate)

static PyMemberDef gate_members[] = {
    {"closed", T_INT, offsetof(Gate, closed), 0, "the Switch's closed flag (read by both paths)"},
    {"fast", T_OBJECT, offsetof(Gate, fast), READONLY, "thread ids of the fast calls in flight"},
    {"reads", T_OBJECT, offsetof(Gate, reads), READONLY, "want -> (read, args, states that give want)"},
    {NULL},
};

static PyTypeObject GateType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "unarray._gate.Gate",
    .tp_doc = "Gate(fast, reads, slow, wake): the fast path of unarray._precision.Switch; gate(want, fn, *args)",
    VECTORCALL_GC_SLOTS(Gate, gate),
    .tp_members = gate_members,
};

/* Unswitched(fn)(*args, policy): fn(*args). The precision switch of a backend whose results no policy
 * changes: the front end passes the policy to every backend, and this drops it without a Python frame. */

static PyObject *
unswitched_call(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (n < 1 || (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0)) {
        PyErr_SetString(PyExc_TypeError, "Unswitched: takes the op's positional arguments and the policy last");
        return NULL;
    }
    return PyObject_Vectorcall(((Unswitched *)self)->fn, args, n - 1, NULL);
}

static PyObject *
unswitched_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *fn;
    if (!PyArg_ParseTuple(args, "O:Unswitched", &fn))
        return NULL;
    Unswitched *u = (Unswitched *)type->tp_alloc(type, 0);
    if (u == NULL)
        return NULL;
    u->vectorcall = unswitched_call;
    u->fn = Py_NewRef(fn);
    return (PyObject *)u;
}

static const Py_ssize_t unswitched_fields[] = {offsetof(Unswitched, fn), -1};
GC_FIELDS(unswitched)

static PyMemberDef unswitched_members[] = {
    {"fn", T_OBJECT, offsetof(Unswitched, fn), READONLY, "the op called without the policy"},
    {"__wrapped__", T_OBJECT, offsetof(Unswitched, fn), READONLY, "the op (ua.explain names it)"},
    {NULL},
};

static PyTypeObject UnswitchedType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "unarray._gate.Unswitched",
    .tp_doc = "Unswitched(fn): called as (*args, policy), calls fn(*args)",
    VECTORCALL_GC_SLOTS(Unswitched, unswitched),
    .tp_members = unswitched_members,
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "unarray._gate", "The precision switch's fast path in C (see unarray/_precision.py): Gate, "
    "and Unswitched for a backend whose results no policy changes.", -1, NULL,
};

PyMODINIT_FUNC
PyInit__gate(void)
{
    return module_of(&moduledef, (PyTypeObject *[]){&GateType, &UnswitchedType, NULL});
}
