// Host test of walk_probe.cu's phases against a plain transpose: random shapes,
// pitches, offsets, chunk lengths and batches; every output byte checked, and
// nothing outside the output written (tests/test_probes.py builds and runs it).
//   nvcc -std=c++17 -x cu -I cuda_templates benchmarks/probes/walk_probe_host.cu -o walk_host
//   ./walk_host [SEED [TRIALS]]   each variant's bad trials, exit status 1 if any
//   ./walk_host smem              "NAME SMEM" for every variant
#define WALK_HOST 1
#include "walk_probe.cu"
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

template <int E, int W, int H, int NT, int S, int Q>
int check(const char* name, std::mt19937_64& rng, int trials) {
  typedef walk::K<E, W, H, NT, S, Q> k;
  std::vector<char> smem(k::SMEM + 64);
  int bad = 0;
  for (int t = 0; t < trials; ++t) {
    long long M = 1 + rng() % 300, N = 1 + rng() % 700, B = 1 + rng() % 3;
    if (t % 4 == 0) M = 1 + rng() % 20;
    if (t % 5 == 0) N = 1 + rng() % 40;
    long long ldi = (N + rng() % 9) * E, ldo = (M + rng() % 9) * E;
    long long bsi = ldi * M + (rng() % 5) * E, bso = ldo * N + (rng() % 5) * E;
    long long L = H * (1 + rng() % 6);
    if (t % 3 == 0) L = H * ((M + H - 1) / H);
    long long ioff = (rng() % 16) * E, ooff = (rng() % 16) * E;
    std::vector<char> in(ioff + bsi * B + 64), out(ooff + bso * B + 64), ref;
    for (auto& c : in) c = (char)rng();
    memset(out.data(), 0xA5, out.size());
    ref = out;
    for (long long b = 0; b < B; ++b)
      for (long long i = 0; i < M; ++i)
        for (long long j = 0; j < N; ++j)
          memcpy(&ref[ooff + b * bso + j * ldo + i * E], &in[ioff + b * bsi + i * ldi + j * E], E);
    walk::Args a{in.data() + ioff, out.data() + ooff, B, M, N, ldi, ldo, bsi, bso, L};
    walk::emulate<E, W, H, NT, S, Q>(a, smem.data());
    if (memcmp(out.data(), ref.data(), out.size())) {
      if (bad++ < 3) printf("%s: MISMATCH B=%lld M=%lld N=%lld ldi=%lld ldo=%lld L=%lld ioff=%lld ooff=%lld\n", name,
                            B, M, N, ldi, ldo, L, ioff, ooff);
    }
  }
  printf("%s: %d of %d trials bad (smem %d B)\n", name, bad, trials, k::SMEM);
  return bad;
}

int main(int argc, char** argv) {
  if (argc > 1 && !strcmp(argv[1], "smem")) {
#define SMEM(NAME, E, W, H, NT, S, Q) printf(#NAME " %d\n", walk::K<E, W, H, NT, S, Q>::SMEM);
    WALK_VARIANTS(SMEM)
    return 0;
  }
  std::mt19937_64 rng(argc > 1 ? atoll(argv[1]) : 1);
  int trials = argc > 2 ? atoi(argv[2]) : 60, bad = 0;
#define CHECK(NAME, E, W, H, NT, S, Q) bad += check<E, W, H, NT, S, Q>(#NAME, rng, trials);
  WALK_VARIANTS(CHECK)
  return bad != 0;
}
