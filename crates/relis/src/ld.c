/* Long-double arithmetic for INCRBYFLOAT, with Redis 7.0's parsing (string2ld) and formatting
 * (ld2string, LD_STR_HUMAN) rules. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LONG_DOUBLE_CHARS (5 * 1024)

static int parse_ld(const char *s, size_t slen, long double *dp) {
    char buf[MAX_LONG_DOUBLE_CHARS];
    char *eptr;
    long double value;
    if (slen == 0 || slen >= sizeof(buf)) return 0;
    memcpy(buf, s, slen);
    buf[slen] = '\0';
    errno = 0;
    value = strtold(buf, &eptr);
    if (isspace((unsigned char)buf[0]) || eptr[0] != '\0' || (size_t)(eptr - buf) != slen ||
        (errno == ERANGE && (value == HUGE_VALL || value == -HUGE_VALL || fpclassify(value) == FP_ZERO)) ||
        errno == EINVAL || isnan(value))
        return 0;
    *dp = value;
    return 1;
}

/* Returns the length written to out, or -1 (current value not a float), -2 (increment not a
 * float), -3 (result NaN or infinite), -4 (out too small). `cur` may be NULL for a missing key. */
int relis_ld_incr(const char *cur, size_t curlen, const char *incr, size_t incrlen, char *out,
                  size_t outlen) {
    long double value = 0, by;
    int l;
    if (cur && !parse_ld(cur, curlen, &value)) return -1;
    if (!parse_ld(incr, incrlen, &by)) return -2;
    value += by;
    if (isnan(value) || isinf(value)) return -3;
    l = snprintf(out, outlen, "%.17Lf", value);
    if (l < 0 || (size_t)l + 1 > outlen) return -4;
    if (strchr(out, '.') != NULL) {
        char *p = out + l - 1;
        while (*p == '0') { p--; l--; }
        if (*p == '.') l--;
    }
    if (l == 2 && out[0] == '-' && out[1] == '0') { out[0] = '0'; l = 1; }
    return l;
}

/* A blocking command's timeout in seconds, read as Redis 7.0's getTimeoutFromObjectOrReply
 * reads it: string2ld, times 1000, rounded up (ceill), converted to long long. Returns -1 when
 * it is not a float; otherwise 0 with *ms set. A product outside long long's range converts as
 * x86-64 converts it, to LLONG_MIN, which Redis then calls negative. */
int relis_ld_timeout_ms(const char *s, size_t slen, long long *ms) {
    long double v;
    if (!parse_ld(s, slen, &v)) return -1;
    v = ceill(v * 1000.0L);
    if (v >= -9223372036854775808.0L && v < 9223372036854775808.0L)
        *ms = (long long)v;
    else
        *ms = LLONG_MIN;
    return 0;
}
