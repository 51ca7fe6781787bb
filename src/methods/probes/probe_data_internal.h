/* probe_data_internal.h: the layout of al_probe_data (probe.h), shared by probe_data.c, which fills it,
 * and probe_fit.c, which trains and evaluates on it. Not public. */
#ifndef AL_METHODS_PROBE_DATA_INTERNAL_H
#define AL_METHODS_PROBE_DATA_INTERNAL_H

#include "probe.h"

struct al_probe_data {
    al_probe_kind kind;
    int S, D, L;          /* n_states, hidden size, padded length */
    int cap_examples, cap_rows;
    int n_examples, n_rows;
    float *feats;         /* [cap_rows, S, D] */
    int32_t *row_example; /* [cap_rows] example index over the whole set */
    int32_t *row_pos;     /* [cap_rows] */
    int32_t *labels;      /* SEQUENCE [cap_examples], TOKEN [cap_rows] */
    int32_t *offsets;     /* [cap_examples + 1]: example e owns rows [offsets[e], offsets[e + 1]) */
};

#endif
