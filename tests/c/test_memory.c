/* test_memory.c: running out of memory is an error that names the size needed and the limit, and the
 * session keeps its models (src/core/memory.c; docs/memory.md). Under WebAssembly the limit is the
 * module's 4 GB maximum; natively the test runs the same checks in a child process under a 2 GB
 * address-space limit (not under AddressSanitizer, which reserves terabytes of address space). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "check.h"
#include "read_file.h"
#include "core/error.h"
#include "core/memory.h"

#if !defined(__EMSCRIPTEN__)
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

static void check_format(void) {
    char buf[32];
    al_memory_format(buf, sizeof buf, 0);
    CHECK(strcmp(buf, "0.0 MB") == 0);
    al_memory_format(buf, sizeof buf, 5u << 20);
    CHECK(strcmp(buf, "5.0 MB") == 0);
    al_memory_format(buf, sizeof buf, 2000ull << 20);
    CHECK(strcmp(buf, "2,000 MB") == 0);
    al_memory_format(buf, sizeof buf, 4096ull << 20);
    CHECK(strcmp(buf, "4,096 MB") == 0);
    al_memory_format(buf, sizeof buf, 9830ull << 20);
    CHECK(strcmp(buf, "9,830 MB") == 0);
    al_memory_format(buf, sizeof buf, 12ull << 30);
    CHECK(strcmp(buf, "12.0 GB") == 0);
    al_memory_format(buf, sizeof buf, UINT64_MAX);
    CHECK(strstr(buf, " GB") != NULL);
}

/* Every out-of-memory error carries the memory it had; other errors do not. */
static void check_messages(void) {
    al_error err = {0};
    CHECK(al_err(&err, AL_ERR_OOM, "forward: out of memory allocating %d MB", 12) == AL_ERR_OOM);
    CHECK(strncmp(err.message, "forward: out of memory allocating 12 MB; ", 41) == 0);
    CHECK(strstr(err.message, " in use") != NULL);
    CHECK_MSG(al_memory_limit() == 0 ? strstr(err.message, "; no memory limit is set, ") != NULL
                                     : strstr(err.message, "; memory limit ") != NULL, "%s", err.message);
    al_err(&err, AL_ERR_FORMAT, "config.json: field 'x'");
    CHECK(strcmp(err.message, "config.json: field 'x'") == 0);
    /* a message that fills the buffer is cut, never overrun */
    char long_what[600];
    memset(long_what, 'w', sizeof long_what - 1);
    long_what[sizeof long_what - 1] = '\0';
    al_err(&err, AL_ERR_OOM, "%s", long_what);
    CHECK(strlen(err.message) == sizeof err.message - 1);
    CHECK(al_memory_check(1024, "small", &err) == AL_OK);

    /* More than 2^32 weights is refused on any machine, limit or not, by the same message builder. */
    al_session *s = al_session_new();
    al_reply reply;
    memset(&reply, 0, sizeof reply);
    CHECK(al_session_run(s, "{\"op\": \"check_config\", \"config\": \"{\\\"model_type\\\": \\\"bert\\\", "
                            "\\\"hidden_size\\\": 4096, \\\"num_hidden_layers\\\": 64, \\\"num_attention_heads\\\": 32, "
                            "\\\"intermediate_size\\\": 16384, \\\"vocab_size\\\": 30522}\"}", NULL, &reply) == AL_ERR_OOM);
    CHECK_MSG(reply.json && strstr(reply.json, "(13015441408 weights) with at least ") &&
              strstr(reply.json, " of weight files: needs 72.7 GB of memory (attnlab loads at most 2^32 weights); "),
              "%s", reply.json ? reply.json : "(no reply)");
    al_reply_free(&reply);
    al_session_free(s);
}

#if defined(__EMSCRIPTEN__) || !defined(__SANITIZE_ADDRESS__)
static int run_ok(al_session *s, const char *request, al_reply *reply) {
    return al_session_run(s, request, NULL, reply) == AL_OK;
}

/* Needs a known limit of at most 4 GB. */
static void check_refusals(void) {
    al_session *s = al_session_new();
    al_error err = {0};
    al_fileset *fs = al_fileset_new();
    CHECK(al_fileset_add_dir(fs, "models/attnlab-mini-bert", &err) == AL_OK);
    CHECK_MSG(al_session_add_model(s, "mini", fs, &err) == AL_OK, "%s", err.message);

    /* A model whose config needs 9.7 GB of weights is refused by its config, before its tensors. */
    const char *config = "{\"model_type\": \"bert\", \"hidden_size\": 2048, \"num_hidden_layers\": 48,"
                         " \"num_attention_heads\": 16, \"intermediate_size\": 8192, \"vocab_size\": 30522,"
                         " \"max_position_embeddings\": 512}";
    size_t st_size = 0;
    uint8_t *st_bytes = read_file("models/attnlab-mini-bert/model.safetensors", &st_size);
    CHECK(st_bytes && st_size > 0);
    fs = al_fileset_new();
    CHECK(al_fileset_add(fs, "config.json", config, strlen(config), 1, &err) == AL_OK);
    CHECK(al_fileset_add(fs, "model.safetensors", st_bytes, st_size, 1, &err) == AL_OK);
    free(st_bytes);
    CHECK(al_session_add_model(s, "huge", fs, &err) == AL_ERR_OOM);
    CHECK_MSG(strstr(err.message, "config.json: 48 layers of hidden size 2048") &&
              strstr(err.message, "(2484993850 weights): needs 9,479 MB of memory; memory limit "),
              "%s", err.message);

    /* A request whose attentions need 5.2 GB: one long text pads 4,999 short ones to 128 tokens. */
    size_t cap = 64 + 5000 * 8 + 2000, at = 0;
    char *request = malloc(cap);
    at += (size_t)snprintf(request + at, cap - at, "{\"op\": \"attention\", \"model\": \"mini\", \"texts\": [\"");
    for (int i = 0; i < 200; i++) at += (size_t)snprintf(request + at, cap - at, "the ");
    at += (size_t)snprintf(request + at, cap - at, "end\"");
    for (int i = 1; i < 5000; i++) at += (size_t)snprintf(request + at, cap - at, ", \"a\"");
    snprintf(request + at, cap - at, "]}");
    al_reply reply;
    memset(&reply, 0, sizeof reply);
    CHECK(al_session_run(s, request, NULL, &reply) == AL_ERR_OOM);
    CHECK_MSG(reply.json && strstr(reply.json, "\"out_of_memory\"") &&
              strstr(reply.json, "reply: tensor 'attentions' [4, 5000, 4, 128, 128]: needs 5,000 MB of memory; "
                                 "memory limit "),
              "%s", reply.json ? reply.json : "(no reply)");
    al_reply_free(&reply);
    free(request);

    /* The session keeps working with the model it had. */
    memset(&reply, 0, sizeof reply);
    CHECK(run_ok(s, "{\"op\": \"attention\", \"model\": \"mini\", \"text\": \"the cat sat\"}", &reply));
    CHECK(reply.n_tensors >= 1);
    al_reply_free(&reply);
    al_session_free(s);
}
#endif

#if defined(__EMSCRIPTEN__)
#include <emscripten/heap.h>

/* The check's shortcut (a size that fits beside the whole heap fits) must not turn into refusing what fits
 * beside the bytes in use: after a large block is freed the heap stays grown, and a size between the two
 * bounds is still accepted. */
static void check_freed_heap(void) {
    char *volatile block = malloc(300u << 20); /* volatile: the pair may not be optimised away */
    CHECK(block != NULL);
    free(block);
    const uint64_t lim = al_memory_limit(), heap = emscripten_get_heap_size(), used = al_memory_in_use();
    CHECK_MSG(heap >= used + (290u << 20), "heap %llu, in use %llu", (unsigned long long)heap, (unsigned long long)used);
    al_error err = {0};
    const uint64_t between = lim - heap + (100u << 20); /* above the shortcut's bound, below what is left */
    CHECK_MSG(al_memory_check(between, "between", &err) == AL_OK, "%s", err.message);
    CHECK(al_memory_check(lim - used + (1u << 20), "beyond", &err) == AL_ERR_OOM);
    CHECK(strstr(err.message, "beyond: needs ") == err.message);
}
#endif

/* al_alloc_large: a block given back and handed out again (natively the kept blocks) is zeroed when asked,
 * and several live blocks never share memory. */
static void check_large_blocks(void) {
    const size_t n = (size_t)5 << 20; /* floats: 20 MB, over the 4 MB where blocks are kept */
    for (int round = 0; round < 3; round++) {
        float *a = al_alloc_large(n * sizeof(float), 1), *b = al_alloc_large(n * sizeof(float) - 4096, 1);
        CHECK(a && b);
        if (!a || !b) return;
        int zero = 1;
        for (size_t i = 0; i < n; i += 1021) zero &= a[i] == 0.0f;
        for (size_t i = 0; i < n - 1024; i += 1021) zero &= b[i] == 0.0f;
        CHECK_MSG(zero, "round %d: a zeroed block holds old values", round);
        for (size_t i = 0; i < n; i++) a[i] = 1.0f; /* dirty them for the next round */
        for (size_t i = 0; i < n - 1024; i++) b[i] = 2.0f;
        CHECK(a[n - 1] == 1.0f && b[0] == 2.0f); /* distinct memory */
        al_free_large(a);
        al_free_large(b);
        if (round == 1) al_free_large_kept(); /* and fresh blocks after the kept ones are given back */
    }
    al_free_large(NULL);
}

int main(void) {
    check_format();
    check_messages();
    check_large_blocks();
#if defined(__EMSCRIPTEN__)
    CHECK(al_memory_limit() == 65535ull * 65536); /* 4 GB less one 64 KB page: the most wasm32 can grow to */
    check_freed_heap();
    check_refusals();
#elif defined(__SANITIZE_ADDRESS__)
    printf("the refusals under a 2 GB limit run in the plain and WASM builds (AddressSanitizer reserves "
           "terabytes of address space)\n");
#else
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        struct rlimit r = {2048ull << 20, 2048ull << 20};
        if (setrlimit(RLIMIT_AS, &r) != 0) _exit(3);
        check_refusals();
        fflush(NULL);
        _exit(check_failed_ ? 1 : 0);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
#endif
    return check_summary("memory");
}
