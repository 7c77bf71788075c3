/* The line reader's loop (models/blockyaml.py, _build) compiled: the same stack of open collections, one pass
 * over the lines, each line's _Line taken from the classification the Python side made once per distinct line.
 *
 * At 5,000 nodes the loop runs over 2 million lines; in Python it took about 1.4 s of the 5.5 s that reading
 * production 5,000 costs, and the look-up of each line's _Line 0.4 s more. Here both are C. The Python loop
 * (_build) stays the reference: tests/test_blockyaml.py proves the two equal, NotMine included, on generated
 * clusters, random documents and random edits of a kubectl dump. The extension is optional: where it cannot
 * be compiled, podplan reads with the Python loop.
 *
 * build(lines, seen, literal, not_mine, depth) -> list of documents
 *   lines: list of str; seen: dict line -> _Line (what, indentation, column, key, how, value);
 *   literal: blockyaml._literal(lines, i, header, indent) -> (text, next i); not_mine: the NotMine class;
 *   depth: blockyaml._DEPTH. Raises not_mine where the Python loop does (or where it would raise IndexError).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

enum { SKIP, DOC, ITEM, ITEM_MAP, KEY, REFUSED };
enum { PENDING, SCALAR, NEW_DICT, NEW_LIST, LITERAL };

typedef struct {
    long ind;
    PyObject *coll; /* borrowed: the root document owns every open collection */
} Open;

static int
not_mine(PyObject *cls, const char *why)
{
    PyErr_SetString(cls, why);
    return -1;
}

/* Append `item` (a new reference, stolen) to the list `top`. */
static int
append_new(PyObject *top, PyObject *item)
{
    if (item == NULL)
        return -1;
    int rc = PyList_Append(top, item);
    Py_DECREF(item);
    return rc;
}

/* top[key] = item (a new reference, stolen). */
static int
set_new(PyObject *top, PyObject *key, PyObject *item)
{
    if (item == NULL)
        return -1;
    int rc = PyDict_SetItem(top, key, item);
    Py_DECREF(item);
    return rc;
}

/* A literal block starting at lines[*i]: its text (new reference), *i moved past it. */
static PyObject *
call_literal(PyObject *literal, PyObject *lines, Py_ssize_t *i, PyObject *header, long ind)
{
    PyObject *r = PyObject_CallFunction(literal, "OnOl", lines, *i, header, ind);
    if (r == NULL)
        return NULL;
    if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 2) {
        Py_DECREF(r);
        PyErr_SetString(PyExc_TypeError, "_literal must return (text, index)");
        return NULL;
    }
    Py_ssize_t next = PyLong_AsSsize_t(PyTuple_GET_ITEM(r, 1));
    if (next == -1 && PyErr_Occurred()) {
        Py_DECREF(r);
        return NULL;
    }
    PyObject *text = PyTuple_GET_ITEM(r, 0);
    Py_INCREF(text);
    Py_DECREF(r);
    *i = next;
    return text;
}

/* `coll`, opened at indentation `ind`, becomes the innermost open collection (NotMine past the stack's room). */
static int
push(Open *stack, Py_ssize_t *sp, Py_ssize_t cap, long ind, PyObject *coll, PyObject *cls)
{
    if (*sp >= cap)
        return not_mine(cls, "nested too deeply");
    stack[*sp].ind = ind;
    stack[*sp].coll = coll;
    (*sp)++;
    return 0;
}

/* A document ends: its root (NULL when it held nothing) goes to `docs`, None for an empty explicit one. */
static int
end_document(PyObject *docs, PyObject **root, int explicit)
{
    if (*root != NULL) {
        int rc = PyList_Append(docs, *root);
        Py_CLEAR(*root);
        return rc;
    }
    return explicit ? PyList_Append(docs, Py_None) : 0;
}

static PyObject *
build(PyObject *self, PyObject *args)
{
    PyObject *lines, *seen, *literal, *cls;
    Py_ssize_t depth;
    if (!PyArg_ParseTuple(args, "O!O!OOn", &PyList_Type, &lines, &PyDict_Type, &seen, &literal, &cls, &depth))
        return NULL;
    /* a `- key:` mapping opens without the depth check a pending value's collection gets: at most one of those
     * per checked one, so twice the depth and the root bound the stack */
    Py_ssize_t cap = 2 * depth + 4;
    Open *stack = PyMem_New(Open, cap);
    if (stack == NULL)
        return PyErr_NoMemory();
    PyObject *docs = PyList_New(0);
    PyObject *root = NULL; /* owned; NULL: no document begun (blockyaml's _MISSING) */
    if (docs == NULL)
        goto error;
    Py_ssize_t sp = 0;
    PyObject *top = NULL;
    long top_ind = -1;
    int in_map = 0, explicit = 0;
    /* a `key:` or `-` with nothing after it: (collection, key or the list's last item, indentation, in a map) */
    int has_pend = 0, pend_map = 0;
    PyObject *pend_target = NULL, *pend_key = NULL;
    long pend_at = 0;
    Py_ssize_t n = PyList_GET_SIZE(lines), i = 0;
    while (i < n) {
        PyObject *line = PyList_GET_ITEM(lines, i);
        PyObject *info = PyDict_GetItemWithError(seen, line);
        if (info == NULL) {
            if (!PyErr_Occurred())
                PyErr_SetObject(PyExc_KeyError, line);
            goto error;
        }
        if (!PyTuple_CheckExact(info) || PyTuple_GET_SIZE(info) != 6) {
            PyErr_SetString(PyExc_TypeError, "a _Line is a 6-tuple");
            goto error;
        }
        long what = PyLong_AsLong(PyTuple_GET_ITEM(info, 0));
        long ind = PyLong_AsLong(PyTuple_GET_ITEM(info, 1));
        long column = PyLong_AsLong(PyTuple_GET_ITEM(info, 2));
        PyObject *key = PyTuple_GET_ITEM(info, 3);
        long how = PyLong_AsLong(PyTuple_GET_ITEM(info, 4));
        PyObject *value = PyTuple_GET_ITEM(info, 5);
        if (PyErr_Occurred())
            goto error;
        i++;
        if (ind == top_ind && what == KEY && how == SCALAR && in_map) { /* the common line: one more key */
            if (PyDict_SetItem(top, key, value) < 0)
                goto error;
            has_pend = 0;
            continue;
        }
        if (what == SKIP)
            continue;
        if (what == REFUSED) {
            PyErr_SetObject(cls, line);
            goto error;
        }
        if (what == DOC) {
            if (end_document(docs, &root, explicit) < 0)
                goto error;
            explicit = 1;
            sp = 0;
            top = NULL;
            top_ind = -1;
            in_map = 0;
            has_pend = 0;
            continue;
        }
        int dash = what == ITEM || what == ITEM_MAP;
        if (has_pend) {
            has_pend = 0;
            if (ind > pend_at || (dash && pend_map && ind == pend_at)) { /* kubectl's compact `key:\n- item` */
                PyObject *coll = dash ? PyList_New(0) : PyDict_New();
                if (coll == NULL)
                    goto error;
                int rc;
                if (pend_map) {
                    rc = PyDict_SetItem(pend_target, pend_key, coll);
                    Py_DECREF(coll); /* the mapping holds it */
                } else {
                    /* the list's last item, None until now: PyList_SetItem steals the reference */
                    rc = PyList_SetItem(pend_target, PyList_GET_SIZE(pend_target) - 1, coll);
                }
                if (rc < 0)
                    goto error;
                top = coll;
                top_ind = ind;
                in_map = !dash;
                if (push(stack, &sp, cap, ind, top, cls) < 0)
                    goto error;
                if (sp > depth) {
                    not_mine(cls, "nested too deeply");
                    goto error;
                }
            }
        } else if (root == NULL) {
            if (ind) {
                not_mine(cls, "indented document");
                goto error;
            }
            root = dash ? PyList_New(0) : PyDict_New();
            if (root == NULL)
                goto error;
            top = root;
            top_ind = 0;
            in_map = !dash;
            if (push(stack, &sp, cap, 0, root, cls) < 0) /* the stack is empty here: a document's first line */
                goto error;
        }
        if (top_ind > ind) {
            while (sp > 0 && stack[sp - 1].ind > ind)
                sp--;
            if (sp == 0) { /* the Python loop's IndexError */
                not_mine(cls, "unexpected indentation");
                goto error;
            }
            top_ind = stack[sp - 1].ind;
            top = stack[sp - 1].coll;
            in_map = PyDict_CheckExact(top);
        }
        if (top_ind != ind) {
            not_mine(cls, "unexpected indentation"); /* a continuation line, or an error */
            goto error;
        }
        if (dash) {
            if (in_map) {
                not_mine(cls, "a sequence entry where a key belongs");
                goto error;
            }
            if (what == ITEM) {
                int rc;
                if (how == SCALAR) {
                    rc = PyList_Append(top, value);
                } else if (how == PENDING) {
                    rc = PyList_Append(top, Py_None);
                    has_pend = 1;
                    pend_target = top;
                    pend_key = NULL;
                    pend_at = ind;
                    pend_map = 0;
                } else if (how == NEW_DICT) {
                    rc = append_new(top, PyDict_New());
                } else if (how == NEW_LIST) {
                    rc = append_new(top, PyList_New(0));
                } else {
                    rc = append_new(top, call_literal(literal, lines, &i, value, ind));
                }
                if (rc < 0)
                    goto error;
                continue;
            }
            PyObject *mapping = PyDict_New();
            if (mapping == NULL || append_new(top, mapping) < 0)
                goto error;
            top = mapping; /* the list holds it */
            top_ind = column;
            in_map = 1;
            if (push(stack, &sp, cap, column, top, cls) < 0)
                goto error;
            ind = column;
        } else if (!in_map) { /* a compact sequence ends: its mapping goes on at the same indentation */
            sp--;
            if (sp == 0) {
                not_mine(cls, "a key after a root sequence");
                goto error;
            }
            top_ind = stack[sp - 1].ind;
            top = stack[sp - 1].coll;
            in_map = PyDict_CheckExact(top);
            if (top_ind != ind || !in_map) {
                not_mine(cls, "unexpected indentation");
                goto error;
            }
        }
        int rc;
        if (how == SCALAR) {
            rc = PyDict_SetItem(top, key, value);
        } else if (how == PENDING) {
            rc = PyDict_SetItem(top, key, Py_None);
            has_pend = 1;
            pend_target = top;
            pend_key = key; /* borrowed from the _Line, which `seen` holds */
            pend_at = ind;
            pend_map = 1;
        } else if (how == NEW_DICT) {
            rc = set_new(top, key, PyDict_New());
        } else if (how == NEW_LIST) {
            rc = set_new(top, key, PyList_New(0));
        } else {
            rc = set_new(top, key, call_literal(literal, lines, &i, value, ind));
        }
        if (rc < 0)
            goto error;
    }
    if (end_document(docs, &root, explicit) < 0)
        goto error;
    PyMem_Free(stack);
    return docs;
error:
    PyMem_Free(stack);
    Py_XDECREF(root);
    Py_XDECREF(docs);
    return NULL;
}

static PyMethodDef methods[] = {
    {"build", build, METH_VARARGS, "The documents of the lines, each line's _Line read from `seen`."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_blockloop", "The line reader's loop, compiled (see models/blockyaml.py).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__blockloop(void)
{
    return PyModule_Create(&module);
}
