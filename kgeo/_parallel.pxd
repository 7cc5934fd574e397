# What kgeo's parallel loops share: one-way flags and counters that threads
# set and read without a lock, and the check that lets Ctrl-C stop a long
# parallel loop.
from cpython.exc cimport PyErr_CheckSignals
from cython.parallel cimport threadid
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec


# One-way flags (0, then 1 for good) that several threads set and read
# without a lock: a kernel's ``overflowed``, the row cache's stop request, a
# loop's interrupt. Relaxed atomics: plain accesses from two threads are a
# data race (undefined behaviour in C; ThreadSanitizer reported both flags),
# and a loop could keep a plain flag in a register. Nothing else is
# published through them, so they need no ordering.
cdef extern from *:
    """
    #if defined(__GNUC__)
    static inline void kgeo_flag_raise(int *flag) { __atomic_store_n(flag, 1, __ATOMIC_RELAXED); }
    static inline int kgeo_flag_raised(int *flag) { return __atomic_load_n(flag, __ATOMIC_RELAXED); }
    #else
    static inline void kgeo_flag_raise(int *flag) { *(volatile int *)flag = 1; }
    static inline int kgeo_flag_raised(int *flag) { return *(volatile int *)flag; }
    #endif
    """
    void flag_raise "kgeo_flag_raise"(bint* flag) noexcept nogil
    bint flag_raised "kgeo_flag_raised"(bint* flag) noexcept nogil


# A counter that the threads of a parallel block share: the next item to take,
# or how many threads started and finished (or any 64-bit word threads read
# and write at once, such as the row helper's board in _solver.pyx). Sequentially consistent, so a
# thread that counts itself started before taking an item is seen as started
# by any thread that later finds the items all taken.
cdef extern from *:
    """
    #if defined(__GNUC__)
    static inline long long kgeo_fetch_add(long long *counter, long long n) {
        return __atomic_fetch_add(counter, n, __ATOMIC_SEQ_CST);
    }
    static inline long long kgeo_load(long long *counter) {
        return __atomic_load_n(counter, __ATOMIC_SEQ_CST);
    }
    static inline void kgeo_store(long long *counter, long long value) {
        __atomic_store_n(counter, value, __ATOMIC_SEQ_CST);
    }
    #else
    static inline long long kgeo_fetch_add(long long *counter, long long n) {
        long long old;
        _Pragma("omp critical(kgeo_counter)")
        { old = *counter; *counter += n; }
        return old;
    }
    static inline long long kgeo_load(long long *counter) {
        return kgeo_fetch_add(counter, 0);
    }
    static inline void kgeo_store(long long *counter, long long value) {
        _Pragma("omp critical(kgeo_counter)")
        { *counter = value; }
    }
    #endif
    """
    long long fetch_add "kgeo_fetch_add"(long long* counter, long long n) noexcept nogil
    long long atomic_load "kgeo_load"(long long* counter) noexcept nogil
    void atomic_store "kgeo_store"(long long* counter, long long value) noexcept nogil


# Milliseconds between two runs of Python's signal handlers in a parallel
# loop: Ctrl-C is felt within this, and taking the GIL this seldom costs
# nothing measurable even when another Python thread holds it (up to the
# interpreter's 5 ms switch interval per check). (A loop that can raise also
# has each OpenMP thread take the GIL once as it starts and ends, for
# Cython's error bookkeeping: a review measured no cost, a 5,000-document
# Gram beside a busy Python thread included.)
cdef enum:
    INTERRUPT_CHECK_MS = 50


cdef struct Interruptible:
    bint here           # the loop runs in Python's main thread, where signals arrive
    bint interrupted    # a one-way flag: a handler raised, every thread stops
    timespec next_check # when the main thread runs the handlers next


cdef inline void advance(timespec* when, long milliseconds) noexcept nogil:
    """``when`` moved ``milliseconds`` later."""
    when.tv_nsec += milliseconds * 1000000
    while when.tv_nsec >= 1000000000:
        when.tv_sec += 1
        when.tv_nsec -= 1000000000


cdef inline void interruptible_init(Interruptible* state, bint main_thread) noexcept nogil:
    """Ready ``state`` for one parallel loop started from Python's main
    thread (``main_thread``) or another one (which signals never reach).
    The first check is ``INTERRUPT_CHECK_MS`` away: shorter loops never
    take the GIL for it."""
    state.here = main_thread
    state.interrupted = False
    clock_gettime(CLOCK_MONOTONIC, &state.next_check)
    advance(&state.next_check, INTERRUPT_CHECK_MS)


cdef inline int poll_signals(Interruptible* state) except -1 nogil:
    """Run Python's signal handlers now and then, from OpenMP's thread 0
    (the thread that started the loop); other threads only read the flag.

    Returns 1 when the loop should stop: a handler raised in another thread
    of the loop, whose exception that thread carries out. In thread 0 a
    handler's exception (``KeyboardInterrupt``, or whatever a handler
    raises) propagates from here, the flag raised first so that the other
    threads stop within their current step.
    """
    cdef timespec now
    if flag_raised(&state.interrupted):
        return 1
    if not state.here or threadid() != 0:
        return 0
    clock_gettime(CLOCK_MONOTONIC, &now)
    if now.tv_sec < state.next_check.tv_sec or (
            now.tv_sec == state.next_check.tv_sec and now.tv_nsec < state.next_check.tv_nsec):
        return 0
    state.next_check = now
    advance(&state.next_check, INTERRUPT_CHECK_MS)
    with gil:
        try:
            PyErr_CheckSignals()
        except BaseException:
            flag_raise(&state.interrupted)
            raise
    return 0
