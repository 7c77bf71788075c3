/* The line reader's loop (models/blockyaml.py, _build) compiled: the same stack of open collections, one pass
 * over the lines, each line's _Line taken from the classification the Python side made once per distinct line.
 *
 * At 5,000 nodes the loop runs over 2 million lines; in Python it took about 1.4 s of the 5.5 s that reading
 * production 5,000 costs, and the look-up of each line's _Line 0.4 s more. Here both are C, and so is the cut
 * of the text into lines: a line is never made a str of its own (2 million of them, and a set and a dict look-up
 * of each, were 0.3 s), only each distinct line is, for the classification. The Python loop (_build) stays the
 * reference: tests/test_blockyaml.py proves the two equal, NotMine included, on generated clusters, random
 * documents and random edits of a kubectl dump. The extension is optional: where it cannot be compiled, podplan
 * reads with the Python loop.
 *
 * read(text, classify, literal, not_mine, depth) -> list of documents
 *   text: the stream (str), read as text.split("\n") reads it; classify(distinct) -> list of each distinct
 *   line's _Line (what, indentation, column, key, how, value), distinct being the text's distinct lines in order
 *   of first appearance; literal: blockyaml._literal(lines, i, header, indent) -> (text, next i), given
 *   text.split("\n"); not_mine: the NotMine class; depth: blockyaml._DEPTH. Raises not_mine where the Python
 *   loop does (or where it would raise IndexError).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

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

/* A literal block starting at line *i: its text (new reference), *i moved past it. *lines is text.split("\n"),
 * made at the first literal block (most manifests have none). */
static PyObject *
call_literal(PyObject *literal, PyObject *text, PyObject **lines, Py_ssize_t *i, PyObject *header, long ind)
{
    if (*lines == NULL) {
        PyObject *sep = PyUnicode_FromString("\n");
        if (sep == NULL)
            return NULL;
        *lines = PyUnicode_Split(text, sep, -1);
        Py_DECREF(sep);
        if (*lines == NULL)
            return NULL;
    }
    PyObject *r = PyObject_CallFunction(literal, "OnOl", *lines, *i, header, ind);
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
    PyObject *block = PyTuple_GET_ITEM(r, 0);
    Py_INCREF(block);
    Py_DECREF(r);
    *i = next;
    return block;
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


/* The text's lines, each named by the number of its distinct text (in order of first appearance). */
typedef struct {
    Py_ssize_t n;       /* lines: text.split("\n") has this many */
    uint32_t *ids;      /* each line's distinct number */
    PyObject *distinct; /* list of str: each distinct line once */
} Lines;

typedef struct {
    uint64_t hash;
    Py_ssize_t start, len; /* in code points, in the text */
    Py_ssize_t id;         /* -1: an empty slot */
} Slot;

/* A line's hash, over its code units (8 bytes at a time, then murmur's finaliser). */
static uint64_t
hash_span(const char *p, Py_ssize_t bytes)
{
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (uint64_t)bytes;
    while (bytes >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = (h ^ w) * 0xFF51AFD7ED558CCDULL;
        h ^= h >> 32;
        p += 8;
        bytes -= 8;
    }
    if (bytes) {
        uint64_t w = 0;
        memcpy(&w, p, (size_t)bytes);
        h = (h ^ w) * 0xFF51AFD7ED558CCDULL;
    }
    h ^= h >> 33;
    h *= 0xC4CEB9FE1A85EC53ULL;
    h ^= h >> 33;
    return h;
}

/* Where the line starting at `from` ends: the next "\n", or the text's end. */
static Py_ssize_t
line_end(const void *data, int kind, Py_ssize_t from, Py_ssize_t n)
{
    if (kind == PyUnicode_1BYTE_KIND) {
        const char *hit = memchr((const char *)data + from, '\n', (size_t)(n - from));
        return hit ? hit - (const char *)data : n;
    }
    while (from < n && PyUnicode_READ(kind, data, from) != '\n')
        from++;
    return from;
}

/* Cut `text` into its lines and number their distinct texts (0 on success, -1 with an exception set). */
static int
index_lines(PyObject *text, Lines *out)
{
    out->ids = NULL;
    out->distinct = NULL;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    const char *bytes = (const char *)data;
    Py_ssize_t size = PyUnicode_GET_LENGTH(text), n = 1;
    for (Py_ssize_t at = line_end(data, kind, 0, size); at < size; at = line_end(data, kind, at + 1, size))
        n++;
    if ((uint64_t)n >= UINT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "too many lines");
        return -1;
    }
    size_t cap = 1024;
    Slot *table = PyMem_New(Slot, cap);
    out->ids = PyMem_New(uint32_t, (size_t)n);
    out->distinct = PyList_New(0);
    out->n = n;
    if (table == NULL || out->ids == NULL || out->distinct == NULL) {
        PyMem_Free(table);
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        return -1;
    }
    for (size_t k = 0; k < cap; k++)
        table[k].id = -1;
    Py_ssize_t count = 0, start = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t end = line_end(data, kind, start, size), len = end - start;
        uint64_t h = hash_span(bytes + start * kind, len * kind);
        size_t k = (size_t)h & (cap - 1);
        while (table[k].id >= 0 && (table[k].hash != h || table[k].len != len
                                    || memcmp(bytes + table[k].start * kind, bytes + start * kind,
                                              (size_t)(len * kind)) != 0))
            k = (k + 1) & (cap - 1);
        if (table[k].id < 0) { /* a new text */
            PyObject *line = PyUnicode_Substring(text, start, end);
            if (line == NULL || PyList_Append(out->distinct, line) < 0) {
                Py_XDECREF(line);
                PyMem_Free(table);
                return -1;
            }
            Py_DECREF(line);
            table[k] = (Slot){h, start, len, count++};
            if ((size_t)count * 2 > cap) { /* grow: at most half full */
                size_t bigger = cap * 2;
                Slot *grown = PyMem_New(Slot, bigger);
                if (grown == NULL) {
                    PyMem_Free(table);
                    PyErr_NoMemory();
                    return -1;
                }
                for (size_t j = 0; j < bigger; j++)
                    grown[j].id = -1;
                for (size_t j = 0; j < cap; j++) {
                    if (table[j].id < 0)
                        continue;
                    size_t m = (size_t)table[j].hash & (bigger - 1);
                    while (grown[m].id >= 0)
                        m = (m + 1) & (bigger - 1);
                    grown[m] = table[j];
                }
                PyMem_Free(table);
                table = grown;
                cap = bigger;
            }
            out->ids[i] = (uint32_t)(count - 1);
        } else {
            out->ids[i] = (uint32_t)table[k].id;
        }
        start = end + 1;
    }
    PyMem_Free(table);
    return 0;
}

static PyObject *
read_text(PyObject *self, PyObject *args)
{
    PyObject *text, *classify, *literal, *cls;
    Py_ssize_t depth;
    if (!PyArg_ParseTuple(args, "UOOOn", &text, &classify, &literal, &cls, &depth))
        return NULL;
    Lines src;
    if (index_lines(text, &src) < 0) {
        PyMem_Free(src.ids);
        Py_XDECREF(src.distinct);
        return NULL;
    }
    PyObject *infos = PyObject_CallOneArg(classify, src.distinct);
    PyObject *lines = NULL; /* text.split("\n"), made for the first literal block (_literal reads it) */
    if (infos == NULL || !PyList_CheckExact(infos) || PyList_GET_SIZE(infos) != PyList_GET_SIZE(src.distinct)) {
        if (infos != NULL)
            PyErr_SetString(PyExc_TypeError, "classify must return a list of one _Line per distinct line");
        Py_XDECREF(infos);
        PyMem_Free(src.ids);
        Py_DECREF(src.distinct);
        return NULL;
    }
    /* a `- key:` mapping opens without the depth check a pending value's collection gets: at most one of those
     * per checked one, so twice the depth and the root bound the stack */
    Py_ssize_t cap = 2 * depth + 4;
    Open *stack = PyMem_New(Open, cap);
    PyObject *docs = PyList_New(0);
    PyObject *root = NULL; /* owned; NULL: no document begun (blockyaml's _MISSING) */
    if (stack == NULL || docs == NULL) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        goto error;
    }
    Py_ssize_t sp = 0;
    PyObject *top = NULL;
    long top_ind = -1;
    int in_map = 0, explicit = 0;
    /* a `key:` or `-` with nothing after it: (collection, key or the list's last item, indentation, in a map) */
    int has_pend = 0, pend_map = 0;
    PyObject *pend_target = NULL, *pend_key = NULL;
    long pend_at = 0;
    Py_ssize_t n = src.n, i = 0;
    while (i < n) {
        PyObject *info = PyList_GET_ITEM(infos, src.ids[i]);
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
            PyErr_SetObject(cls, PyList_GET_ITEM(src.distinct, src.ids[i - 1]));
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
                    rc = append_new(top, call_literal(literal, text, &lines, &i, value, ind));
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
            rc = set_new(top, key, call_literal(literal, text, &lines, &i, value, ind));
        }
        if (rc < 0)
            goto error;
    }
    if (end_document(docs, &root, explicit) < 0)
        goto error;
    PyMem_Free(stack);
    PyMem_Free(src.ids);
    Py_DECREF(src.distinct);
    Py_DECREF(infos);
    Py_XDECREF(lines);
    return docs;
error:
    PyMem_Free(stack);
    PyMem_Free(src.ids);
    Py_DECREF(src.distinct);
    Py_DECREF(infos);
    Py_XDECREF(lines);
    Py_XDECREF(root);
    Py_XDECREF(docs);
    return NULL;
}

static PyMethodDef methods[] = {
    {"read", read_text, METH_VARARGS, "The documents of the text, each distinct line's _Line given by `classify`."},
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
