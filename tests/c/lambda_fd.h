/* lambda_fd.h: the lambda ranking's gradient check, shared by the family tests (test_deberta.c,
 * test_modernbert.c): the MIX heads' lambda-logit gradients of a training context (after
 * al_train_set_policies, opt.training = 0 so every pass is the same function) against central finite
 * differences of the MLM loss, theta +- step. The step is the caller's: the central difference's error falls
 * as step^2 times the loss's third derivative, which differs between test models (ModernBERT's golden is
 * curved enough that 5e-2 leaves a 4% error where 1e-2 leaves 0.2%). Needs check.h. */
#ifndef AL_TEST_LAMBDA_FD_H
#define AL_TEST_LAMBDA_FD_H

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "train/train.h"

static double lambda_fd_loss(al_train_ctx *ctx, const al_batch *batch, const int32_t *labels) {
    al_error err = {0};
    float loss = 0.0f;
    if (al_train_forward(ctx, batch, &err) != AL_OK || al_train_mlm_loss(ctx, labels, &loss, NULL, &err) != AL_OK) {
        fprintf(stderr, "train: %s\n", err.message);
        return NAN;
    }
    return loss;
}

typedef struct lambda_fd_result {
    double worst;      /* largest |fd - analytic| over the MIX heads, relative to scale */
    double scale;      /* the largest |dtheta| */
    float loss;        /* the loss at the policies' lambdas */
    int n_checked;     /* MIX heads compared */
} lambda_fd_result;

/* Checks (CHECK) every MIX head of modes [NH] to 1e-2 relative error, the others' gradient exactly 0, and a
 * gradient that is not vanishing (scale > 1e-6). */
static lambda_fd_result lambda_fd_check(al_train_ctx *ctx, const al_batch *batch, const int32_t *labels,
                                        const al_head_policy *pol, int NH, float step) {
    lambda_fd_result res = {0.0, 0.0, 0.0f, 0};
    al_error err = {0};
    al_train_zero_grads(ctx);
    CHECK(al_train_forward(ctx, batch, &err) == AL_OK &&
          al_train_mlm_loss(ctx, labels, &res.loss, NULL, &err) == AL_OK && al_train_backward(ctx, NULL, &err) == AL_OK);
    float *dtheta = malloc(sizeof(float) * (size_t)NH);
    if (!dtheta) return res;
    memcpy(dtheta, al_train_lambda_grads(ctx), sizeof(float) * (size_t)NH);
    for (int i = 0; i < NH; i++) res.scale = fmax(res.scale, fabs(dtheta[i]));
    for (int i = 0; i < NH; i++) {
        if (pol[i].mode != AL_HEAD_MIX) {
            CHECK(dtheta[i] == 0.0f);
            continue;
        }
        float *theta = al_train_lambda_logits(ctx) + i;
        const float t0 = *theta;
        *theta = t0 + step;
        const double fp = lambda_fd_loss(ctx, batch, labels);
        *theta = t0 - step;
        const double fm = lambda_fd_loss(ctx, batch, labels);
        *theta = t0;
        const double fd = (fp - fm) / (2.0 * (double)step), e = fabs(fd - dtheta[i]) / res.scale;
        res.worst = fmax(res.worst, e);
        res.n_checked++;
        CHECK_MSG(e < 1e-2, "lambda logit %d: fd %.6g analytic %.6g", i, fd, (double)dtheta[i]);
    }
    CHECK(res.scale > 1e-6);
    free(dtheta);
    return res;
}

#endif
