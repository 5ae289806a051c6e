/* Command-line parsing for mpirun. Options come before the program; the
 * first word that is not an option (or everything after "--") is the program
 * and its arguments. Long options also accept the "--opt=value" form.
 * Nothing is started unless the whole command line is valid. */
#include "options.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef LEANMPI_VERSION
#define LEANMPI_VERSION "unknown"
#endif

static void usage(const char *prog, FILE *f)
{
    fprintf(f,
            "Usage: %s [options] program [arguments...]\n"
            "Start an MPI job of N ranks on this node, or across hosts.\n\n"
            "Options:\n"
            "  -n, -np N                 number of ranks (default 1)\n"
            "  -x VAR[=value]            export VAR (from this environment, or set to value)\n"
            "  --env VAR=value           set VAR in every rank (also: --env VAR value,\n"
            "                            -env/-genv VAR value)\n"
            "  --oversubscribe           on one node: always allowed; across hosts: more\n"
            "                            ranks than slots, spread evenly\n"
            "  --host H[:N][,H[:N]...]   run on these hosts with N slots each (default 1);\n"
            "                            also -H, -host; ranks fill the slots in order\n"
            "  --hostfile F              hosts from F, one per line: 'name slots=N' or\n"
            "                            'name:N' (also -hostfile, --machinefile, -f)\n"
            "  --rankfile F              place rank by rank: lines 'rank N=host slot=CPUS'\n"
            "                            (Open MPI's syntax; slot: CPU numbers and ranges\n"
            "                            counted among the usable CPUs, binds the rank);\n"
            "                            hosts must be among --host/--hostfile when given\n"
            "                            (also -rf)\n"
            "  --launch-agent TEMPLATE   command that runs a command on host {host}\n"
            "                            (default: ssh -x -o BatchMode=yes -o\n"
            "                            ConnectTimeout=5 {host}); the host itself runs\n"
            "                            without it\n"
            "  --launch-fanout K         each launch agent starts at most K others (32)\n"
            "  --tag-output              prefix each output line with [1,RANK]<stdout>: or\n"
            "                            [1,RANK]<stderr>:\n"
            "  --timeout SECONDS         end the job (exit status 124) if it runs longer\n"
            "  --simulate-world-size N   make MPI_COMM_WORLD report N ranks (N >= -n)\n"
            "  --universe-size N         MPI_UNIVERSE_SIZE (default: the CPUs mpirun may use,\n"
            "                            at least the size of MPI_COMM_WORLD); also -usize\n"
            "  --address-space=MODE      separate (default): a process per rank; shared:\n"
            "                            the ranks of this node in one address space, each\n"
            "                            a task with its own copy of the program (docs/\n"
            "                            SHARED_ADDRESS_SPACE.md); auto: shared where the\n"
            "                            program allows it; also LEANMPI_ADDRESS_SPACE\n"
            "  --address-space-ranks K   ranks per shared address space (default and most: 15)\n"
            "  -h, --help                show this help\n"
            "  --version                 show the version\n\n"
            "Exit status: 0 when every rank exits 0; a failing rank's exit status;\n"
            "128+signal for a rank killed by a signal; the MPI_Abort error code (1..255);\n"
            "1 for a rank that exits without MPI_Finalize; 124 on --timeout;\n"
            "128+signal when mpirun itself is interrupted; 2 for a bad command line;\n"
            "126/127 for a program that is not executable / not found.\n",
            prog);
}

static int parse_address_space(const char *prog, const char *opt, const char *v, lm_options *o)
{
    static const char *const modes[] = {"separate", "shared", "auto"};
    for (int m = 0; m < 3; m++)
        if (!strcmp(v, modes[m])) {
            o->shared_space = m;
            return 0;
        }
    fprintf(stderr, "%s: %s: '%s' is none of separate, shared, auto\n", prog, opt, v);
    return -1;
}

static int parse_count(const char *prog, const char *opt, const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = s ? strtol(s, &end, 10) : 0;
    if (!s || !*s || *end != '\0' || errno || v <= 0 || v > INT_MAX) {
        fprintf(stderr, "%s: %s needs a positive whole number, not '%s'\n", prog, opt, s ? s : "");
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int add_env(const char *prog, lm_options *o, const char *name, const char *value)
{
    if (!*name || strchr(name, '=')) {
        fprintf(stderr, "%s: '%s' is not a valid environment variable name\n", prog, name);
        return -1;
    }
    char **grown = realloc(o->env, (size_t)(o->nenv + 1) * sizeof *grown);
    if (!grown) return -1;
    o->env = grown;
    size_t n = strlen(name) + strlen(value) + 2;
    char *kv = malloc(n);
    if (!kv) return -1;
    snprintf(kv, n, "%s=%s", name, value);
    o->env[o->nenv++] = kv;
    return 0;
}

/* "VAR=value" -> (VAR, value). Returns -1 if there is no '='. */
static int split_assign(const char *prog, lm_options *o, const char *arg)
{
    const char *eq = strchr(arg, '=');
    if (!eq) return -1;
    char name[256];
    size_t len = (size_t)(eq - arg);
    if (len == 0 || len >= sizeof name) {
        fprintf(stderr, "%s: '%s' is not a valid VAR=value setting\n", prog, arg);
        return -2;
    }
    memcpy(name, arg, len);
    name[len] = '\0';
    return add_env(prog, o, name, eq + 1) ? -2 : 0;
}

static int is(const char *opt, const char *a, const char *b)
{
    return strcmp(opt, a) == 0 || (b && strcmp(opt, b) == 0);
}

int lm_options_parse(const char *prog, int argc, char **argv, lm_options *o)
{
    memset(o, 0, sizeof *o);
    o->nranks = 1;
    o->space_ranks = LM_SPACE_RANKS_MAX;
    /* the environment's choice, which the command line overrides */
    const char *space = getenv("LEANMPI_ADDRESS_SPACE");
    if (space && *space && parse_address_space(prog, "LEANMPI_ADDRESS_SPACE", space, o)) return LM_OPTS_ERROR;
    int i = 1;
    const char *rankfile = NULL; /* read once every option is known (it may follow --host) */
    for (; i < argc; i++) {
        char *arg = argv[i];
        if (strcmp(arg, "--") == 0) {
            i++;
            break;
        }
        if (arg[0] != '-' || arg[1] == '\0') break;

        /* Split "--opt=value" for long options only; "-x A=B" keeps its '='. */
        char optbuf[64];
        const char *opt = arg, *inline_val = NULL;
        if (arg[1] == '-') {
            const char *eq = strchr(arg, '=');
            if (eq && (size_t)(eq - arg) < sizeof optbuf) {
                memcpy(optbuf, arg, (size_t)(eq - arg));
                optbuf[eq - arg] = '\0';
                opt = optbuf;
                inline_val = eq + 1;
            }
        }
#define NEXT_VALUE() (inline_val ? inline_val : (i + 1 < argc ? argv[++i] : NULL))
#define NEED(v)                                                          \
    do {                                                                 \
        if (!(v)) {                                                      \
            fprintf(stderr, "%s: option %s needs a value\n", prog, opt); \
            goto error;                                                  \
        }                                                                \
    } while (0)

        if (is(opt, "-h", "--help")) {
            usage(prog, stdout);
            lm_options_free(o);
            return LM_OPTS_EXIT_OK;
        } else if (is(opt, "--version", "-V")) {
            printf("%s (LeanMPI) %s\n", prog, LEANMPI_VERSION);
            lm_options_free(o);
            return LM_OPTS_EXIT_OK;
        } else if (is(opt, "-n", "-np") || is(opt, "--n", "--np")) {
            const char *v = NEXT_VALUE();
            NEED(v);
            if (parse_count(prog, opt, v, &o->nranks)) goto error;
            o->nranks_given = 1;
        } else if (is(opt, "--simulate-world-size", NULL)) {
            const char *v = NEXT_VALUE();
            NEED(v);
            if (parse_count(prog, opt, v, &o->reported_world_size)) goto error;
        } else if (is(opt, "--universe-size", "-usize")) {
            const char *v = NEXT_VALUE();
            NEED(v);
            if (parse_count(prog, opt, v, &o->universe_size)) goto error;
        } else if (is(opt, "--timeout", "-timeout")) {
            const char *v = NEXT_VALUE();
            NEED(v);
            char *end;
            errno = 0;
            double t = strtod(v, &end);
            if (!*v || *end || errno || !(t > 0) || t > 1e9) {
                fprintf(stderr, "%s: %s needs a positive number of seconds, not '%s'\n", prog, opt, v);
                goto error;
            }
            o->timeout_s = t;
        } else if (is(opt, "--address-space", NULL)) {
            const char *v = NEXT_VALUE();
            NEED(v);
            if (parse_address_space(prog, opt, v, o)) goto error;
        } else if (is(opt, "--address-space-ranks", NULL)) {
            const char *v = NEXT_VALUE();
            NEED(v);
            if (parse_count(prog, opt, v, &o->space_ranks)) goto error;
            if (o->space_ranks > LM_SPACE_RANKS_MAX) {
                fprintf(stderr, "%s: %s: at most %d ranks share an address space (glibc's 16 link-map namespaces)\n",
                        prog, opt, LM_SPACE_RANKS_MAX);
                goto error;
            }
        } else if (is(opt, "--tag-output", "-tag-output")) {
            o->tag_output = 1;
        } else if (is(opt, "--oversubscribe", "-oversubscribe")) {
            o->oversubscribe = 1;
        } else if (is(opt, "--host", "-host") || is(opt, "-H", "--hosts")) {
            const char *v = NEXT_VALUE();
            NEED(v);
            if (lm_hosts_parse_list(prog, v, &o->hosts)) goto error;
        } else if (is(opt, "--hostfile", "-hostfile") || is(opt, "--machinefile", "-machinefile") ||
                   is(opt, "-f", NULL)) {
            const char *v = NEXT_VALUE();
            NEED(v);
            if (lm_hosts_parse_file(prog, v, &o->hosts)) goto error;
        } else if (is(opt, "--rankfile", "-rankfile") || is(opt, "-rf", NULL)) {
            const char *v = NEXT_VALUE();
            NEED(v);
            rankfile = v;
        } else if (is(opt, "--launch-agent", "-launch-agent")) {
            const char *v = NEXT_VALUE();
            NEED(v);
            if (!*v) {
                fprintf(stderr, "%s: %s needs a command\n", prog, opt);
                goto error;
            }
            o->launch_agent = v;
        } else if (is(opt, "--launch-fanout", NULL)) {
            const char *v = NEXT_VALUE();
            NEED(v);
            if (parse_count(prog, opt, v, &o->fanout)) goto error;
        } else if (is(opt, "-x", NULL)) {
            const char *v = NEXT_VALUE();
            NEED(v);
            int rc = split_assign(prog, o, v);
            if (rc == -2) goto error;
            if (rc == -1) {
                /* Ranks inherit this environment anyway; naming it checks it. */
                const char *val = getenv(v);
                if (val && add_env(prog, o, v, val)) goto error;
            }
        } else if (is(opt, "--env", "-env") || is(opt, "-genv", "--genv")) {
            const char *v = NEXT_VALUE();
            NEED(v);
            int rc = split_assign(prog, o, v);
            if (rc == -2) goto error;
            if (rc == -1) {
                const char *val = i + 1 < argc ? argv[++i] : NULL;
                if (!val) {
                    fprintf(stderr, "%s: %s %s needs a value (VAR=value or VAR value)\n", prog, opt, v);
                    goto error;
                }
                if (add_env(prog, o, v, val)) goto error;
            }
        } else {
            fprintf(stderr, "%s: unknown option '%s' (see %s --help)\n", prog, arg, prog);
            goto error;
        }
        if (inline_val && (is(opt, "--tag-output", "--oversubscribe") || is(opt, "--help", "--version"))) {
            fprintf(stderr, "%s: option %s takes no value\n", prog, opt);
            goto error;
        }
#undef NEXT_VALUE
#undef NEED
    }
    if (i >= argc) {
        fprintf(stderr, "%s: no program given (see %s --help)\n", prog, prog);
        goto error;
    }
    if (rankfile) {
        int listed = o->hosts.n > 0;
        if (lm_rankfile_read(prog, rankfile, &o->hosts, o->oversubscribe, &o->rankfile)) goto error;
        if (o->nranks_given && o->nranks != o->rankfile.n) {
            fprintf(stderr, "%s: -n %d, but the rankfile %s places %d ranks\n", prog, o->nranks, rankfile,
                    o->rankfile.n);
            goto error;
        }
        o->nranks = o->rankfile.n;
        /* a rankfile of this machine alone: a job of one node, bound */
        if (!listed && o->hosts.n == 1 && lm_host_is_local(o->hosts.h[0].name)) lm_hosts_free(&o->hosts);
    } else if (o->hosts.n) {
        int rpn;
        int n = o->nranks_given ? o->nranks : 0;
        if (lm_hosts_place(prog, &o->hosts, &n, o->oversubscribe, &rpn)) goto error;
        o->nranks = n;
    }
    if (o->reported_world_size && o->reported_world_size < o->nranks) {
        fprintf(stderr, "%s: --simulate-world-size (%d) must be at least the number of ranks (%d)\n", prog,
                o->reported_world_size, o->nranks);
        goto error;
    }
    if (!o->reported_world_size) o->reported_world_size = o->nranks;
    if (o->universe_size && o->universe_size < o->reported_world_size) {
        fprintf(stderr, "%s: --universe-size (%d) must be at least the size of MPI_COMM_WORLD (%d)\n", prog,
                o->universe_size, o->reported_world_size);
        goto error;
    }
    if (o->shared_space && o->hosts.n) {
        fprintf(stderr,
                "%s: --address-space=shared runs the ranks of one node only (not yet with --host or "
                "--hostfile)\n",
                prog);
        goto error;
    }
    o->argv = argv + i;
    return LM_OPTS_RUN;
error:
    lm_options_free(o);
    return LM_OPTS_ERROR;
}

void lm_options_free(lm_options *o)
{
    lm_hosts_free(&o->hosts);
    lm_rankfile_free(&o->rankfile);
    for (int k = 0; k < o->nenv; k++) free(o->env[k]);
    free(o->env);
    o->env = NULL;
    o->nenv = 0;
}
