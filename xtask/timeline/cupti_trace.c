// A GPU timeline without Nsight Systems (README.md beside this file): loaded by the driver through
// CUDA_INJECTION64_PATH, records kernels, copies, memsets and driver/runtime API calls with
// CUPTI's activity API and writes them as tab-separated lines to $CUPTI_TRACE_OUT at exit.
//   K start end stream correlation name grid block  (kernel)
//   M start end stream correlation copyKind bytes    (memcpy)
//   S start end stream correlation bytes             (memset)
//   D|R start end tid correlation name               (driver / runtime API call)
//   T tid comm                                (a thread's name, at its first API call)
//   Z cupti_timestamp_at_init monotonic_ns_at_init
#define _GNU_SOURCE
#include <cupti.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define BUF (16u << 20)
static FILE *out;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static __thread int named;

static void CUPTIAPI requested(uint8_t **buffer, size_t *size, size_t *max) {
  *buffer = aligned_alloc(8, BUF);
  *size = BUF;
  *max = 0;
}

static void CUPTIAPI completed(CUcontext ctx, uint32_t sid, uint8_t *buffer, size_t size, size_t valid) {
  CUpti_Activity *r = NULL;
  pthread_mutex_lock(&mu);
  while (cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS) {
    switch (r->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      CUpti_ActivityKernel10 *k = (CUpti_ActivityKernel10 *)r;
      fprintf(out, "K\t%llu\t%llu\t%u\t%u\t%.80s\t%d\t%d\n", (unsigned long long)k->start, (unsigned long long)k->end,
              k->streamId, k->correlationId, k->name, k->gridX * k->gridY * k->gridZ, k->blockX * k->blockY * k->blockZ);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      CUpti_ActivityMemcpy6 *m = (CUpti_ActivityMemcpy6 *)r;
      fprintf(out, "M\t%llu\t%llu\t%u\t%u\t%u\t%llu\n", (unsigned long long)m->start, (unsigned long long)m->end, m->streamId,
              m->correlationId, m->copyKind, (unsigned long long)m->bytes);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      CUpti_ActivityMemset4 *m = (CUpti_ActivityMemset4 *)r;
      fprintf(out, "S\t%llu\t%llu\t%u\t%u\t%llu\n", (unsigned long long)m->start, (unsigned long long)m->end, m->streamId,
              m->correlationId, (unsigned long long)m->bytes);
      break;
    }
    case CUPTI_ACTIVITY_KIND_DRIVER:
    case CUPTI_ACTIVITY_KIND_RUNTIME: {
      CUpti_ActivityAPI *a = (CUpti_ActivityAPI *)r;
      const char *name = "?";
      int drv = r->kind == CUPTI_ACTIVITY_KIND_DRIVER;
      cuptiGetCallbackName(drv ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API, a->cbid, &name);
      fprintf(out, "%c\t%llu\t%llu\t%u\t%u\t%s\n", drv ? 'D' : 'R', (unsigned long long)a->start,
              (unsigned long long)a->end, a->threadId, a->correlationId, name);
      break;
    }
    default:
      break;
    }
  }
  pthread_mutex_unlock(&mu);
  free(buffer);
}

// At each thread's first API call: its id and name (the tool names its threads).
static void CUPTIAPI on_api(void *data, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *info) {
  if (named)
    return;
  named = 1;
  char comm[64] = "?", path[64];
  pid_t tid = (pid_t)syscall(SYS_gettid);
  snprintf(path, sizeof path, "/proc/self/task/%d/comm", tid);
  FILE *f = fopen(path, "r");
  if (f) {
    if (fgets(comm, sizeof comm, f))
      comm[strcspn(comm, "\n")] = 0;
    fclose(f);
  }
  pthread_mutex_lock(&mu);
  fprintf(out, "T\t%d\t%s\n", tid, comm);
  pthread_mutex_unlock(&mu);
}

static void at_exit(void) {
  cuptiActivityFlushAll(1);
  pthread_mutex_lock(&mu);
  fflush(out);
  pthread_mutex_unlock(&mu);
}

#define CHECK(x)                                                                                                      \
  do {                                                                                                                \
    CUptiResult s = (x);                                                                                              \
    if (s != CUPTI_SUCCESS) {                                                                                         \
      const char *e;                                                                                                  \
      cuptiGetResultString(s, &e);                                                                                    \
      fprintf(stderr, "cupti_trace: %s: %s\n", #x, e);                                                                \
      return 1;                                                                                                       \
    }                                                                                                                 \
  } while (0)

int InitializeInjection(void) {
  const char *path = getenv("CUPTI_TRACE_OUT");
  out = fopen(path ? path : "cupti-trace.tsv", "w");
  if (!out)
    return 1;
  setvbuf(out, NULL, _IOFBF, 1 << 20);
  uint64_t ts;
  struct timespec now;
  cuptiGetTimestamp(&ts);
  clock_gettime(CLOCK_MONOTONIC, &now);
  fprintf(out, "Z\t%llu\t%llu\n", (unsigned long long)ts, (unsigned long long)now.tv_sec * 1000000000ull + now.tv_nsec);
  CHECK(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM));
  CHECK(cuptiActivityRegisterCallbacks(requested, completed));
  CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY));
  CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET));
  CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER));
  CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME));
  CUpti_SubscriberHandle sub;
  CHECK(cuptiSubscribe(&sub, on_api, NULL));
  CHECK(cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_DRIVER_API));
  atexit(at_exit);
  return 1;
}
