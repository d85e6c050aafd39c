/* SQLite's unix VFS calls fcntl(2) through a pointer a program may replace (the VFS's
 * xSetSystemCall). fcntl is variadic, which stable Rust cannot define, so this trampoline takes
 * the calls: F_SETLK and F_SETLKW go to relis_shm_setlk (backend/sqlite/shmlocks.rs), which
 * answers the WAL index's lock requests and returns -2 for any other lock; everything else, and what it passes
 * back, goes to the fcntl the VFS called before. As glibc's own fcntl does, the third argument
 * is read as a pointer whatever the command. */
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>

typedef int (*relis_fcntl_fn)(int, int, ...);

static relis_fcntl_fn real_fcntl = NULL;

int relis_shm_setlk(int fd, int cmd, struct flock *lock);

/* Sets the fcntl the trampoline passes to (before the trampoline is installed). */
void relis_shm_set_real_fcntl(relis_fcntl_fn f) { real_fcntl = f; }

/* F_SETLK or F_SETLKW (cmd) through the fcntl the VFS called before. */
int relis_shm_real_setlk(int fd, int cmd, struct flock *lock) { return real_fcntl(fd, cmd, lock); }

/* F_GETLK through the fcntl the VFS called before. */
int relis_shm_real_getlk(int fd, struct flock *lock) { return real_fcntl(fd, F_GETLK, lock); }

int relis_shm_fcntl(int fd, int cmd, ...) {
    va_list ap;
    void *arg;
    va_start(ap, cmd);
    arg = va_arg(ap, void *);
    va_end(ap);
    if (cmd == F_SETLK || cmd == F_SETLKW) {
        int rc = relis_shm_setlk(fd, cmd, (struct flock *)arg);
        if (rc != -2) return rc;
    }
    return real_fcntl(fd, cmd, arg);
}
