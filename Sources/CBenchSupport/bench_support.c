#include "bench_support.h"
#include <limits.h> /* defines __GLIBC__ and __GLIBC_MINOR__ on glibc */

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#include <malloc.h>
long long keepsake_heap_in_use(void) { return (long long)mallinfo2().uordblks; }
#else
long long keepsake_heap_in_use(void) { return -1; }
#endif
