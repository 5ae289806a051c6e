/* MPI_Info: a small array of (key, value) pairs kept in insertion order,
 * which is the order MPI_Info_get_nthkey reports. MPI_INFO_ENV is built on
 * first use and built again once MPI is initialized (thread_level is then
 * the level granted); it cannot be modified. */
#include "obj/info.h"
#include "boot/boot.h"
#include "util/lm_error.h"
#include "util/lm_handle.h"
#include "util/lm_mem.h"
#include "util/lm_state.h"
#include "api/impl_gen.h"
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

typedef struct info_entry {
    char *key, *val;
} info_entry;

typedef struct lm_info {
    lm_object obj;
    int n, cap;
    info_entry *e;
} lm_info;

static lm_info env;
static int env_built_state = -1; /* lm_initialized_state() when env was built */

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = lm_malloc(LM_MEM_CORE, n);
    if (d) memcpy(d, s, n);
    return d;
}

static int find(const lm_info *in, const char *key)
{
    for (int i = 0; i < in->n; i++)
        if (!strcmp(in->e[i].key, key)) return i;
    return -1;
}

static void clear(lm_info *in)
{
    for (int i = 0; i < in->n; i++) {
        lm_free(LM_MEM_CORE, in->e[i].key);
        lm_free(LM_MEM_CORE, in->e[i].val);
    }
    lm_free(LM_MEM_CORE, in->e);
    in->e = NULL;
    in->n = in->cap = 0;
}

/* Set key to val (both already validated); MPI_SUCCESS or MPI_ERR_NO_MEM. */
static int put(lm_info *in, const char *key, const char *val)
{
    char *v = dup_str(val);
    if (!v) return MPI_ERR_NO_MEM;
    int i = find(in, key);
    if (i >= 0) {
        lm_free(LM_MEM_CORE, in->e[i].val);
        in->e[i].val = v;
        return MPI_SUCCESS;
    }
    if (in->n == in->cap) {
        int cap = in->cap ? 2 * in->cap : 4;
        info_entry *ne = lm_realloc(LM_MEM_CORE, in->e, (size_t)cap * sizeof *ne);
        if (!ne) {
            lm_free(LM_MEM_CORE, v);
            return MPI_ERR_NO_MEM;
        }
        in->e = ne;
        in->cap = cap;
    }
    char *k = dup_str(key);
    if (!k) {
        lm_free(LM_MEM_CORE, v);
        return MPI_ERR_NO_MEM;
    }
    in->e[in->n++] = (info_entry){k, v};
    return MPI_SUCCESS;
}

/* MPI_INFO_ENV's keys (MPI-4.1 section 11.2.1) that this process can know. */
static void build_env(void)
{
    clear(&env);
    env.obj = (lm_object){MPI_INFO_ENV, 1};
    char buf[4096];
    /* command and argv come from the kernel's copy of the command line, as
     * the program may have edited its own argv */
    FILE *f = fopen("/proc/self/cmdline", "r");
    if (f) {
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        /* ranks in one address space (mpirun --address-space=shared)
         * share leanmpi-host's command line: the program comes after it */
        size_t start = 0;
        const char *base = strrchr(buf, '/');
        if (n && !strcmp(base ? base + 1 : buf, "leanmpi-host")) start = strlen(buf) + 1;
        if (start < n) {
            put(&env, "command", buf + start);
            char args[sizeof buf];
            size_t len = 0;
            for (size_t i = start + strlen(buf + start) + 1; i < n; i += strlen(buf + i) + 1)
                len += (size_t)snprintf(args + len, sizeof args - len, "%s%s", len ? " " : "", buf + i);
            if (len) put(&env, "argv", args);
        }
    }
    /* the same keys before MPI is initialized (MPI_Info_create_env may be
     * called then): the size the launcher started, and the level MPI_Init
     * would give */
    snprintf(buf, sizeof buf, "%d", lm_boot_world_size_hint());
    put(&env, "maxprocs", buf);
    static const char *levels[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED",
                                   "MPI_THREAD_MULTIPLE"};
    int t = lm_initialized_state() == LM_STATE_INITIALIZED ? lm_thread_level() : MPI_THREAD_SINGLE;
    if (t >= MPI_THREAD_SINGLE && t <= MPI_THREAD_MULTIPLE) put(&env, "thread_level", levels[t - MPI_THREAD_SINGLE]);
    if (gethostname(buf, sizeof buf) == 0) {
        buf[sizeof buf - 1] = '\0';
        put(&env, "host", buf);
    }
    struct utsname u;
    if (uname(&u) == 0) put(&env, "arch", u.machine);
    if (getcwd(buf, sizeof buf)) put(&env, "wdir", buf);
    env_built_state = lm_initialized_state();
}

lm_info *lm_info_get(MPI_Info h)
{
    if (h == MPI_INFO_ENV) {
        if (env_built_state != lm_initialized_state() && lm_initialized_state() != LM_STATE_FINALIZED) build_env();
        return &env;
    }
    return lm_object_lookup(h, LM_KIND_INFO);
}

const char *lm_info_value(const lm_info *in, const char *key)
{
    int i = in ? find(in, key) : -1;
    return i >= 0 ? in->e[i].val : NULL;
}

static lm_info *get(MPI_Info h, const char *fname, int *rc)
{
    lm_info *in = lm_info_get(h);
    *rc = in ? MPI_SUCCESS : lm_err_noobj(MPI_ERR_INFO, fname, "invalid info object");
    return in;
}

static int check_key(const char *key, const char *fname)
{
    size_t n = strlen(key);
    if (n == 0) return lm_err_noobj(MPI_ERR_INFO_KEY, fname, "the key is empty");
    if (n >= MPI_MAX_INFO_KEY)
        return lm_err_noobj(MPI_ERR_INFO_KEY, fname, "the key is %zu characters long, the limit is %d", n,
                            MPI_MAX_INFO_KEY - 1);
    return MPI_SUCCESS;
}

int impl_MPI_Info_create(MPI_Info *info)
{
    lm_info *in = lm_object_alloc(LM_KIND_INFO, sizeof *in);
    if (!in) return lm_err_noobj(MPI_ERR_NO_MEM, "MPI_Info_create", "out of memory");
    *info = in->obj.handle;
    return MPI_SUCCESS;
}

int impl_MPI_Info_create_env(int argc, char *argv[], MPI_Info *info)
{
    (void)argc, (void)argv; /* the process's own command line is used */
    return impl_MPI_Info_dup(MPI_INFO_ENV, info);
}

int impl_MPI_Info_set(MPI_Info info, const char *key, const char *value)
{
    int rc;
    lm_info *in = get(info, "MPI_Info_set", &rc);
    if (!in) return rc;
    if (info == MPI_INFO_ENV) return lm_err_noobj(MPI_ERR_INFO, "MPI_Info_set", "MPI_INFO_ENV is read-only");
    if ((rc = check_key(key, "MPI_Info_set"))) return rc;
    size_t n = strlen(value);
    if (n >= MPI_MAX_INFO_VAL)
        return lm_err_noobj(MPI_ERR_INFO_VALUE, "MPI_Info_set", "the value is %zu characters long, the limit is %d", n,
                            MPI_MAX_INFO_VAL - 1);
    rc = put(in, key, value);
    return rc ? lm_err_noobj(rc, "MPI_Info_set", "out of memory") : MPI_SUCCESS;
}

int impl_MPI_Info_delete(MPI_Info info, const char *key)
{
    int rc;
    lm_info *in = get(info, "MPI_Info_delete", &rc);
    if (!in) return rc;
    if (info == MPI_INFO_ENV) return lm_err_noobj(MPI_ERR_INFO, "MPI_Info_delete", "MPI_INFO_ENV is read-only");
    if ((rc = check_key(key, "MPI_Info_delete"))) return rc;
    int i = find(in, key);
    if (i < 0) return lm_err_noobj(MPI_ERR_INFO_NOKEY, "MPI_Info_delete", "no key \"%s\"", key);
    lm_free(LM_MEM_CORE, in->e[i].key);
    lm_free(LM_MEM_CORE, in->e[i].val);
    memmove(&in->e[i], &in->e[i + 1], (size_t)(in->n - i - 1) * sizeof *in->e);
    in->n--;
    return MPI_SUCCESS;
}

int impl_MPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
    int rc;
    lm_info *in = get(info, "MPI_Info_get", &rc);
    if (!in) return rc;
    if ((rc = check_key(key, "MPI_Info_get"))) return rc;
    if (valuelen < 0) return lm_err_noobj(MPI_ERR_ARG, "MPI_Info_get", "valuelen %d is negative", valuelen);
    const char *v = lm_info_value(in, key);
    *flag = v != NULL;
    if (v) {
        /* value holds valuelen characters and the terminating NUL */
        size_t n = strlen(v);
        if (n > (size_t)valuelen) n = (size_t)valuelen;
        memcpy(value, v, n);
        value[n] = '\0';
    }
    return MPI_SUCCESS;
}

int impl_MPI_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value, int *flag)
{
    int rc;
    lm_info *in = get(info, "MPI_Info_get_string", &rc);
    if (!in) return rc;
    if ((rc = check_key(key, "MPI_Info_get_string"))) return rc;
    if (*buflen < 0) return lm_err_noobj(MPI_ERR_ARG, "MPI_Info_get_string", "buflen %d is negative", *buflen);
    const char *v = lm_info_value(in, key);
    *flag = v != NULL;
    if (!v) return MPI_SUCCESS;
    /* buflen in: the buffer's size; out: the size the whole value needs */
    size_t need = strlen(v) + 1;
    if (*buflen > 0) {
        size_t n = need <= (size_t)*buflen ? need - 1 : (size_t)*buflen - 1;
        memcpy(value, v, n);
        value[n] = '\0';
    }
    *buflen = (int)need;
    return MPI_SUCCESS;
}

int impl_MPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag)
{
    int rc;
    lm_info *in = get(info, "MPI_Info_get_valuelen", &rc);
    if (!in) return rc;
    if ((rc = check_key(key, "MPI_Info_get_valuelen"))) return rc;
    const char *v = lm_info_value(in, key);
    *flag = v != NULL;
    if (v) *valuelen = (int)strlen(v);
    return MPI_SUCCESS;
}

int impl_MPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
    int rc;
    lm_info *in = get(info, "MPI_Info_get_nkeys", &rc);
    if (!in) return rc;
    *nkeys = in->n;
    return MPI_SUCCESS;
}

int impl_MPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
    int rc;
    lm_info *in = get(info, "MPI_Info_get_nthkey", &rc);
    if (!in) return rc;
    if (n < 0 || n >= in->n)
        return lm_err_noobj(MPI_ERR_ARG, "MPI_Info_get_nthkey", "n = %d is out of range (the object has %d keys)", n,
                            in->n);
    snprintf(key, MPI_MAX_INFO_KEY, "%s", in->e[n].key);
    return MPI_SUCCESS;
}

int impl_MPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
    int rc;
    lm_info *in = get(info, "MPI_Info_dup", &rc);
    if (!in) return rc;
    lm_info *d = lm_object_alloc(LM_KIND_INFO, sizeof *d);
    if (!d) return lm_err_noobj(MPI_ERR_NO_MEM, "MPI_Info_dup", "out of memory");
    for (int i = 0; i < in->n; i++) {
        if (put(d, in->e[i].key, in->e[i].val)) {
            clear(d);
            lm_object_free(d);
            return lm_err_noobj(MPI_ERR_NO_MEM, "MPI_Info_dup", "out of memory");
        }
    }
    *newinfo = d->obj.handle;
    return MPI_SUCCESS;
}

int impl_MPI_Info_free(MPI_Info *info)
{
    lm_info *in = lm_object_lookup(*info, LM_KIND_INFO);
    if (!in) return lm_err_noobj(MPI_ERR_INFO, "MPI_Info_free", "invalid info object");
    clear(in);
    lm_object_free(in);
    *info = MPI_INFO_NULL;
    return MPI_SUCCESS;
}
