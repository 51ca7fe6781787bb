/* session_request.h: a request through al_session_run in a test, with its status checked and its reply's
 * JSON parsed; and a request that must be refused as invalid with a message naming what is at fault
 * (the al_status / al_error contract of src/attnlab.h). */
#ifndef AL_TEST_SESSION_REQUEST_H
#define AL_TEST_SESSION_REQUEST_H

#include <string.h>

#include "attnlab.h"
#include "cJSON.h"
#include "check.h"

/* Runs the request; checks the status; returns the parsed reply JSON (NULL if none) for cJSON_Delete.
 * The caller frees *reply with al_reply_free. */
static inline cJSON *run(al_session *s, const char *request, al_status expect, al_reply *reply) {
    al_status st = al_session_run(s, request, NULL, reply);
    CHECK_MSG(st == expect, "%.300s -> %s, expected %s: %.300s", request, al_status_name(st),
              al_status_name(expect), reply->json ? reply->json : "(null)");
    return reply->json ? cJSON_Parse(reply->json) : NULL;
}

/* The request must be refused as invalid, with `needle` in the error's message. */
static inline void expect_error(al_session *s, const char *request, const char *needle) {
    al_reply reply;
    cJSON *r = run(s, request, AL_ERR_INVALID, &reply);
    const char *msg = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "error"), "message"));
    CHECK_MSG(msg && strstr(msg, needle), "%.300s: message '%s' lacks '%s'", request, msg ? msg : "(none)", needle);
    cJSON_Delete(r);
    al_reply_free(&reply);
}

#endif
