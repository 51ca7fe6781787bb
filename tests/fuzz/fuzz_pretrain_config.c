/* fuzz_pretrain_config.c: any bytes as a pretraining config (`attnlab pretrain --config FILE`,
 * al_pretrain_config_parse). Promises: an error names the file; an accepted config holds finite floats in their
 * ranges (probabilities in [0, 1), mask_prob in (0, 1), lr > 0) and is written back
 * (al_pretrain_config_json) as valid JSON that reads back as the same config, bit for bit. */
#include <math.h>

#include "cJSON.h"
#include "fuzz_common.h"
#include "train/pretrain.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    al_pretrain_config c = al_pretrain_default_config();
    al_error err;
    memset(&err, 0, sizeof err);
    al_status st = al_pretrain_config_parse((const char *)data, size, "train_config.json", &c, &err);
    if (st != AL_OK) {
        fuzz_check_error(st, &err, "train_config.json");
        return 0;
    }
    const float probs[2] = {c.hidden_dropout_prob, c.attention_probs_dropout_prob};
    for (int i = 0; i < 2; i++) FUZZ_REQUIRE(probs[i] >= 0.0f && probs[i] < 1.0f, "dropout %g", (double)probs[i]);
    FUZZ_REQUIRE(c.mask_prob > 0.0f && c.mask_prob < 1.0f, "mask_prob %g", (double)c.mask_prob);
    FUZZ_REQUIRE(c.lr > 0.0f && isfinite(c.lr), "lr %g", (double)c.lr);
    FUZZ_REQUIRE(c.weight_decay >= 0.0f && isfinite(c.weight_decay) && c.max_grad_norm >= 0.0f && isfinite(c.max_grad_norm),
                 "weight_decay %g max_grad_norm %g", (double)c.weight_decay, (double)c.max_grad_norm);
    FUZZ_REQUIRE(c.hidden_size >= 1 && c.num_hidden_layers >= 1 && c.num_attention_heads >= 1 && c.steps >= 1 &&
                     c.batch_size >= 1 && c.shards >= 1 && c.shards <= AL_MAX_SHARDS && c.max_len >= 3 &&
                     c.warmup_steps >= 0 && c.max_train_lines >= 0 && c.short_len >= 0 && c.short_steps >= 0,
                 "a count out of range");
    FUZZ_REQUIRE(c.sop_share >= 0.0f && c.sop_share <= 1.0f, "sop_share %g", (double)c.sop_share);
    char *json = al_pretrain_config_json(&c);
    FUZZ_REQUIRE(json != NULL, "no JSON");
    cJSON *parsed = cJSON_Parse(json);
    FUZZ_REQUIRE(cJSON_IsObject(parsed), "written config is not JSON:\n%s", json);
    cJSON_Delete(parsed);
    al_pretrain_config back = al_pretrain_default_config();
    st = al_pretrain_config_parse(json, strlen(json), "written.json", &back, &err);
    FUZZ_REQUIRE(st == AL_OK, "written config does not read back: %s", err.message);
    FUZZ_REQUIRE(memcmp(&back, &c, sizeof c) == 0, "written config reads back differently:\n%s", json);
    free(json);
    return 0;
}
