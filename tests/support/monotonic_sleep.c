/* Preloaded before libfaketime in the clock-skew tests: monotonic sleeps go to the kernel
 * untouched.
 *
 * With FAKETIME_DONT_FAKE_MONOTONIC=1 (a skewed wall clock, a true monotonic one, as on
 * a host whose clock drifted) libfaketime 0.9.10 still shifts the deadline of
 * clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, ...), which Python 3.11's time.sleep
 * uses, and the kernel answers EINVAL (wolfcw/libfaketime#426).  Nothing is faked here:
 * the sleep is the real one.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int clock_nanosleep(clockid_t clock_id, int flags, const struct timespec *request,
                    struct timespec *remaining) {
    if (clock_id == CLOCK_MONOTONIC) {
        /* clock_nanosleep returns the error number; the raw syscall sets errno. */
        return syscall(SYS_clock_nanosleep, clock_id, flags, request, remaining) == 0 ? 0 : errno;
    }
    static int (*next)(clockid_t, int, const struct timespec *, struct timespec *);
    if (next == NULL) {
        next = dlsym(RTLD_NEXT, "clock_nanosleep");
    }
    return next(clock_id, flags, request, remaining);
}
