/* checkpoint.c: a pretrained encoder as a Hugging Face BertForMaskedLM directory (config.json,
 * model.safetensors with HF names, vocab.txt, tokenizer_config.json, special_tokens_map.json; a decoder's
 * GPT2LMHeadModel directory holds tokenizer.json instead of vocab.txt), and
 * resumable checkpoints (the same files plus optimizer.safetensors: AdamW moments and the step). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "../core/error.h"
#include "../model/model_internal.h"
#include "../model/tensor_list.h"
#include "../model/weights.h"
#include "../text/wordpiece_json.h"
#include "cJSON.h"
#include "pretrain.h"
#include "train.h"

int al_make_dirs(const char *path) {
    char buf[1024];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf) return -1;
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++)
        if (buf[i] == '/' || buf[i] == 0) {
            char c = buf[i];
            buf[i] = 0;
            if (mkdir(buf, 0755) != 0 && errno != EEXIST) return -1;
            buf[i] = c;
        }
    return 0;
}

static void put(al_tensor_out *t, const char *name, float *data, int64_t d0, int64_t d1) {
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    snprintf(t->dtype, sizeof t->dtype, "F32");
    t->ndim = d1 > 0 ? 2 : 1;
    t->shape[0] = d0;
    t->shape[1] = d1 > 0 ? d1 : 0;
    t->data = data;
    t->nbytes = sizeof(float) * (size_t)d0 * (size_t)(d1 > 0 ? d1 : 1);
}

/* The sentence-order head's tensors under Hugging Face BertForPreTraining's names (train.h: al_sop_head). */
static int sop_tensors(float *block, int D, al_tensor_out *out) {
    al_sop_head h = al_sop_head_carve(block, D);
    put(&out[0], "bert.pooler.dense.weight", h.pool_w, D, D);
    put(&out[1], "bert.pooler.dense.bias", h.pool_b, D, 0);
    put(&out[2], "cls.seq_relationship.weight", h.cls_w, 2, D);
    put(&out[3], "cls.seq_relationship.bias", h.cls_b, 2, 0);
    return 4;
}

/* A float as the shortest decimal that names it (0.1f is written 0.1, not 0.10000000149011612). */
static double short_decimal(float f) {
    char buf[32];
    snprintf(buf, sizeof buf, "%.7g", (double)f);
    return strtod(buf, NULL);
}

static char *config_json(const al_config *c, float hidden_dropout, float attention_dropout, const char *class_name) {
    cJSON *j = cJSON_CreateObject();
    if (!j) return NULL;
    cJSON *arch = cJSON_AddArrayToObject(j, "architectures");
    cJSON_AddItemToArray(arch, cJSON_CreateString(class_name));
    cJSON_AddStringToObject(j, "model_type", "bert");
    cJSON_AddNumberToObject(j, "vocab_size", c->vocab_size);
    cJSON_AddNumberToObject(j, "hidden_size", c->hidden_size);
    cJSON_AddNumberToObject(j, "num_hidden_layers", c->n_layers);
    cJSON_AddNumberToObject(j, "num_attention_heads", c->n_heads);
    cJSON_AddNumberToObject(j, "intermediate_size", c->intermediate_size);
    cJSON_AddStringToObject(j, "hidden_act", c->act == AL_ACT_RELU ? "relu" : c->act == AL_ACT_GELU_TANH ? "gelu_new" : "gelu");
    cJSON_AddNumberToObject(j, "hidden_dropout_prob", short_decimal(hidden_dropout));
    cJSON_AddNumberToObject(j, "attention_probs_dropout_prob", short_decimal(attention_dropout));
    cJSON_AddNumberToObject(j, "max_position_embeddings", c->max_position_embeddings);
    cJSON_AddNumberToObject(j, "type_vocab_size", c->type_vocab_size);
    cJSON_AddNumberToObject(j, "initializer_range", 0.02);
    cJSON_AddNumberToObject(j, "layer_norm_eps", short_decimal(c->layer_norm_eps));
    cJSON_AddNumberToObject(j, "pad_token_id", c->pad_token_id);
    cJSON_AddStringToObject(j, "position_embedding_type", "absolute");
    cJSON_AddStringToObject(j, "torch_dtype", "float32");
    cJSON_AddStringToObject(j, "attnlab_version", AL_VERSION);
    char *s = cJSON_Print(j);
    cJSON_Delete(j);
    return s;
}

char *al_bert_config_json(const al_config *c, float hidden_dropout, float attention_dropout) {
    return config_json(c, hidden_dropout, attention_dropout, "BertForMaskedLM");
}

char *al_gpt2_config_json(const al_config *c, float hidden_dropout, float attention_dropout) {
    cJSON *j = cJSON_CreateObject();
    if (!j) return NULL;
    cJSON *arch = cJSON_AddArrayToObject(j, "architectures");
    cJSON_AddItemToArray(arch, cJSON_CreateString("GPT2LMHeadModel"));
    cJSON_AddStringToObject(j, "model_type", "gpt2");
    cJSON_AddNumberToObject(j, "vocab_size", c->vocab_size);
    cJSON_AddNumberToObject(j, "n_embd", c->hidden_size);
    cJSON_AddNumberToObject(j, "n_layer", c->n_layers);
    cJSON_AddNumberToObject(j, "n_head", c->n_heads);
    cJSON_AddNumberToObject(j, "n_inner", c->intermediate_size);
    cJSON_AddNumberToObject(j, "n_positions", c->max_position_embeddings);
    cJSON_AddNumberToObject(j, "n_ctx", c->max_position_embeddings);
    cJSON_AddStringToObject(j, "activation_function", "gelu_new");
    cJSON_AddNumberToObject(j, "resid_pdrop", short_decimal(hidden_dropout));
    cJSON_AddNumberToObject(j, "embd_pdrop", short_decimal(hidden_dropout));
    cJSON_AddNumberToObject(j, "attn_pdrop", short_decimal(attention_dropout));
    cJSON_AddNumberToObject(j, "layer_norm_epsilon", short_decimal(c->layer_norm_eps));
    cJSON_AddNumberToObject(j, "initializer_range", 0.02);
    cJSON_AddBoolToObject(j, "tie_word_embeddings", 1);
    /* the WordPiece vocabulary's [SEP] ends every line (docs/decoder_pretraining.md): GPT-2's <|endoftext|> */
    cJSON_AddNumberToObject(j, "bos_token_id", c->pad_token_id);
    cJSON_AddNumberToObject(j, "eos_token_id", c->pad_token_id);
    cJSON_AddNumberToObject(j, "pad_token_id", c->pad_token_id);
    cJSON_AddStringToObject(j, "torch_dtype", "float32");
    cJSON_AddStringToObject(j, "attnlab_version", AL_VERSION);
    char *s = cJSON_Print(j);
    cJSON_Delete(j);
    return s;
}

al_status al_gpt2_config(int vocab_size, int hidden_size, int n_layers, int n_heads, int intermediate_size,
                         int n_positions, int eos_id, al_config *out, al_error *err) {
    al_config c;
    memset(&c, 0, sizeof c);
    c.vocab_size = vocab_size, c.hidden_size = hidden_size, c.n_layers = n_layers, c.n_heads = n_heads;
    c.intermediate_size = intermediate_size, c.max_position_embeddings = n_positions;
    c.layer_norm_eps = 1e-5f, c.pad_token_id = eos_id;
    char *json = al_gpt2_config_json(&c, 0.0f, 0.0f); /* the config the final directory holds, read back */
    if (!json) return al_err(err, AL_ERR_OOM, "config.json: out of memory");
    al_status st = al_config_parse(json, strlen(json), "config.json", out, err);
    free(json);
    return st;
}

static al_status write_text(const char *dir, const char *name, const char *text, size_t len, al_error *err) {
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) return al_err(err, AL_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
    size_t w = fwrite(text, 1, len, f);
    int bad = fclose(f) != 0 || w != len;
    return bad ? al_err(err, AL_ERR_IO, "%s: write failed", path) : AL_OK;
}

/* A whole file into *buf (malloc'd, *len bytes). */
static al_status read_all(const char *from, char **buf, size_t *len, al_error *err) {
    FILE *f = fopen(from, "rb");
    if (!f) return al_err(err, AL_ERR_IO, "%s: cannot read: %s", from, strerror(errno));
    size_t cap = 0;
    *buf = NULL, *len = 0;
    for (;;) {
        if (*len + 65536 > cap) {
            cap = (*len + 65536) * 2;
            char *nb = realloc(*buf, cap);
            if (!nb) {
                free(*buf), *buf = NULL;
                fclose(f);
                return al_err(err, AL_ERR_OOM, "%s: out of memory", from);
            }
            *buf = nb;
        }
        size_t r = fread(*buf + *len, 1, cap - *len, f);
        *len += r;
        if (r == 0) break;
    }
    fclose(f);
    return AL_OK;
}

static al_status copy_file(const char *from, const char *dir, const char *name, al_error *err) {
    char *buf;
    size_t len;
    al_status st = read_all(from, &buf, &len, err);
    if (!st) st = write_text(dir, name, buf ? buf : "", len, err);
    free(buf);
    return st;
}

/* tokenizer_config.json (cfg_format: its text with %d for model_max_length) and special_tokens_map.json. An encoder's
 * is BERT's WordPiece with its [CLS]/[SEP] template; a decoder's reads tokenizer.json and adds nothing. */
#define BERT_TOKENIZER_CONFIG                                                                                       \
    "{\n  \"tokenizer_class\": \"BertTokenizer\",\n  \"do_lower_case\": true,\n  \"strip_accents\": null,\n"            \
    "  \"tokenize_chinese_chars\": true,\n  \"model_max_length\": %d,\n  \"unk_token\": \"[UNK]\",\n"                  \
    "  \"sep_token\": \"[SEP]\",\n  \"pad_token\": \"[PAD]\",\n  \"cls_token\": \"[CLS]\",\n"                         \
    "  \"mask_token\": \"[MASK]\"\n}\n"
#define BERT_SPECIALS                                                                                               \
    "{\n  \"unk_token\": \"[UNK]\",\n  \"sep_token\": \"[SEP]\",\n  \"pad_token\": \"[PAD]\",\n  \"cls_token\": \"[CLS]\",\n" \
    "  \"mask_token\": \"[MASK]\"\n}\n"
#define DECODER_TOKENIZER_CONFIG                                                                                    \
    "{\n  \"tokenizer_class\": \"PreTrainedTokenizerFast\",\n  \"model_max_length\": %d,\n"                          \
    "  \"bos_token\": \"[SEP]\",\n  \"eos_token\": \"[SEP]\",\n  \"pad_token\": \"[SEP]\",\n  \"unk_token\": \"[UNK]\"\n}\n"
#define DECODER_SPECIALS                                                                                            \
    "{\n  \"bos_token\": \"[SEP]\",\n  \"eos_token\": \"[SEP]\",\n  \"pad_token\": \"[SEP]\",\n  \"unk_token\": \"[UNK]\"\n}\n"

static al_status write_tokenizer_config(const char *dir, const al_model *model, const char *cfg_format,
                                        const char *specials, al_error *err) {
    char buf[600];
    const int n = snprintf(buf, sizeof buf, cfg_format, model->config.max_position_embeddings);
    al_status st = write_text(dir, "tokenizer_config.json", buf, (size_t)n, err);
    return st ? st : write_text(dir, "special_tokens_map.json", specials, strlen(specials), err);
}

/* A causal model's tokenizer: the vocabulary as tokenizer.json without a post-processor (nothing added around a
 * text), [SEP] as the end of text and the pad (docs/decoder_pretraining.md, "Data and tokenizer"). */
al_status al_save_decoder_tokenizer(const char *dir, const al_model *model, const char *vocab_path,
                                    al_error *err) {
    char *vocab = NULL, *json = NULL;
    size_t len = 0;
    al_status st = vocab_path ? read_all(vocab_path, &vocab, &len, err) : AL_OK;
    if (!st && vocab_path) st = al_wordpiece_tokenizer_json(vocab ? vocab : "", len, vocab_path, &json, err);
    if (!st && json) st = write_text(dir, "tokenizer.json", json, strlen(json), err);
    free(vocab), free(json);
    if (st) return st;
    return write_tokenizer_config(dir, model, DECODER_TOKENIZER_CONFIG, DECODER_SPECIALS, err);
}

al_status al_save_hf_model(const char *dir, const al_model *model, const char *vocab_path, float hidden_dropout,
                           float attention_dropout, float *sop_head, al_error *err) {
    if (al_make_dirs(dir)) return al_err(err, AL_ERR_IO, "%s: cannot create directory", dir);
    /* with the sentence-order head every tensor has its place in BertForPreTraining */
    const int causal = al_model_is_causal(model); /* GPT-2 (train_decoder.c); encoders are BERT's layout */
    char *cfg = causal ? al_gpt2_config_json(&model->config, hidden_dropout, attention_dropout)
                       : config_json(&model->config, hidden_dropout, attention_dropout,
                                     sop_head ? "BertForPreTraining" : "BertForMaskedLM");
    if (!cfg) return al_err(err, AL_ERR_OOM, "config.json: out of memory");
    al_status st = write_text(dir, "config.json", cfg, strlen(cfg), err);
    free(cfg);
    if (st) return st;
    int max = al_weights_n_tensors(model);
    al_tensor_out *t = calloc((size_t)max + 4, sizeof *t);
    if (!t) return al_err(err, AL_ERR_OOM, "model.safetensors: out of memory");
    const int n_model = al_weights_file_tensors(model, t, max); /* as the loader reads them (Conv1D [in, out]) */
    if (n_model < 0) {
        free(t);
        return al_err(err, AL_ERR_OOM, "model.safetensors: out of memory");
    }
    int n = n_model;
    if (sop_head) n += sop_tensors(sop_head, model->config.hidden_size, t + n);
    char path[1200];
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    const char *meta[] = {"format", "pt"};
    st = al_safetensors_write(path, t, n, meta, 1, err);
    al_weights_file_tensors_free(t, n_model);
    free(t);
    if (st) return st;
    if (al_model_is_causal(model)) return al_save_decoder_tokenizer(dir, model, vocab_path, err);
    if (vocab_path && (st = copy_file(vocab_path, dir, "vocab.txt", err))) return st;
    return write_tokenizer_config(dir, model, BERT_TOKENIZER_CONFIG, BERT_SPECIALS, err);
}

al_status al_checkpoint_save(const char *dir, const al_model *model, float hidden_dropout, float attention_dropout,
                             al_adamw *opt, int step, const char *const *metadata_kv, int n_metadata, float *sop_head,
                             al_adamw *sop_opt, al_error *err) {
    if (!sop_head != !sop_opt) return al_err(err, AL_ERR_INVALID, "checkpoint: the sentence-order head needs its optimizer");
    al_status st = al_save_hf_model(dir, model, NULL, hidden_dropout, attention_dropout, sop_head, err);
    if (st) return st;
    size_t n = al_adamw_size(opt);
    if (n != model->n_floats)
        return al_err(err, AL_ERR_INVALID, "checkpoint: optimizer has %zu parameters, model %zu", n, model->n_floats);
    if (sop_head && al_adamw_size(sop_opt) != al_sop_head_size(model->config.hidden_size))
        return al_err(err, AL_ERR_INVALID, "checkpoint: the sentence-order optimizer has %zu parameters, the head %zu",
                      al_adamw_size(sop_opt), al_sop_head_size(model->config.hidden_size));
    int32_t step_value = step, adam_step = al_adamw_step_count(opt), sop_step = sop_opt ? al_adamw_step_count(sop_opt) : 0;
    al_tensor_out t[7];
    put(&t[0], "adam.m", al_adamw_first_moments(opt), (int64_t)n, 0);
    put(&t[1], "adam.v", al_adamw_second_moments(opt), (int64_t)n, 0);
    put(&t[2], "step", NULL, 1, 0);
    t[2].data = &step_value;
    snprintf(t[2].dtype, sizeof t[2].dtype, "I32");
    put(&t[3], "adam.step", NULL, 1, 0);
    t[3].data = &adam_step;
    snprintf(t[3].dtype, sizeof t[3].dtype, "I32");
    int nt = 4;
    if (sop_opt) { /* the head's AdamW: its moments and its own update count (its bias correction) */
        const int64_t nh = (int64_t)al_adamw_size(sop_opt);
        put(&t[nt++], "sop.adam.m", al_adamw_first_moments(sop_opt), nh, 0);
        put(&t[nt++], "sop.adam.v", al_adamw_second_moments(sop_opt), nh, 0);
        put(&t[nt], "sop.adam.step", NULL, 1, 0);
        t[nt].data = &sop_step;
        snprintf(t[nt++].dtype, sizeof t[0].dtype, "I32");
    }
    char path[1200];
    snprintf(path, sizeof path, "%s/optimizer.safetensors", dir);
    return al_safetensors_write(path, t, nt, metadata_kv, n_metadata, err);
}

/* The tensor `name` of a parsed optimizer file with the dtype and element count expected. */
static const al_tensor_entry *find_tensor(const al_tensor_list *list, const char *name, al_dtype dtype,
                                          size_t count, al_error *err) {
    const al_tensor_entry *t = al_tensor_list_find(list, name);
    if (!t || t->dtype != dtype || (size_t)al_tensor_numel(t) != count) {
        al_err(err, AL_ERR_FORMAT, "optimizer.safetensors: tensor '%s' missing or not %zu %s values", name,
               count, al_dtype_name(dtype));
        return NULL;
    }
    return t;
}

/* The sentence-order head from the checkpoint's model.safetensors and its optimizer from opt_list. */
static al_status load_sop(al_fileset *files, const al_tensor_list *opt_list, int D, float *head, al_adamw *sop_opt,
                          al_error *err) {
    size_t size = 0;
    const uint8_t *buf = al_fileset_get(files, "model.safetensors", &size);
    if (!buf) return al_err(err, AL_ERR_IO, "checkpoint: model.safetensors missing");
    al_tensor_list wl = {0};
    al_status st = al_safetensors_read(buf, size, "model.safetensors", &wl, err);
    al_tensor_out t[4];
    const int n = sop_tensors(head, D, t);
    for (int i = 0; !st && i < n; i++) {
        const al_tensor_entry *e = find_tensor(&wl, t[i].name, AL_DT_F32, t[i].nbytes / sizeof(float), err);
        if (!e) st = AL_ERR_FORMAT;
        else memcpy(t[i].data, e->data, t[i].nbytes);
    }
    al_tensor_list_free(&wl);
    if (st) {
        al_err_prefix(err, "checkpoint: sentence-order head");
        return st;
    }
    const size_t nh = al_sop_head_size(D);
    if (!sop_opt || al_adamw_size(sop_opt) != nh)
        return al_err(err, AL_ERR_INVALID, "checkpoint: no sentence-order optimizer of %zu parameters", nh);
    const al_tensor_entry *m = find_tensor(opt_list, "sop.adam.m", AL_DT_F32, nh, err);
    const al_tensor_entry *v = m ? find_tensor(opt_list, "sop.adam.v", AL_DT_F32, nh, err) : NULL;
    const al_tensor_entry *s = v ? find_tensor(opt_list, "sop.adam.step", AL_DT_I32, 1, err) : NULL;
    if (!s) return AL_ERR_FORMAT;
    memcpy(al_adamw_first_moments(sop_opt), m->data, nh * sizeof(float));
    memcpy(al_adamw_second_moments(sop_opt), v->data, nh * sizeof(float));
    int32_t s32;
    memcpy(&s32, s->data, 4);
    al_adamw_set_step_count(sop_opt, s32);
    return AL_OK;
}

al_status al_checkpoint_load(const char *dir, al_model *model, al_adamw *opt, int *step, float *sop_head,
                             al_adamw *sop_opt, int *has_sop, char **train_config, al_error *err) {
    if (has_sop) *has_sop = 0;
    if (train_config) *train_config = NULL;
    al_model *saved = NULL;
    al_status st = al_model_load_dir(dir, &saved, err);
    if (st) return st;
    int max = al_weights_n_tensors(model);
    al_tensor_out *a = calloc((size_t)max, sizeof *a), *b = calloc((size_t)max, sizeof *b);
    if (!a || !b) {
        st = al_err(err, AL_ERR_OOM, "checkpoint: out of memory");
        goto done;
    }
    int na = al_weights_tensors(model, a, max), nb = al_weights_tensors(saved, b, max);
    if (na != nb) {
        st = al_err(err, AL_ERR_FORMAT, "%s: checkpoint has %d tensors, the model %d", dir, nb, na);
        goto done;
    }
    for (int i = 0; i < na; i++) {
        if (strcmp(a[i].name, b[i].name) || a[i].nbytes != b[i].nbytes) {
            st = al_err(err, AL_ERR_FORMAT, "%s: tensor '%s' does not match the model", dir, b[i].name);
            goto done;
        }
        memcpy(a[i].data, b[i].data, a[i].nbytes);
    }
    /* The optimizer state, through the same fileset and safetensors reader as every weight file. */
    char path[1200];
    snprintf(path, sizeof path, "%s/optimizer.safetensors", dir);
    al_fileset *files = al_fileset_new();
    al_tensor_list list = {0};
    size_t size = 0;
    const uint8_t *buf = NULL;
    if (!files) {
        st = al_err(err, AL_ERR_OOM, "checkpoint: out of memory");
    } else if ((st = al_fileset_add_dir(files, dir, err)) == AL_OK) {
        buf = al_fileset_get(files, "optimizer.safetensors", &size);
        if (!buf) st = al_err(err, AL_ERR_IO, "%s: missing", path);
    }
    if (!st) st = al_safetensors_read(buf, size, "optimizer.safetensors", &list, err);
    if (!st) {
        size_t n = al_adamw_size(opt);
        const al_tensor_entry *m = find_tensor(&list, "adam.m", AL_DT_F32, n, err);
        const al_tensor_entry *v = m ? find_tensor(&list, "adam.v", AL_DT_F32, n, err) : NULL;
        const al_tensor_entry *s = v ? find_tensor(&list, "step", AL_DT_I32, 1, err) : NULL;
        const al_tensor_entry *as = s ? find_tensor(&list, "adam.step", AL_DT_I32, 1, err) : NULL;
        if (as) {
            memcpy(al_adamw_first_moments(opt), m->data, n * sizeof(float));
            memcpy(al_adamw_second_moments(opt), v->data, n * sizeof(float));
            int32_t s32, as32;
            memcpy(&s32, s->data, 4);
            memcpy(&as32, as->data, 4);
            al_adamw_set_step_count(opt, as32);
            *step = s32;
        } else {
            st = err ? err->code : AL_ERR_FORMAT;
        }
    }
    if (!st && train_config) { /* the config the checkpoint was written with (absent before attnlab recorded it) */
        const char *tc = al_tensor_list_meta(&list, "train_config");
        if (tc && !(*train_config = malloc(strlen(tc) + 1))) st = al_err(err, AL_ERR_OOM, "checkpoint: out of memory");
        else if (tc) memcpy(*train_config, tc, strlen(tc) + 1);
    }
    if (!st && sop_head && al_tensor_list_find(&list, "sop.adam.m"))
        st = load_sop(files, &list, model->config.hidden_size, sop_head, sop_opt, err);
    if (!st && has_sop) *has_sop = sop_head && al_tensor_list_find(&list, "sop.adam.m");
    al_tensor_list_free(&list);
    al_fileset_free(files);
done:
    free(a);
    free(b);
    al_model_free(saved);
    return st;
}
