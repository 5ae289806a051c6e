#include "find_program.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* 0 if path is an executable regular file, else an errno value. */
static int check(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) return errno;
    if (S_ISDIR(st.st_mode)) return EISDIR;
    if (!S_ISREG(st.st_mode) || access(path, X_OK) != 0) return EACCES;
    return 0;
}

int lm_find_program(const char *prog, const char *name, char *out, size_t cap)
{
    char why[512];
    int rc = lm_find_program_quiet(name, out, cap, why, sizeof why);
    if (rc) fprintf(stderr, "%s: %s\n", prog, why);
    return rc;
}

int lm_find_program_quiet(const char *name, char *out, size_t cap, char *why, size_t whycap)
{
    if (!*name) {
        snprintf(why, whycap, "empty program name");
        return 127;
    }
    if (strchr(name, '/')) {
        int err = check(name);
        if (err == 0 && strlen(name) < cap) {
            snprintf(out, cap, "%s", name);
            return 0;
        }
        if (err == ENOENT || err == ENOTDIR) {
            snprintf(why, whycap, "program '%s' does not exist", name);
            return 127;
        }
        snprintf(why, whycap, "program '%s' is not executable (%s)", name, strerror(err ? err : ENAMETOOLONG));
        return 126;
    }
    /* Like execvp: an empty PATH element means the current directory, and a
     * non-executable match is remembered but the search goes on. */
    const char *path = getenv("PATH");
    if (!path) path = "/usr/local/bin:/usr/bin:/bin";
    int saw_unexecutable = 0;
    for (const char *p = path;; p++) {
        const char *end = strchr(p, ':');
        size_t dlen = end ? (size_t)(end - p) : strlen(p);
        int n = dlen ? snprintf(out, cap, "%.*s/%s", (int)dlen, p, name) : snprintf(out, cap, "%s", name);
        if (n > 0 && (size_t)n < cap) {
            int err = check(out);
            if (err == 0) return 0;
            if (err == EACCES || err == EISDIR) saw_unexecutable = 1;
        }
        if (!end) break;
        p = end;
    }
    if (saw_unexecutable) {
        snprintf(why, whycap, "program '%s' was found in PATH but is not executable", name);
        return 126;
    }
    snprintf(why, whycap, "program '%s' not found in PATH", name);
    return 127;
}
