/* test_config.c: config.json of the four families, HF defaults, and errors naming the field. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "check.h"

static al_status parse(const char *json, al_config *c, al_error *err) {
    return al_config_parse(json, strlen(json), "config.json", c, err);
}

/* Expects failure with `code` and a message containing `part`. */
static void expect_error(const char *json, al_status code, const char *part) {
    al_config c;
    al_error err = {0};
    al_status st = parse(json, &c, &err);
    CHECK_MSG(st == code, "status %s for %s (%s)", al_status_name(st), json, err.message);
    CHECK_MSG(strstr(err.message, part) != NULL, "message '%s' lacks '%s'", err.message, part);
    CHECK(strncmp(err.message, "config.json: ", 13) == 0);
}

#define BERT_SHAPE "\"vocab_size\": 100, \"hidden_size\": 32, \"num_hidden_layers\": 3, " \
                   "\"num_attention_heads\": 4, \"intermediate_size\": 64"

int main(void) {
    al_config c;
    al_error err = {0};

    CHECK(parse("{\"model_type\": \"bert\", " BERT_SHAPE "}", &c, &err) == AL_OK);
    CHECK(c.arch == AL_ARCH_BERT && strcmp(c.model_type, "bert") == 0);
    CHECK(c.vocab_size == 100 && c.hidden_size == 32 && c.embedding_size == 32 && c.n_layers == 3);
    CHECK(c.n_heads == 4 && c.head_dim == 8 && c.intermediate_size == 64);
    CHECK(c.max_position_embeddings == 512 && c.type_vocab_size == 2 && c.pad_token_id == 0);
    CHECK(c.position_offset == 0 && c.act == AL_ACT_GELU);
    CHECK_NEAR(c.layer_norm_eps, 1e-12, 1e-20);

    /* architectures[] alone picks the family; MiniLM / TinyBERT are plain bert. */
    CHECK(parse("{\"architectures\": [\"RobertaForMaskedLM\"], " BERT_SHAPE
                ", \"layer_norm_eps\": 1e-05, \"max_position_embeddings\": 514}",
                &c, &err) == AL_OK);
    CHECK(c.arch == AL_ARCH_ROBERTA && c.pad_token_id == 1 && c.position_offset == 2);
    CHECK(strcmp(c.model_type, "roberta") == 0);
    CHECK_NEAR(c.layer_norm_eps, 1e-5, 1e-12);
    CHECK(parse("{\"model_type\": \"roberta\", \"pad_token_id\": 3, " BERT_SHAPE "}", &c, &err) == AL_OK);
    CHECK(c.position_offset == 4);

    /* DistilBERT's own names; no token types; eps fixed at 1e-12. */
    CHECK(parse("{\"model_type\": \"distilbert\", \"vocab_size\": 50, \"dim\": 24, \"n_layers\": 2, "
                "\"n_heads\": 3, \"hidden_dim\": 48, \"activation\": \"relu\", \"layer_norm_eps\": 0.1}",
                &c, &err) == AL_OK);
    CHECK(c.arch == AL_ARCH_DISTILBERT && c.hidden_size == 24 && c.n_layers == 2 && c.n_heads == 3);
    CHECK(c.head_dim == 8 && c.intermediate_size == 48 && c.act == AL_ACT_RELU);
    CHECK(c.type_vocab_size == 0 && c.embedding_size == 24);
    CHECK_NEAR(c.layer_norm_eps, 1e-12, 1e-20);

    /* ELECTRA: embedding_size may differ from hidden_size. */
    CHECK(parse("{\"model_type\": \"electra\", \"embedding_size\": 16, " BERT_SHAPE "}", &c, &err) == AL_OK);
    CHECK(c.arch == AL_ARCH_ELECTRA && c.embedding_size == 16 && c.hidden_size == 32);

    /* Activations. */
    const char *tanh_names[] = {"gelu_new", "gelu_pytorch_tanh", "gelu_fast"};
    for (int i = 0; i < 3; i++) {
        char json[512];
        snprintf(json, sizeof json, "{\"model_type\": \"bert\", \"hidden_act\": \"%s\", " BERT_SHAPE "}",
                 tanh_names[i]);
        CHECK(parse(json, &c, &err) == AL_OK && c.act == AL_ACT_GELU_TANH);
    }

    /* A real checkpoint's config as it ships: google/bert_uncased_L-2_H-128_A-2's (prajjwal1/bert-tiny),
     * with no architectures, no layer_norm_eps and no pad_token_id. */
    const char *tiny = "{\"hidden_size\": 128, \"hidden_act\": \"gelu\", \"initializer_range\": 0.02, "
                       "\"vocab_size\": 30522, \"hidden_dropout_prob\": 0.1, \"num_attention_heads\": 2, "
                       "\"type_vocab_size\": 2, \"max_position_embeddings\": 512, \"num_hidden_layers\": 2, "
                       "\"intermediate_size\": 512, \"attention_probs_dropout_prob\": 0.1, \"model_type\": \"bert\"}";
    CHECK(al_config_parse(tiny, strlen(tiny), "config.json", &c, &err) == AL_OK);
    CHECK(c.hidden_size == 128 && c.n_layers == 2 && c.n_heads == 2 && c.vocab_size == 30522 &&
          c.intermediate_size == 512 && c.max_position_embeddings == 512 && c.type_vocab_size == 2);

    /* Errors name the field. */
    expect_error("{\"model_type\": \"bert\", ", AL_ERR_FORMAT, "malformed JSON");
    expect_error("[1, 2]", AL_ERR_FORMAT, "not an object");
    expect_error("{\"model_type\": \"mistral\", " BERT_SHAPE "}", AL_ERR_UNSUPPORTED, "model_type 'mistral'");
    expect_error("{\"architectures\": [\"MistralForCausalLM\"], " BERT_SHAPE "}", AL_ERR_UNSUPPORTED,
                 "MistralForCausalLM");
    expect_error("{" BERT_SHAPE "}", AL_ERR_FORMAT, "'model_type' is missing");
    expect_error("{\"model_type\": \"bert\", \"vocab_size\": 100, \"num_hidden_layers\": 3, "
                 "\"num_attention_heads\": 4, \"intermediate_size\": 64}",
                 AL_ERR_FORMAT, "'hidden_size' is missing");
    expect_error("{\"model_type\": \"bert\", \"vocab_size\": \"100\", \"hidden_size\": 32, "
                 "\"num_hidden_layers\": 3, \"num_attention_heads\": 4, \"intermediate_size\": 64}",
                 AL_ERR_FORMAT, "'vocab_size' must be an integer");
    expect_error("{\"model_type\": \"bert\", \"vocab_size\": 100, \"hidden_size\": 32.5, "
                 "\"num_hidden_layers\": 3, \"num_attention_heads\": 4, \"intermediate_size\": 64}",
                 AL_ERR_FORMAT, "'hidden_size'");
    expect_error("{\"model_type\": \"bert\", \"vocab_size\": 100, \"hidden_size\": 32, "
                 "\"num_hidden_layers\": -1, \"num_attention_heads\": 4, \"intermediate_size\": 64}",
                 AL_ERR_FORMAT, "'num_hidden_layers'");
    expect_error("{\"model_type\": \"bert\", \"vocab_size\": 100, \"hidden_size\": 30, "
                 "\"num_hidden_layers\": 3, \"num_attention_heads\": 4, \"intermediate_size\": 64}",
                 AL_ERR_FORMAT, "multiple of the 4 heads");
    expect_error("{\"model_type\": \"bert\", \"hidden_act\": \"swish\", " BERT_SHAPE "}",
                 AL_ERR_UNSUPPORTED, "'hidden_act' = 'swish'");
    expect_error("{\"model_type\": \"bert\", \"layer_norm_eps\": \"small\", " BERT_SHAPE "}",
                 AL_ERR_FORMAT, "'layer_norm_eps'");
    expect_error("{\"model_type\": \"distilbert\", \"vocab_size\": 50, \"dim\": 24, \"n_layers\": 2, "
                 "\"n_heads\": 3}", AL_ERR_FORMAT, "'hidden_dim' is missing");
    expect_error("{\"model_type\": 7, " BERT_SHAPE "}", AL_ERR_FORMAT, "'model_type' must be a string");

    /* Fields that change the computation and are not implemented: refused by name, never run as absolute
     * positions / bidirectional attention / all heads; their default values load. */
    expect_error("{\"model_type\": \"bert\", \"position_embedding_type\": \"relative_key\", " BERT_SHAPE "}",
                 AL_ERR_UNSUPPORTED, "field 'position_embedding_type' = 'relative_key' is not supported");
    expect_error("{\"model_type\": \"roberta\", \"position_embedding_type\": \"relative_key_query\", " BERT_SHAPE "}",
                 AL_ERR_UNSUPPORTED, "field 'position_embedding_type' = 'relative_key_query' is not supported");
    expect_error("{\"model_type\": \"electra\", \"position_embedding_type\": \"relative_key\", " BERT_SHAPE "}",
                 AL_ERR_UNSUPPORTED, "field 'position_embedding_type' = 'relative_key'");
    expect_error("{\"model_type\": \"bert\", \"position_embedding_type\": 3, " BERT_SHAPE "}",
                 AL_ERR_FORMAT, "field 'position_embedding_type' must be a string");
    expect_error("{\"model_type\": \"bert\", \"is_decoder\": true, " BERT_SHAPE "}",
                 AL_ERR_UNSUPPORTED, "field 'is_decoder' = true is not supported");
    expect_error("{\"model_type\": \"bert\", \"pruned_heads\": {\"0\": [1]}, " BERT_SHAPE "}",
                 AL_ERR_UNSUPPORTED, "field 'pruned_heads' is not supported");
    expect_error("{\"model_type\": \"distilbert\", \"pruned_heads\": {\"1\": [0, 2]}, \"vocab_size\": 50, "
                 "\"dim\": 24, \"n_layers\": 2, \"n_heads\": 3, \"hidden_dim\": 48}",
                 AL_ERR_UNSUPPORTED, "field 'pruned_heads'");
    CHECK(parse("{\"model_type\": \"bert\", \"position_embedding_type\": \"absolute\", \"is_decoder\": false, "
                "\"pruned_heads\": {}, " BERT_SHAPE "}", &c, &err) == AL_OK);
    CHECK(parse("{\"model_type\": \"bert\", \"position_embedding_type\": null, \"is_decoder\": null, " BERT_SHAPE "}",
                &c, &err) == AL_OK);

    /* al_config_bert and al_arch_name. */
    c = al_config_bert(1000, 64, 4, 4, 256);
    CHECK(c.arch == AL_ARCH_BERT && c.head_dim == 16 && c.embedding_size == 64 && c.type_vocab_size == 2);
    CHECK(c.max_position_embeddings == 512 && c.act == AL_ACT_GELU);
    CHECK(strcmp(al_arch_name(AL_ARCH_DISTILBERT), "distilbert") == 0);
    CHECK(strcmp(al_arch_name(AL_ARCH_ELECTRA), "electra") == 0);
    return check_summary("config");
}
