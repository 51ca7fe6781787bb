/* papa_rank.c: ranking heads by a learned weight (docs/papa.md#ranking-heads-by-a-learned-weight-lambda).
 * Every head mixes its softmax with its constant, P = sigmoid(theta) S + (1 - sigmoid(theta)) C_hat, and
 * only theta (one logit per head) and a fresh probe learn, through the frozen encoder. The loop is the lambda
 * stage's (papa_theta.c, shared with the causal model's next-token loss); this file brings the probe's loss:
 * per shard, forward, probe rows, probe loss and its gradient, scattered back into the hidden states, backward
 * to theta. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../core/rng.h"
#include "../../train/pretrain.h"
#include "../../train/shards.h"
#include "../../train/train.h"
#include "papa_sweep.h"
#include "papa_theta.h"

/* One shard's probe and scratch (each shard runs in its own thread). */
typedef struct shard_state {
    al_probe *probe;
    float *feats, *d_feats, *d_hidden; /* rows and [NL+1, B, L, D] */
    int32_t *row_example, *row_pos, *row_labels;
    int max_rows;
    al_rng dropout_rng;
} shard_state;

typedef struct rank_step {
    const al_config *cfg;
    int L, token_task;
    const int32_t *ids, *mask, *types, *labels; /* this step's batch, [B, L] (labels [B] or [B, L]) */
    shard_state *shards;
    int probe_slot, n_shards;
    const al_papa_inputs *train;
} rank_step;

static al_status shard_loss(void *user, const al_shard_job *job, float *loss, double *weight, al_error *err) {
    rank_step *rs = user;
    shard_state *ss = &rs->shards[job->shard];
    const int L = rs->L, NL = rs->cfg->n_layers, D = rs->cfg->hidden_size, S = NL + 1, B = job->b1 - job->b0;
    const size_t at = (size_t)job->b0 * L;
    al_batch batch = {B, L, rs->ids + at, rs->mask + at, rs->types + at, NULL};
    al_status st = al_train_forward(job->ctx, &batch, err);
    if (st) return st;
    const float *states[64];
    for (int k = 0; k < S; k++) states[k] = al_train_hidden(job->ctx, k);
    al_probe_dense dense = {S, B, L, D, states, rs->mask + at, rs->token_task ? rs->labels + at : NULL};
    int n_rows = 0;
    st = al_probe_gather(&dense, rs->token_task, ss->max_rows, ss->feats, ss->row_example, ss->row_pos,
                         rs->token_task ? ss->row_labels : NULL, &n_rows, err);
    if (st) return st;
    al_probe_batch pb = {B, n_rows, ss->feats, ss->row_example, ss->row_pos,
                         rs->token_task ? ss->row_labels : rs->labels + job->b0};
    al_probe_zero_grads(ss->probe);
    st = al_probe_forward_backward(ss->probe, &pb, 1, &ss->dropout_rng, loss, ss->d_feats, err);
    if (st) return st;
    float *d_ptrs[64];
    for (int k = 0; k < S; k++) d_ptrs[k] = ss->d_hidden + (size_t)k * B * L * D;
    st = al_probe_scatter(ss->d_feats, n_rows, ss->row_example, ss->row_pos, S, B, L, D, d_ptrs, err);
    if (st) return st;
    st = al_train_backward(job->ctx, ss->d_hidden, err);
    if (st) return st;
    memcpy(job->extra[rs->probe_slot], al_probe_grads(ss->probe), al_probe_n_params(ss->probe) * sizeof(float));
    /* the probe's loss is a mean over its labelled items: weight shards by how many they have */
    int labelled = 0;
    if (rs->token_task) {
        for (int r = 0; r < n_rows; r++) labelled += ss->row_labels[r] != AL_IGNORE_INDEX;
    } else {
        for (int b = job->b0; b < job->b1; b++) labelled += rs->labels[b] != AL_IGNORE_INDEX;
    }
    *weight = labelled;
    return AL_OK;
}

static void free_shards(shard_state *ss, int n) {
    for (int i = 0; ss && i < n; i++) {
        al_probe_free(ss[i].probe);
        free(ss[i].feats), free(ss[i].d_feats), free(ss[i].d_hidden);
        free(ss[i].row_example), free(ss[i].row_pos), free(ss[i].row_labels);
    }
    free(ss);
}

/* The step's examples into the batch buffers the shards read. */
static void fill_batch(void *user, const int32_t *examples, int nb) {
    rank_step *rs = user;
    const al_papa_inputs *train = rs->train;
    const int L = rs->L;
    int32_t *lab = (int32_t *)rs->labels;
    for (int b = 0; b < nb; b++) {
        const int x = examples[b];
        memcpy((int32_t *)rs->ids + (size_t)b * L, train->ids + (size_t)x * L, sizeof(int32_t) * L);
        memcpy((int32_t *)rs->mask + (size_t)b * L, train->mask + (size_t)x * L, sizeof(int32_t) * L);
        memcpy((int32_t *)rs->types + (size_t)b * L, train->type_ids + (size_t)x * L, sizeof(int32_t) * L);
        if (train->token_task) memcpy(lab + (size_t)b * L, train->labels + (size_t)x * L, sizeof(int32_t) * L);
        else lab[b] = train->labels[x];
    }
}

/* The probe's parameters of this step in every shard. */
static void set_probe(void *user, const float *probe_params) {
    rank_step *rs = user;
    for (int i = 0; i < rs->n_shards; i++)
        memcpy(al_probe_params(rs->shards[i].probe), probe_params, sizeof(float) * al_probe_n_params(rs->shards[i].probe));
}

al_status al_papa_rank(al_model *model, const al_papa_inputs *train, const float *C, const al_papa_rank_settings *s,
                       const al_forward_params *params, float *theta, double *final_loss, al_error *err) {
    const al_config *cfg = al_model_config(model);
    al_status fam_st = al_train_check_family(model, "lambda ranking", "; use orders random", err);
    if (fam_st) return fam_st;
    const int NL = cfg->n_layers, H = cfg->n_heads, D = cfg->hidden_size, L = train->L, S = NL + 1;
    const int n_heads = NL * H;
    int n = train->n;
    if (s->max_examples > 0 && n > s->max_examples) n = s->max_examples;
    const int B = s->batch_size < 1 ? 16 : s->batch_size > n ? n : s->batch_size;
    const int n_shards = s->shards < 1 ? 1 : s->shards > B ? B : s->shards;
    int max_label = 1;
    for (size_t i = 0; i < (train->token_task ? (size_t)train->n * L : (size_t)train->n); i++)
        if (train->labels[i] > max_label) max_label = train->labels[i];

    al_train_options opt = al_train_default_options();
    opt.weight_grads = 0; /* the encoder is frozen: gradients reach theta only */
    opt.mlm_head = 0;
    opt.training = s->train_mode;
    opt.seed = s->seed;
    /* the probe reads real tokens only and gives them the only gradients: the row-wise layers skip the pads,
     * the same bits (docs/speed.md) */
    opt.real_rows = !s->pad_rows;
    opt.pool = params ? params->pool : NULL; /* the session's threads, not two more of its own (docs/threads.md) */
    al_shard_set *set = NULL;
    shard_state *ss = calloc((size_t)n_shards, sizeof *ss);
    int32_t *b_ids = malloc(sizeof(int32_t) * (size_t)B * L * 4);
    al_status st = (!ss || !b_ids) ? al_err(err, AL_ERR_OOM, "ranking: out of memory") : AL_OK;
    if (!st) st = al_papa_theta_shards(model, C, B, L, n_shards, &opt, s->mem_limit, &set, err);

    al_probe_config pc = al_probe_default_config();
    pc.kind = train->token_task ? AL_PROBE_TOKEN : AL_PROBE_SEQUENCE;
    pc.n_states = S;
    pc.hidden = D;
    pc.max_len = L;
    pc.n_labels = max_label + 1;
    pc.dropout = train->token_task ? 0.0f : s->probe_dropout;
    pc.max_batch = (B + n_shards - 1) / n_shards;
    pc.max_rows = pc.max_batch * L;
    for (int i = 0; !st && i < n_shards; i++) {
        shard_state *x = &ss[i];
        x->max_rows = pc.max_rows;
        /* every shard starts from the same probe: the first draws it, the others copy its parameters */
        st = i == 0 ? al_probe_new(&pc, s->seed, &x->probe, err)
                    : al_probe_new_from(&pc, al_probe_params(ss[0].probe), &x->probe, err);
        x->feats = malloc(sizeof(float) * (size_t)pc.max_rows * S * D);
        x->d_feats = malloc(sizeof(float) * (size_t)pc.max_rows * S * D);
        x->d_hidden = malloc(sizeof(float) * (size_t)S * pc.max_batch * L * D);
        x->row_example = malloc(sizeof(int32_t) * (size_t)pc.max_rows);
        x->row_pos = malloc(sizeof(int32_t) * (size_t)pc.max_rows);
        x->row_labels = malloc(sizeof(int32_t) * (size_t)pc.max_rows);
        al_rng_seed(&x->dropout_rng, al_mlm_derive_seed(s->seed, AL_SEED_RANK_PROBE_DROPOUT, (uint64_t)i));
        if (!st && (!x->feats || !x->d_feats || !x->d_hidden || !x->row_example || !x->row_pos || !x->row_labels))
            st = al_err(err, AL_ERR_OOM, "ranking: out of memory for the probe rows");
    }
    int slot = 0;
    const size_t P = st ? 0 : al_probe_n_params(ss[0].probe);
    if (!st) st = al_shards_add_grads(set, P, &slot, err);

    rank_step rs = {cfg, L, train->token_task, b_ids, b_ids + (size_t)B * L, b_ids + (size_t)2 * B * L,
                    b_ids + (size_t)3 * B * L, ss, slot, n_shards, train};
    if (!st) {
        const al_papa_theta_loss f = {shard_loss, fill_batch, set_probe, &rs, P, al_probe_params(ss[0].probe), slot};
        st = al_papa_theta_train(set, n_heads, n, B, s, params, &f, theta, final_loss, err);
    }
    free_shards(ss, n_shards);
    al_shards_free(set);
    free(b_ids);
    return st;
}
