/* api_internal.h: what the JSON API's files share. Each section names the file that implements it;
 * the files depend on each other in one direction only:
 *   session.c, api_reply.c  <-  api_request.c, api_shared.c  <-  attention_*.c, op_*.c
 *   <-  ops.c (the op table)  <-  api.c
 * Not public. */
#ifndef AL_API_INTERNAL_H
#define AL_API_INTERNAL_H

#include "../attnlab.h"
#include "cJSON.h"

/* A model loaded under an id. */
typedef struct al_api_model {
    char id[128];
    al_model *model;
    char hash[65]; /* the model's content hash once al_api_model_hash has computed it, else "" */
} al_api_model;

/* A named float32 input attached with al_session_set_tensor (e.g. PAPA constant matrices). */
typedef struct al_api_tensor {
    char name[64];
    int ndim;
    int64_t shape[6];
    float *data;
    size_t count; /* product of shape */
} al_api_tensor;

struct al_session {
    al_api_model *models;
    int n_models, cap_models;
    al_api_tensor *inputs;
    int n_inputs, cap_inputs;
    al_threadpool *pool; /* every op's forward passes run on it (docs/threads.md) */
};

/* ------------------------------------------------------------ session (session.c) */

const al_api_model *al_api_find_model(const al_session *s, const char *id);
/* The model's content hash (al_model_content_hash, 64 hex digits), computed on the first request that asks and kept
 * with the model: a session's models are never written after loading, and hashing bert-base's 440 MB of weights
 * takes a second or more (docs/speed.md, "A model's hash once per session"). Not for two requests at once on one
 * session (neither is the pool). */
const char *al_api_model_hash(const al_api_model *m);
const al_api_tensor *al_api_find_tensor(const al_session *s, const char *name);
/* Adds or replaces the model under `id`; takes ownership of `model` on success only. */
al_status al_api_put_model(al_session *s, const char *id, al_model *model, al_error *err);
/* A model id: non-empty and shorter than al_api_model.id. */
al_status al_api_check_model_id(const char *id, al_error *err);

/* ------------------------------------------------------------ reply builder (api_reply.c) */

typedef struct al_reply_builder {
    cJSON *root;          /* the reply object */
    cJSON *warnings;      /* array inside root */
    int oom;              /* set when any cJSON allocation failed: the reply is then incomplete */
    al_tensor_out *tensors;
    int n_tensors, cap_tensors;
} al_reply_builder;

al_status al_rb_init(al_reply_builder *rb, const char *op, al_error *err);
void al_rb_discard(al_reply_builder *rb);
/* Moves JSON text and tensors into `reply`; the builder is emptied either way. */
al_status al_rb_finish(al_reply_builder *rb, al_reply *reply, al_error *err);

/* Adds a zero-filled tensor owned by the builder and returns its data in *data. dtype "F32"/"I32". */
al_status al_rb_tensor(al_reply_builder *rb, const char *name, const char *dtype, int ndim,
                       const int64_t *shape, void **data, al_error *err);

/* Each adds to `obj` and records allocation failure in rb->oom; they return the new item (or NULL). */
cJSON *al_rb_add(al_reply_builder *rb, cJSON *obj, const char *key, cJSON *item);
void al_rb_num(al_reply_builder *rb, cJSON *obj, const char *key, double value);
void al_rb_str(al_reply_builder *rb, cJSON *obj, const char *key, const char *value);
void al_rb_bool(al_reply_builder *rb, cJSON *obj, const char *key, int value);
cJSON *al_rb_int_array(al_reply_builder *rb, cJSON *obj, const char *key, const int32_t *values,
                       int n);
void al_rb_warn(al_reply_builder *rb, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ------------------------------------------------------------ request fields (api_request.c)
 * Every reader names the field in its error: "request: field 'max_length' must be an integer".
 * `path` is the field's full name for messages (e.g. "policies[2].lambda"); it may equal `key`. */

/* *out = NULL when absent and not required. */
al_status al_req_string(const cJSON *obj, const char *key, const char *path, int required,
                        const char **out, al_error *err);
/* *present = 0 and *out = def when absent (required == 0). */
al_status al_req_int(const cJSON *obj, const char *key, const char *path, int required, int def,
                     int min, int max, int *out, al_error *err);
al_status al_req_bool(const cJSON *obj, const char *key, const char *path, int def, int *out,
                      al_error *err);
al_status al_req_float(const cJSON *obj, const char *key, const char *path, int required,
                       float def, float min, float max, float *out, al_error *err);
/* A list of names (e.g. "outputs": ["attentions", "values"]) as bit flags: names[i] sets bit 1 << i.
 * *flags = def when the field is absent or null. n_names <= 31. */
al_status al_req_flags(const cJSON *obj, const char *key, const char *const *names, int n_names,
                       int def, int *flags, al_error *err);
/* The model named by the request's "model" field. */
al_status al_req_model(const al_session *s, const cJSON *req, const al_api_model **out,
                       al_error *err);

/* ------------------------------------------------------------ field tables (request_fields.c)
 * Each op declares its request fields in tables of rows, defined beside its handler (shared groups, such as
 * the inputs or an experiment's task, in request_fields.c). One checker reads them: the dispatcher checks
 * every request's types and fixed ranges against its op's tables before the handler runs, the handler warns
 * about fields no table names (al_req_warn_fields) where it always did, the "version" op publishes the
 * tables, and the CLI and the page build their options and lists from that reply (docs/api.md, "Fields"). */

typedef enum al_req_field_kind {
    AL_FIELD_ANY,    /* several forms (e.g. "cls" or a position): the handler checks it */
    AL_FIELD_STRING,
    AL_FIELD_INT,
    AL_FIELD_NUMBER,
    AL_FIELD_BOOL,
    AL_FIELD_ENUM,   /* a string, one of `names` */
    AL_FIELD_ARRAY,  /* items of kind `item` */
    AL_FIELD_OBJECT, /* its fields are rows named "parent.field" */
} al_req_field_kind;

typedef struct al_req_field {
    const char *name;          /* "L", or "ranking.lr" for the field "lr" of the object "ranking"; NULL ends a table */
    al_req_field_kind kind;
    al_req_field_kind item;        /* AL_FIELD_ARRAY: the items' kind */
    double min, max;           /* INT, NUMBER (or arrays of them): the fixed range; min > max: none fixed (the
                                * handler checks a range that depends on the model). A NUMBER field is a float
                                * (al_req_float): its value is compared with the bounds rounded to float */
    const char *const *names;  /* ENUM (or an array of ENUM): the NULL-terminated names, the C table that defines them */
    const char *def;           /* the default as JSON text ("8", "true", "\"quick\""); NULL: none or it depends */
    const char *help;          /* one line */
} al_req_field;

/* the rows (a range given as "1, 0", min > max, is none) */
#define AL_FIELD_NO_RANGE 1, 0
#define AL_F_STRING(name, def, help) {name, AL_FIELD_STRING, AL_FIELD_ANY, AL_FIELD_NO_RANGE, NULL, def, help}
#define AL_F_ANY(name, help) {name, AL_FIELD_ANY, AL_FIELD_ANY, AL_FIELD_NO_RANGE, NULL, NULL, help}
#define AL_F_INT(name, lo, hi, def, help) {name, AL_FIELD_INT, AL_FIELD_ANY, lo, hi, NULL, def, help}
#define AL_F_NUMBER(name, lo, hi, def, help) {name, AL_FIELD_NUMBER, AL_FIELD_ANY, lo, hi, NULL, def, help}
#define AL_F_BOOL(name, def, help) {name, AL_FIELD_BOOL, AL_FIELD_ANY, AL_FIELD_NO_RANGE, NULL, def, help}
#define AL_F_ENUM(name, names, def, help) {name, AL_FIELD_ENUM, AL_FIELD_ANY, AL_FIELD_NO_RANGE, names, def, help}
#define AL_F_OBJECT(name, help) {name, AL_FIELD_OBJECT, AL_FIELD_ANY, AL_FIELD_NO_RANGE, NULL, NULL, help}
#define AL_F_ARRAY(name, item, lo, hi, names, def, help) {name, AL_FIELD_ARRAY, item, lo, hi, names, def, help}
#define AL_F_END {NULL, AL_FIELD_ANY, AL_FIELD_ANY, AL_FIELD_NO_RANGE, NULL, NULL, NULL}

/* An op's fields: up to AL_OP_MAX_FIELD_TABLES tables (shared groups and its own), NULL after the last. */
#define AL_OP_MAX_FIELD_TABLES 10

/* The shared groups (request_fields.c). */
extern const al_req_field al_fields_none[];       /* an op without fields besides "op" */
extern const al_req_field al_fields_model[];      /* "model": a loaded model's id */
extern const al_req_field al_fields_text[];       /* text, text_pair */
extern const al_req_field al_fields_texts[];      /* texts, text_pairs */
extern const al_req_field al_fields_ids[];        /* input_ids */
extern const al_req_field al_fields_encode[];     /* max_length, add_special_tokens */
extern const al_req_field al_fields_pad[];        /* pad_to */
extern const al_req_field al_fields_corpus[];     /* corpus, corpus_name: a causal model's corpus (corpus_reply.h) */
extern const al_req_field al_fields_task[];       /* an experiment's task: task, task_jsonl, ..., import.* */
extern const al_req_field al_fields_sweep[];      /* preset, L, layout, max_train, batch_size, memory_mb */
extern const al_req_field al_fields_sweep_data[]; /* max_validation, constants_examples */
extern const al_req_field al_fields_training[];   /* probe.*, ranking.* */
/* The sequences most ops read (attention_inputs.c): one text or pair, a batch of them, or token ids. */
#define AL_FIELDS_SEQUENCES al_fields_text, al_fields_texts, al_fields_ids, al_fields_encode, al_fields_pad

/* Checks every field the tables name that the request holds (null counts as absent): its kind, its fixed
 * range, its names; errors name the field ("request: field 'probe.lr' is 20, outside [1e-08, 10]"). */
al_status al_req_check_fields(const cJSON *req, const al_req_field *const *tables, al_error *err);
/* "unknown field 'x' ignored" for every top-level key besides "op" that no table names. */
void al_req_warn_fields(al_reply_builder *rb, const cJSON *req, const al_req_field *const *tables);
/* The tables as a JSON array of {name, kind, items?, min?, max?, enum?, default?, help} (the "version" op). */
cJSON *al_fields_json(al_reply_builder *rb, cJSON *obj, const char *key, const al_req_field *const *tables);
/* The kind's name in that array: "string", "int", "number", "bool", "enum", "array", "object", "any". */
const char *al_req_field_kind_name(al_req_field_kind kind);

/* ------------------------------------------------------------ ops */

typedef struct al_api_op al_api_op;

typedef struct al_op_ctx {
    al_session *session;
    const cJSON *req;
    al_reply_builder *rb;
    const al_run_params *params; /* never NULL inside ops */
    const al_api_op *op;         /* the op's table entry: its fields for al_req_warn_fields */
} al_op_ctx;

typedef al_status (*al_op_fn)(al_op_ctx *ctx, al_error *err);

/* One entry of the op table (ops.c). */
struct al_api_op {
    const char *name;
    al_op_fn run;
    const char *summary; /* one line, returned by "version" */
    int worker;          /* 1: the browser worker (wasm/worker.mjs) passes it through */
    const al_req_field *fields[AL_OP_MAX_FIELD_TABLES + 1]; /* its request fields, NULL after the last table */
};

/* The op named `name`, or NULL. */
const al_api_op *al_api_find_op(const char *name);
/* The table's ops in order (tests walk them). */
int al_api_op_count(void);
const al_api_op *al_api_op_at(int i);
/* Warns about the request's fields that its op's tables do not name (where the handler always did). */
static inline void al_op_warn_unknown(const al_op_ctx *ctx) { al_req_warn_fields(ctx->rb, ctx->req, ctx->op->fields); }
/* The "unknown op" error, listing every op of the table. */
al_status al_api_unknown_op(const char *name, al_error *err);

al_status al_op_load_model(al_op_ctx *ctx, al_error *err);   /* op_session.c */
al_status al_op_unload_model(al_op_ctx *ctx, al_error *err); /* op_session.c */
al_status al_op_models(al_op_ctx *ctx, al_error *err);       /* op_session.c */
al_status al_op_info(al_op_ctx *ctx, al_error *err);         /* op_info.c */
al_status al_op_tokenize(al_op_ctx *ctx, al_error *err);     /* op_tokenize.c */
al_status al_op_attention(al_op_ctx *ctx, al_error *err);    /* op_attention.c */
al_status al_op_papa(al_op_ctx *ctx, al_error *err);         /* op_papa.c */
/* The papa op on a language model's corpus (op_papa_lm.c): when the request gives "corpus". */
int al_papa_is_lm_request(const cJSON *req);
al_status al_op_papa_lm(al_op_ctx *ctx, al_error *err);      /* op_papa_lm.c */
al_status al_op_papa_merge(al_op_ctx *ctx, al_error *err);   /* op_papa_merge.c */
al_status al_op_head_importance(al_op_ctx *ctx, al_error *err); /* op_importance.c */
al_status al_op_value_zeroing(al_op_ctx *ctx, al_error *err);   /* op_importance.c */
al_status al_op_check_config(al_op_ctx *ctx, al_error *err); /* op_check_config.c */
al_status al_op_head_steps(al_op_ctx *ctx, al_error *err);  /* op_head_steps.c */
al_status al_op_lm(al_op_ctx *ctx, al_error *err);          /* op_lm.c */
al_status al_op_generate(al_op_ctx *ctx, al_error *err);    /* op_generate.c */
al_status al_op_head_roles(al_op_ctx *ctx, al_error *err);  /* op_head_roles.c */
al_status al_op_layers(al_op_ctx *ctx, al_error *err);      /* op_layers.c */
al_status al_op_streaming(al_op_ctx *ctx, al_error *err);   /* op_streaming.c */
/* The ops' own fields, each beside its handler. */
extern const al_req_field al_fields_load_model[], al_fields_attention_own[], al_fields_papa_own[],
    al_fields_papa_merge_own[], al_fields_importance_own[], al_fields_check_config_own[], al_fields_head_steps_own[],
    al_fields_lm_own[], al_fields_generate_own[], al_fields_head_roles_own[], al_fields_layers_own[],
    al_fields_streaming_own[];
/* The effective-attention and analysis ops: op_analysis.h. */

/* ------------------------------------------------------------ shared by several ops (api_shared.c) */

/* Fills `obj` with the model's description (shared by "info" and "load_model"). */
void al_api_describe_model(al_reply_builder *rb, cJSON *obj, const al_api_model *m);
/* Token strings for ids as a JSON array; "#<id>" stands in when there is no tokenizer or the id has
 * no string. NULL when out of memory. */
cJSON *al_api_token_strings(const al_tokenizer *tok, const int32_t *ids, int n);
/* The longest token sequence the model's position table allows (RoBERTa: 514 - 2 = 512). */
int al_api_max_tokens(const al_model *model);

static inline void al_api_progress(const al_run_params *p, const char *stage, double fraction) {
    if (p->progress) p->progress(p->progress_user, stage, fraction);
}
static inline int al_api_cancelled(const al_run_params *p) { return p->cancel && *p->cancel; }

#endif
