/* sampler.c: the next token (sampler.h). Probabilities in double with src/core/det_math.h's exp, tokens ordered by
 * logit with ties broken by id, one uniform draw (24 bits, rng.h) per sampled token: the same request picks the same
 * tokens natively, in WebAssembly and on any thread count (the logits are the same bits there). */
#include "sampler.h"

#include <stdlib.h>

#include "../../core/det_math.h"

typedef struct cand {
    float logit;
    int32_t id;
} cand;

static int by_logit(const void *a, const void *b) {
    const cand *x = a, *y = b;
    if (x->logit != y->logit) return x->logit > y->logit ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

int al_sample_next(const float *logits, int V, const al_sampling *s, al_rng *rng, int32_t *order, double *prob,
                   float *p, double *z_out) {
    int best = 0;
    for (int v = 1; v < V; v++)
        if (logits[v] > logits[best]) best = v;
    double z = 0.0;
    for (int v = 0; v < V; v++) z += al_det_exp((double)logits[v] - logits[best]);
    if (z_out) *z_out = z;
    if (s->temperature <= 0.0f) {
        *p = (float)(1.0 / z);
        return best;
    }
    /* the candidates by logit, cut to top_k, their tempered probabilities, cut to top_p */
    cand *c = malloc(sizeof *c * (size_t)V);
    if (!c) return -1; /* out of memory: the caller says so */
    for (int v = 0; v < V; v++) c[v].logit = logits[v], c[v].id = v;
    qsort(c, (size_t)V, sizeof *c, by_logit);
    for (int v = 0; v < V; v++) order[v] = c[v].id;
    free(c);
    int n = s->top_k > 0 && s->top_k < V ? s->top_k : V;
    double zt = 0.0;
    for (int i = 0; i < n; i++) {
        prob[i] = al_det_exp(((double)logits[order[i]] - logits[best]) / s->temperature);
        zt += prob[i];
    }
    if (s->top_p < 1.0f) {
        double acc = 0.0;
        int keep = 0;
        while (keep < n && acc < (double)s->top_p * zt) acc += prob[keep++];
        n = keep > 0 ? keep : 1;
        zt = 0.0;
        for (int i = 0; i < n; i++) zt += prob[i];
    }
    const double u = (double)al_rng_uniform(rng) * zt;
    double acc = 0.0;
    int pick = n - 1;
    for (int i = 0; i < n; i++) {
        acc += prob[i];
        if (u < acc) {
            pick = i;
            break;
        }
    }
    const int id = order[pick];
    *p = (float)(al_det_exp((double)logits[id] - logits[best]) / z);
    return id;
}
