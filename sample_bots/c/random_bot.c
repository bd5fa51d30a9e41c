/*
 * A bot that plays a uniformly random legal action, in any game.
 *
 * C99 and libc only.  Build and run:
 *
 *     cc -std=c99 -O2 -o sample_bots/c/random_bot sample_bots/c/random_bot.c
 *     sample_bots/c/random_bot [SEED]      (`{seed}` in a bot command fills it in)
 *
 * Protocol (docs/protocol.md): one JSON object per line on stdin, one per
 * line on stdout, flushed.  hello -> ready, request -> action, game_over ->
 * wait for the next hello: it says "games":"many" in ready, so in a tournament
 * one process plays game after game (protocol version 2); it exits when stdin
 * ends.  stderr is yours for diagnostics.
 *
 * The JSON reading here is deliberately minimal: it finds a key at the top
 * level of the object and reads a string, an integer or an array of strings.
 * That is all a random bot needs; a real bot would use a JSON library
 * (cJSON, jansson, ...) to read the "state".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- reading a line of any length ------------------------------------- */

/* Read one line (without the newline) into *buf, growing it as needed.
   Returns the length, or -1 at end of input. */
static long read_line(char **buf, size_t *cap, FILE *in) {
    size_t len = 0;
    int c;
    if (*buf == NULL) {
        *cap = 1 << 16;
        *buf = malloc(*cap);
        if (*buf == NULL) { perror("malloc"); exit(2); }
    }
    while ((c = getc(in)) != EOF && c != '\n') {
        if (len + 1 >= *cap) {
            *cap *= 2;
            *buf = realloc(*buf, *cap);
            if (*buf == NULL) { perror("realloc"); exit(2); }
        }
        (*buf)[len++] = (char)c;
    }
    if (c == EOF && len == 0) return -1;
    (*buf)[len] = '\0';
    return (long)len;
}

/* ---- a minimal JSON scanner -------------------------------------------- */

static const char *skip_ws(const char *p) {
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
    return p;
}

/* p points at an opening quote: return the position after the closing quote. */
static const char *skip_string(const char *p) {
    p++;
    while (*p && *p != '"') {
        if (*p == '\\' && p[1]) p++;
        p++;
    }
    return *p ? p + 1 : p;
}

/* Skip any JSON value (string, number, literal, object, array). */
static const char *skip_value(const char *p) {
    p = skip_ws(p);
    if (*p == '"') return skip_string(p);
    if (*p == '{' || *p == '[') {
        int depth = 0;
        while (*p) {
            if (*p == '"') { p = skip_string(p); continue; }
            if (*p == '{' || *p == '[') depth++;
            else if (*p == '}' || *p == ']') {
                depth--;
                if (depth == 0) return p + 1;
            }
            p++;
        }
        return p;
    }
    while (*p && *p != ',' && *p != '}' && *p != ']') p++;
    return p;
}

/* The value of top-level key `key` in the object at `json`, or NULL. */
static const char *find_key(const char *json, const char *key) {
    size_t klen = strlen(key);
    const char *p = skip_ws(json);
    if (*p != '{') return NULL;
    p++;
    for (;;) {
        p = skip_ws(p);
        if (*p != '"') return NULL;
        const char *name = p + 1;
        const char *end = skip_string(p);
        int match = (size_t)(end - 1 - name) == klen && strncmp(name, key, klen) == 0;
        p = skip_ws(end);
        if (*p != ':') return NULL;
        p = skip_ws(p + 1);
        if (match) return p;
        p = skip_ws(skip_value(p));
        if (*p != ',') return NULL;
        p++;
    }
}

/* Copy the JSON string at p (escapes kept as written) into out; 0 if not a string. */
static int string_raw(const char *p, char *out, size_t size) {
    if (p == NULL || *p != '"') return 0;
    const char *end = skip_string(p);
    size_t n = (size_t)(end - p - 2);
    if (n + 1 > size) n = size - 1;
    memcpy(out, p + 1, n);
    out[n] = '\0';
    return 1;
}

/* ---- the bot -------------------------------------------------------------- */

int main(int argc, char **argv) {
    char *line = NULL;
    size_t cap = 0;
    char type[32];
    srand(argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : (unsigned)time(NULL));

    while (read_line(&line, &cap, stdin) >= 0) {
        if (!string_raw(find_key(line, "type"), type, sizeof type)) continue;

        if (strcmp(type, "hello") == 0) {
            /* This bot decides from each request alone, so it asks for no events. */
            printf("{\"type\":\"ready\",\"name\":\"c-random\",\"events\":false,\"games\":\"many\"}\n");
            fflush(stdout);
        } else if (strcmp(type, "request") == 0) {
            const char *id = find_key(line, "id");
            const char *legal = find_key(line, "legal");
            if (id == NULL || legal == NULL || *legal != '[') {
                fprintf(stderr, "c-random: request without id or legal\n");
                return 1;
            }
            long request_id = strtol(id, NULL, 10);
            /* Count the strings in the legal array, pick one, find it again. */
            int n = 0;
            const char *p = skip_ws(legal + 1);
            while (*p == '"') {
                n++;
                p = skip_ws(skip_string(p));
                if (*p == ',') p = skip_ws(p + 1);
            }
            if (n == 0) {
                fprintf(stderr, "c-random: empty legal list\n");
                return 1;
            }
            int pick = rand() % n;
            p = skip_ws(legal + 1);
            for (int i = 0; i < pick; i++) {
                p = skip_ws(skip_string(p));
                if (*p == ',') p = skip_ws(p + 1);
            }
            /* Echo the chosen string exactly as it came, escapes included:
               it is already valid JSON. */
            const char *end = skip_string(p);
            printf("{\"type\":\"action\",\"id\":%ld,\"action\":%.*s}\n",
                   request_id, (int)(end - p), p);
            fflush(stdout);
        }
        /* "game_over": nothing to do, a new hello or the end of stdin follows.
           "event": not asked for, ignored if sent. */
    }
    free(line);
    return 0;
}
