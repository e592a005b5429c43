// autotrans host emulator: runs rendered kernels' index math and data movement
// on the CPU, thread by thread, phase by phase, and traces shared-memory accesses.
// Built by autotrans.emulator with -DAT_EMULATE and the rendered kernels in
// kernels.inc (kernel structs) and table.inc (one AT_KERNEL(name) line each).
//
// Reads jobs from stdin, one per line:
//   run NAME B M N IN_FILE IN_OFF OUT_FILE OUT_OFF TRACE_FILE TRACE_BLOCK
//     IN_FILE holds the input at byte IN_OFF; OUT_FILE holds the (poisoned)
//     output buffer at OUT_OFF, guard bands around it; it is rewritten in place.
//     TRACE_FILE ("-" for none) gets "phase tid seq offset bytes store" lines for
//     shared-memory accesses of block TRACE_BLOCK. Dense kernels only.
//   strided NAME ARGS_FILE IN_FILE IN_OFF OUT_FILE OUT_OFF
//     a strided kernel's launch: ARGS_FILE holds its at::StridedArgs as Python
//     packs it (templates.STRIDED_ARGS; the pointers are replaced by IN_FILE's
//     bytes at IN_OFF and OUT_FILE's at OUT_OFF); OUT_FILE is rewritten in place.
//     Every global access must lie inside its file's buffer and be naturally
//     aligned (check_hook), as on the GPU; one that is not ends the run (exit 3).
//   sectors NAME B M N IN_FILE IN_OFF OUT_FILE OUT_OFF
//     runs the launch as "run" does and prints "sectors LOADS LOAD_SECTORS
//     STORES STORE_SECTORS LOAD_BYTES STORE_BYTES": its global-memory warp
//     instructions and the 32-byte sectors they touch, counted from the files'
//     starts (256-byte aligned: Buffer), loads and stores apart. A thread's
//     n-th global access of a phase is taken to be one instruction across its
//     warp (threads that skip an access shift the count a little).
//   strided_sectors NAME ARGS_FILE IN_FILE IN_OFF OUT_FILE OUT_OFF
//     a strided launch as "strided" runs it, counted as "sectors" counts.
//   strided_trace NAME ARGS_FILE IN_FILE IN_OFF OUT_FILE OUT_OFF TRACE_FILE TRACE_BLOCK
//     a strided launch as "strided" runs it, traced as "run" traces (a strip's
//     tile k has phases 3k, 3k + 1, 3k + 2).
//   list
//     prints "NAME NT SMEM TR TC" for every kernel.
//   blocks NAME B M N
//     prints the blocks of that launch (at::blocks, the grid a launch takes).
#define AT_EMULATE 1
#include "common.cuh"
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "kernels.inc"

struct Entry {
  const char* name;
  bool (*fn)(const at::Args&, char*);
  bool (*strided_fn)(const at::StridedArgs&, char*);
  long long (*blocks)(long long, long long, long long);
  int nt, smem, tr, tc;
  bool strided;
};
#define AT_KERNEL(n) {#n, &at::emulate<n##_k>, &at::emulate_strided<n##_k>, &at::blocks<n##_k>, n##_k::NT, \
                      n##_k::SMEM, n##_k::TR, n##_k::TC, at::is_strided<n##_k>::value},
static const Entry entries[] = {
#include "table.inc"
};
#undef AT_KERNEL

// A file's bytes at a 256-byte aligned address, as cudaMalloc gives them: the
// kernels pick their paths by the pointers' alignment (shift strips by 32 bytes).
struct Buffer {
  std::vector<char> raw;
  size_t off = 0, n = 0;
  char* data() { return raw.data() + off; }
  const char* data() const { return raw.data() + off; }
  size_t size() const { return n; }
};
static FILE* g_trace = nullptr;
static uint32_t g_trace_block = 0;
static int g_smem = 0, g_seq = 0, g_last_tid = -1, g_last_phase = -1;

static void hook(uint32_t off, int bytes, int store) {
  if (off + (uint32_t)bytes > (uint32_t)g_smem || off % (uint32_t)bytes) {
    fprintf(stderr, "shared-memory access out of bounds or misaligned: offset %u, %d bytes, smem %d\n",
            off, bytes, g_smem);
    exit(3);
  }
  if (at::emu_tid != g_last_tid || at::emu_phase != g_last_phase) {
    g_seq = 0;
    g_last_tid = at::emu_tid;
    g_last_phase = at::emu_phase;
  }
  if (g_trace && at::emu_block == g_trace_block)
    fprintf(g_trace, "%d %d %d %u %d %d\n", at::emu_phase, at::emu_tid, g_seq, off, bytes, store);
  ++g_seq;
}

// The sectors job: each global access as (instruction, sector), per block. A
// warp instruction is (phase, warp, the lane's count of global accesses in the
// phase): lanes that sit one out (a false predicate) count it too (at::idle_g).
static const char* g_gbase[2] = {nullptr, nullptr};   // the input and output files' starts
static std::vector<std::pair<unsigned long long, unsigned long long>> g_touched;
static unsigned long long g_insts[2], g_sectors[2], g_bytes[2];
static int g_gseq = 0, g_glast_tid = -1, g_glast_phase = -1;
static long long g_glast_block = -1;

static void count_block() {
  std::sort(g_touched.begin(), g_touched.end());
  g_touched.erase(std::unique(g_touched.begin(), g_touched.end()), g_touched.end());
  unsigned long long last = ~0ull;
  for (const auto& t : g_touched) {
    g_sectors[t.first & 1] += 1;
    if (t.first != last) g_insts[t.first & 1] += 1, last = t.first;
  }
  g_touched.clear();
}

static void ghook(const void* p, int bytes, int store) {
  if ((long long)at::emu_block != g_glast_block) {
    count_block();
    g_glast_block = at::emu_block;
    g_glast_tid = -1;
  }
  if (at::emu_tid != g_glast_tid || at::emu_phase != g_glast_phase) {
    g_gseq = 0;
    g_glast_tid = at::emu_tid;
    g_glast_phase = at::emu_phase;
  }
  if (!p) {  // at::idle_g: a lane sitting out this access of its warp's instruction
    ++g_gseq;
    return;
  }
  unsigned long long off = (unsigned long long)((const char*)p - g_gbase[store]);
  unsigned long long inst = ((unsigned long long)at::emu_phase << 56) | ((unsigned long long)(at::emu_tid / 32) << 32) |
                            ((unsigned long long)g_gseq << 1) | (unsigned long long)store;
  for (unsigned long long sec = off >> 5; sec <= (off + bytes - 1) >> 5; ++sec) g_touched.emplace_back(inst, sec);
  g_bytes[store] += (unsigned long long)bytes;
  ++g_gseq;
}

// The strided job's check of every global access (the sectors job counts them
// instead): naturally aligned (at most to 16 bytes: at::Words16), as the GPU
// needs, and inside the input or output file's buffer; a load may read on to
// the end of the 256 aligned bytes that hold the buffer's last byte (shift
// tiles read whole aligned vectors of a row or two past a matrix: GPU
// allocations start 256-byte aligned and are rounded up at least that far).
// Else one line, exit 3.
static const char* g_lo[2] = {nullptr, nullptr};
static const char* g_hi[2] = {nullptr, nullptr};

static void check_hook(const void* p, int bytes, int store) {
  if (!p) return;   // at::idle_g
  const char* c = (const char*)p;
  const int align = bytes < 16 ? bytes : 16;
  const uintptr_t hi = store ? (uintptr_t)g_hi[1] : ((uintptr_t)g_hi[0] + 255) / 256 * 256;
  if (c < g_lo[store] || (uintptr_t)(c + bytes) > hi || (uintptr_t)c % (uintptr_t)align) {
    fprintf(stderr, "global %s out of bounds or misaligned: offset %lld, %d bytes, buffer %lld bytes\n",
            store ? "store" : "load", (long long)(c - g_lo[store]), bytes, (long long)(g_hi[store] - g_lo[store]));
    exit(3);
  }
}

static void start_checks(const Buffer& in, const Buffer& out) {
  g_lo[0] = in.data(), g_hi[0] = in.data() + in.size();
  g_lo[1] = out.data(), g_hi[1] = out.data() + out.size();
  at::gmem_hook = check_hook;
}

static void start_sectors(const Buffer& in, const Buffer& out) {
  g_gbase[0] = in.data(), g_gbase[1] = out.data();
  g_insts[0] = g_insts[1] = g_sectors[0] = g_sectors[1] = g_bytes[0] = g_bytes[1] = 0;
  g_glast_block = -1;
  at::gmem_hook = ghook;
}

static void print_sectors() {
  count_block();
  printf("sectors %llu %llu %llu %llu %llu %llu\n", g_insts[0], g_sectors[0], g_insts[1], g_sectors[1], g_bytes[0],
         g_bytes[1]);
}

static Buffer slurp(const char* path) {
  Buffer buf;
  FILE* f = fopen(path, "rb");
  if (!f) { perror(path); exit(2); }
  fseek(f, 0, SEEK_END);
  buf.n = (size_t)ftell(f);
  buf.raw.resize(buf.n + 256);
  buf.off = (256 - (size_t)((uintptr_t)buf.raw.data() % 256)) % 256;
  fseek(f, 0, SEEK_SET);
  if (buf.n && fread(buf.data(), 1, buf.n, f) != buf.n) { perror(path); exit(2); }
  fclose(f);
  return buf;
}
static const Entry* find(const char* name) {
  for (const Entry& e : entries)
    if (!strcmp(e.name, name)) return &e;
  return nullptr;
}

static void write_out(const char* outp, const Buffer& out) {
  FILE* f = fopen(outp, "wb");
  if (!f || fwrite(out.data(), 1, out.size(), f) != out.size()) { perror(outp); exit(2); }
  fclose(f);
}

static int run_job(const char* name, long long B, long long M, long long N, const char* inp, long long in_off,
                   const char* outp, long long out_off, const char* tracep, long long trace_block,
                   bool sectors = false) {
  const Entry* e = find(name);
  if (!e) {
    printf("error unknown kernel %s\n", name);
    return 1;
  }
  if (e->strided) {
    printf("error %s is a strided kernel: run it with a strided job\n", name);
    return 1;
  }
  Buffer in = slurp(inp), out = slurp(outp);
  std::vector<char> smem((size_t)e->smem + 16);
  g_smem = e->smem;
  g_trace = strcmp(tracep, "-") ? fopen(tracep, "w") : nullptr;
  g_trace_block = (uint32_t)trace_block;
  g_last_tid = g_last_phase = -1;
  at::smem_hook = hook;
  if (sectors) start_sectors(in, out);
  bool ran = e->fn(at::Args{in.data() + in_off, out.data() + out_off, B, M, N}, smem.data());
  at::smem_hook = nullptr;
  at::gmem_hook = nullptr;
  if (g_trace) fclose(g_trace);
  if (!ran) {
    printf("error %s: %lld x %lld x %lld needs 2^31 blocks or more\n", name, B, M, N);
    return 1;
  }
  if (sectors) {
    print_sectors();
    return 0;
  }
  write_out(outp, out);
  printf("ok %s\n", name);
  return 0;
}

static int run_strided(const char* name, const char* argp, const char* inp, long long in_off, const char* outp,
                       long long out_off, bool sectors = false, const char* tracep = "-", long long trace_block = 0) {
  const Entry* e = find(name);
  if (!e || !e->strided) {
    printf("error %s is not a strided kernel\n", name);
    return 1;
  }
  Buffer raw = slurp(argp), in = slurp(inp), out = slurp(outp);
  if (raw.size() != sizeof(at::StridedArgs)) {
    printf("error %s: %zu bytes of arguments, at::StridedArgs has %zu\n", argp, raw.size(), sizeof(at::StridedArgs));
    return 1;
  }
  at::StridedArgs a;
  memcpy(&a, raw.data(), sizeof a);
  if (a.nb < 0 || a.nb > at::MAX_BATCH) {
    printf("error %s: nb %d is not in [0, %d]\n", argp, a.nb, at::MAX_BATCH);
    return 1;
  }
  a.in = in.data() + in_off;
  a.out = out.data() + out_off;
  std::vector<char> smem((size_t)e->smem + 16);
  g_smem = e->smem;
  g_trace = strcmp(tracep, "-") ? fopen(tracep, "w") : nullptr;
  g_trace_block = (uint32_t)trace_block;
  g_last_tid = g_last_phase = -1;
  at::smem_hook = hook;
  if (sectors) start_sectors(in, out);
  else start_checks(in, out);
  bool ran = e->strided_fn(a, smem.data());
  at::smem_hook = nullptr;
  at::gmem_hook = nullptr;
  if (g_trace) fclose(g_trace);
  if (!ran) {
    printf("error %s: %lld x %lld x %lld needs 2^31 blocks or more\n", name, a.B, a.M, a.N);
    return 1;
  }
  if (sectors) {
    print_sectors();
    return 0;
  }
  write_out(outp, out);
  printf("ok %s\n", name);
  return 0;
}

int main() {
  char line[8192];
  int rc = 0;
  while (fgets(line, sizeof line, stdin)) {
    char cmd[32], name[512], inp[2048], outp[2048], tracep[2048], argp[2048];
    long long B, M, N, in_off, out_off, trace_block;
    if (sscanf(line, "%31s", cmd) != 1) continue;
    if (!strcmp(cmd, "list")) {
      for (const Entry& e : entries) printf("%s %d %d %d %d\n", e.name, e.nt, e.smem, e.tr, e.tc);
    } else if (sscanf(line, "blocks %511s %lld %lld %lld", name, &B, &M, &N) == 4) {
      const Entry* e = find(name);
      if (e) printf("%lld\n", e->blocks(B, M, N));
      else printf("error unknown kernel %s\n", name), rc = 1;
    } else if (sscanf(line, "run %511s %lld %lld %lld %2047s %lld %2047s %lld %2047s %lld", name, &B, &M, &N, inp,
                      &in_off, outp, &out_off, tracep, &trace_block) == 10) {
      rc |= run_job(name, B, M, N, inp, in_off, outp, out_off, tracep, trace_block);
    } else if (sscanf(line, "sectors %511s %lld %lld %lld %2047s %lld %2047s %lld", name, &B, &M, &N, inp, &in_off,
                      outp, &out_off) == 8) {
      rc |= run_job(name, B, M, N, inp, in_off, outp, out_off, "-", 0, true);
    } else if (sscanf(line, "strided_sectors %511s %2047s %2047s %lld %2047s %lld", name, argp, inp, &in_off, outp,
                      &out_off) == 6) {
      rc |= run_strided(name, argp, inp, in_off, outp, out_off, true);
    } else if (sscanf(line, "strided_trace %511s %2047s %2047s %lld %2047s %lld %2047s %lld", name, argp, inp,
                      &in_off, outp, &out_off, tracep, &trace_block) == 8) {
      rc |= run_strided(name, argp, inp, in_off, outp, out_off, false, tracep, trace_block);
    } else if (sscanf(line, "strided %511s %2047s %2047s %lld %2047s %lld", name, argp, inp, &in_off, outp,
                      &out_off) == 6) {
      rc |= run_strided(name, argp, inp, in_off, outp, out_off);
    } else {
      printf("error bad job line\n");
      rc = 1;
    }
    fflush(stdout);
  }
  return rc;
}
