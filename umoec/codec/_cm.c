/* The context-mixing stage in C: the same integer arithmetic as Reference in cm.py, in the same
 * order (steps, streams 0..k-1, bits 7..0; predictions read before any update), so both give
 * identical bits (tests/umoec/codec/test_cm.py). `>>` on a negative int64 is the arithmetic
 * shift (floor, like Python's), which every compiler we build with does (checked below). */
#include "../_native.h"
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(p) __builtin_prefetch((p), 1)
#else
#define PREFETCH(p) ((void)(p))
#endif

/* the small helpers the bit loop calls, inlined into each of its compiled versions */
#define INLINE static inline __attribute__((always_inline))

/* the loop over a decision's contexts, unrolled where its length is a constant (run_steps):
 * each context's slot load issues without waiting for the loop's branch (compressing 1.04-1.20x) */
#if defined(__GNUC__) && !defined(__clang__)
#define UNROLL _Pragma("GCC unroll 16")
#else
#define UNROLL
#endif

#if (-1 >> 1) != -1
#error "signed right shifts must be arithmetic"
#endif

#define TABLE_BITS 22
#define BIG_TABLE_BITS 24       /* versions 8, 9, 11, 12: 7, 5, 10, 10 primed with 2^24 slots */
#define HUGE_TABLE_BITS 25      /* versions 13, 14: 12 and 8 with 2^25 (14-19 contexts fill 2^24) */
#define NCTX 7
#define NCTX4 10                /* version 4: and word pair, sparse, column contexts */
#define NIN1 (2 + 2 * NCTX)     /* version 1: network, counters, mapped counters, bias */
#define NIN2 (4 + 2 * NCTX)     /* version 2: and the match model's two inputs */
#define NIN4 (4 + 3 * NCTX4)    /* version 4: and each context's bit history through its map */
#define NCTX6 15                /* version 6: and orders 0-3 and the word again, keyed by stream */
#define NIN6 (4 + 3 * NCTX6)
#define NCTX12 14               /* version 12: version 4's ten, the previous word with the last one
                                 * and two bytes, the word before it with the current one, order 5 */
#define NIN12 (4 + 3 * NCTX12)
#define NCTX14 (NCTX12 + NCTX6 - NCTX4)   /* version 14: version 12's and version 6's */
#define NIN14 (4 + 3 * NCTX14)
#define NCTX16 (NCTX12 + 2)      /* version 16: version 15's and two for records */
#define NIN16 (4 + 3 * NCTX16)
#if NCTX16 > NCTX14
#error "the bit loop's arrays hold NCTX14 contexts"
#endif
/* weight sets: mixer 1 by how many of orders 2..6 were seen (v2: and the match length), then
 * mixer 2 by c0; version 4 without a network: mixer 2 by c0 and the classes of the last two bytes,
 * and a mixer 3 by c0, the class of the third byte back and whether a match predicts (with a
 * network these sets learn too slowly to weigh it: 1-2% larger files, measured) */
#define SETS2_4 (256 * 64)
#define SETS3_4 (256 * 16)
#define ICM_RATE 7
/* version 6 (7: primed), with a network: the three mixers see no network (they mix the context
 * models as without one) and two final mixers weigh their three outputs against the network's
 * input (and a bias), with weight sets by mixer 1's set and by c0, learning at twice the rate */
#define NF 5
#define FSETS (20 + 256)         /* mixer 1's sets (version 2 on), then c0's */
#define FLR 2
/* version 6's stream-local contexts: these contexts again, hashed with the stream's index (the
 * shared ones see every stream's bytes interleaved, which blurs what this stream's text does) */
static const int LOCAL[NCTX6 - NCTX4] = {0, 1, 2, 3, 6};
#define APM_ROWS 65536
#define SM_ROWS 1024
#define SM_RATE 6
#define LR 1
#define LR_SHIFT 12
#define LIMIT 60
#define W_MAX (1 << 24)
/* the slot table: each pair of slots (i, i ^ 1), where a context's hash may land, in 16 bytes
 * (one cache line holds both): their counters (u32), check bytes, bit histories, 4 bytes unused */
#define SLOT_T(i) (((uint32_t *)slots)[((i) >> 1) * 4 + ((i) & 1)])
#define SLOT_CHK(i) (slots[((i) >> 1) * 16 + 8 + ((i) & 1)])
#define SLOT_BH(i) (slots[((i) >> 1) * 16 + 10 + ((i) & 1)])

static const int SQ[33] = {1, 2, 3, 6, 10, 16, 27, 45, 73, 120, 194, 310, 488, 747, 1101, 1546,
                           2047, 2549, 2994, 3348, 3607, 3785, 3901, 3975, 4022, 4050, 4068, 4079,
                           4085, 4089, 4092, 4093, 4094};
static const int ORDERS[5] = {1, 2, 3, 4, 6};
static int STRETCH[4096];
static int64_t DT[1024];

static inline int squash(int d) {
    if (d > 2047) return 4095;
    if (d < -2047) return 1;
    int w = d & 127, i = (d >> 7) + 16;
    return (SQ[i] * (128 - w) + SQ[i + 1] * w + 64) >> 7;
}

static void init_tables(void) {
    int pi = 0;
    for (int x = -2047; x <= 2047; x++) {
        int v = squash(x);
        for (int i = pi; i <= v; i++) STRETCH[i] = x;
        pi = v + 1;
    }
    for (int i = pi; i < 4096; i++) STRETCH[i] = 2047;
    for (int n = 0; n < 1024; n++) DT[n] = 131072 / (2 * n + 3);
}

static inline uint32_t mix32(uint32_t x) {
    x ^= x >> 16;
    x *= 0x7FEB352Du;
    x ^= x >> 15;
    x *= 0x846CA68Bu;
    return x ^ (x >> 16);
}

INLINE void context_hashes(uint64_t hist, uint32_t word, uint32_t *out) {
    out[0] = mix32(0x3C6EF372u);
    for (int k = 0; k < 5; k++) {
        int o = ORDERS[k];
        uint64_t v = o >= 8 ? hist : (hist & ((((uint64_t)1) << (8 * o)) - 1));
        uint32_t lo = mix32((uint32_t)v);
        uint32_t hi = (uint32_t)(v >> 32);
        out[1 + k] = mix32(lo + hi * 0x9E3779B1u + (uint32_t)o * 0x85EBCA6Bu);
    }
    out[6] = mix32(word + 0x6A09E667u);
}

/* version 4's contexts after the first 7: the current word with the previous one, bytes 2 and 3
 * back (skipping the last), and the column (up to 40) with the line's indent and the last byte */
INLINE void context_hashes4(uint64_t hist, const uint32_t *ws, uint32_t *out) {
    uint32_t col = ws[2] & 0xFFFFu, ind = (ws[2] >> 16) & 255u;
    out[7] = mix32(ws[0] * 0x2F0B3A49u + ws[1] + 0x01234567u);
    out[8] = mix32((uint32_t)((hist >> 8) & 0xFFFF) + 0x0ABCDEF1u);
    out[9] = mix32((col < 40 ? col : 40) * 256u + (uint32_t)(hist & 255) + ind * 0x10000u + 0x07777777u);
}

/* version 12's four after version 4's ten (ws[3]: the word before the previous one) */
INLINE void context_hashes12(uint64_t hist, const uint32_t *ws, uint32_t *out) {
    out[10] = mix32(ws[1] * 0x2F0B3A49u + (uint32_t)(hist & 255) + 0x0ABCDEF1u);
    out[11] = mix32(ws[1] * 0x2F0B3A49u + (uint32_t)(hist & 0xFFFF) * 0x85EBCA6Bu + 0x2718281u);
    out[12] = mix32(ws[3] * 0x2F0B3A49u + ws[0] * 0x85EBCA6Bu + 0x1234321u);
    out[13] = mix32((uint32_t)(hist & 0xFFFFFFFFull) * 0x9E3779B1u +
                    (uint32_t)((hist >> 32) & 255) * 0x85EBCA6Bu + 0x1414213u);
}

/* version 15's four after version 4's ten, for binary data: byte 2 back alone, bytes 3 and 4
 * back, bytes 4 and 8 back (fields of 4-byte records), bytes 1 and 3 back (pairs of bytes) */
INLINE void context_hashes15(uint64_t hist, uint32_t *out) {
    out[10] = mix32((uint32_t)((hist >> 8) & 255) + 0x0ABCDEF1u);
    out[11] = mix32((uint32_t)((hist >> 16) & 0xFFFF) * 0x85EBCA6Bu + 0x2718281u);
    out[12] = mix32((uint32_t)((hist >> 24) & 255) + (uint32_t)((hist >> 56) & 255) * 256u + 0x1234321u);
    out[13] = mix32((uint32_t)(hist & 255) + (uint32_t)((hist >> 16) & 255) * 256u + 0x1414213u);
}

/* version 16's six after version 4's ten, for records of `rec` bytes (the encoder chose the
 * length for the frame; its header names it): version 15's four, then the bytes one and two
 * records back (the same field of the two records before), and the byte one record back with
 * the last one. `past`: the stream's bytes so far (the match model's history), `tg` of them. */
INLINE void context_hashes16(uint64_t hist, const uint8_t *past, int64_t tg, int64_t rec,
                             uint32_t *out) {
    uint32_t a = tg >= rec ? past[tg - rec] : 0u, a2 = tg >= 2 * rec ? past[tg - 2 * rec] : 0u;
    context_hashes15(hist, out);
    out[14] = mix32(a + a2 * 256u + 0x5151515u);
    out[15] = mix32(a + (uint32_t)(hist & 255) * 256u + 0x6161616u);
}

/* a stream's context hashes before its byte (ws: v4's word slots; v12: 1 version 12's four
 * more contexts, 2 version 15's, 3 version 16's six, which read the stream's history hb (H bytes
 * per stream, tg of them coded) and the record length rec) */
INLINE void stream_hashes(const uint64_t *hist, const uint32_t *word, Py_ssize_t s, int wslots,
                          int v4, int v12, int v6, int nshared, const uint8_t *hb, int64_t H,
                          int64_t tg, int64_t rec, uint32_t *hs) {
    const uint32_t *ws4 = v4 ? word + wslots * s : NULL;
    context_hashes(hist[s], v4 ? ws4[0] : word[s], hs);
    if (v4) context_hashes4(hist[s], ws4, hs);
    if (v12 == 1) context_hashes12(hist[s], ws4, hs);
    if (v12 == 2) context_hashes15(hist[s], hs);
    if (v12 == 3) context_hashes16(hist[s], hb + s * H, tg, rec, hs);
    if (v6)
        for (int k = 0; k < NCTX6 - NCTX4; k++)
            hs[nshared + k] = mix32(hs[LOCAL[k]] + (uint32_t)s * 0x5851F42Du + 0x4D);
}

/* 8 byte classes: lower, upper, space, digit, newline, brackets, . , : ; and the rest */
static inline int byte_class(int c) {
    if (c >= 97 && c <= 122) return 0;
    if (c >= 65 && c <= 90) return 1;
    if (c == 32) return 2;
    if (c >= 48 && c <= 57) return 3;
    if (c == 10) return 4;
    if (c == 40 || c == 41 || c == 91 || c == 93 || c == 123 || c == 125) return 5;
    if (c == 46 || c == 44 || c == 58 || c == 59) return 6;
    return 7;
}

/* a slot's bit history (version 4): its last bits (up to 7) behind a leading 1; 0 = none */
static inline uint8_t history_update(int h, int bit) {
    h = h == 0 ? 2 | bit : (h << 1) | bit;
    return (uint8_t)(h >= 256 ? (h & 127) | 128 : h);
}

/* a stream's line state (version 4): column (16 bits, saturating), indent (spaces that start the
 * line, 8 bits, saturating), whether only spaces were seen on the line so far */
static inline uint32_t line_update(uint32_t ls, int byte) {
    if (byte == 10) return 1u << 24;
    uint32_t col = ls & 0xFFFFu, ind = (ls >> 16) & 255u, start = (ls >> 24) & 1u;
    col = col < 0xFFFFu ? col + 1 : col;
    if (start && byte == 32) ind = ind < 255 ? ind + 1 : ind;
    else start = 0;
    return col | (ind << 16) | (start << 24);
}

static inline uint32_t next_word(uint32_t word, int byte) {
    if (byte >= 65 && byte <= 90) byte += 32;
    if (byte >= 97 && byte <= 122) return (word + (uint32_t)byte) * 0x2F0B3A49u;
    return 0;
}

static inline uint32_t counter_update(uint32_t e, int bit, int limit) {
    int64_t n = e & 1023, q = e >> 10;
    q += ((((int64_t)bit << 22) - q) * DT[n]) >> 16;
    return (uint32_t)((q << 10) | (n < limit ? n + 1 : n));
}

static inline int nn_p(const int64_t *cum, int c0, int depth) {
    int prefix = c0 - (1 << depth);
    int lo = prefix << (8 - depth), mid = lo + (1 << (7 - depth)), hi = lo + (1 << (8 - depth));
    int64_t total = cum[hi] - cum[lo], ones = cum[hi] - cum[mid];
    /* floor division of non-negative values */
    int64_t p = (ones * 4096 + total / 2) / total;
    return p < 1 ? 1 : (p > 4095 ? 4095 : (int)p);
}


/* The match model (version 2): a table of the positions that followed each hash of the last
 * MINLEN bytes, over every stream's history hb (B, H) and (version 3) the primer's P bytes after
 * them; per stream the pointer (s' * H + i, or B * H + i in the primer) and the length of the
 * current match (0: none). */
#define MINLEN 6
#define MT_BITS 20
#define MAXLEN 65535
#define MAX_RECORD 4096          /* version 16's longest record */
#define CHECKLEN 32

/* an APM row (33 interpolation points, 132 bytes): its cache lines, loaded a decision ahead (the
 * two APMs are 8.6 MB each and read at random: without this a sixth of the stage's time) */
static inline void prefetch_row(const int32_t *row) {
    PREFETCH(row);
    PREFETCH(row + 16);
    PREFETCH(row + 32);
}

/* a mixer's learning step in int32: every input is within +-2047 and every error within
 * +-8190 (the final mixers' doubled rate), so x * err stays below 2^24 and a weight within
 * W_MAX + 2^12: the same integers as in int64, in lanes the compiler vectorises */
static inline void train(int32_t *w, const int *x, int n, int32_t err) {
    for (int i = 0; i < n; i++) {
        int32_t v = w[i] + ((x[i] * err) >> LR_SHIFT);
        w[i] = v > W_MAX ? W_MAX : (v < -W_MAX ? -W_MAX : v);
    }
}

static inline int len_bucket(int64_t len) {
    return len < 16 ? (int)len : (len < 72 ? 12 + (int)(len >> 2) : 31);
}

/* What one call runs, read by run_steps. */
typedef struct {
    Py_ssize_t T, B, cap, H, P, lo, hi, rec;   /* rec: version 16's record length */
    uint8_t *data, *slots, *buf, *hb;
    const int64_t *counts, *cum, *end;
    int32_t *w, *apm;
    uint64_t *hist;
    uint32_t *word, *coder, *mm;
    int64_t *pos, *mt, *ms;
} Run;

/* What a stage's version fixes (`version`: the stage run, a primed or bigger version's base;
 * `v12`: with four more contexts, 1 version 12's, 2 version 15's, 3 version 16's): read by the
 * loop and by `run`'s checks of its arrays */
typedef struct {
    int v2, v4, v6, v10;
    int nctx, nshared, wslots, nin, nsets1;
    Py_ssize_t nsets;
} Shape;

INLINE Shape shape_of(const int version, const int v12) {
    Shape s;
    s.v2 = version >= 2;
    s.v4 = version >= 4;
    s.v6 = version == 6 || version == 7;
    s.v10 = version == 10;
    s.nctx = s.v6 ? (v12 ? NCTX14 : NCTX6)
             : (v12 == 3 ? NCTX16 : (v12 ? NCTX12 : (s.v4 ? NCTX4 : NCTX)));
    s.nshared = v12 ? NCTX12 : NCTX4;  /* v6: the stream-local contexts follow these */
    s.wslots = v12 == 1 ? 4 : 3;      /* v4: a stream's word slots (v12: one more word) */
    s.nin = s.v6 ? (v12 ? NIN14 : NIN6)
            : (v12 == 3 ? NIN16 : (v12 ? NIN12 : (s.v4 ? NIN4 : (s.v2 ? NIN2 : NIN1))));
    s.nsets1 = s.v2 ? 20 : 6;
    s.nsets = s.nsets1 + (s.v4 ? SETS2_4 + SETS3_4 : 256);
    return s;
}

/* The steps of one call: `version` is the stage run (a primed or bigger version's base), `v12`
 * its four more contexts (0 none, 1 version 12's, 2 version 15's, 3 version 16's), `tb` the
 * slot table's bits. Always inlined, so the versions new files get are compiled on their own
 * with these as constants (loops of known length, no tests of other versions' features in the
 * bit loop); 1 or 2 on overflow. */
INLINE int run_steps(const Run *r, const int decode, const int use_nn, const int version,
                     const int v12, const int tb) {
    const Py_ssize_t T = r->T, B = r->B, cap = r->cap, H = r->H, P = r->P, lo = r->lo, hi = r->hi;
    const int64_t rec = r->rec;
    const Shape sh = shape_of(version, v12);
    const int v2 = sh.v2, v4 = sh.v4, v6 = sh.v6, v10 = sh.v10, nctx = sh.nctx, nin = sh.nin;
    const int nshared = sh.nshared, wslots = sh.wslots, nsets1 = sh.nsets1;
    const Py_ssize_t nsets = sh.nsets;
    const int64_t BH = (int64_t)B * H;       /* where the primer starts in hb */
    const int mix3 = v4 && (!use_nn || v6 || v10);  /* three mixers, by byte classes */
    const int fin = (v6 && use_nn) || v10;   /* v6, v10: final mixers over them (and the network) */
    uint8_t *data = r->data, *slots = r->slots, *buf = r->buf, *hb = r->hb;
    const int64_t *counts = r->counts, *cum = r->cum, *end = r->end;
    int32_t *w = r->w, *apm = r->apm;
    int32_t *sm = apm + APM_ROWS * 33;  /* per context: (count, probability) -> probability */
    int32_t *icm = sm + nctx * SM_ROWS;  /* v4: per context, bit history -> probability */
    int32_t *apm2 = icm + nctx * 256;    /* v4: the APM on the last two bytes (hashed) and c0 */
    uint64_t *hist = r->hist;
    uint32_t *word = r->word, *coder = r->coder, *mm = r->mm;
    int64_t *pos = r->pos, *mt = r->mt, *ms = r->ms;
    int overflow = 0;

    for (Py_ssize_t step = 0; step < T && !overflow; step++) {
        Py_ssize_t k = counts[step];
        int64_t tg = v2 ? ms[2 * B] : 0;      /* this step's index in every stream's history */
        if (v2 && tg >= H) { overflow = 2; break; }
        const Py_ssize_t send = k < hi ? k : hi;
        uint32_t hash_rows[2][NCTX14];
        if (lo < send) stream_hashes(hist, word, lo, wslots, v4, v12, v6, nshared, hb, H, tg,
                                    rec, hash_rows[0]);
        for (Py_ssize_t s = lo; s < send; s++) {
            uint32_t *hs = hash_rows[(s - lo) & 1];
            /* v4: word, previous word, line (v12: and the word before the previous one) */
            uint32_t *ws4 = v4 ? word + wslots * s : NULL;
            if (s + 1 < send) {  /* the next stream's first slots load while this one codes (its
                                    contexts do not change meanwhile) */
                uint32_t *hn = hash_rows[(s + 1 - lo) & 1];
                stream_hashes(hist, word, s + 1, wslots, v4, v12, v6, nshared, hb, H, tg, rec, hn);
                for (int i = 0; i < nctx; i++)
                    PREFETCH(&SLOT_T(mix32(hn[i] + 0x9E3779B1u) >> (32 - tb)));
            }
            int c1 = (int)(hist[s] & 255);
            int cls12 = byte_class(c1) * 8 + byte_class((int)((hist[s] >> 8) & 255));
            int cls3 = byte_class((int)((hist[s] >> 16) & 255));
            int byte = decode ? 0 : data[step * B + s];
            const int64_t *cs = cum ? cum + (step * B + s) * 257 : NULL;
            uint32_t *c = coder;
            uint8_t *lane = buf;
            int c0 = 1, eb = 0;
            /* the second APM's row hash: its byte part, then c0 mixed in per decision */
            const uint32_t h2b = v4 ? mix32((uint32_t)(hist[s] & 0xFFFF) * 0x9E3779B1u + 0x0051ED27u) >> 16 : 0;
            prefetch_row(apm + (Py_ssize_t)((c1 << 8) | 1) * 33);
            if (v4) prefetch_row(apm2 + (Py_ssize_t)((h2b ^ 0x9E37u) & 0xFFFFu) * 33);
            int64_t mlen = 0;
            if (v2) {
                mlen = ms[B + s];
                if (mlen > 0) {
                    int64_t p = ms[s], s2 = p / H, i2 = p % H;
                    if (p >= BH ? p < BH + P : (i2 < tg || (i2 == tg && s2 < s))) eb = hb[p];
                    else mlen = 0;        /* not coded yet, or past the primer's end */
                }
            }
            uint32_t hvs[NCTX14];   /* the decision's context hashes, from the prefetch before it */
            for (int depth = 0; depth < 8; depth++) {
                uint32_t idx[NCTX14];
                int smi[NCTX14], ici[NCTX14], x[NIN14], conf = 0;
                int xnn = use_nn ? STRETCH[nn_p(cs, c0, depth)] : 0;
                x[0] = v6 ? 0 : xnn;      /* v6: the network joins after the context mixers */
                UNROLL for (int i = 0; i < nctx; i++) {
                    uint32_t hv = depth ? hvs[i] : mix32(hs[i] + (uint32_t)c0 * 0x9E3779B1u);
                    idx[i] = hv >> (32 - tb);
                    if (v2) {  /* two slots per context, told apart by a check byte */
                        uint8_t ck = (uint8_t)(hv & 255);
                        uint32_t a0 = idx[i], a1 = idx[i] ^ 1u;
                        if (SLOT_CHK(a0) == ck) idx[i] = a0;
                        else if (SLOT_CHK(a1) == ck) idx[i] = a1;
                        else {  /* replace the younger of the two */
                            idx[i] = (SLOT_T(a1) & 1023) < (SLOT_T(a0) & 1023) ? a1 : a0;
                            SLOT_CHK(idx[i]) = ck;
                            SLOT_T(idx[i]) = 1u << 31;
                            if (v4) SLOT_BH(idx[i]) = 0;
                        }
                    }
                    uint32_t e = SLOT_T(idx[i]);
                    int n = (int)(e & 1023);
                    x[1 + i] = STRETCH[e >> 20];
                    smi[i] = i * SM_ROWS + (n < 15 ? n : 15) * 64 + (int)(e >> 26);
                    x[1 + nctx + i] = STRETCH[sm[smi[i]] >> 4];
                    if (v4) {
                        ici[i] = i * 256 + SLOT_BH(idx[i]);
                        x[1 + 2 * nctx + i] = STRETCH[icm[ici[i]] >> 4];
                    }
                    conf += i >= 2 && i <= 5 && n > 0;  /* orders 2, 3, 4, 6 seen before */
                }
                int set1 = conf, mi = -1;
                if (v2) {
                    if (mlen > 0 && ((eb | 256) >> (8 - depth)) == c0) {
                        int ebit = (eb >> (7 - depth)) & 1;
                        mi = len_bucket(mlen) * 2 + ebit;
                        x[nin - 3] = STRETCH[mm[mi] >> 20];
                        x[nin - 2] = (ebit * 2 - 1) * (int)(mlen < 32 ? mlen : 32) * 32;
                        set1 = conf * 4 + (mlen < 16 ? 1 : (mlen < 32 ? 2 : 3));
                    } else {
                        mlen = 0;
                        x[nin - 3] = 0;
                        x[nin - 2] = 0;
                        set1 = conf * 4;
                    }
                }
                x[nin - 1] = 256;
                int32_t *ws = w + (Py_ssize_t)set1 * nin;
                int32_t *ws2 = w + (Py_ssize_t)(nsets1 + c0 + (mix3 ? 256 * cls12 : 0)) * nin;
                int32_t *ws3 = mix3 ? w + (Py_ssize_t)(nsets1 + SETS2_4 + c0 +
                                                     256 * (cls3 + 8 * (mlen > 0))) * nin : NULL;
                int64_t dot = 0, dot2 = 0, dot3 = 0;
                for (int i = 0; i < nin; i++) dot += (int64_t)x[i] * ws[i];
                for (int i = 0; i < nin; i++) dot2 += (int64_t)x[i] * ws2[i];
                if (mix3)
                    for (int i = 0; i < nin; i++) dot3 += (int64_t)x[i] * ws3[i];
                dot >>= 16;
                dot2 >>= 16;
                dot3 >>= 16;
                dot = dot > 2047 ? 2047 : (dot < -2047 ? -2047 : dot);
                dot2 = dot2 > 2047 ? 2047 : (dot2 < -2047 ? -2047 : dot2);
                dot3 = dot3 > 2047 ? 2047 : (dot3 < -2047 ? -2047 : dot3);
                int pm1 = squash((int)dot), pm2 = squash((int)dot2), pm3 = squash((int)dot3);
                int pm = mix3 ? squash((int)(((dot + dot2 + dot3) * 21846) >> 16))
                            : squash((int)((dot + dot2) >> 1));
                int y[NF] = {0}, pf1 = 0, pf2 = 0;
                int32_t *wf1 = NULL, *wf2 = NULL;
                if (fin) {
                    y[0] = (int)dot; y[1] = (int)dot2; y[2] = (int)dot3; y[3] = xnn; y[4] = 256;
                    wf1 = w + nsets * nin + (Py_ssize_t)set1 * NF;
                    wf2 = w + nsets * nin + (Py_ssize_t)(nsets1 + c0) * NF;
                    int64_t f1 = 0, f2 = 0;
                    for (int i = 0; i < NF; i++) {
                        f1 += (int64_t)y[i] * wf1[i];
                        f2 += (int64_t)y[i] * wf2[i];
                    }
                    f1 >>= 16;
                    f2 >>= 16;
                    f1 = f1 > 2047 ? 2047 : (f1 < -2047 ? -2047 : f1);
                    f2 = f2 > 2047 ? 2047 : (f2 < -2047 ? -2047 : f2);
                    pf1 = squash((int)f1);
                    pf2 = squash((int)f2);
                    pm = squash((int)((f1 + f2) >> 1));
                }
                int sv = STRETCH[pm] + 2048, lo = sv >> 7, wt = sv & 127;
                Py_ssize_t a = (Py_ssize_t)((c1 << 8) | c0) * 33 + lo, a2 = 0;
                int pa = (int)(((int64_t)apm[a] * (128 - wt) + (int64_t)apm[a + 1] * wt) >> 11);
                int p;
                if (v4) {
                    uint32_t h2 = h2b ^ ((uint32_t)c0 * 0x9E37u);
                    a2 = (Py_ssize_t)(h2 & 0xFFFFu) * 33 + lo;
                    int pb = (int)(((int64_t)apm2[a2] * (128 - wt) + (int64_t)apm2[a2 + 1] * wt) >> 11);
                    p = (2 * pm + 3 * pa + 3 * pb + 4) >> 3;
                } else {
                    p = (pm + 3 * pa + 2) >> 2;
                }
                p = p < 1 ? 1 : (p > 4095 ? 4095 : p);
                uint32_t x1 = c[0], x2 = c[1];
                uint32_t xmid = x1 + ((x2 - x1) >> 12) * (uint32_t)p +
                                ((((x2 - x1) & 0xFFFu) * (uint32_t)p) >> 12);
                int bit;
                if (decode) {
                    uint32_t xv = c[2];
                    bit = xv <= xmid;
                    if (bit) x2 = xmid; else x1 = xmid + 1;
                    while (((x1 ^ x2) & 0xFF000000u) == 0) {
                        x1 <<= 8;
                        x2 = (x2 << 8) | 255;
                        int nxt = pos[0] < end[0] && pos[0] < cap ? lane[pos[0]] : 0;
                        pos[0]++;
                        xv = (xv << 8) | (uint32_t)nxt;
                    }
                    c[2] = xv;
                } else {
                    bit = (byte >> (7 - depth)) & 1;
                    if (bit) x2 = xmid; else x1 = xmid + 1;
                    while (((x1 ^ x2) & 0xFF000000u) == 0) {
                        if (pos[0] >= cap) { overflow = 1; break; }
                        lane[pos[0]++] = (uint8_t)(x2 >> 24);
                        x1 <<= 8;
                        x2 = (x2 << 8) | 255;
                    }
                }
                c[0] = x1;
                c[1] = x2;
                if (depth < 7) {   /* the next decision's slots load while this one's tables learn */
                    uint32_t nc0 = (uint32_t)((c0 << 1) | bit);
                    for (int i = 0; i < nctx; i++) {
                        hvs[i] = mix32(hs[i] + nc0 * 0x9E3779B1u);
                        PREFETCH(&SLOT_T(hvs[i] >> (32 - tb)));
                    }
                    prefetch_row(apm + (Py_ssize_t)((c1 << 8) | (int)nc0) * 33);
                    if (v4) prefetch_row(apm2 + (Py_ssize_t)((h2b ^ (nc0 * 0x9E37u)) & 0xFFFFu) * 33);
                }
                for (int i = 0; i < nctx; i++) SLOT_T(idx[i]) = counter_update(SLOT_T(idx[i]), bit, LIMIT);
                if (mi >= 0) mm[mi] = counter_update(mm[mi], bit, 1023);
                train(ws, x, nin, ((bit << 12) - pm1) * LR);
                train(ws2, x, nin, ((bit << 12) - pm2) * LR);
                if (mix3) train(ws3, x, nin, ((bit << 12) - pm3) * LR);
                if (fin) {
                    train(wf1, y, NF, ((bit << 12) - pf1) * FLR);
                    train(wf2, y, NF, ((bit << 12) - pf2) * FLR);
                }
                for (int i = 0; i < nctx; i++)
                    sm[smi[i]] += (int32_t)((((int64_t)bit << 16) - sm[smi[i]]) >> SM_RATE);
                if (v4)
                    for (int i = 0; i < nctx; i++) {
                        icm[ici[i]] += (int32_t)((((int64_t)bit << 16) - icm[ici[i]]) >> ICM_RATE);
                        SLOT_BH(idx[i]) = history_update(SLOT_BH(idx[i]), bit);
                    }
                Py_ssize_t j = a + (wt >> 6);
                apm[j] += (int32_t)((((int64_t)bit << 16) + (bit << 7) - bit - bit - apm[j]) >> 7);
                if (v4) {
                    Py_ssize_t j2 = a2 + (wt >> 6);
                    apm2[j2] += (int32_t)((((int64_t)bit << 16) + (bit << 7) - bit - bit - apm2[j2]) >> 7);
                }
                c0 = (c0 << 1) | bit;
            }
            byte = c0 & 255;
            if (decode) data[step * B + s] = (uint8_t)byte;
            hist[s] = (hist[s] << 8) | (uint64_t)byte;
            if (v4) {
                uint32_t nw = next_word(ws4[0], byte);
                if (nw == 0 && ws4[0] != 0) {
                    if (wslots == 4) ws4[3] = ws4[1];
                    ws4[1] = ws4[0];
                }
                ws4[0] = nw;
                ws4[2] = line_update(ws4[2], byte);
            } else {
                word[s] = next_word(word[s], byte);
            }
            if (v2) {
                int64_t here = (int64_t)s * H + tg;
                hb[here] = (uint8_t)byte;
                if (mlen > 0) {               /* the whole byte matched */
                    ms[s] += 1;
                    ms[B + s] = mlen < MAXLEN ? mlen + 1 : MAXLEN;
                } else {
                    ms[B + s] = 0;
                }
                if (tg + 1 >= MINLEN) {
                    uint64_t v = hist[s] & ((((uint64_t)1) << (8 * MINLEN)) - 1);
                    uint32_t h = mix32(mix32((uint32_t)v) + (uint32_t)(v >> 32) * 0x9E3779B1u +
                                       0x2545F491u) >> (32 - MT_BITS);
                    if (ms[B + s] == 0 && mt[h] > 0) {
                        int64_t cand = mt[h] - 1, len = 0;
                        int64_t i2 = cand >= BH ? cand - BH : cand % H;   /* offset in region */
                        while (len < CHECKLEN && i2 - 1 - len >= 0 && tg - len >= 0 &&
                               hb[cand - 1 - len] == hb[here - len])
                            len++;
                        if (len >= MINLEN) {
                            ms[s] = cand;
                            ms[B + s] = len;
                        }
                    }
                    mt[h] = here + 2;         /* the position after this byte, plus one */
                }
            }
        }
        if (v2 && hi == B) ms[2 * B] += 1;
    }
    return overflow;
}

/* the versions new files get, each compiled on its own (run_steps): 10, 15, 16 and 13 (the cm
 * profile: text, binary, records, primed), 6 and 14 (with a network); any other through run_any */
#define SPECIAL(name, decode, use_nn, version, v12, tb) \
    CLONES static int name(const Run *r) { return run_steps(r, decode, use_nn, version, v12, tb); }
SPECIAL(enc10, 0, 0, 10, 0, TABLE_BITS)
SPECIAL(dec10, 1, 0, 10, 0, TABLE_BITS)
SPECIAL(enc13, 0, 0, 10, 1, HUGE_TABLE_BITS)
SPECIAL(dec13, 1, 0, 10, 1, HUGE_TABLE_BITS)
SPECIAL(enc6, 0, 1, 6, 0, TABLE_BITS)
SPECIAL(dec6, 1, 1, 6, 0, TABLE_BITS)
SPECIAL(enc14, 0, 1, 7, 1, HUGE_TABLE_BITS)
SPECIAL(dec14, 1, 1, 7, 1, HUGE_TABLE_BITS)
SPECIAL(enc15, 0, 0, 10, 2, TABLE_BITS)
SPECIAL(dec15, 1, 0, 10, 2, TABLE_BITS)
SPECIAL(enc16, 0, 0, 10, 3, TABLE_BITS)
SPECIAL(dec16, 1, 0, 10, 3, TABLE_BITS)

CLONES static int run_any(const Run *r, int decode, int use_nn, int version, int v12, int tb) {
    return run_steps(r, decode, use_nn, version, v12, tb);
}

/* run(decode, use_nn, version, T, B, cap, H, P, data(T,B) u8, counts(T) i64,
 *     cum(T,B,257) i64|None,
 *     slots u32[2^TABLE_BITS * 2] (see SLOT_T), w i32[nsets*nin],
 *     apm i32[65536*33 + NCTX*SM_ROWS], hist u64[B],
 *     word u32[B], coder u32[3] (x1, x2, x), buf u8[cap], pos i64[1], end i64[1],
 *     hb u8[B*H+P]|None, mt i64[2^MT_BITS]|None,
 *     ms i64[2B+1]|None (pointers, lengths, steps done), mm u32[64]|None):
 *     one arithmetic coder per block, its decisions in the fixed order (steps, streams, bits).
 *     Version 1 has neither check bytes nor the match model; version 3 is version 2 with a
 *     primer region of P bytes (P = 0 otherwise). Version 4 (5: primed) grows two arrays and
 *     uses the slots' bit histories: apm += the bit histories' maps i32[NCTX4*256] and the
 *     second APM i32[65536*33]; word u32[3B] (current word, previous word, line state per
 *     stream). Version 6 (7: primed) has 15 contexts (five stream-local) and so 15 counter maps
 *     and history maps in apm, 49 mixer inputs, and w grows by the final mixers' FSETS * NF
 *     weights. Versions 8 and 9 are versions 7 and 5 with 2^BIG_TABLE_BITS slots (slots
 *     u32[2^BIG_TABLE_BITS * 2]). Version 10 is version 4 with version 6's final mixers over
 *     its three mixers (w grows by FSETS * NF; without a network their network input is 0);
 *     version 11 is version 10 primed, with 2^BIG_TABLE_BITS slots. Version 12 is version 11
 *     with NCTX12 contexts (context_hashes12) and four word slots per stream (word u32[4B]:
 *     the word before the previous one last). Version 13 is version 12 with 2^HUGE_TABLE_BITS
 *     slots (slots u32[2^HUGE_TABLE_BITS * 2]). Version 14 is version 8 with version 12's four
 *     contexts and word slots (NCTX14 contexts: version 12's fourteen, then the five
 *     stream-local ones) and 2^HUGE_TABLE_BITS slots. Version 15 is version 10 with four
 *     contexts for binary data (context_hashes15; NCTX12 contexts, three word slots), never
 *     primed. Version 16 is version 15 with two more contexts, for records of `rec` bytes
 *     (context_hashes16; NCTX16 contexts, three word slots; `rec` the optional last
 *     argument, 2..MAX_RECORD), never primed. */
static PyObject *py_run(PyObject *self, PyObject *args) {
    int decode, use_nn, version;
    Py_ssize_t T, B, cap, H, P, lo, hi, rec = 0;
    PyObject *o[16];
    if (!PyArg_ParseTuple(args, "iiinnnnnnnOOOOOOOOOOOOOOOO|n", &decode, &use_nn, &version, &T, &B,
                          &cap, &H, &P, &lo, &hi, &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &o[6], &o[7], &o[8],
                          &o[9], &o[10], &o[11], &o[12], &o[13], &o[14], &o[15], &rec))
        return NULL;
    if (version < 1 || version > 16 || P < 0 ||
        (P > 0 && version != 3 && version != 5 && version != 7 && version != 8 && version != 9 &&
         (version < 11 || version >= 15))) {
        PyErr_Format(PyExc_ValueError, "cm: unknown version %d (primer %zd)", version, P);
        return NULL;
    }
    if (version == 16 ? rec < 2 || rec > MAX_RECORD : rec != 0) {
        PyErr_Format(PyExc_ValueError, "cm: version %d with records of %zd bytes", version, rec);
        return NULL;
    }
    /* streams lo..hi-1 of one step (a slice of it: the step ends with the slice that reaches
       B), or every stream of T steps */
    if (lo < 0 || hi > B || lo >= hi || (T != 1 && (lo != 0 || hi != B))) {
        PyErr_Format(PyExc_ValueError, "cm: streams %zd..%zd of %zd over %zd steps", lo, hi, B, T);
        return NULL;
    }
    const int tb = version >= 15 ? TABLE_BITS : version >= 13 ? HUGE_TABLE_BITS
                   : (version == 8 || version == 9 || version >= 11 ? BIG_TABLE_BITS : TABLE_BITS);
    /* 12-14: 11 (14: 8) with version 12's four more contexts; 15: 10 with its own four, 16: 15
       with two more */
    const int v12 = version == 16 ? 3 : version == 15 ? 2 : version >= 12;
    const int written = version;
    /* the stage they run: 8, 14 and 9 are 7 and 5 with more slots, 11-13 are 10 primed, 15 and
       16 are 10 with more contexts */
    version = version == 8 || version == 14 ? 7
              : (version == 9 ? 5 : (version >= 11 ? 10 : version));
    const Shape sh = shape_of(version, v12);
    const int v2 = sh.v2, v4 = sh.v4, nctx = sh.nctx, nin = sh.nin, wslots = sh.wslots;
    const Py_ssize_t nsets = sh.nsets;
    const Py_ssize_t napm = APM_ROWS * 33 + nctx * SM_ROWS + (v4 ? nctx * 256 + APM_ROWS * 33 : 0);
    Buf b[16];
    memset(b, 0, sizeof b);
    if (!get(o[0], &b[0], 1, T * B, 1, 1, "data") || !get(o[1], &b[1], 8, T, 0, 1, "counts") ||
        (use_nn && o[2] == Py_None && (PyErr_SetString(PyExc_ValueError, "cum required"), 1)) ||
        !get(o[2], &b[2], 8, T * B * 257, 0, 1, "cum") ||
        !get(o[3], &b[3], 4, ((Py_ssize_t)1) << (tb + 1), 1, 1, "slots") ||
        !get(o[4], &b[4], 4, nsets * nin + (sh.v6 || sh.v10 ? FSETS * NF : 0), 1, 1, "w") ||
        !get(o[5], &b[5], 4, napm, 1, 1, "apm") ||
        !get(o[6], &b[6], 8, B, 1, 1, "hist") ||
        !get(o[7], &b[7], 4, v4 ? wslots * B : B, 1, 1, "word") ||
        !get(o[8], &b[8], 4, 3, 1, 1, "coder") || !get(o[9], &b[9], 1, cap, 1, 1, "buf") ||
        !get(o[10], &b[10], 8, 1, 1, 1, "pos") || !get(o[11], &b[11], 8, 1, 0, 1, "end") ||
        (v2 && (o[12] == Py_None || o[13] == Py_None || o[14] == Py_None || o[15] == Py_None) &&
         (PyErr_SetString(PyExc_ValueError, "match state required"), 1)) ||
        !get(o[12], &b[12], 1, B * H + P, 1, 1, "hb") ||
        !get(o[13], &b[13], 8, ((Py_ssize_t)1) << MT_BITS, 1, 1, "mt") ||
        !get(o[14], &b[14], 8, 2 * B + 1, 1, 1, "ms") || !get(o[15], &b[15], 4, 64, 1, 1, "mm")) {
        release(b, 16);
        return NULL;
    }
    if (PyErr_Occurred()) {
        release(b, 16);
        return NULL;
    }
    const Run r = {T, B, cap, H, P, lo, hi, rec,
                   (uint8_t *)b[0].b.buf, (uint8_t *)b[3].b.buf, (uint8_t *)b[9].b.buf,
                   v2 ? (uint8_t *)b[12].b.buf : NULL,
                   (const int64_t *)b[1].b.buf, b[2].held ? (const int64_t *)b[2].b.buf : NULL,
                   (const int64_t *)b[11].b.buf,
                   (int32_t *)b[4].b.buf, (int32_t *)b[5].b.buf, (uint64_t *)b[6].b.buf,
                   (uint32_t *)b[7].b.buf, (uint32_t *)b[8].b.buf,
                   v2 ? (uint32_t *)b[15].b.buf : NULL, (int64_t *)b[10].b.buf,
                   v2 ? (int64_t *)b[13].b.buf : NULL, v2 ? (int64_t *)b[14].b.buf : NULL};
    int (*const special[6][2])(const Run *) = {{enc10, dec10}, {enc13, dec13}, {enc6, dec6},
                                               {enc14, dec14}, {enc15, dec15}, {enc16, dec16}};
    /* files have 10, 13, 15 and 16 without a network, 6 and 14 with one; anything else (a
       test's combination, an older version) runs the general copy */
    const int which = written == 10 ? 0 : written == 13 ? 1 : written == 6 ? 2 : written == 14 ? 3
                      : written == 15 ? 4 : written == 16 ? 5 : -1;
    int overflow;
    Py_BEGIN_ALLOW_THREADS
    if (which >= 0 && use_nn == (which == 2 || which == 3))
        overflow = special[which][decode != 0](&r);
    else
        overflow = run_any(&r, decode, use_nn, version, v12, tb);
    Py_END_ALLOW_THREADS
    release(b, 16);
    if (overflow == 1) {
        PyErr_SetString(PyExc_RuntimeError, "cm: the block's output buffer is full");
        return NULL;
    }
    if (overflow == 2) {
        PyErr_SetString(PyExc_RuntimeError, "cm: more steps than the history holds");
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"run", py_run, METH_VARARGS, "encode or decode steps of bytes through the mixing stage"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_cm",
                                    "The context-mixing stage's compiled loop.", -1, methods};

PyMODINIT_FUNC PyInit__cm(void) {
    init_tables();
    return PyModule_Create(&module);
}
