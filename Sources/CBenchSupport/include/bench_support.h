#ifndef KEEPSAKE_BENCH_SUPPORT_H
#define KEEPSAKE_BENCH_SUPPORT_H

#include <stddef.h>

/// Bytes allocated with malloc and not freed (glibc's mallinfo2), or -1 where unavailable.
long long keepsake_heap_in_use(void);

#endif
