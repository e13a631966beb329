/* The probability path's per-step loops in C: the same arithmetic as probs.py (logit distances,
 * frequencies, their cumulative sums) and match.py (the match model's mixing and its state after
 * each byte), which they must equal bit for bit (tests/umoec/codec/test_probs_compiled.py).
 *
 * Every float operation is the one numpy performs, in the same order and precision: float32
 * subtraction and scaling of the logits, float64 products and sums in int_log, a float64 ->
 * float32 rounding at its end; built with -ffp-contract=off, never -ffast-math, so no FMA. frexp
 * only splits a double into mantissa and exponent (exact). Everything else is int64.
 * A row the reference would refuse (NaN, +inf, or no finite logit) makes these functions return
 * False without writing: the Python caller then runs the reference, which raises its error.
 */
#include "../_native.h"
#include <math.h>
#include <stdint.h>
#include <string.h>


#define NSYM 256
#define DIST_FRAC 256.0f        /* 2**DIST_FRAC_BITS */
#define ONE16 (((int64_t)1) << 16)
#define LN_BITS 12
#define MATCH_MAX_LEN (((int64_t)1) << 16)        /* match.MAX_LEN */
#define MATCH_MIX 0x9E3779B97F4A7C15ULL            /* match._MIX, _STEP */
#define MATCH_STEP 0x100000001B3ULL


/* probs.logit_distances of one row: 0 when the reference would raise */
CLONES static int distances(const float *x, float dist_max, int64_t *dq) {
    float mx = -INFINITY;
    for (int i = 0; i < NSYM; i++) {
        float v = x[i];
        if (isnan(v) || v == INFINITY) return 0;
        mx = v > mx ? v : mx;
    }
    if (mx == -INFINITY) return 0;
    for (int i = 0; i < NSYM; i++) {
        float d = (mx - x[i]) * DIST_FRAC;          /* numpy's float32 ops: exact scaling */
        d = d < dist_max ? d : dist_max;            /* np.minimum; d is never NaN here */
        /* np.rint on float32: 0 <= d < 2**23, where adding 2**23 rounds to an integer, ties to
         * even, as rint does */
        float r = (d + 8388608.0f) - 8388608.0f;
        dq[i] = (int64_t)r;
    }
    return 1;
}

/* cum_freqs(logits (R, 256) float32, exp_table, dist_max, prob_precision, out (R, 257) int64)
 * -> True, out[:, 1:] = cumsum(distances_to_freqs(logit_distances(logits))) (alpha 1); or False
 * (a row the reference refuses; nothing written) */
CLONES static PyObject *py_cum_freqs(PyObject *self, PyObject *args) {
    PyObject *o[3];
    Py_ssize_t R, n_table;
    int prec;
    if (!PyArg_ParseTuple(args, "OOnniO", &o[0], &o[1], &R, &n_table, &prec, &o[2])) return NULL;
    if (prec < 10 || prec > 32 || n_table < 1) {
        PyErr_SetString(PyExc_ValueError, "cum_freqs: prob_precision must be in 10..32");
        return NULL;
    }
    Buf b[3];
    memset(b, 0, sizeof b);
    if (!(get(o[0], &b[0], 4, R * NSYM, 0, 0, "logits") &&
          get(o[1], &b[1], 8, n_table, 0, 0, "exp") &&
          get(o[2], &b[2], 8, R * (NSYM + 1), 1, 0, "out"))) {
        release(b, 3);
        return NULL;
    }
    const float *x = (const float *)b[0].b.buf;
    const int64_t *w_of = (const int64_t *)b[1].b.buf;
    int64_t *out = (int64_t *)b[2].b.buf;
    const float dist_max = (float)(n_table - 1);
    const int64_t total = ((int64_t)1) << prec, spread = total - NSYM;
    int ok = 1;
    int64_t *dq = PyMem_Malloc(sizeof(int64_t) * NSYM * (size_t)(R > 0 ? R : 1));
    if (!dq) {
        release(b, 3);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t r = 0; r < R && ok; r++) ok = distances(x + r * NSYM, dist_max, dq + r * NSYM);
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t r = 0; r < R && ok; r++) {
        int64_t *d = dq + r * NSYM, sum = 0, best = -1;
        int arg = 0;
        for (int i = 0; i < NSYM; i++) {
            int64_t w = w_of[d[i]];
            d[i] = w;
            sum += w;
            if (w > best) best = w, arg = i;        /* np.argmax: the first of equal maxima */
        }
        /* floor(w * spread / sum): a float64 estimate, then corrected to the exact quotient
         * (the estimate is off by at most one; integer division per symbol is 5x slower) */
        const double inv = 1.0 / (double)sum;
        int64_t fsum = 0;
        for (int i = 0; i < NSYM; i++) {
            const int64_t a = d[i] * spread;
            int64_t q = (int64_t)((double)a * inv);
            int64_t rem = a - q * sum;
            q -= rem < 0;
            rem += rem < 0 ? sum : 0;
            q += rem >= sum;
            d[i] = q + 1;
            fsum += d[i];
        }
        d[arg] += total - fsum;
        int64_t *row = out + r * (NSYM + 1), c = 0;
        for (int i = 0; i < NSYM; i++) row[i + 1] = (c += d[i]);
    }
    Py_END_ALLOW_THREADS
    PyMem_Free(dq);
    release(b, 3);
    return PyBool_FromLong(ok);
}

/* match.int_log of one weight >= 1: frexp, a table of ln(mantissa), float64 then float32 */
/* numerics.int_log of one weight w >= 1: frexp(w) = (m, e), m in [0.5, 1), then
 * e ln2 + ln_table[floor(m 2**LN_BITS) - 2**(LN_BITS - 1)] rounded to float32. Below 2**53,
 * where (double)w is exact, e is w's bit length and floor(m 2**LN_BITS) = w >> (e - LN_BITS)
 * (w << (LN_BITS - e) when shorter): integer operations giving frexp's values without its
 * library call (a third of the match model's mixing); above, frexp itself. */
static inline float int_log1(int64_t w, const double *ln_table, double ln2) {
    int e;
    int64_t top;
    if (w < (((int64_t)1) << 53)) {
        e = 64 - __builtin_clzll((unsigned long long)w);
        top = e >= LN_BITS ? w >> (e - LN_BITS) : w << (LN_BITS - e);
    } else {
        double m = frexp((double)w, &e);
        top = (int64_t)(m * (double)(1 << LN_BITS));
    }
    double prod = (double)e * ln2;
    return (float)(prod + ln_table[top - (1 << (LN_BITS - 1))]);
}

/* int_log(w (n,) int64 >= 1, out (n,) float32, ln_table, ln2, n): numerics.int_log; False (out
 * untouched) when a weight is below 1, where the reference's table lookup is meaningless */
static PyObject *py_int_log(PyObject *self, PyObject *args) {
    PyObject *ow, *oo, *ot;
    double ln2;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "OOOdn", &ow, &oo, &ot, &ln2, &n)) return NULL;
    Buf b[3];
    memset(b, 0, sizeof b);
    if (!get(ow, &b[0], 8, n, 0, 0, "w") || !get(oo, &b[1], 4, n, 1, 0, "out") ||
        !get(ot, &b[2], 8, 1 << (LN_BITS - 1), 0, 0, "ln_table")) {
        release(b, 3);
        return NULL;
    }
    const int64_t *w = (const int64_t *)b[0].b.buf;
    int ok = 1;
    for (Py_ssize_t i = 0; i < n; i++) ok &= w[i] >= 1;
    if (ok)
        for (Py_ssize_t i = 0; i < n; i++)
            ((float *)b[1].b.buf)[i] = int_log1(w[i], (const double *)b[2].b.buf, ln2);
    release(b, 3);
    return PyBool_FromLong(ok);
}

static inline int64_t count_le(const int64_t *edges, Py_ssize_t n, int64_t v) {
    Py_ssize_t k = 0;                               /* np.searchsorted(edges, v, "right") */
    while (k < n && edges[k] <= v) k++;
    return k;
}

/* match_mix(logits (B, 256) float32, out (B, 256) float32 (a copy of logits), rows (R,), pred
 *           (R,), length (R,), hits, tries (cells), prior, exp_table, ln_table, ln2, len_edges,
 *           p_edges, cell (R,) out, R, n_table, n_cells)
 * -> True, out[rows] = the match model's mixed logits and cell[...] their SSE cells; or False
 * (a row the reference refuses; out left as given) */
CLONES static PyObject *py_match_mix(PyObject *self, PyObject *args) {
    PyObject *o[12];
    Py_ssize_t B, R, n_table, n_cells, n_len, n_p;
    long long prior;
    double ln2;
    if (!PyArg_ParseTuple(args, "OOOOOOOLOOdOOOnnnnnn", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5],
                          &o[6], &prior, &o[7], &o[8], &ln2, &o[9], &o[10], &o[11], &B, &R,
                          &n_table, &n_cells, &n_len, &n_p))
        return NULL;
    Buf b[12];
    memset(b, 0, sizeof b);
    int got = get(o[0], &b[0], 4, B * NSYM, 0, 0, "logits") &&
              get(o[1], &b[1], 4, B * NSYM, 1, 0, "out") && get(o[2], &b[2], 8, R, 0, 0, "rows") &&
              get(o[3], &b[3], 8, R, 0, 0, "pred") && get(o[4], &b[4], 8, R, 0, 0, "length") &&
              get(o[5], &b[5], 8, n_cells, 0, 0, "hits") &&
              get(o[6], &b[6], 8, n_cells, 0, 0, "tries") &&
              get(o[7], &b[7], 8, n_table, 0, 0, "exp") &&
              get(o[8], &b[8], 8, 1 << (LN_BITS - 1), 0, 0, "ln_table") &&
              get(o[9], &b[9], 8, n_len, 0, 0, "len_edges") &&
              get(o[10], &b[10], 8, n_p, 0, 0, "p_edges") && get(o[11], &b[11], 8, R, 1, 0, "cell");
    if (!got) {
        release(b, 12);
        return NULL;
    }
    const int64_t *rows = (const int64_t *)b[2].b.buf, *pred = (const int64_t *)b[3].b.buf;
    for (Py_ssize_t j = 0; j < R; j++)
        if (rows[j] < 0 || rows[j] >= B || pred[j] < 0 || pred[j] >= NSYM) {
            release(b, 12);
            PyErr_SetString(PyExc_IndexError, "match_mix: row or predicted byte out of range");
            return NULL;
        }
    const float *x = (const float *)b[0].b.buf;
    float *out = (float *)b[1].b.buf;
    const int64_t *length = (const int64_t *)b[4].b.buf, *hits = (const int64_t *)b[5].b.buf;
    const int64_t *tries = (const int64_t *)b[6].b.buf, *w_of = (const int64_t *)b[7].b.buf;
    const double *ln_table = (const double *)b[8].b.buf;
    const int64_t *len_edges = (const int64_t *)b[9].b.buf, *p_edges = (const int64_t *)b[10].b.buf;
    int64_t *cell = (int64_t *)b[11].b.buf;
    const float dist_max = (float)(n_table - 1);
    int64_t *w = PyMem_Malloc(sizeof(int64_t) * NSYM * (size_t)(R > 0 ? R : 1));
    if (!w) {
        release(b, 12);
        return PyErr_NoMemory();
    }
    int ok = 1;
    for (Py_ssize_t j = 0; j < R && ok; j++) ok = distances(x + rows[j] * NSYM, dist_max, w + j * NSYM);
    for (Py_ssize_t j = 0; j < R && ok; j++) {
        int64_t *wj = w + j * NSYM, total = 0;
        for (int i = 0; i < NSYM; i++) total += (wj[i] = w_of[wj[i]]);
        const int64_t we = wj[pred[j]];
        const int64_t p = (we << 16) / total;
        const int64_t c = count_le(len_edges, n_len, length[j]) * (n_p + 1) + count_le(p_edges, n_p, p);
        if (c < 0 || c >= n_cells) {
            ok = -1;
            break;
        }
        int64_t pm = (hits[c] * ONE16 + prior * p) / (tries[c] + prior);
        pm = pm < 1 ? 1 : (pm > ONE16 - 1 ? ONE16 - 1 : pm);
        const int64_t rest = total - we > 1 ? total - we : 1;
        float *oj = out + rows[j] * NSYM;
        for (int i = 0; i < NSYM; i++) {
            int64_t v = i == pred[j] ? pm * rest : wj[i] * (ONE16 - pm);
            oj[i] = int_log1(v > 1 ? v : 1, ln_table, ln2);
        }
        cell[j] = c;
    }
    PyMem_Free(w);
    release(b, 12);
    if (ok < 0) {
        PyErr_SetString(PyExc_IndexError, "match_mix: SSE cell out of range");
        return NULL;
    }
    return PyBool_FromLong(ok);
}

/* match.MatchModel._find for one hashed length n: hash each stream's last n bytes (h, out), let
 * streams without a match of n bytes take the verified candidate their bucket holds, then record
 * every stream's position (for a bucket several streams hash to, the highest stream's). 0 when a
 * table entry points outside the history (the table is this state's own: a bug). */
static int match_find(const uint8_t *hist, Py_ssize_t B, Py_ssize_t cap, Py_ssize_t t, Py_ssize_t n,
                      int64_t *table, int bits, int check, int64_t *src, int64_t *length, int64_t *h) {
    for (Py_ssize_t s = 0; s < B; s++) {
        uint64_t x = 0;                                  /* wraps like numpy's uint64 */
        for (Py_ssize_t i = t - n; i < t; i++) x = x * MATCH_STEP + (uint64_t)hist[s * cap + i] + 1;
        h[s] = (int64_t)((x * MATCH_MIX) >> (64 - bits));
    }
    for (Py_ssize_t s = 0; s < B; s++) {
        if (length[s] >= n) continue;
        const int64_t cand = table[h[s]] - 1;
        if (cand < 0) continue;
        const int64_t cs = cand >> 32, cp = cand & 0xFFFFFFFF;
        if (cs >= B || cp > t) return 0;
        int64_t len = 0;                                 /* common suffix, at most `check` */
        for (int64_t k = 1; k <= check; k++) {
            const int64_t pc = cp - k, po = t - k;
            if (pc < 0 || po < 0 || hist[cs * cap + pc] != hist[s * cap + po]) break;
            len++;
        }
        if (len >= n && len > length[s]) {
            length[s] = len;
            src[s] = cand;
        }
    }
    for (Py_ssize_t s = 0; s < B; s++) table[h[s]] = (((int64_t)s << 32) | t) + 1;
    return 1;
}

/* match_observe(byte (B,) uint8, hist (B, cap) uint8, B, cap, t, src, length, pred, cell (B,)
 *               int64, hits, tries (n_cells,) int64, n_cells, limit, check, hash_bits,
 *               n1, table1, n2, table2 (2**hash_bits,) int64 (n2 = 0: table2 None))
 * -> (predictions counted, of them right): match.MatchModel.observe after the bytes `byte` of
 * step t, the history's capacity already above t; hist, src, length, hits, tries and the
 * tables updated in place */
CLONES static PyObject *py_match_observe(PyObject *self, PyObject *args) {
    PyObject *o[10];
    Py_ssize_t B, cap, t, n_cells, n1, n2;
    long long limit;
    int check, bits;
    if (!PyArg_ParseTuple(args, "OOnnnOOOOOOnLiinOnO", &o[0], &o[1], &B, &cap, &t, &o[2], &o[3],
                          &o[4], &o[5], &o[6], &o[7], &n_cells, &limit, &check, &bits, &n1, &o[8],
                          &n2, &o[9]))
        return NULL;
    if (B < 1 || t < 0 || t >= cap || bits < 10 || bits > 26 || check < 1 || n1 < 1 || n2 < 0 ||
        (n2 == 0) != (o[9] == Py_None)) {
        PyErr_SetString(PyExc_ValueError, "match_observe: bad sizes");
        return NULL;
    }
    const Py_ssize_t slots = ((Py_ssize_t)1) << bits;
    Buf b[10];
    memset(b, 0, sizeof b);
    int got = get(o[0], &b[0], 1, B, 0, 0, "byte") && get(o[1], &b[1], 1, B * cap, 1, 0, "hist") &&
              get(o[2], &b[2], 8, B, 1, 0, "src") && get(o[3], &b[3], 8, B, 1, 0, "length") &&
              get(o[4], &b[4], 8, B, 0, 0, "pred") && get(o[5], &b[5], 8, B, 0, 0, "cell") &&
              get(o[6], &b[6], 8, n_cells, 1, 0, "hits") &&
              get(o[7], &b[7], 8, n_cells, 1, 0, "tries") &&
              get(o[8], &b[8], 8, slots, 1, 0, "table1") && get(o[9], &b[9], 8, slots, 1, 1, "table2");
    int64_t *h = got ? PyMem_Malloc(sizeof(int64_t) * (size_t)B) : NULL;
    if (!h) {
        release(b, 10);
        return got ? PyErr_NoMemory() : NULL;
    }
    const uint8_t *byte = (const uint8_t *)b[0].b.buf;
    uint8_t *hist = (uint8_t *)b[1].b.buf;
    int64_t *src = (int64_t *)b[2].b.buf, *length = (int64_t *)b[3].b.buf;
    const int64_t *pred = (const int64_t *)b[4].b.buf, *cell = (const int64_t *)b[5].b.buf;
    int64_t *hits = (int64_t *)b[6].b.buf, *tries = (int64_t *)b[7].b.buf;
    long long used = 0, right = 0;
    int ok = 1;
    for (Py_ssize_t s = 0; s < B && ok; s++) {          /* the counts of the last predictions */
        const int64_t c = cell[s];
        if (c < 0) continue;
        if (c >= n_cells) {
            ok = 0;
            break;
        }
        const int r = pred[s] == (int64_t)byte[s];
        tries[c] += 1;
        hits[c] += r;
        used += 1;
        right += r;
    }
    if (ok && used)
        for (Py_ssize_t c = 0; c < n_cells; c++)
            if (tries[c] > limit) {
                tries[c] >>= 1;
                hits[c] >>= 1;
            }
    if (ok) {
        for (Py_ssize_t s = 0; s < B; s++) {            /* the byte, then follow or drop matches */
            hist[s * cap + t] = byte[s];
            if (length[s] > 0 && pred[s] == (int64_t)byte[s]) {
                length[s] = length[s] + 1 < MATCH_MAX_LEN ? length[s] + 1 : MATCH_MAX_LEN;
                src[s] += 1;
            } else {
                length[s] = 0;
            }
        }
        const Py_ssize_t t1 = t + 1;
        if (t1 >= n1)
            ok = match_find(hist, B, cap, t1, n1, (int64_t *)b[8].b.buf, bits, check, src, length, h);
        if (ok && n2 && t1 >= n2)
            ok = match_find(hist, B, cap, t1, n2, (int64_t *)b[9].b.buf, bits, check, src, length, h);
    }
    PyMem_Free(h);
    release(b, 10);
    if (!ok) {
        PyErr_SetString(PyExc_IndexError, "match_observe: an SSE cell or table entry out of range");
        return NULL;
    }
    return Py_BuildValue("LL", used, right);
}

static PyMethodDef methods[] = {
    {"cum_freqs", py_cum_freqs, METH_VARARGS, "cumulative frequencies of float32 logits"},
    {"int_log", py_int_log, METH_VARARGS, "numerics.int_log's loop (match_mix's logarithm)"},
    {"match_mix", py_match_mix, METH_VARARGS, "the match model's mixing of float32 logits"},
    {"match_observe", py_match_observe, METH_VARARGS, "the match model's state after a byte"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_probs",
                                    "The probability path's compiled per-step loops.", -1, methods};

PyMODINIT_FUNC PyInit__probs(void) { return PyModule_Create(&module); }
