/* attnlab.c: the command-line front end of the JSON API. Every command builds the same request JSON
 * the browser worker sends, runs it through al_session_run, and prints the reply for a terminal (or
 * as JSON with --json). A model directory is loaded into the session under its path as the id.
 *
 * Exit codes: 0 ok, 1 error ("attnlab: <message>" on stderr), 2 usage. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attnlab.h"
#include "cJSON.h"
#include "core/error.h"
#include "core/json_nul.h"
#include "kernels/kernels.h"
#include "methods/measures/agreement_finding.h"
#include "model/tensor_list.h"
#include "train/pretrain.h"

/* The usage of the commands that are not ops (an op's usage is made from its fields: print_op_help); `attnlab
 * COMMAND --help` prints its own, `attnlab --help` all of them. */
static const struct command_usage {
    const char *name, *text;
} k_commands[] = {
    {"run", "  attnlab run REQUEST.json [--inputs FILE.safetensors] [--out FILE.safetensors]\n"
            "      runs a JSON request (as the browser worker does) and prints the reply JSON; the request\n"
            "      may name its model directory as \"model_dir\" (or \"path\"); --inputs attaches the F32\n"
            "      tensors of a safetensors file (e.g. PAPA constant matrices) by name; REQUEST.json may be -\n"},
    {"vocab", "  attnlab vocab CORPUS.txt --out vocab.txt [--size 8000] [--min-frequency 2] [--alphabet 1000]\n"
              "                [--heldout TEXT.txt]\n"
              "      learns a WordPiece vocabulary (BPE-style merges, \"##\" continuations); --heldout reports\n"
              "      the [UNK] rate of another text under it\n"},
    {"export", "  attnlab export MODEL_DIR OUT_DIR [--dtype F16|F32] [--shard-mb N] [--vocab vocab.txt]\n"
               "      writes a model again in Hugging Face layout: weights as float16 (round to nearest even) or\n"
               "      float32, in shards of at most N MB with an index; config and tokenizer files copied; --vocab\n"
               "      gives a decoder checkpoint its tokenizer.json from its training vocabulary\n"},
    {"findings", "  attnlab findings REPLY.json\n"
                 "      the head_agreement op's rule (docs/findings.md) applied again to a reply's Spearman matrix and\n"
                 "      overlaps (its \"measures\" with id, words and least; \"shape\"; \"spearman\"; \"least\"), and\n"
                 "      to its lambda grid when present: prints the sentence and the verdicts as JSON\n"},
    {"pretrain", "  attnlab pretrain [--config train_config.json] [--KEY VALUE ...] [--resume CHECKPOINT_DIR]\n"
                 "                   [--stop-after STEP] [--max-minutes M]\n"
                 "      masked-language-model pretraining of a BERT encoder, or with --objective clm a GPT-2\n"
                 "      decoder's next-token pretraining (docs/decoder_pretraining.md); KEY is any train-config key\n"
                 "      (objective, vocab, train, heldout, out_dir, steps, batch_size, lr, warmup_steps, seed, ...)\n"},
};
#define N_COMMANDS ((int)(sizeof k_commands / sizeof k_commands[0]))

static const char k_options[] =
    "options: --progress (progress on stderr even when it is not a terminal), --help, --version,\n"
    "         --threads N (threads of the forward passes, sweeps and analyses; default: the cores, at most\n"
    "         8; the numbers are the same for any N), -- (ends the options: a text after it may start with '-')\n";

static void print_usage(void);
static int command_help(int argc, char **argv);

/* ------------------------------------------------------------ command line */

typedef struct cli_args {
    const char *command;
    const char *positional[3];
    int n_positional;
    const char *out_path;
    const char *inputs_path;
    int progress;
} cli_args;

static int usage_error(const char *fmt, const char *arg) {
    fprintf(stderr, "attnlab: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(see attnlab --help)\n");
    return 2;
}

static int parse_int(const char *text, int min, int *out) {
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < min || v > 1 << 24) return 0;
    *out = (int)v;
    return 1;
}

/* `run` and the global options (an op's command line: parse_op_args). Returns -1 when parsed, else the exit code
 * (0 for --help/--version, 2 for usage errors). */
static int parse_args(int argc, char **argv, cli_args *a) {
    memset(a, 0, sizeof *a);
    int options_ended = 0; /* after "--" every argument is positional, so a text may start with "-" */
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (!options_ended && strcmp(arg, "--") == 0) {
            options_ended = 1;
        } else if (options_ended) {
            if (!a->command) a->command = arg;
            else if (a->n_positional < 3) a->positional[a->n_positional++] = arg;
            else return usage_error("unexpected argument '%s'", arg);
        } else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            print_usage();
            return 0;
        } else if (strcmp(arg, "--version") == 0) {
            printf("attnlab %s\n", AL_VERSION);
            return 0;
        } else if (strcmp(arg, "--json") == 0) {
            continue; /* run prints the reply JSON anyway */
        } else if (strcmp(arg, "--progress") == 0) {
            a->progress = 1;
        } else if (strcmp(arg, "--out") == 0 || strcmp(arg, "--inputs") == 0) {
            if (!value) return usage_error("option %s needs a value", arg);
            i++;
            if (strcmp(arg, "--out") == 0) a->out_path = value;
            else a->inputs_path = value;
        } else if (arg[0] == '-' && arg[1] == '-') {
            return usage_error("unknown option '%s'", arg);
        } else if (!a->command) {
            a->command = arg;
        } else if (a->n_positional < 3) {
            a->positional[a->n_positional++] = arg;
        } else {
            return usage_error("unexpected argument '%s'", arg);
        }
    }
    if (!a->command) return usage_error("%s", "missing command");
    return -1;
}

/* ------------------------------------------------------------ progress */

static void print_progress(void *user, const char *stage, double fraction) {
    (void)user;
    fprintf(stderr, "\r\033[K%s %3.0f%%", stage, fraction * 100.0);
    fflush(stderr);
}

/* ------------------------------------------------------------ running requests */

typedef struct cli {
    al_session *session;
    al_run_params params;
    int progress_shown;
} cli;

static int fail(const char *message) {
    fprintf(stderr, "attnlab: %s\n", message);
    return 1;
}

/* Loads MODEL_DIR into the session under `id`, or under the path itself (readable in replies). */
static int load_dir(cli *c, const char *dir, const char *id, const char **id_out) {
    al_error err = {0};
    al_fileset *fs = al_fileset_new();
    if (!fs) return fail("out of memory");
    if (al_fileset_add_dir(fs, dir, &err) != AL_OK) {
        al_fileset_free(fs);
        return fail(err.message);
    }
    if (!id) id = strlen(dir) < 120 ? dir : "model";
    if (al_session_add_model(c->session, id, fs, &err) != AL_OK) return fail(err.message);
    *id_out = id;
    return 0;
}

/* Runs a request object; on error prints the reply's message and returns 1. */
static int run_request(cli *c, const cJSON *request, al_reply *reply, cJSON **parsed) {
    char *text = cJSON_PrintUnformatted(request);
    if (!text) return fail("out of memory");
    al_status st = al_session_run(c->session, text, &c->params, reply);
    free(text);
    if (c->params.progress) fputs("\r\033[K", stderr); /* clear the progress line */
    *parsed = reply->json ? cJSON_Parse(reply->json) : NULL;
    if (st != AL_OK || !*parsed) {
        const cJSON *e = *parsed ? cJSON_GetObjectItem(*parsed, "error") : NULL;
        const cJSON *msg = e ? cJSON_GetObjectItem(e, "message") : NULL;
        int code = fail(cJSON_IsString(msg) ? msg->valuestring : al_status_name(st));
        cJSON_Delete(*parsed);
        *parsed = NULL;
        al_reply_free(reply);
        return code;
    }
    const cJSON *warnings = cJSON_GetObjectItem(*parsed, "warnings");
    for (const cJSON *w = warnings ? warnings->child : NULL; w; w = w->next)
        if (cJSON_IsString(w)) fprintf(stderr, "attnlab: warning: %s\n", w->valuestring);
    return 0;
}

/* The request and reply JSON go into the file's metadata, so the file says how it was made. */
static int write_tensors(const char *path, const al_reply *reply, const cJSON *request) {
    char *request_json = cJSON_PrintUnformatted(request);
    if (!request_json) return fail("out of memory");
    const char *meta[8] = {"format", "pt", "attnlab_version", AL_VERSION,
                           "request", request_json, "reply", reply->json};
    al_error err = {0};
    al_status st = al_safetensors_write(path, reply->tensors, reply->n_tensors, meta, 4, &err);
    free(request_json);
    if (st != AL_OK)
        return fail(err.message);
    return 0;
}

/* ------------------------------------------------------------ printing */

static int json_int(const cJSON *obj, const char *key, int def) {
    const cJSON *v = cJSON_GetObjectItem(obj, key);
    return cJSON_IsNumber(v) ? v->valueint : def;
}

static const char *json_str(const cJSON *obj, const char *key, const char *def) {
    const cJSON *v = cJSON_GetObjectItem(obj, key);
    return cJSON_IsString(v) ? v->valuestring : def;
}

static void print_json(const cJSON *reply) {
    char *text = cJSON_Print(reply);
    if (text) puts(text);
    free(text);
}

/* Thousands separators for parameter counts. */
static void print_count(double n) {
    char digits[32], out[48];
    snprintf(digits, sizeof digits, "%.0f", n);
    int len = (int)strlen(digits), o = 0;
    for (int i = 0; i < len; i++) {
        if (i && (len - i) % 3 == 0) out[o++] = ',';
        out[o++] = digits[i];
    }
    out[o] = '\0';
    fputs(out, stdout);
}

static void print_info(const cJSON *r) {
    const cJSON *cfg = cJSON_GetObjectItem(r, "config");
    printf("model        %s\n", json_str(r, "model", "?"));
    printf("arch         %s (model_type %s; decided by %s)\n", json_str(r, "arch", "?"), json_str(cfg, "model_type", "?"),
           json_str(r, "family_rule", "?"));
    printf("shape        %d layers, %d heads, hidden %d (head_dim %d), embedding %d, ffn %d, %s\n",
           json_int(cfg, "num_hidden_layers", 0), json_int(cfg, "num_attention_heads", 0),
           json_int(cfg, "hidden_size", 0), json_int(cfg, "head_dim", 0),
           json_int(cfg, "embedding_size", 0), json_int(cfg, "intermediate_size", 0),
           json_str(cfg, "hidden_act", "?"));
    printf("vocab        %d, positions %d (max tokens %d), token types %d\n", json_int(cfg, "vocab_size", 0),
           json_int(cfg, "max_position_embeddings", 0), json_int(r, "max_tokens", 0),
           json_int(cfg, "type_vocab_size", 0));
    printf("parameters   ");
    const cJSON *np = cJSON_GetObjectItem(r, "n_params");
    print_count(cJSON_IsNumber(np) ? np->valuedouble : 0);
    printf("\nweights      %s (%s)\n", json_str(r, "weights_file", "?"), json_str(r, "weights_dtype", "?"));
    const cJSON *tok = cJSON_GetObjectItem(r, "tokenizer");
    if (cJSON_IsObject(tok)) {
        printf("tokenizer    %s, %d tokens;", json_str(tok, "kind", "?"), json_int(tok, "vocab_size", 0));
        const cJSON *ids = cJSON_GetObjectItem(tok, "special_ids");
        const cJSON *names = cJSON_GetObjectItem(tok, "special_tokens");
        for (const cJSON *id = ids ? ids->child : NULL; id; id = id->next)
            if (cJSON_IsNumber(id))
                printf(" %s=%d", json_str(names, id->string, id->string), id->valueint);
        printf("\n");
    } else {
        printf("tokenizer    none\n");
    }
    const cJSON *mlm = cJSON_GetObjectItem(r, "mlm_head");
    printf("mlm head     %s\n", cJSON_IsTrue(mlm) ? "yes" : "no");
    const cJSON *unused = cJSON_GetObjectItem(r, "unused_files"), *u;
    cJSON_ArrayForEach(u, unused) printf("not used     %s: %s\n", json_str(u, "file", "?"), json_str(u, "reason", "?"));
}

static int array_int(const cJSON *obj, const char *key, int i) {
    const cJSON *v = cJSON_GetArrayItem(cJSON_GetObjectItem(obj, key), i);
    return cJSON_IsNumber(v) ? v->valueint : 0;
}

static void print_tokens(const cJSON *r) {
    const cJSON *tokens = cJSON_GetObjectItem(r, "tokens");
    int n = cJSON_GetArraySize(tokens);
    printf("%5s  %-20s %7s %4s %5s  %s\n", "i", "token", "id", "type", "word", "bytes");
    const cJSON *offsets = cJSON_GetObjectItem(r, "offsets");
    for (int i = 0; i < n; i++) {
        const cJSON *off = cJSON_GetArrayItem(offsets, i);
        int word = array_int(r, "word_ids", i);
        char word_text[16];
        snprintf(word_text, sizeof word_text, "%d", word);
        printf("%5d  %-20s %7d %4d %5s  %d:%d\n", i, cJSON_GetArrayItem(tokens, i)->valuestring,
               array_int(r, "ids", i), array_int(r, "type_ids", i), word < 0 ? "-" : word_text,
               cJSON_IsArray(off) ? cJSON_GetArrayItem(off, 0)->valueint : 0,
               cJSON_IsArray(off) ? cJSON_GetArrayItem(off, 1)->valueint : 0);
    }
    printf("%d tokens%s\n", n, cJSON_IsTrue(cJSON_GetObjectItem(r, "truncated")) ? " (truncated)" : "");
}

/* A label cut to `width` bytes without splitting a UTF-8 sequence, padded with spaces to `width`
 * display columns (counting one column per code point). */
static void print_label(const char *s, int width, int right_align) {
    int bytes = 0, cols = 0;
    while (s[bytes] && cols < width) {
        int len = 1;
        unsigned char c = (unsigned char)s[bytes];
        if (c >= 0xF0) len = 4;
        else if (c >= 0xE0) len = 3;
        else if (c >= 0xC0) len = 2;
        for (int k = 1; k < len; k++)
            if (!s[bytes + k]) len = k;
        bytes += len;
        cols++;
    }
    if (right_align) printf("%*s", width - cols, "");
    printf("%.*s", bytes, s);
    if (!right_align) printf("%*s", width - cols, "");
}

static void print_attention(const cJSON *r, const al_reply *reply, int layer_sel, int head_sel) {
    const al_tensor_out *att = NULL;
    for (int i = 0; i < reply->n_tensors; i++)
        if (strcmp(reply->tensors[i].name, "attentions") == 0) att = &reply->tensors[i];
    if (!att) return;
    const int NL = (int)att->shape[0], B = (int)att->shape[1], H = (int)att->shape[2];
    const int L = (int)att->shape[3];
    const cJSON *seq = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "sequences"), 0);
    const cJSON *tokens = cJSON_GetObjectItem(seq, "tokens");
    const int n = json_int(seq, "n_tokens", 0);
    const float *p = att->data;
    int row_width = 6;
    for (int i = 0; i < n; i++) {
        int len = (int)strlen(cJSON_GetArrayItem(tokens, i)->valuestring);
        if (len > row_width) row_width = len;
    }
    if (row_width > 14) row_width = 14;
    for (int l = 0; l < NL; l++) {
        if (layer_sel >= 0 && l != layer_sel) continue;
        for (int h = 0; h < H; h++) {
            if (head_sel >= 0 && h != head_sel) continue;
            printf("layer %d head %d (rows: queries, columns: keys)\n", l, h);
            printf("%*s", row_width, "");
            for (int j = 0; j < n; j++) {
                printf(" ");
                print_label(cJSON_GetArrayItem(tokens, j)->valuestring, 5, 1);
            }
            printf("\n");
            const float *m = p + (((size_t)l * B + 0) * H + h) * (size_t)L * L; /* sequence 0 */
            for (int i = 0; i < n; i++) {
                print_label(cJSON_GetArrayItem(tokens, i)->valuestring, row_width, 0);
                for (int j = 0; j < n; j++) printf(" %5.3f", m[(size_t)i * L + j]);
                printf("\n");
            }
            printf("\n");
        }
    }
}

/* ------------------------------------------------------------ --inputs FILE.safetensors */

static int read_file(const char *path, uint8_t **data, size_t *size) {
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "attnlab: %s: %s\n", path, strerror(errno));
        return 1;
    }
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap + 1);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap) break;
        uint8_t *grown = realloc(buf, cap * 2 + 1);
        if (!grown) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = grown;
        cap *= 2;
    }
    int bad = ferror(f);
    if (f != stdin) fclose(f);
    if (!buf) return fail("out of memory");
    if (bad) {
        free(buf);
        fprintf(stderr, "attnlab: %s: read error\n", path);
        return 1;
    }
    buf[n] = '\0';
    *data = buf;
    *size = n;
    return 0;
}

static int attach_inputs(cli *c, const char *path) {
    uint8_t *data;
    size_t size;
    if (read_file(path, &data, &size)) return 1;
    al_tensor_list list = {0};
    al_error err = {0};
    int code = 0;
    if (al_safetensors_read(data, size, path, &list, &err) != AL_OK) code = fail(err.message);
    for (int i = 0; !code && i < list.n; i++) {
        const al_tensor_entry *t = &list.items[i];
        size_t count = (size_t)al_tensor_numel(t);
        float *f = malloc((count ? count : 1) * sizeof(float));
        if (!f) code = fail("out of memory");
        else if (al_tensor_to_f32(t, f, &err) != AL_OK) code = fail(err.message);
        else if (t->ndim > 6) code = fail("--inputs: a tensor has more than 6 dims");
        else if (al_session_set_tensor(c->session, t->name, t->ndim, t->shape, f, &err) != AL_OK)
            code = fail(err.message);
        free(f);
    }
    al_tensor_list_free(&list);
    free(data);
    return code;
}

/* ------------------------------------------------------------ commands */

/* Runs a parsed request (a "model_dir" becomes a loaded model's id) and prints the reply JSON; takes req. */
static int run_json(cli *c, cJSON *req, const char *inputs_path, const char *out_path) {
    int code = 0;
    const char *op = json_str(req, "op", "");
    const char *dir = json_str(req, "model_dir", NULL);
    if (!dir && strcmp(op, "load_model") != 0) dir = json_str(req, "path", NULL);
    if (dir) {
        /* The CLI maps a directory to a model id, so the request the core sees is the worker's. */
        const char *id;
        code = load_dir(c, dir, json_str(req, "model", NULL), &id);
        if (!code) {
            cJSON *id_item = cJSON_CreateString(id);
            cJSON_DeleteItemFromObject(req, "model_dir");
            cJSON_DeleteItemFromObject(req, "path");
            cJSON_DeleteItemFromObject(req, "model");
            if (!id_item || !cJSON_AddItemToObject(req, "model", id_item)) code = fail("out of memory");
        }
    }
    if (!code && inputs_path) code = attach_inputs(c, inputs_path);
    al_reply reply = {0};
    cJSON *r = NULL;
    if (!code) code = run_request(c, req, &reply, &r);
    if (!code && out_path) code = write_tensors(out_path, &reply, req);
    if (!code) puts(reply.json);
    cJSON_Delete(r);
    cJSON_Delete(req);
    al_reply_free(&reply);
    return code;
}

/* The head_agreement reply for a terminal: the finding, the Spearman matrix, the overlaps of the least
 * important heads and each measure's list. */
static void print_agreement(const cJSON *r) {
    const cJSON *ms = cJSON_GetObjectItemCaseSensitive(r, "measures"), *sp = cJSON_GetObjectItemCaseSensitive(r, "spearman");
    const cJSON *least = cJSON_GetObjectItemCaseSensitive(r, "least");
    const cJSON *ov = cJSON_GetObjectItemCaseSensitive(least, "overlap");
    const int M = cJSON_GetArraySize(ms), k = json_int(least, "k", 0);
    const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(r, "config");
    if (cJSON_GetObjectItemCaseSensitive(cfg, "corpus_name")) /* a causal model's corpus (docs/agreement.md) */
        printf("%s on %s (constants, λ and gradient from %s): %d windows for the gradient, %d scored windows for the "
               "statistics\n", json_str(r, "model", ""), json_str(cfg, "corpus_name", ""),
               json_str(cfg, "constants_corpus_name", ""), json_int(r, "n_examples", 0), json_int(r, "n_validation", 0));
    else
        printf("%s on task %s: %d training examples for the gradient, %d validation examples for the statistics\n",
               json_str(r, "model", ""), json_str(cfg, "task", ""), json_int(r, "n_examples", 0), json_int(r, "n_validation", 0));
    printf("\n%s\n\nSpearman rank correlation over all heads (null: a measure with no ranking):\n%-18s", json_str(r, "finding", ""), "");
    for (int y = 0; y < M; y++) printf(" %9.9s", json_str(cJSON_GetArrayItem(ms, y), "id", ""));
    printf("\n");
    for (int x = 0; x < M; x++) {
        printf("%-18s", json_str(cJSON_GetArrayItem(ms, x), "id", ""));
        for (int y = 0; y < M; y++) {
            const cJSON *v = cJSON_GetArrayItem(cJSON_GetArrayItem(sp, x), y);
            if (cJSON_IsNumber(v)) printf(" %9.3f", v->valuedouble);
            else printf(" %9s", "null");
        }
        printf("\n");
    }
    printf("\nShared heads among each measure's %d least important:\n%-18s", k, "");
    for (int y = 0; y < M; y++) printf(" %9.9s", json_str(cJSON_GetArrayItem(ms, y), "id", ""));
    printf("\n");
    for (int x = 0; x < M; x++) {
        printf("%-18s", json_str(cJSON_GetArrayItem(ms, x), "id", ""));
        for (int y = 0; y < M; y++) {
            const cJSON *v = cJSON_GetArrayItem(cJSON_GetArrayItem(ov, x), y);
            printf(" %9d", cJSON_IsNumber(v) ? (int)v->valuedouble : -1);
        }
        printf("\n");
    }
    printf("\nLeast important heads (layer.head):\n");
    const cJSON *heads = cJSON_GetObjectItemCaseSensitive(least, "heads");
    for (int x = 0; x < M; x++) {
        const cJSON *m = cJSON_GetArrayItem(ms, x);
        const char *id = json_str(m, "id", "");
        printf("  %-17s (%s is least)", id, json_str(m, "least", ""));
        const cJSON *p;
        cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(heads, id))
            printf(" %d.%d", (int)cJSON_GetArrayItem(p, 0)->valuedouble, (int)cJSON_GetArrayItem(p, 1)->valuedouble);
        printf("\n");
    }
    printf("\ndigest %s\n", json_str(r, "digest", ""));
}

static int cmd_run(cli *c, const cli_args *a) {
    if (a->n_positional != 1) return usage_error("%s", "run needs REQUEST.json");
    uint8_t *data;
    size_t size;
    if (read_file(a->positional[0], &data, &size)) return 1;
    size_t nul_at = 0;
    char nul_key[64];
    if (al_json_find_nul((const char *)data, size, &nul_at, nul_key, sizeof nul_key)) {
        /* cJSON would cut the string there: a different request than the file holds */
        fprintf(stderr, "attnlab: %s: %s%s%s holds a NUL character at byte %zu; texts cannot contain NUL\n",
                a->positional[0], nul_key[0] ? "field '" : "a string", nul_key, nul_key[0] ? "'" : "", nul_at);
        free(data);
        return 1;
    }
    cJSON *req = cJSON_ParseWithLength((const char *)data, size);
    free(data);
    if (!req || !cJSON_IsObject(req)) {
        cJSON_Delete(req);
        fprintf(stderr, "attnlab: %s: not a JSON object\n", a->positional[0]);
        return 1;
    }
    return run_json(c, req, a->inputs_path, a->out_path);
}

static int read_whole(const char *path, char **out, size_t *len);

/* ------------------------------------------------------------ ops: one command from each op's field table */

/* Every op of the core is a command, `attnlab OP MODEL_DIR [TEXT] --FIELD VALUE ...`, read from the fields the
 * "version" op publishes (src/api/request_fields.c): a flag is a field (dashes or underscores; --probe.lr for the
 * field "lr" of "probe"), its value converted by the field's kind, and `attnlab OP --help` lists them. The ops
 * that manage a session (it lives for one command here) are left to `attnlab run`. */
static const struct {
    const char *command, *op;
} k_op_aliases[] = {{"importance", "head_importance"}, {"agreement", "head_agreement"}};
static const char *const k_session_ops[] = {"load_model", "unload_model", "models", NULL};

/* The core's "version" reply (its ops and their fields), parsed; NULL when out of memory. */
static cJSON *version_reply(al_session *s) {
    al_reply reply = {0};
    cJSON *r = al_session_run(s, "{\"op\":\"version\"}", NULL, &reply) == AL_OK ? cJSON_Parse(reply.json) : NULL;
    al_reply_free(&reply);
    return r;
}

static const cJSON *find_by_name(const cJSON *list, const char *name) {
    for (const cJSON *it = list ? list->child : NULL; it; it = it->next)
        if (!strcmp(json_str(it, "name", ""), name)) return it;
    return NULL;
}

/* The op a command names: an alias, else the op's name with dashes for underscores; NULL when none. */
static const cJSON *op_of_command(const cJSON *version, const char *command) {
    char name[64];
    snprintf(name, sizeof name, "%s", command);
    for (size_t i = 0; i < sizeof k_op_aliases / sizeof k_op_aliases[0]; i++)
        if (!strcmp(command, k_op_aliases[i].command)) snprintf(name, sizeof name, "%s", k_op_aliases[i].op);
    for (char *p = name; *p; p++)
        if (*p == '-') *p = '_';
    for (int i = 0; k_session_ops[i]; i++)
        if (!strcmp(name, k_session_ops[i])) return NULL;
    return find_by_name(cJSON_GetObjectItem(version, "ops"), name);
}

/* The command that runs an op (the inverse of op_of_command). */
static void command_of_op(const char *op, char *out, size_t size) {
    snprintf(out, size, "%s", op);
    for (size_t i = 0; i < sizeof k_op_aliases / sizeof k_op_aliases[0]; i++)
        if (!strcmp(op, k_op_aliases[i].op)) snprintf(out, size, "%s", k_op_aliases[i].command);
    for (char *p = out; *p; p++)
        if (*p == '_') *p = '-';
}

static const cJSON *op_field(const cJSON *op, const char *name) { return find_by_name(cJSON_GetObjectItem(op, "fields"), name); }

static int is_attention(const char *op) { return !strcmp(op, "attention") || !strcmp(op, "forward"); }

/* The first line of an op's usage: `attnlab papa MODEL_DIR [--FIELD VALUE ...] ...`. */
static void print_op_usage_line(const cJSON *op) {
    const char *name = json_str(op, "name", "");
    char command[64];
    command_of_op(name, command, sizeof command);
    printf("  attnlab %s%s%s", command, op_field(op, "model") ? " MODEL_DIR" : "", op_field(op, "text") ? " TEXT" : "");
    if (op_field(op, "text_pair")) printf(" [--pair TEXT_B]");
    if (is_attention(name)) printf(" [--layer L] [--head H]");
    if (op_field(op, "task")) printf(" [--task-file F | --train-file F [--validation-file F]]");
    if (op_field(op, "corpus")) printf(" [--text-file F]");
    if (op_field(op, "constants_corpus")) printf(" [--constants-file F]");
    printf(" [--FIELD VALUE ...] [--out FILE.safetensors] [--json] [--request]\n      %s\n", json_str(op, "summary", ""));
}

/* "--import.skip-bad-rows": the flag of a field, dashes for underscores. */
static void flag_of_field(const char *field, char *out, size_t size) {
    snprintf(out, size, "--%s", field);
    for (char *p = out; *p; p++)
        if (*p == '_') *p = '-';
}

static void print_names(const cJSON *names) {
    for (const cJSON *n = names ? names->child : NULL; n; n = n->next)
        printf("%s%s", n == names->child ? "" : ", ", cJSON_IsString(n) ? n->valuestring : "?");
}

/* `attnlab OP --help`: the usage line, then every field with its kind, range, names, default and help. */
static void print_op_help(const cJSON *op) {
    fputs("usage:\n", stdout);
    print_op_usage_line(op);
    printf("\nfields of the '%s' request (the \"version\" op publishes them; docs/api.md):\n", json_str(op, "name", ""));
    for (const cJSON *f = cJSON_GetObjectItem(op, "fields")->child; f; f = f->next) {
        const char *name = json_str(f, "name", ""), *kind = json_str(f, "kind", "");
        if (!strcmp(name, "model")) continue; /* MODEL_DIR */
        char flag[96], value[64];
        flag_of_field(name, flag, sizeof flag);
        const char *items = json_str(f, "items", "");
        if (!strcmp(kind, "array")) snprintf(value, sizeof value, "%s", !strcmp(items, "int") || !strcmp(items, "number") ? "X,X,..." : !strcmp(items, "enum") ? "NAME,..." : !strcmp(items, "string") ? "A,B,..." : "JSON");
        else if (!strcmp(kind, "object")) snprintf(value, sizeof value, "JSON");
        else if (!strcmp(kind, "bool")) snprintf(value, sizeof value, "true|false");
        else if (!strcmp(kind, "int")) snprintf(value, sizeof value, "N");
        else if (!strcmp(kind, "number")) snprintf(value, sizeof value, "X");
        else if (!strcmp(kind, "enum")) snprintf(value, sizeof value, "NAME");
        else snprintf(value, sizeof value, "TEXT");
        char both[160];
        snprintf(both, sizeof both, "%s %s", flag, value);
        printf("  %-34s %s", both, json_str(f, "help", ""));
        const cJSON *min = cJSON_GetObjectItem(f, "min"), *max = cJSON_GetObjectItem(f, "max");
        if (cJSON_IsNumber(min) && cJSON_IsNumber(max)) printf("; in [%.10g, %.10g]", min->valuedouble, max->valuedouble);
        const cJSON *def = cJSON_GetObjectItem(f, "default");
        if (def) {
            char *text = cJSON_PrintUnformatted(def);
            printf("; default %s", text ? text : "?");
            free(text);
        }
        printf("\n");
        const cJSON *names = cJSON_GetObjectItem(f, "enum");
        if (names) {
            printf("  %-34s one of: ", "");
            print_names(names);
            printf("\n");
        }
    }
    printf("\nA list is comma-separated or JSON; an object is JSON. --pair TEXT_B is --text-pair.");
    if (op_field(op, "task"))
        printf(" --task-file reads a task file (attnlab's JSONL) into task_jsonl; --train-file and --validation-file\n"
               "read a GLUE TSV, CoNLL-2003, CSV or JSONL file into import.");
    if (is_attention(json_str(op, "name", ""))) printf(" --layer and --head pick the heads printed.");
    if (op_field(op, "corpus"))
        printf(" --text-file reads a text file (documents separated by blank lines) or a JSONL file (\"text\"\n"
               "fields) into corpus: its cross-entropy with a 95%% interval over documents.");
    if (op_field(op, "constants_corpus"))
        printf(" --constants-file reads the text a causal model's constants (and lambda, and the gradient) come from\n"
               "into constants_corpus, kept apart from the scored text.");
    printf("\n--out writes the reply's tensors with the request and reply; --request prints the request (for\n"
           "`attnlab run`); --json prints the reply JSON.\n\n");
}

/* A field's value from the command line, by the field's kind (JSON text is taken as JSON where a list or an
 * object is expected). NULL when it does not read as that kind. */
static cJSON *field_value(const cJSON *f, const char *value) {
    const char *kind = json_str(f, "kind", ""), *items = json_str(f, "items", "");
    char *end;
    if (!strcmp(kind, "string") || !strcmp(kind, "enum")) return cJSON_CreateString(value);
    if (!strcmp(kind, "int") || !strcmp(kind, "number")) {
        double v = strtod(value, &end);
        return *end || end == value ? NULL : cJSON_CreateNumber(v);
    }
    if (!strcmp(kind, "bool")) {
        if (!strcmp(value, "true") || !strcmp(value, "1")) return cJSON_CreateTrue();
        if (!strcmp(value, "false") || !strcmp(value, "0")) return cJSON_CreateFalse();
        return NULL;
    }
    if (!strcmp(kind, "object") || (!strcmp(kind, "array") && value[0] == '[')) {
        cJSON *v = cJSON_Parse(value);
        return v; /* the core checks its kind and says which field is at fault */
    }
    if (!strcmp(kind, "array")) { /* "a,b,c": names or numbers by the items' kind */
        const int numbers = !strcmp(items, "int") || !strcmp(items, "number");
        cJSON *arr = cJSON_CreateArray();
        const char *p = value;
        while (arr && *p) {
            const char *comma = strchr(p, ',');
            const size_t n = comma ? (size_t)(comma - p) : strlen(p);
            char *tok = malloc(n + 1);
            if (!tok) break;
            memcpy(tok, p, n);
            tok[n] = 0;
            double v = strtod(tok, &end);
            cJSON *item = numbers ? (*end || end == tok ? NULL : cJSON_CreateNumber(v)) : cJSON_CreateString(tok);
            free(tok);
            if (!item) {
                cJSON_Delete(arr);
                return NULL;
            }
            cJSON_AddItemToArray(arr, item);
            p = comma ? comma + 1 : p + n;
        }
        return arr;
    }
    /* several forms (e.g. "cls" or a position): a number or JSON when it reads as one, else the text */
    cJSON *v = cJSON_Parse(value);
    return v ? v : cJSON_CreateString(value);
}

/* Sets req[name] (req[parent][key] for "parent.key"), replacing an earlier value. */
static int set_field(cJSON *req, const char *name, cJSON *value) {
    cJSON *target = req;
    const char *dot = strchr(name, '.'), *key = name;
    if (dot) {
        char parent[64];
        snprintf(parent, sizeof parent, "%.*s", (int)(dot - name), name);
        target = cJSON_GetObjectItemCaseSensitive(req, parent);
        if (!cJSON_IsObject(target)) {
            cJSON_DeleteItemFromObjectCaseSensitive(req, parent);
            target = cJSON_AddObjectToObject(req, parent);
        }
        key = dot + 1;
    }
    if (!target) return fail("out of memory");
    cJSON_DeleteItemFromObjectCaseSensitive(target, key);
    return cJSON_AddItemToObject(target, key, value) ? 0 : fail("out of memory");
}

/* A file's text into req[key] and its name into req[name_key] (--task-file, --train-file, --validation-file). */
static int set_file(cJSON *req, const char *path, const char *key, const char *name_key) {
    char *text;
    size_t len;
    if (!read_whole(path, &text, &len)) {
        fprintf(stderr, "attnlab: %s: cannot read\n", path);
        return 1;
    }
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    int code = set_field(req, key, cJSON_CreateString(text));
    if (!code) code = set_field(req, name_key, cJSON_CreateString(base));
    free(text);
    return code;
}

/* req with `key`: `value` second, after "op" (the order a reader expects: op, model, then the fields); takes req. */
static cJSON *with_model(cJSON *req, const char *key, const char *value) {
    cJSON *out = cJSON_CreateObject();
    if (out) {
        cJSON_AddItemToObject(out, "op", cJSON_DetachItemFromObject(req, "op"));
        cJSON_AddStringToObject(out, key, value);
        while (req->child) {
            cJSON *it = req->child;
            char *k = it->string;
            it->string = NULL;
            cJSON_AddItemToObject(out, k, cJSON_DetachItemViaPointer(req, it));
            free(k);
        }
    }
    cJSON_Delete(req);
    return out;
}

typedef struct op_args {
    const char *model_dir, *model_b_dir, *out_path, *inputs_path;
    int json, request_only;
    int layer, head; /* attention: the heads printed (-1: all) */
    int has_text;
} op_args;

/* The command line of an op command into its request; -1 when parsed, else the exit code. */
static int parse_op_args(int argc, char **argv, const cJSON *op, cJSON *req, op_args *a) {
    const char *name = json_str(op, "name", "");
    int options_ended = 0, n_positional = 0;
    for (int i = 2; i < argc; i++) {
        const char *arg = argv[i];
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (!options_ended && !strcmp(arg, "--")) {
            options_ended = 1;
            continue;
        }
        if (options_ended || strncmp(arg, "--", 2) != 0) { /* MODEL_DIR, then TEXT */
            if (n_positional == 0 && op_field(op, "model")) a->model_dir = arg;
            else if (n_positional <= 1 && !a->has_text && op_field(op, "text")) {
                if (set_field(req, "text", cJSON_CreateString(arg))) return 1;
                a->has_text = 1;
            } else return usage_error("unexpected argument '%s'", arg);
            n_positional++;
            continue;
        }
        if (!strcmp(arg, "--json")) a->json = 1;
        else if (!strcmp(arg, "--progress")) continue; /* main reads it */
        else if (!strcmp(arg, "--request")) a->request_only = 1;
        else {
            char key[96];
            snprintf(key, sizeof key, "%s", arg + 2);
            for (char *p = key; *p; p++)
                if (*p == '-') *p = '_';
            const cJSON *f = !strcmp(key, "model") ? NULL : op_field(op, key);
            static const char *const own[] = {"out", "inputs", "pair", "layer", "head", "task_file", "train_file",
                                              "validation_file", "text_file", "constants_file", NULL};
            int is_own = 0;
            for (int k = 0; own[k]; k++) is_own |= !strcmp(key, own[k]);
            if (!f && !is_own) return usage_error("unknown option '%s' (see attnlab COMMAND --help)", arg);
            if (!value) return usage_error("option %s needs a value", arg);
            i++;
            int code = 0;
            if (!strcmp(key, "out")) a->out_path = value;
            else if (!strcmp(key, "model_b") && f) a->model_b_dir = value; /* a second model directory */
            else if (!strcmp(key, "inputs")) a->inputs_path = value;
            else if (!strcmp(key, "pair") && op_field(op, "text_pair")) code = set_field(req, "text_pair", cJSON_CreateString(value));
            else if ((!strcmp(key, "layer") || !strcmp(key, "head")) && is_attention(name)) {
                int *sel = !strcmp(key, "layer") ? &a->layer : &a->head;
                if (!parse_int(value, 0, sel)) return usage_error(!strcmp(key, "layer") ? "--layer needs an integer >= 0, not '%s'" : "--head needs an integer >= 0, not '%s'", value);
            } else if (!strcmp(key, "task_file") && op_field(op, "task")) code = set_file(req, value, "task_jsonl", "task_jsonl_name");
            else if (!strcmp(key, "train_file") && op_field(op, "task")) code = set_file(req, value, "import.train", "import.train_name");
            else if (!strcmp(key, "validation_file") && op_field(op, "task")) code = set_file(req, value, "import.validation", "import.validation_name");
            else if (!strcmp(key, "text_file") && op_field(op, "corpus")) code = set_file(req, value, "corpus", "corpus_name");
            else if (!strcmp(key, "constants_file") && op_field(op, "constants_corpus"))
                code = set_file(req, value, "constants_corpus", "constants_corpus_name");
            else if (!f) return usage_error("unknown option '%s' (see attnlab COMMAND --help)", arg);
            else {
                cJSON *v = field_value(f, value);
                if (!v) {
                    fprintf(stderr, "attnlab: %s needs %s, not '%s'\n(see attnlab COMMAND --help)\n", arg,
                            !strcmp(json_str(f, "kind", ""), "bool") ? "true or false" : !strcmp(json_str(f, "kind", ""), "array") ? "a list of numbers" : "a number", value);
                    return 2;
                }
                code = set_field(req, key, v);
                if (!strcmp(key, "text")) a->has_text = 1;
            }
            if (code) return code;
        }
    }
    if (op_field(op, "model") && !a->model_dir)
        return usage_error("%s needs MODEL_DIR", op_field(op, "task") ? "this command (then --task ID or --task-file FILE)" : "this command");
    /* an op that reads a text needs one: TEXT, or a field that stands for it */
    static const char *const sources[] = {"text", "texts", "words", "input_ids", "import", "corpus", NULL};
    int has_source = 0;
    for (int i = 0; sources[i]; i++) has_source |= cJSON_GetObjectItem(req, sources[i]) != NULL;
    if (op_field(op, "text") && !has_source) return usage_error("%s", "this command needs MODEL_DIR and TEXT");
    /* --out writes the averaged constants unless --outputs names what to write (docs/papa.md, "Storage") */
    if (a->out_path && !strcmp(name, "papa") && !cJSON_GetObjectItem(req, "outputs"))
        set_field(req, "outputs", cJSON_Parse("[\"constants\"]"));
    return -1;
}

/* Runs an op command: parses, loads MODEL_DIR, runs the request, writes --out, prints the reply. */
static int cmd_op(cli *c, int argc, char **argv, const cJSON *op) {
    const char *name = json_str(op, "name", "");
    op_args a = {NULL, NULL, NULL, NULL, 0, 0, -1, -1, 0};
    cJSON *req = cJSON_CreateObject();
    if (!req || !cJSON_AddStringToObject(req, "op", name)) return fail("out of memory");
    int code = parse_op_args(argc, argv, op, req, &a);
    if (code >= 0) {
        cJSON_Delete(req);
        return code;
    }
    if (a.request_only) { /* the request file that `attnlab run` reproduces the result from */
        if (a.model_b_dir) set_field(req, "model_b", cJSON_CreateString(a.model_b_dir));
        if (a.model_dir) req = with_model(req, "model_dir", a.model_dir);
        char *text = req ? cJSON_Print(req) : NULL;
        if (text) puts(text);
        free(text);
        cJSON_Delete(req);
        return text ? 0 : fail("out of memory");
    }
    const char *id = NULL;
    if (a.model_dir && load_dir(c, a.model_dir, NULL, &id)) {
        cJSON_Delete(req);
        return 1;
    }
    const char *id_b = NULL;
    if (a.model_b_dir && load_dir(c, a.model_b_dir, NULL, &id_b)) {
        cJSON_Delete(req);
        return 1;
    }
    if (id_b) set_field(req, "model_b", cJSON_CreateString(id_b));
    if (id) req = with_model(req, "model", id);
    if (!req) return fail("out of memory");
    code = a.inputs_path ? attach_inputs(c, a.inputs_path) : 0;
    al_reply reply = {0};
    cJSON *r = NULL;
    if (!code) code = run_request(c, req, &reply, &r);
    if (!code && is_attention(name)) {
        int NL = json_int(r, "n_layers", 0), H = json_int(r, "n_heads", 0);
        if (a.layer >= NL || a.head >= H) {
            fprintf(stderr, "attnlab: --layer/--head out of range: the model has %d layers of %d heads\n", NL, H);
            code = 2;
        }
    }
    if (!code && a.out_path) code = write_tensors(a.out_path, &reply, req);
    if (!code) { /* a terminal form where there is one, else the reply JSON */
        if (!a.json && !strcmp(name, "info")) print_info(r);
        else if (!a.json && !strcmp(name, "tokenize")) print_tokens(r);
        else if (!a.json && is_attention(name)) print_attention(r, &reply, a.layer, a.head);
        else if (!a.json && !strcmp(name, "head_agreement")) print_agreement(r);
        else if (!strcmp(name, "info") || !strcmp(name, "tokenize") || is_attention(name) || !strcmp(name, "value_zeroing"))
            print_json(r);
        else puts(reply.json);
    }
    cJSON_Delete(r);
    cJSON_Delete(req);
    al_reply_free(&reply);
    return code;
}

/* ------------------------------------------------------------ usage */

static void print_usage(void) {
    fputs("usage: attnlab COMMAND ...\n\n", stdout);
    al_session *s = al_session_new();
    cJSON *version = s ? version_reply(s) : NULL;
    const cJSON *ops = cJSON_GetObjectItem(version, "ops");
    for (const cJSON *op = ops ? ops->child : NULL; op; op = op->next) {
        char command[64];
        command_of_op(json_str(op, "name", ""), command, sizeof command);
        if (op_of_command(version, command) == op && cJSON_IsTrue(cJSON_GetObjectItem(op, "worker")))
            print_op_usage_line(op);
    }
    for (int i = 0; i < N_COMMANDS; i++) fputs(k_commands[i].text, stdout);
    fputs("\n`attnlab COMMAND --help` lists a command's fields; every op of the core is a command (`attnlab version`\n"
          "lists them).\n", stdout);
    fputs(k_options, stdout);
    cJSON_Delete(version);
    al_session_free(s);
}

/* `attnlab COMMAND ... --help` (or -h, before any "--"): that command's usage on stdout. 1 when printed. */
static int command_help(int argc, char **argv) {
    if (argc < 3) return 0;
    int asked = 0;
    for (int i = 2; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) asked = 1;
    if (!asked) return 0;
    for (int i = 0; i < N_COMMANDS; i++)
        if (!strcmp(argv[1], k_commands[i].name)) {
            fputs("usage:\n", stdout);
            fputs(k_commands[i].text, stdout);
            fputs("\n", stdout);
            fputs(k_options, stdout);
            return 1;
        }
    al_session *s = al_session_new();
    cJSON *version = s ? version_reply(s) : NULL;
    const cJSON *op = op_of_command(version, argv[1]);
    if (op) {
        print_op_help(op);
        fputs(k_options, stdout);
    }
    cJSON_Delete(version);
    al_session_free(s);
    return op != NULL;
}

/* ------------------------------------------------------------ vocab and pretrain (own argument parsing) */

/* al_read_file without the message: the callers say what could not be read. */
static int read_whole(const char *path, char **out, size_t *len) {
    return al_read_file(path, out, len, NULL) == AL_OK;
}

/* [UNK] share of the tokens of a text file under a vocab.txt (lines tokenised one by one). */
static int unk_rate(const char *vocab_path, const char *text_path, double *rate, long long *n_tokens) {
    char *v, *t;
    size_t vl, tl;
    if (!read_whole(vocab_path, &v, &vl)) return 0;
    if (!read_whole(text_path, &t, &tl)) {
        free(v);
        return 0;
    }
    al_error err;
    al_fileset *fs = al_fileset_new();
    al_tokenizer *tok = NULL;
    int ok = fs && !al_fileset_add(fs, "vocab.txt", v, vl, 1, &err) && !al_tokenizer_load(fs, &tok, &err);
    al_mlm_corpus c;
    ok = ok && !al_mlm_corpus_build(tok, t, tl, 1 << 20, 0, &c, &err);
    if (ok) {
        *rate = c.n_line_tokens ? (double)c.n_unk / (double)c.n_line_tokens : 0.0;
        *n_tokens = c.n_line_tokens;
        al_mlm_corpus_free(&c);
    }
    al_tokenizer_free(tok);
    al_fileset_free(fs);
    free(v);
    free(t);
    return ok;
}

static int cmd_vocab(int argc, char **argv) {
    const char *corpus = NULL, *out = NULL, *heldout = NULL;
    al_vocab_learn_options o = al_vocab_learn_default_options();
    for (int i = 1; i < argc; i++) {
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (argv[i][0] == '-' && argv[i][1] == '-' && !value) return usage_error("%s needs a value", argv[i]);
        if (strcmp(argv[i], "--size") == 0) {
            if (!parse_int(value, 6, &o.vocab_size)) return usage_error("bad --size '%s'", value);
            i++;
        } else if (strcmp(argv[i], "--min-frequency") == 0) {
            if (!parse_int(value, 1, &o.min_frequency)) return usage_error("bad --min-frequency '%s'", value);
            i++;
        } else if (strcmp(argv[i], "--alphabet") == 0) {
            if (!parse_int(value, 1, &o.alphabet_limit)) return usage_error("bad --alphabet '%s'", value);
            i++;
        } else if (strcmp(argv[i], "--out") == 0) {
            out = argv[++i];
        } else if (strcmp(argv[i], "--heldout") == 0) {
            heldout = argv[++i];
        } else if (argv[i][0] == '-') {
            return usage_error("unknown option '%s'", argv[i]);
        } else if (!corpus) {
            corpus = argv[i];
        } else {
            return usage_error("unexpected argument '%s'", argv[i]);
        }
    }
    if (!corpus || !out) return usage_error("%s", "usage: attnlab vocab CORPUS.txt --out vocab.txt [--size N]");
    char *text;
    size_t len;
    if (!read_whole(corpus, &text, &len)) return fail("cannot read the corpus file");
    al_error err;
    char *vocab = NULL;
    size_t vlen = 0;
    al_vocab_learn_stats st;
    al_status s = al_vocab_learn(text, len, &o, &vocab, &vlen, &st, &err);
    free(text);
    if (s) return fail(err.message);
    FILE *f = fopen(out, "wb");
    int ok = f && fwrite(vocab, 1, vlen, f) == vlen;
    if (f && fclose(f)) ok = 0;
    free(vocab);
    if (!ok) return fail("cannot write the vocabulary file");
    fprintf(stderr, "vocab: %lld words (%d distinct), alphabet %d, %d merges, %d lines skipped -> %s\n",
            st.n_words, st.n_word_types, st.n_alphabet, st.n_merges, st.n_lines_skipped, out);
    if (heldout) {
        double rate;
        long long n;
        if (!unk_rate(out, heldout, &rate, &n)) return fail("cannot tokenize the held-out file");
        printf("heldout_unk_rate %.6f (%lld tokens)\n", rate, n);
    }
    return 0;
}

static void print_log_line(void *user, const char *line) {
    (void)user;
    fprintf(stderr, "%s\n", line);
    fflush(stderr);
}

/* --key value for any train-config key (dashes or underscores), a number or a string. */
static int set_config_value(al_pretrain_config *cfg, const char *flag, const char *value) {
    static const char *const aliases[][2] = {{"out", "out_dir"}, {"batch", "batch_size"}, {"warmup", "warmup_steps"}};
    char key[64];
    snprintf(key, sizeof key, "%s", flag + 2);
    for (char *p = key; *p; p++)
        if (*p == '-') *p = '_';
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcmp(key, aliases[i][0]) == 0) snprintf(key, sizeof key, "%s", aliases[i][1]);
    cJSON *j = cJSON_CreateObject();
    char *end;
    double num = strtod(value, &end);
    if (*value && !*end) cJSON_AddNumberToObject(j, key, num);
    else cJSON_AddStringToObject(j, key, value);
    char *text = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    al_error err;
    al_status s = text ? al_pretrain_config_parse(text, strlen(text), "command line", cfg, &err) : AL_ERR_OOM;
    free(text);
    if (s) fprintf(stderr, "attnlab: %s\n", err.message);
    return s == AL_OK;
}

/* SIGTERM or SIGINT ends a pretraining run at the end of its current step, with a checkpoint, so a
 * stop costs no finished step (docs/pretraining.md, "Stopping and resuming"). */
static volatile int g_stop_training;
static void stop_training(int sig) {
    (void)sig;
    g_stop_training = 1;
}

static int cmd_pretrain(int argc, char **argv) {
    al_pretrain_config cfg = al_pretrain_default_config();
    al_pretrain_hooks hooks;
    memset(&hooks, 0, sizeof hooks);
    hooks.log = print_log_line;
    hooks.cancel = &g_stop_training;
    signal(SIGTERM, stop_training);
    signal(SIGINT, stop_training);
    const char *resume = NULL;
    /* the config file first, so that flags override it whatever their order */
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--config") == 0) {
            char *text;
            size_t len;
            al_error err;
            if (!read_whole(argv[i + 1], &text, &len)) return fail("cannot read the config file");
            al_status s = al_pretrain_config_parse(text, len, argv[i + 1], &cfg, &err);
            free(text);
            if (s) return fail(err.message);
        }
    for (int i = 1; i < argc; i++) {
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strncmp(argv[i], "--", 2) != 0) return usage_error("unexpected argument '%s'", argv[i]);
        if (!value) return usage_error("%s needs a value", argv[i]);
        i++;
        if (strcmp(argv[i - 1], "--config") == 0) continue;
        if (strcmp(argv[i - 1], "--resume") == 0) resume = value;
        else if (strcmp(argv[i - 1], "--stop-after") == 0) hooks.stop_after = atoi(value);
        else if (strcmp(argv[i - 1], "--max-minutes") == 0) hooks.max_seconds = 60.0 * atof(value);
        else if (!set_config_value(&cfg, argv[i - 1], value)) return 2;
    }
    al_error err;
    al_pretrain_result r;
    al_status s = al_pretrain_run(&cfg, resume, &hooks, &r, &err);
    if (s) return fail(err.message);
    if (g_stop_training && r.steps_done < cfg.steps)
        fprintf(stderr, "attnlab: stopped by a signal after step %d of %d; resume with --resume %s/checkpoint\n",
                r.steps_done, cfg.steps, cfg.out_dir);
    return 0;
}

/* ------------------------------------------------------------ findings */

static const cJSON *field(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

static double number_at(const cJSON *rows, int x, int y) {
    const cJSON *v = cJSON_GetArrayItem(cJSON_GetArrayItem(rows, x), y);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* The rule of src/methods/measures/agreement_finding.c on a head_agreement reply's numbers, so the model cards
 * and the README are written by the engine's reading (scripts/agreement_table.py). */
static int cmd_findings(int argc, char **argv) {
    if (argc != 2) return usage_error("%s", "findings needs one REPLY.json");
    char *text = NULL;
    size_t len = 0;
    if (!read_whole(argv[1], &text, &len)) return fail("cannot read the reply file");
    cJSON *r = cJSON_ParseWithLength(text, len);
    free(text);
    const cJSON *ms = field(r, "measures"), *sp = field(r, "spearman"), *least = field(r, "least"), *shape = field(r, "shape");
    const int M = cJSON_GetArraySize(ms);
    if (!r || M < 2 || M > AL_FINDING_MAX_MEASURES || cJSON_GetArraySize(sp) != M || !shape) {
        cJSON_Delete(r);
        return fail("findings: the file is not a head_agreement reply (measures, spearman, shape)");
    }
    al_agreement_measure m[AL_FINDING_MAX_MEASURES];
    double rho[AL_FINDING_MAX_MEASURES * AL_FINDING_MAX_MEASURES];
    int overlap[AL_FINDING_MAX_MEASURES * AL_FINDING_MAX_MEASURES];
    for (int x = 0; x < M; x++) {
        const cJSON *e = cJSON_GetArrayItem(ms, x);
        const char *words = json_str(e, "words", NULL);
        m[x] = (al_agreement_measure){json_str(e, "id", ""), words ? words : json_str(e, "id", ""),
                                      !strcmp(json_str(e, "least", "low"), "high") ? -1 : 1};
        for (int y = 0; y < M; y++) {
            rho[x * M + y] = number_at(sp, x, y);
            overlap[x * M + y] = (int)number_at(field(least, "overlap"), x, y);
        }
    }
    const int n = json_int(shape, "n_layers", 0) * json_int(shape, "n_heads", 0);
    /* lambda's grid when the reply has it (a reply of the op), else the range its findings recorded; without
     * the other grids a null rho's reason is the general one */
    double *grid = NULL, range = NAN;
    const cJSON *lg = field(field(r, "grids"), m[0].id);
    if (lg && n > 0 && (grid = calloc((size_t)n, sizeof(double)))) {
        const int H = json_int(shape, "n_heads", 1);
        for (int i = 0; i < n; i++) grid[i] = number_at(lg, i / H, i % H);
    } else if (cJSON_IsNumber(field(field(field(r, "findings"), "lambda"), "range"))) {
        range = field(field(field(r, "findings"), "lambda"), "range")->valuedouble;
    }
    if (grid) { /* lambda's spread, as the op measures it from its grid */
        double lo = INFINITY, hi = -INFINITY;
        for (int i = 0; i < n; i++)
            if (isfinite(grid[i])) lo = grid[i] < lo ? grid[i] : lo, hi = grid[i] > hi ? grid[i] : hi;
        range = hi >= lo ? hi - lo : NAN;
    }
    const al_agreement_input in = {m, M, n, rho, NULL, json_int(least, "k", 0), field(least, "overlap") ? overlap : NULL,
                                   range, NULL};
    al_agreement_findings *f = calloc(1, sizeof *f);
    if (!f || al_agreement_findings_make(&in, f)) {
        free(f), free(grid), cJSON_Delete(r);
        return fail("findings: out of memory");
    }
    cJSON *out = cJSON_CreateObject(), *pairs = cJSON_AddArrayToObject(out, "pairs"), *ovs = cJSON_AddArrayToObject(out, "overlaps");
    cJSON_AddStringToObject(out, "finding", f->sentence);
    cJSON_AddStringToObject(out, "verdict", al_finding_names[f->verdict]);
    cJSON_AddStringToObject(out, "p_method", f->exact ? "exact" : "permutation");
    for (int i = 0; i < f->n_pairs; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "a", m[f->pairs[i].a].id);
        cJSON_AddStringToObject(e, "b", m[f->pairs[i].b].id);
        cJSON_AddNumberToObject(e, "rho", f->pairs[i].rho_importance);
        cJSON_AddNumberToObject(e, "p_holm", f->pairs[i].p_holm);
        cJSON_AddStringToObject(e, "verdict", al_pair_verdict_names[f->pairs[i].verdict]);
        cJSON_AddItemToArray(pairs, e);
    }
    for (int i = 0; i < f->n_overlaps; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "b", m[f->overlaps[i].b].id);
        cJSON_AddNumberToObject(e, "shared", f->overlaps[i].shared);
        cJSON_AddNumberToObject(e, "expected", f->overlaps[i].expected);
        cJSON_AddNumberToObject(e, "p_holm", f->overlaps[i].p_holm);
        cJSON_AddStringToObject(e, "verdict", al_overlap_verdict_names[f->overlaps[i].verdict]);
        cJSON_AddItemToArray(ovs, e);
    }
    char *printed = cJSON_Print(out);
    printf("%s\n", printed ? printed : "{}");
    cJSON_free(printed), cJSON_Delete(out), free(f), free(grid), cJSON_Delete(r);
    return 0;
}

/* ------------------------------------------------------------ export */

static int cmd_export(int argc, char **argv) {
    if (argc < 3) return usage_error("%s", "export needs MODEL_DIR and OUT_DIR");
    const char *src = argv[1], *dst = argv[2], *dtype = "F16", *vocab = NULL;
    double shard_mb = 0.0;
    for (int i = 3; i < argc; i++) {
        if (i + 1 >= argc) return usage_error("option '%s' needs a value", argv[i]);
        if (strcmp(argv[i], "--dtype") == 0) dtype = argv[++i];
        else if (strcmp(argv[i], "--vocab") == 0) vocab = argv[++i];
        else if (strcmp(argv[i], "--shard-mb") == 0) shard_mb = atof(argv[++i]);
        else return usage_error("unknown export option '%s'", argv[i]);
    }
    if (shard_mb < 0.0) return usage_error("%s", "--shard-mb must be >= 0");
    al_error err;
    al_fileset *fs = al_fileset_new();
    al_model *model = NULL;
    if (!fs) return fail("out of memory");
    al_status s = al_fileset_add_dir(fs, src, &err);
    if (!s) s = al_model_load(fs, &model, &err);
    if (!s && vocab && !al_model_is_causal(model))
        s = al_err(&err, AL_ERR_INVALID, "--vocab: %s is not a causal language model (its tokenizer files travel "
                   "with it)", src);
    if (!s) s = al_export_weights(dst, model, dtype, (size_t)(shard_mb * 1048576.0), &err);
    /* a decoder checkpoint's tokenizer from its training vocabulary (docs/decoder_pretraining.md) */
    if (!s && vocab) s = al_save_decoder_tokenizer(dst, model, vocab, &err);
    /* config and tokenizer files travel unchanged */
    const char *keep[9] = {"config.json"};
    const int n_tok = fs ? al_tokenizer_files(fs, keep + 1, 8) : 0;
    const size_t n_keep = 1 + (size_t)(n_tok < 8 ? n_tok : 8);
    for (size_t k = 0; !s && k < n_keep; k++) {
        size_t size = 0;
        const uint8_t *data = al_fileset_get(fs, keep[k], &size);
        if (!data) continue;
        char path[1200];
        snprintf(path, sizeof path, "%s/%s", dst, keep[k]);
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(data, 1, size, f) != size) s = al_err(&err, AL_ERR_IO, "%s: cannot write", path);
        if (f && fclose(f) != 0 && !s) s = al_err(&err, AL_ERR_IO, "%s: write failed", path);
    }
    al_model_free(model);
    al_fileset_free(fs);
    if (s) return fail(err.message);
    printf("wrote %s (%s weights)\n", dst, dtype);
    return 0;
}

/* Takes "--threads N" out of argv (any command) into *threads; 0 when absent, -1 when malformed. */
static int take_threads(int *argc, char **argv, int *threads) {
    *threads = 0;
    int w = 1;
    int options_ended = 0;
    for (int i = 1; i < *argc; i++) {
        if (strcmp(argv[i], "--") == 0) options_ended = 1; /* kept: parse_args sees it too */
        if (!options_ended && strcmp(argv[i], "--threads") == 0) {
            if (i + 1 >= *argc || !parse_int(argv[i + 1], 1, threads) || *threads > al_threads_max()) {
                usage_error("--threads needs an integer in [1, 64], not '%s'", i + 1 < *argc ? argv[i + 1] : "");
                return -1;
            }
            i++;
            continue;
        }
        argv[w++] = argv[i];
    }
    *argc = w;
    return 0;
}

/* A kernel path forced by AL_KERNELS (docs/kernels.md) that this build and CPU lack: the default runs, and
 * a benchmark or test that meant to force a path must not pass on another one unnoticed. */
static void warn_unknown_kernel_path(void) {
    const char *want = getenv("AL_KERNELS");
    if (!want || !*want) return;
    const char *names[4];
    const int n = al_kernels_paths(names, 4);
    for (int i = 0; i < n && i < 4; i++)
        if (strcmp(names[i], want) == 0) return;
    fprintf(stderr, "attnlab: AL_KERNELS=%s is not a kernel path of this build and CPU; using %s\n", want,
            al_kernels_path());
}

int main(int argc, char **argv) {
    if (command_help(argc, argv)) return 0;
    warn_unknown_kernel_path();
    int threads = 0;
    if (take_threads(&argc, argv, &threads)) return 2;
    if (threads > 0 && argc > 1 &&
        (strcmp(argv[1], "pretrain") == 0 || strcmp(argv[1], "vocab") == 0 || strcmp(argv[1], "export") == 0))
        return usage_error("--threads does not apply to '%s' (pretraining runs one thread per shard: --shards)",
                           argv[1]);
    if (argc > 1 && strcmp(argv[1], "export") == 0) return cmd_export(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "findings") == 0) return cmd_findings(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "vocab") == 0) return cmd_vocab(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "pretrain") == 0) return cmd_pretrain(argc - 1, argv + 1);
    /* `run` and the global options keep the common parser; every other command is an op (cmd_op) */
    const int run_command = argc > 1 && !strcmp(argv[1], "run");
    const int op_command = argc > 1 && argv[1][0] != '-' && !run_command;
    cli_args a;
    memset(&a, 0, sizeof a);
    int code = op_command ? -1 : parse_args(argc, argv, &a);
    if (code >= 0) return code;
    if (!op_command && strcmp(a.command, "run") != 0) return usage_error("unknown command '%s'", a.command);
    for (int i = 2; op_command && i < argc && strcmp(argv[i], "--"); i++) a.progress |= !strcmp(argv[i], "--progress");
    cli c = {0};
    al_session_params sp = al_session_default_params();
    if (threads > 0) sp.n_threads = threads;
    c.session = al_session_new_params(&sp);
    if (!c.session) return fail("out of memory");
    int tty = isatty(2);
#ifdef __EMSCRIPTEN__
    tty = 0; /* node's raw file system reports every standard stream as a terminal */
#endif
    if (a.progress || tty) c.params.progress = print_progress;
    if (op_command) {
        cJSON *version = version_reply(c.session);
        const cJSON *op = op_of_command(version, argv[1]);
        code = op ? cmd_op(&c, argc, argv, op) : usage_error("unknown command '%s'", argv[1]);
        cJSON_Delete(version);
    } else {
        code = cmd_run(&c, &a);
    }
    al_session_free(c.session);
    return code;
}
