/* JSON text that keeps every double's bits; see common/json.h. */
#include "common/json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The number nodes turned raw for one print, to turn back afterwards. */
typedef struct {
    cJSON **nodes;
    size_t n, cap;
    bool bad; /* out of memory */
} s_turned_t;

/* Whether cJSON's own "%1.15g" gives v back bit for bit. */
static bool s_short_is_exact(double v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%1.15g", v);
    return strtod(buf, NULL) == v;
}

static void s_turn(cJSON *node, s_turned_t *t)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%1.17g", node->valuedouble);
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 16;
        cJSON **nodes = realloc(t->nodes, cap * sizeof *nodes);
        if (!nodes) {
            t->bad = true;
            return;
        }
        t->nodes = nodes;
        t->cap = cap;
    }
    char *text = malloc(strlen(buf) + 1);
    if (!text) {
        t->bad = true;
        return;
    }
    strcpy(text, buf);
    node->type = (node->type & ~0xFF) | cJSON_Raw;
    node->valuestring = text;
    t->nodes[t->n++] = node;
}

/* Every number node of the tree that "%1.15g" would not give back exactly becomes a raw node
 * holding its "%1.17g" text (cJSON prints a raw node's text as it is). */
static void s_turn_numbers(cJSON *node, s_turned_t *t)
{
    for (; node && !t->bad; node = node->next) {
        if (cJSON_IsNumber(node)) {
            if (isfinite(node->valuedouble) && !s_short_is_exact(node->valuedouble))
                s_turn(node, t);
        }
        if (node->child)
            s_turn_numbers(node->child, t);
    }
}

char *tb_json_print(const cJSON *shown, bool formatted)
{
    cJSON *item = (cJSON *)shown; /* changed for the print, restored below */
    if (!item)
        return NULL;
    s_turned_t t = {0};
    s_turn_numbers(item, &t);
    char *text = NULL;
    if (!t.bad)
        text = formatted ? cJSON_Print(item) : cJSON_PrintUnformatted(item);
    for (size_t i = 0; i < t.n; i++) {
        cJSON *node = t.nodes[i];
        free(node->valuestring);
        node->valuestring = NULL;
        node->type = (node->type & ~0xFF) | cJSON_Number;
    }
    free(t.nodes);
    return text;
}
