/* torch_unpickle.c: pytorch_model.bin -> tensors, through a restricted unpickler (torch_pickle.h). The zip
 * format is read here, the legacy one in torch_legacy.c; both go through al_unpickle and
 * al_torch_state_dict_add (what the code relies on about the formats: docs/checkpoints.md).
 *
 * A pickle can name any Python callable, so this reader never calls anything: it understands only the
 * objects a state_dict is made of (collections.OrderedDict, torch._utils._rebuild_tensor_v2 and
 * _rebuild_parameter, the typed torch storages given by persistent ids ('storage', type, key,
 * location, numel), tuples, lists, dicts, ints, floats, strings, bools, None) and refuses every other
 * global by name. The stack machine is iterative, so deep nesting cannot overflow the C stack; every
 * value lives in one list freed at the end. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "torch_pickle.h"
#include "torch_zip.h"

typedef al_pv pv;
typedef al_pv_kind vkind;
typedef al_unpickler unpickler;

#define MAX_STACK (1 << 22)
#define MAX_MEMO (1 << 22)

static al_status fail(unpickler *u, al_status code, const char *what) {
    return al_err(u->err, code, "%s: pickle %s at byte %zu", u->file, what,
                  (size_t)(u->p - u->start));
}

static int grow(void **arr, int *cap, int need, size_t elem) {
    if (need <= *cap) return 1;
    int cap2 = *cap ? *cap : 16;
    while (cap2 < need) cap2 *= 2;
    void *g = realloc(*arr, (size_t)cap2 * elem);
    if (!g) return 0;
    *arr = g;
    *cap = cap2;
    return 1;
}

static pv *new_value(unpickler *u, vkind kind) {
    if (!grow((void **)&u->all, &u->cap_all, u->n_all + 1, sizeof(pv *))) return NULL;
    pv *v = calloc(1, sizeof *v);
    if (!v) return NULL;
    v->kind = kind;
    u->all[u->n_all++] = v;
    return v;
}

static int append_item(pv *seq, pv *item) {
    if (!grow((void **)&seq->items, &seq->cap, seq->n + 1, sizeof(pv *))) return 0;
    seq->items[seq->n++] = item;
    return 1;
}

static al_status push(unpickler *u, pv *v) {
    if (!v) return fail(u, AL_ERR_OOM, "out of memory");
    if (u->n_stack >= MAX_STACK) return fail(u, AL_ERR_FORMAT, "stack is too deep");
    if (!grow((void **)&u->stack, &u->cap_stack, u->n_stack + 1, sizeof(pv *)))
        return fail(u, AL_ERR_OOM, "out of memory");
    u->stack[u->n_stack++] = v;
    return AL_OK;
}

static pv *pop(unpickler *u) {
    if (u->n_stack == 0 || u->stack[u->n_stack - 1]->kind == V_MARK) return NULL;
    return u->stack[--u->n_stack];
}

static pv *top(unpickler *u) {
    if (u->n_stack == 0 || u->stack[u->n_stack - 1]->kind == V_MARK) return NULL;
    return u->stack[u->n_stack - 1];
}

/* Index of the topmost MARK, or -1. */
static int find_mark(unpickler *u) {
    for (int i = u->n_stack - 1; i >= 0; i--)
        if (u->stack[i]->kind == V_MARK) return i;
    return -1;
}

static int need(unpickler *u, size_t n) { return (size_t)(u->end - u->p) >= n; }

static uint64_t le(const uint8_t *p, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static al_status push_string(unpickler *u, size_t len) {
    if (!need(u, len)) return fail(u, AL_ERR_FORMAT, "string runs past the end");
    pv *v = new_value(u, V_STR);
    if (!v || !(v->s = malloc(len + 1))) return fail(u, AL_ERR_OOM, "out of memory");
    memcpy(v->s, u->p, len);
    v->s[len] = '\0';
    u->p += len;
    return push(u, v);
}

static al_status push_int(unpickler *u, int64_t x) {
    pv *v = new_value(u, V_INT);
    if (v) v->i = x;
    return push(u, v);
}

/* The allow-list: module + name -> global kind. */
static al_status push_global(unpickler *u, const char *module, const char *name) {
    static const struct { const char *name; al_dtype dtype; } storages[] = {
        {"FloatStorage", AL_DT_F32}, {"HalfStorage", AL_DT_F16},  {"BFloat16Storage", AL_DT_BF16},
        {"DoubleStorage", AL_DT_F64}, {"LongStorage", AL_DT_I64}, {"IntStorage", AL_DT_I32},
        {"ShortStorage", AL_DT_I16}, {"CharStorage", AL_DT_I8},  {"ByteStorage", AL_DT_U8},
        {"BoolStorage", AL_DT_BOOL},
    };
    pv *v = new_value(u, V_GLOBAL);
    if (!v) return fail(u, AL_ERR_OOM, "out of memory");
    if (strcmp(module, "collections") == 0 && strcmp(name, "OrderedDict") == 0) {
        v->global = G_ORDERED_DICT;
        return push(u, v);
    }
    if (strcmp(module, "torch._utils") == 0 && strcmp(name, "_rebuild_tensor_v2") == 0) {
        v->global = G_REBUILD_TENSOR;
        return push(u, v);
    }
    if (strcmp(module, "torch._utils") == 0 && strcmp(name, "_rebuild_parameter") == 0) {
        v->global = G_REBUILD_PARAMETER;
        return push(u, v);
    }
    if (strcmp(module, "torch") == 0)
        for (size_t i = 0; i < sizeof storages / sizeof storages[0]; i++)
            if (strcmp(name, storages[i].name) == 0) {
                v->global = G_STORAGE_TYPE;
                v->dtype = storages[i].dtype;
                return push(u, v);
            }
    return al_err(u->err, AL_ERR_UNSUPPORTED, "%s: pickle global '%.100s.%.100s' is not allowed",
                  u->file, module, name);
}

/* GLOBAL: "module\nname\n". */
static al_status op_global(unpickler *u) {
    char parts[2][256];
    for (int k = 0; k < 2; k++) {
        const uint8_t *nl = memchr(u->p, '\n', (size_t)(u->end - u->p));
        if (!nl) return fail(u, AL_ERR_FORMAT, "GLOBAL runs past the end");
        size_t len = (size_t)(nl - u->p);
        if (len >= sizeof parts[k]) return fail(u, AL_ERR_FORMAT, "GLOBAL name is too long");
        memcpy(parts[k], u->p, len);
        parts[k][len] = '\0';
        u->p = nl + 1;
    }
    return push_global(u, parts[0], parts[1]);
}

static al_status op_stack_global(unpickler *u) {
    pv *name = pop(u), *module = pop(u);
    if (!name || !module || name->kind != V_STR || module->kind != V_STR)
        return fail(u, AL_ERR_FORMAT, "STACK_GLOBAL needs two strings");
    return push_global(u, module->s, name->s);
}

static int int_tuple(const pv *t, int64_t *out, int max_n, int *n_out) {
    if (!t || (t->kind != V_TUPLE && t->kind != V_LIST) || t->n > max_n) return 0;
    for (int i = 0; i < t->n; i++) {
        if (t->items[i]->kind != V_INT) return 0;
        out[i] = t->items[i]->i;
    }
    *n_out = t->n;
    return 1;
}

/* persistent id ('storage', storage_type, key, location, numel[, view_metadata]) -> a storage value. */
static al_status op_persid(unpickler *u) {
    pv *pid = pop(u);
    if (!pid || pid->kind != V_TUPLE || pid->n < 5 || pid->items[0]->kind != V_STR ||
        strcmp(pid->items[0]->s, "storage") != 0)
        return fail(u, AL_ERR_FORMAT, "persistent id is not ('storage', type, key, location, numel)");
    pv *type = pid->items[1], *key = pid->items[2], *numel = pid->items[4];
    if (type->kind != V_GLOBAL || type->global != G_STORAGE_TYPE || key->kind != V_STR ||
        numel->kind != V_INT || numel->i < 0)
        return fail(u, AL_ERR_FORMAT, "persistent id has a bad storage type, key or size");
    /* the legacy format adds view_metadata: None, or (view key, offset, size) for a storage view, which
     * only files of torch < 1.0 hold */
    if (pid->n >= 6 && pid->items[5]->kind != V_NONE)
        return fail(u, AL_ERR_UNSUPPORTED, "persistent id of a storage view (torch < 1.0); re-save the file");
    pv *s = new_value(u, V_STORAGE);
    if (!s || !(s->s = malloc(strlen(key->s) + 1))) return fail(u, AL_ERR_OOM, "out of memory");
    strcpy(s->s, key->s);
    s->dtype = type->dtype;
    s->numel = numel->i;
    return push(u, s);
}

/* REDUCE: callable(*args), for the allowed callables only. */
static al_status op_reduce(unpickler *u) {
    pv *args = pop(u), *fn = pop(u);
    if (!args || !fn || args->kind != V_TUPLE)
        return fail(u, AL_ERR_FORMAT, "REDUCE needs a callable and an argument tuple");
    if (fn->kind != V_GLOBAL || fn->global == G_STORAGE_TYPE)
        return fail(u, AL_ERR_UNSUPPORTED, "REDUCE of something not allowed");
    if (fn->global == G_ORDERED_DICT) {
        if (args->n != 0) return fail(u, AL_ERR_UNSUPPORTED, "OrderedDict with arguments");
        return push(u, new_value(u, V_DICT));
    }
    if (fn->global == G_REBUILD_PARAMETER) { /* (data, requires_grad, backward_hooks) -> data */
        if (args->n < 1 || args->items[0]->kind != V_TENSOR)
            return fail(u, AL_ERR_FORMAT, "_rebuild_parameter without a tensor");
        return push(u, args->items[0]);
    }
    /* _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, hooks[, metadata]) */
    if (args->n < 4 || args->items[0]->kind != V_STORAGE || args->items[1]->kind != V_INT)
        return fail(u, AL_ERR_FORMAT, "_rebuild_tensor_v2 with bad arguments");
    pv *t = new_value(u, V_TENSOR);
    if (!t) return fail(u, AL_ERR_OOM, "out of memory");
    int n_stride = 0;
    if (!int_tuple(args->items[2], t->shape, AL_MAX_DIMS, &t->ndim) ||
        !int_tuple(args->items[3], t->stride, AL_MAX_DIMS, &n_stride) || n_stride != t->ndim)
        return fail(u, AL_ERR_FORMAT, "_rebuild_tensor_v2 with a bad size or stride");
    t->storage = args->items[0];
    t->offset = args->items[1]->i;
    return push(u, t);
}

static al_status op_setitems(unpickler *u, int from_mark) {
    int mark = from_mark ? find_mark(u) : u->n_stack - 3;
    if (mark < 0) return fail(u, AL_ERR_FORMAT, "SETITEMS without MARK");
    int first = from_mark ? mark + 1 : mark + 1;
    pv *dict = from_mark ? (mark > 0 ? u->stack[mark - 1] : NULL) : u->stack[mark];
    if (!dict || dict->kind != V_DICT || (u->n_stack - first) % 2)
        return fail(u, AL_ERR_FORMAT, "SETITEM(S) on something that is not a dict");
    for (int i = first; i < u->n_stack; i++) {
        if (u->stack[i]->kind == V_MARK) return fail(u, AL_ERR_FORMAT, "SETITEMS with a stray MARK");
        if (!append_item(dict, u->stack[i])) return fail(u, AL_ERR_OOM, "out of memory");
    }
    u->n_stack = from_mark ? mark : mark + 1;
    return AL_OK;
}

static al_status op_appends(unpickler *u, int from_mark) {
    int mark = from_mark ? find_mark(u) : u->n_stack - 2;
    if (mark < 0) return fail(u, AL_ERR_FORMAT, "APPENDS without MARK");
    pv *list = from_mark ? (mark > 0 ? u->stack[mark - 1] : NULL) : u->stack[mark];
    if (!list || list->kind != V_LIST) return fail(u, AL_ERR_FORMAT, "APPEND(S) on a non-list");
    for (int i = mark + 1; i < u->n_stack; i++) {
        if (u->stack[i]->kind == V_MARK) return fail(u, AL_ERR_FORMAT, "APPENDS with a stray MARK");
        if (!append_item(list, u->stack[i])) return fail(u, AL_ERR_OOM, "out of memory");
    }
    u->n_stack = from_mark ? mark : mark + 1;
    return AL_OK;
}

/* TUPLE from the topmost MARK, or the last n values (TUPLE1..3). */
static al_status op_tuple(unpickler *u, int n, vkind kind) {
    int first;
    if (n < 0) {
        int mark = find_mark(u);
        if (mark < 0) return fail(u, AL_ERR_FORMAT, "TUPLE without MARK");
        first = mark + 1;
    } else {
        first = u->n_stack - n;
        if (first < 0) return fail(u, AL_ERR_FORMAT, "TUPLE needs more values");
    }
    pv *t = new_value(u, kind);
    if (!t) return fail(u, AL_ERR_OOM, "out of memory");
    for (int i = first; i < u->n_stack; i++) {
        if (u->stack[i]->kind == V_MARK) return fail(u, AL_ERR_FORMAT, "TUPLE with a stray MARK");
        if (!append_item(t, u->stack[i])) return fail(u, AL_ERR_OOM, "out of memory");
    }
    u->n_stack = n < 0 ? first - 1 : first;
    return push(u, t);
}

static al_status memo_put(unpickler *u, uint64_t index) {
    pv *v = top(u);
    if (!v) return fail(u, AL_ERR_FORMAT, "PUT with an empty stack");
    if (index >= MAX_MEMO) return fail(u, AL_ERR_FORMAT, "memo index is too large");
    if ((int64_t)index >= u->cap_memo) {
        int64_t cap = u->cap_memo ? u->cap_memo : 64;
        while (cap <= (int64_t)index) cap *= 2;
        pv **g = realloc(u->memo, (size_t)cap * sizeof *g);
        if (!g) return fail(u, AL_ERR_OOM, "out of memory");
        memset(g + u->cap_memo, 0, (size_t)(cap - u->cap_memo) * sizeof *g);
        u->memo = g;
        u->cap_memo = cap;
    }
    u->memo[index] = v;
    return AL_OK;
}

static al_status memo_get(unpickler *u, uint64_t index) {
    if ((int64_t)index >= u->cap_memo || !u->memo[index])
        return fail(u, AL_ERR_FORMAT, "GET of an unknown memo entry");
    return push(u, u->memo[index]);
}

al_status al_unpickle(unpickler *u, pv **result) {
    int memo_next = 0; /* MEMOIZE (protocol 4) numbers entries in order */
    u->n_stack = 0;    /* a pickle sees nothing of the one before it */
    if (u->memo) memset(u->memo, 0, (size_t)u->cap_memo * sizeof *u->memo);
    while (u->p < u->end) {
        uint8_t op = *u->p++;
        al_status st = AL_OK;
        uint64_t x;
        switch (op) {
        case 0x80: /* PROTO */
            if (!need(u, 1)) return fail(u, AL_ERR_FORMAT, "PROTO runs past the end");
            if (*u->p > 5) return fail(u, AL_ERR_UNSUPPORTED, "protocol above 5");
            u->p++;
            break;
        case 0x95: /* FRAME: only a length hint */
            if (!need(u, 8)) return fail(u, AL_ERR_FORMAT, "FRAME runs past the end");
            u->p += 8;
            break;
        case '.': /* STOP */
            *result = pop(u);
            if (!*result) return fail(u, AL_ERR_FORMAT, "STOP with an empty stack");
            return AL_OK;
        case '(': {
            pv *m = new_value(u, V_MARK);
            st = push(u, m);
            break;
        }
        case ')': st = push(u, new_value(u, V_TUPLE)); break;
        case ']': st = push(u, new_value(u, V_LIST)); break;
        case '}': st = push(u, new_value(u, V_DICT)); break;
        case 't': st = op_tuple(u, -1, V_TUPLE); break;
        case 'l': st = op_tuple(u, -1, V_LIST); break;
        case 0x85: st = op_tuple(u, 1, V_TUPLE); break;
        case 0x86: st = op_tuple(u, 2, V_TUPLE); break;
        case 0x87: st = op_tuple(u, 3, V_TUPLE); break;
        case 'a': st = op_appends(u, 0); break;
        case 'e': st = op_appends(u, 1); break;
        case 's': st = op_setitems(u, 0); break;
        case 'u': st = op_setitems(u, 1); break;
        case 'N': st = push(u, new_value(u, V_NONE)); break;
        case 0x88:
        case 0x89: {
            pv *b = new_value(u, V_BOOL);
            if (b) b->i = op == 0x88;
            st = push(u, b);
            break;
        }
        case 'J':
            if (!need(u, 4)) return fail(u, AL_ERR_FORMAT, "BININT runs past the end");
            st = push_int(u, (int32_t)(uint32_t)le(u->p, 4));
            u->p += 4;
            break;
        case 'K':
            if (!need(u, 1)) return fail(u, AL_ERR_FORMAT, "BININT1 runs past the end");
            st = push_int(u, *u->p++);
            break;
        case 'M':
            if (!need(u, 2)) return fail(u, AL_ERR_FORMAT, "BININT2 runs past the end");
            st = push_int(u, (int64_t)le(u->p, 2));
            u->p += 2;
            break;
        case 0x8a: { /* LONG1: little-endian two's complement of n bytes */
            if (!need(u, 1)) return fail(u, AL_ERR_FORMAT, "LONG1 runs past the end");
            int n = *u->p++;
            if (n > 8) return fail(u, AL_ERR_UNSUPPORTED, "integer wider than 64 bits");
            if (!need(u, (size_t)n)) return fail(u, AL_ERR_FORMAT, "LONG1 runs past the end");
            x = le(u->p, n);
            if (n > 0 && n < 8 && (u->p[n - 1] & 0x80)) x |= ~(uint64_t)0 << (8 * n); /* sign */
            u->p += n;
            st = push_int(u, (int64_t)x);
            break;
        }
        case 'G': { /* BINFLOAT: big-endian double; kept as a float value we never use */
            if (!need(u, 8)) return fail(u, AL_ERR_FORMAT, "BINFLOAT runs past the end");
            u->p += 8;
            st = push(u, new_value(u, V_NONE));
            break;
        }
        case 'X': /* BINUNICODE */
        case 'T': /* BINSTRING */
        case 'B': /* BINBYTES */
            if (!need(u, 4)) return fail(u, AL_ERR_FORMAT, "string length runs past the end");
            x = le(u->p, 4);
            u->p += 4;
            st = push_string(u, (size_t)x);
            break;
        case 0x8c: /* SHORT_BINUNICODE */
        case 'U':  /* SHORT_BINSTRING */
        case 'C':  /* SHORT_BINBYTES */
            if (!need(u, 1)) return fail(u, AL_ERR_FORMAT, "string length runs past the end");
            x = *u->p++;
            st = push_string(u, (size_t)x);
            break;
        case 0x8d: /* BINUNICODE8 */
            if (!need(u, 8)) return fail(u, AL_ERR_FORMAT, "string length runs past the end");
            x = le(u->p, 8);
            u->p += 8;
            if (x > (uint64_t)(u->end - u->p)) return fail(u, AL_ERR_FORMAT, "string runs past the end");
            st = push_string(u, (size_t)x);
            break;
        case 'q':
            if (!need(u, 1)) return fail(u, AL_ERR_FORMAT, "BINPUT runs past the end");
            st = memo_put(u, *u->p++);
            break;
        case 'r':
            if (!need(u, 4)) return fail(u, AL_ERR_FORMAT, "LONG_BINPUT runs past the end");
            st = memo_put(u, le(u->p, 4));
            u->p += 4;
            break;
        case 0x94: st = memo_put(u, (uint64_t)memo_next++); break; /* MEMOIZE */
        case 'h':
            if (!need(u, 1)) return fail(u, AL_ERR_FORMAT, "BINGET runs past the end");
            st = memo_get(u, *u->p++);
            break;
        case 'j':
            if (!need(u, 4)) return fail(u, AL_ERR_FORMAT, "LONG_BINGET runs past the end");
            st = memo_get(u, le(u->p, 4));
            u->p += 4;
            break;
        case 'c': st = op_global(u); break;
        case 0x93: st = op_stack_global(u); break;
        case 'Q': st = op_persid(u); break;
        case 'R': st = op_reduce(u); break;
        case 'b': { /* BUILD: only the state of a dict (state_dict._metadata), which we drop */
            pv *state = pop(u), *obj = top(u);
            if (!state || !obj || obj->kind != V_DICT)
                return fail(u, AL_ERR_UNSUPPORTED, "BUILD of something other than a dict");
            break;
        }
        case '0': /* POP */
            if (u->n_stack == 0) return fail(u, AL_ERR_FORMAT, "POP with an empty stack");
            u->n_stack--;
            break;
        case '1': { /* POP_MARK */
            int mark = find_mark(u);
            if (mark < 0) return fail(u, AL_ERR_FORMAT, "POP_MARK without MARK");
            u->n_stack = mark;
            break;
        }
        case '2': { /* DUP */
            pv *v = top(u);
            if (!v) return fail(u, AL_ERR_FORMAT, "DUP with an empty stack");
            st = push(u, v);
            break;
        }
        default: {
            char what[64];
            snprintf(what, sizeof what, "opcode 0x%02x is not allowed", op);
            u->p--;
            return fail(u, AL_ERR_UNSUPPORTED, what);
        }
        }
        if (st != AL_OK) return st;
    }
    return fail(u, AL_ERR_FORMAT, "ends without STOP (truncated)");
}

void al_unpickler_free(unpickler *u) {
    for (int i = 0; i < u->n_all; i++) {
        free(u->all[i]->s);
        free(u->all[i]->items);
        free(u->all[i]);
    }
    free(u->all);
    free(u->stack);
    free(u->memo);
}

/* Where the view's elements lie: every index inside the storage, sizes and strides sane. *numel gets the
 * element count, *contiguous whether the view is the row-major block starting at its offset. */
static al_status check_view(const char *file, const char *name, const pv *t, int64_t *numel, int *contiguous,
                            al_error *err) {
    const int64_t big = (int64_t)1 << 40;
    const pv *s = t->storage;
    int64_t n = 1, expect = 1;
    *contiguous = 1;
    for (int i = t->ndim - 1; i >= 0; i--) {
        if (t->shape[i] < 0 || t->shape[i] > big || t->stride[i] < 0 || t->stride[i] > big)
            return al_err(err, AL_ERR_FORMAT, "%s: tensor '%s' has a bad size or stride in dimension %d", file,
                          name, i);
        /* Row-major contiguous: each stride is the product of the later sizes (size-1 dims free). */
        if (t->shape[i] != 1 && t->stride[i] != expect) *contiguous = 0;
        expect *= t->shape[i];
        if (expect > big) return al_err(err, AL_ERR_FORMAT, "%s: tensor '%s' is too large", file, name);
    }
    n = expect;
    if (t->offset < 0 || t->offset > s->numel || (n > 0 && t->offset == s->numel))
        return al_err(err, AL_ERR_FORMAT, "%s: tensor '%s' (offset %lld) lies outside its storage of %lld",
                      file, name, (long long)t->offset, (long long)s->numel);
    /* the last element is offset + sum (size - 1) * stride; added one dimension at a time so that
     * nothing overflows: each step must stay below the storage's end */
    int64_t last = t->offset;
    for (int i = 0; n > 0 && i < t->ndim; i++) {
        if (t->shape[i] <= 1 || t->stride[i] == 0) continue;
        if (t->stride[i] > (s->numel - 1 - last) / (t->shape[i] - 1))
            return al_err(err, AL_ERR_FORMAT,
                          "%s: tensor '%s' (offset %lld, %lld elements) lies outside its storage of %lld", file,
                          name, (long long)t->offset, (long long)n, (long long)s->numel);
        last += (t->shape[i] - 1) * t->stride[i];
    }
    *numel = n;
    return AL_OK;
}

/* Copies a strided view into row-major order: an odometer over the indices keeps the source offset. */
static void gather(uint8_t *dst, const uint8_t *src, const pv *t, size_t elem, int64_t numel) {
    int64_t idx[AL_MAX_DIMS] = {0}, off = t->offset;
    for (int64_t k = 0; k < numel; k++) {
        memcpy(dst + (size_t)k * elem, src + (size_t)off * elem, elem);
        for (int d = t->ndim - 1; d >= 0; d--) {
            if (++idx[d] < t->shape[d]) {
                off += t->stride[d];
                break;
            }
            off -= (idx[d] - 1) * t->stride[d];
            idx[d] = 0;
        }
    }
}

/* One state_dict entry: checks the storage bytes and the view, then lists the tensor. *copied counts the
 * bytes gathered so far against copy_limit. */
static al_status add_tensor(const char *file, const char *name, const pv *t, al_storage_lookup lookup, void *ctx,
                            size_t copy_limit, size_t *copied, al_tensor_list *list, al_error *err) {
    const pv *s = t->storage;
    if (al_tensor_list_find(list, name))
        return al_err(err, AL_ERR_FORMAT, "%s: tensor '%s' appears twice", file, name);
    const uint8_t *data = NULL;
    uint64_t size = 0;
    al_status st = lookup(ctx, name, s->s, &data, &size, err);
    if (st != AL_OK) return st;
    uint64_t elem = al_dtype_size(s->dtype);
    if ((uint64_t)s->numel > size / elem)
        return al_err(err, AL_ERR_FORMAT, "%s: tensor '%s': storage '%s' holds %llu bytes, not %lld elements",
                      file, name, s->s, (unsigned long long)size, (long long)s->numel);
    int64_t numel = 0;
    int contiguous = 1;
    st = check_view(file, name, t, &numel, &contiguous, err);
    if (st != AL_OK) return st;
    al_tensor_entry entry;
    memset(&entry, 0, sizeof entry);
    entry.name = (char *)name;
    entry.dtype = s->dtype;
    entry.ndim = t->ndim;
    memcpy(entry.shape, t->shape, sizeof entry.shape);
    entry.nbytes = (size_t)((uint64_t)numel * elem);
    snprintf(entry.file, sizeof entry.file, "%s", file);
    if (contiguous || numel == 0) {
        entry.data = data + (uint64_t)t->offset * elem;
        return al_tensor_list_add(list, &entry, err);
    }
    /* A strided view (a transposed weight, a column slice): gathered once, here. A view cannot hold more
     * elements than its storage (an expanded one would turn a small file into any amount of memory), and
     * all copies together stay within copy_limit. */
    if (numel > s->numel)
        return al_err(err, AL_ERR_UNSUPPORTED,
                      "%s: tensor '%s' is a broadcast view (%lld elements of a storage of %lld); save it with "
                      ".contiguous()",
                      file, name, (long long)numel, (long long)s->numel);
    if (entry.nbytes > copy_limit - *copied)
        return al_err(err, AL_ERR_FORMAT, "%s: tensor '%s': strided views would copy more than the file's %zu bytes",
                      file, name, copy_limit);
    uint8_t *copy = malloc(entry.nbytes);
    if (!copy) return al_err(err, AL_ERR_OOM, "%s: tensor '%s': out of memory (%zu bytes)", file, name, entry.nbytes);
    gather(copy, data, t, (size_t)elem, numel);
    st = al_tensor_list_own(list, copy, err);
    if (st != AL_OK) return st;
    *copied += entry.nbytes;
    entry.data = copy;
    return al_tensor_list_add(list, &entry, err);
}

al_status al_torch_state_dict_add(const pv *result, const char *file, al_storage_lookup lookup, void *ctx,
                                  size_t copy_limit, al_tensor_list *list, al_error *err) {
    if (result->kind != V_DICT)
        return al_err(err, AL_ERR_FORMAT, "%s: the pickle is not a state_dict (a dict of tensors)", file);
    int first = list->n;
    size_t copied = 0;
    al_status st = AL_OK;
    for (int i = 0; st == AL_OK && i + 1 < result->n; i += 2) {
        const pv *k = result->items[i], *v = result->items[i + 1];
        if (k->kind != V_STR || v->kind != V_TENSOR) continue; /* not a tensor entry */
        st = add_tensor(file, k->s, v, lookup, ctx, copy_limit, &copied, list, err);
    }
    if (st != AL_OK) {
        for (int i = first; i < list->n; i++) free(list->items[i].name);
        list->n = first;
    }
    return st;
}

/* The zip's storages: "<archive>/data/<key>". */
typedef struct zip_storages {
    const al_zip *zip;
    const char *prefix, *file;
} zip_storages;

static al_status zip_lookup(void *ctx, const char *tensor, const char *key, const uint8_t **data, uint64_t *size,
                            al_error *err) {
    const zip_storages *z = ctx;
    char entry_name[512];
    snprintf(entry_name, sizeof entry_name, "%sdata/%s", z->prefix, key);
    const al_zip_entry *e = al_zip_find(z->zip, entry_name);
    if (!e)
        return al_err(err, AL_ERR_FORMAT, "%s: tensor '%s': storage '%s' is missing", z->file, tensor, entry_name);
    return al_zip_data(e, z->file, data, size, err);
}

al_status al_torch_bin_read(const uint8_t *buf, size_t size, const char *file, al_tensor_list *list,
                            al_error *err) {
    if (al_torch_legacy_is(buf, size)) return al_torch_legacy_read(buf, size, file, list, err);
    al_zip zip;
    al_status st = al_zip_read(buf, size, file, &zip, err);
    if (st != AL_OK) return st;
    /* torch.save puts everything under one folder: "<archive>/data.pkl", "<archive>/data/<key>". */
    const al_zip_entry *pkl = NULL;
    char prefix[256] = "";
    for (int i = 0; i < zip.n && !pkl; i++) {
        const char *n = zip.entries[i].name, *slash = strchr(n, '/');
        if (strcmp(n, "data.pkl") == 0 || (slash && strcmp(slash, "/data.pkl") == 0)) {
            pkl = &zip.entries[i];
            size_t len = slash && strcmp(n, "data.pkl") != 0 ? (size_t)(slash - n) + 1 : 0;
            if (len >= sizeof prefix) len = 0;
            memcpy(prefix, n, len);
            prefix[len] = '\0';
        }
    }
    if (!pkl) {
        al_zip_free(&zip);
        return al_err(err, AL_ERR_FORMAT, "%s: no data.pkl in the zip (not a torch.save file)", file);
    }
    /* Every entry we read goes through al_zip_data, whose status is checked before its pointer is used: a
     * compressed entry has no bytes to point at. */
    char bo_name[280];
    snprintf(bo_name, sizeof bo_name, "%sbyteorder", prefix);
    const al_zip_entry *bo = al_zip_find(&zip, bo_name);
    if (bo) {
        const uint8_t *order = NULL;
        uint64_t order_size = 0;
        st = al_zip_data(bo, file, &order, &order_size, err);
        if (st == AL_OK && !(order_size == 6 && memcmp(order, "little", 6) == 0))
            st = al_err(err, AL_ERR_UNSUPPORTED, "%s: '%s' is not \"little\"; only little-endian tensors are "
                        "supported", file, bo_name);
        if (st != AL_OK) {
            al_zip_free(&zip);
            return st;
        }
    }
    const uint8_t *pdata = NULL;
    uint64_t psize = 0;
    st = al_zip_data(pkl, file, &pdata, &psize, err);
    if (st != AL_OK) {
        al_zip_free(&zip);
        return st;
    }
    unpickler u;
    memset(&u, 0, sizeof u);
    u.p = u.start = pdata;
    u.end = pdata + psize;
    u.file = file;
    u.err = err;
    pv *result = NULL;
    st = al_unpickle(&u, &result);
    zip_storages storages = {&zip, prefix, file};
    if (st == AL_OK) st = al_torch_state_dict_add(result, file, zip_lookup, &storages, size, list, err);
    al_unpickler_free(&u);
    al_zip_free(&zip);
    return st;
}
