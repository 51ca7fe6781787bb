/* reply_tensor.h: a reply's tensor by name, for the C tests that read what al_session_run returned. */
#ifndef AL_TEST_REPLY_TENSOR_H
#define AL_TEST_REPLY_TENSOR_H

#include <string.h>

#include "attnlab.h"

/* The tensor called name in reply, NULL when the reply has none. */
static inline const al_tensor_out *find_tensor(const al_reply *reply, const char *name) {
    for (int i = 0; i < reply->n_tensors; i++)
        if (strcmp(reply->tensors[i].name, name) == 0) return &reply->tensors[i];
    return NULL;
}

/* Its values, NULL when the reply has none. */
static inline const float *find_tensor_data(const al_reply *reply, const char *name) {
    const al_tensor_out *t = find_tensor(reply, name);
    return t ? t->data : NULL;
}

#endif
