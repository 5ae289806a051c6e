/* See spawn_request.h. */
#include "spawn_request.h"
#include "find_program.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *take_str(const char **at, const char *end)
{
    const char *s = *at, *nul = s < end ? memchr(s, '\0', (size_t)(end - s)) : NULL;
    if (!nul) return NULL;
    *at = nul + 1;
    return s;
}

static int take_int(const char **at, const char *end, int32_t *v)
{
    if (end - *at < (long)sizeof *v) return -1;
    memcpy(v, *at, sizeof *v);
    *at += sizeof *v;
    return 0;
}

int lm_spawn_cmds_decode(const char *p, const char *end, lm_spawn_cmd **cmds, int *count, int *total, char *why,
                         size_t whycap)
{
    int32_t n;
    *cmds = NULL;
    *count = *total = 0;
    if (take_int(&p, end, &n) || n < 1 || n > 4096 || !(*cmds = calloc((size_t)n, sizeof **cmds)))
        return snprintf(why, whycap, "malformed spawn request"), -1;
    *count = n;
    for (int i = 0; i < n; i++) {
        lm_spawn_cmd *c = &(*cmds)[i];
        int32_t mp, argc;
        if (take_int(&p, end, &mp) || take_int(&p, end, &argc) || mp < 0 || argc < 0 || argc > 65536 ||
            !(c->command = take_str(&p, end)) || !(c->wdir = take_str(&p, end)) || !(c->host = take_str(&p, end)) ||
            !(c->args = calloc((size_t)argc + 2, sizeof *c->args)))
            return snprintf(why, whycap, "malformed spawn request"), -1;
        c->maxprocs = mp;
        c->argc = argc;
        c->args[0] = c->command;
        for (int k = 0; k < argc; k++)
            if (!(c->args[k + 1] = take_str(&p, end))) return snprintf(why, whycap, "malformed spawn request"), -1;
        if (*total > (1 << 20) - mp) return snprintf(why, whycap, "more than 2^20 processes asked for"), -1;
        *total += mp;
    }
    return 0;
}

int lm_spawn_cmds_resolve(lm_spawn_cmd *cmds, int count, const char *host, char *why, size_t whycap)
{
    const char *at = host ? "host " : "", *h = host ? host : "", *sep = host ? ": " : "";
    for (int i = 0; i < count; i++) {
        lm_spawn_cmd *c = &cmds[i];
        char reason[512];
        if (lm_find_program_quiet(c->command, c->path, sizeof c->path, reason, sizeof reason) != 0)
            return snprintf(why, whycap, "%s%s%s%s", at, h, sep, reason), -1;
        struct stat st;
        if (*c->wdir && (stat(c->wdir, &st) != 0 || !S_ISDIR(st.st_mode)))
            return snprintf(why, whycap, "%s%s%sworking directory '%s' (info key wdir) is not a directory", at, h, sep,
                            c->wdir),
                   -1;
    }
    return 0;
}

void lm_spawn_cmds_free(lm_spawn_cmd *cmds, int count)
{
    for (int i = 0; cmds && i < count; i++) free(cmds[i].args);
    free(cmds);
}

int lm_spawn_env_init(lm_spawn_env *e, char *const *base, int nbase, int job, const char *port)
{
    e->nbase = nbase;
    e->env = calloc((size_t)nbase + 3, sizeof *e->env);
    if (!e->env) return -1;
    for (int i = 0; i < nbase; i++) e->env[i] = base[i];
    snprintf(e->jobnum, sizeof e->jobnum, "LEANMPI_JOB_NUM=%d", job);
    snprintf(e->parent, sizeof e->parent, "LEANMPI_PARENT_PORT=%s", port);
    e->env[nbase] = e->jobnum;
    e->env[nbase + 1] = e->parent;
    e->env[nbase + 2] = e->appnum;
    return 0;
}

void lm_spawn_env_command(lm_spawn_env *e, const lm_spawn_cmd *c, int appnum, lm_spawn_job *spec)
{
    snprintf(e->appnum, sizeof e->appnum, "LEANMPI_APPNUM=%d", appnum);
    spec->path = c->path;
    spec->argv = (char **)c->args;
    spec->env = e->env;
    spec->nenv = e->nbase + 3;
    spec->cwd = *c->wdir ? c->wdir : NULL;
}

void lm_spawn_env_free(lm_spawn_env *e)
{
    free(e->env);
    e->env = NULL;
}
