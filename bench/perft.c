/* A plain C perft of 4x4x4 Qubic: the yardstick for engine/kernels/negamax.py's perft.

   Written the way a C programmer would write it, with nothing taken away to make it slow
   and nothing clever added: a cell array, each side's stone count on each of the 76 lines,
   the lines through each cell as a table, make/unmake updating the counts of those lines,
   and a win seen as a count reaching 4. Perft counts the move sequences of DEPTH plies from
   the empty board, a won game ending its sequence, exactly as engine.kernels.perft does.

   Built with -DHISTOGRAM, make/unmake also keep the open-line histogram the kernel's
   evaluators read: what the kernel's push and pop did until they were reduced to the line
   counts (session 16), kept as the row that shows what that histogram costs C itself. Built
   with -DCOUNTERS, make/unmake keep what engine/kernels/threats.py's push and pop keep (a code
   a line, each side's counters of open lines in one word): what that bookkeeping costs C.

   bench/perft.py compiles it with `cc -O2` and runs it beside the numba kernel:

       cc -O2 -o /tmp/perft bench/perft.c && /tmp/perft 5 3

   prints one line a repeat: depth, count, CPU seconds. */

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define N 4
#define CELLS (N * N * N)
#define MAX_LINES 76
#define MAX_DEGREE 7

static unsigned char cells[CELLS];              /* 0 empty, 1 X, 2 O */
static unsigned char counts[2][MAX_LINES];      /* stones of each side on each line */
static int cell_lines[CELLS][MAX_DEGREE];       /* the lines through each cell */
static int cell_degree[CELLS];
static int n_lines;

/* Every line of the cube: a start cell and one of the 13 directions (of 26, one of each
   opposite pair), kept when its four cells are on the board and the cell before the start
   is not (so each line is found once). */
static void build_lines(void) {
    for (int start = 0; start < CELLS; start++) {
        int z = start / (N * N), y = (start / N) % N, x = start % N;
        for (int dz = -1; dz <= 1; dz++)
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    int dir = (dz + 1) * 9 + (dy + 1) * 3 + (dx + 1);
                    if (dir <= 13) continue; /* the zero vector and one of each pair */
                    int bz = z - dz, by = y - dy, bx = x - dx;
                    if (bz >= 0 && bz < N && by >= 0 && by < N && bx >= 0 && bx < N) continue;
                    int ez = z + (N - 1) * dz, ey = y + (N - 1) * dy, ex = x + (N - 1) * dx;
                    if (ez < 0 || ez >= N || ey < 0 || ey >= N || ex < 0 || ex >= N) continue;
                    for (int i = 0; i < N; i++) {
                        int c = (z + i * dz) * N * N + (y + i * dy) * N + (x + i * dx);
                        cell_lines[c][cell_degree[c]++] = n_lines;
                    }
                    n_lines++;
                }
    }
}

#if defined(COUNTERS)
/* With -DCOUNTERS, make/unmake keep what engine/kernels/threats.py's push and pop keep: a
   code a line (X's stones + 16 * O's) and, per side, one 64-bit word of 10-bit counters of
   its open lines by stones (k = 0..3 here, n-5 < 0) and of all its open lines, moved by a
   table of deltas read by the line's new code: no branch but the win's. */
#define FIELD 10
static unsigned char code[MAX_LINES];
static long long sums[2];
static long long delta[2][256][2];

static long long line_sum(int c, int side) {
    int mine = side ? c >> 4 : c & 15, theirs = side ? c & 15 : c >> 4;
    if (theirs || mine >= N) return 0;
    return (1LL << (FIELD * (mine + 5 - N))) + (1LL << (FIELD * 5));
}

static void build_deltas(void) {
    for (int mover = 0; mover < 2; mover++) {
        int unit = mover ? 16 : 1;
        for (int c = 0; c < 256; c++) {
            int x = c & 15, o = c >> 4;
            if (x > N || o > N || (mover ? o : x) == 0) continue;
            for (int s = 0; s < 2; s++) delta[mover][c][s] = line_sum(c, s) - line_sum(c - unit, s);
        }
    }
    sums[0] = sums[1] = MAX_LINES * line_sum(0, 0);
}

static inline int make(int cell, int side) {
    int won = 0, unit = side ? 16 : 1, full = N * unit;
    long long x = sums[0], o = sums[1];
    cells[cell] = (unsigned char)(side + 1);
    for (int i = 0; i < cell_degree[cell]; i++) {
        int line = cell_lines[cell][i], v = code[line] + unit;
        code[line] = (unsigned char)v;
        x += delta[side][v][0];
        o += delta[side][v][1];
        if (v == full) won = 1;
    }
    sums[0] = x;
    sums[1] = o;
    return won;
}

static inline void unmake(int cell, int side) {
    int unit = side ? 16 : 1;
    long long x = sums[0], o = sums[1];
    cells[cell] = 0;
    for (int i = 0; i < cell_degree[cell]; i++) {
        int line = cell_lines[cell][i], v = code[line];
        x -= delta[side][v][0];
        o -= delta[side][v][1];
        code[line] = (unsigned char)(v - unit);
    }
    sums[0] = x;
    sums[1] = o;
}
#elif !defined(HISTOGRAM)
/* Place a stone of `side`; returns 1 when it completes a line. */
static inline int make(int cell, int side) {
    int won = 0;
    cells[cell] = (unsigned char)(side + 1);
    for (int i = 0; i < cell_degree[cell]; i++)
        if (++counts[side][cell_lines[cell][i]] == N) won = 1;
    return won;
}

static inline void unmake(int cell, int side) {
    cells[cell] = 0;
    for (int i = 0; i < cell_degree[cell]; i++) counts[side][cell_lines[cell][i]]--;
}
#else
/* With -DHISTOGRAM, make/unmake also keep what engine/kernels/negamax.py's evaluators read: per side,
   the open lines (none of the other side's stones) by stone count. */
static int hist[2][N + 1];

static inline int make(int cell, int side) {
    int won = 0, other = 1 - side;
    cells[cell] = (unsigned char)(side + 1);
    for (int i = 0; i < cell_degree[cell]; i++) {
        int line = cell_lines[cell][i], mine = counts[side][line], theirs = counts[other][line];
        if (theirs == 0) {
            hist[side][mine]--;
            hist[side][mine + 1]++;
            if (mine + 1 == N) won = 1;
        }
        if (mine == 0) hist[other][theirs]--;
        counts[side][line] = (unsigned char)(mine + 1);
    }
    return won;
}

static inline void unmake(int cell, int side) {
    int other = 1 - side;
    cells[cell] = 0;
    for (int i = 0; i < cell_degree[cell]; i++) {
        int line = cell_lines[cell][i], mine = counts[side][line] - 1, theirs = counts[other][line];
        counts[side][line] = (unsigned char)mine;
        if (theirs == 0) {
            hist[side][mine + 1]--;
            hist[side][mine]++;
        }
        if (mine == 0) hist[other][theirs]++;
    }
}
#endif

static long perft(int depth, int side) {
    long total = 0;
    for (int cell = 0; cell < CELLS; cell++) {
        if (cells[cell]) continue;
        if (make(cell, side) || depth == 1)
            total += 1;
        else
            total += perft(depth - 1, 1 - side);
        unmake(cell, side);
    }
    return total;
}

int main(int argc, char **argv) {
    int depth = argc > 1 ? atoi(argv[1]) : 4;
    int repeat = argc > 2 ? atoi(argv[2]) : 1;
    build_lines();
#if defined(COUNTERS)
    build_deltas();
#elif defined(HISTOGRAM)
    hist[0][0] = hist[1][0] = MAX_LINES;
#endif
    if (n_lines != MAX_LINES) {
        fprintf(stderr, "found %d lines, expected %d\n", n_lines, MAX_LINES);
        return 1;
    }
    for (int r = 0; r < repeat; r++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
        long count = depth > 0 ? perft(depth, 0) : 1;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
        double seconds = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
        printf("%d %ld %.6f\n", depth, count, seconds);
        fflush(stdout);
    }
    return 0;
}
