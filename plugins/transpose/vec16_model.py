# vec16_model.py -- a host model of vec16's index math (transpose_kernels.cu:
# tile_vector, tile_scalar, vec_index, elem_index), thread by thread, for
# each dtype's tile: every output element is written exactly once with the
# right input element, every shared-memory slot read was written, and the
# shared accesses the kernel comments call conflict-free are (16-byte
# accesses: eight threads per phase on eight 16-byte bank groups; element
# path: at most one word per bank, two for 8-byte elements).  Run by hand
# after changing the kernel's tiles or swizzles (python3, a few seconds);
# it has no GPU and is not part of CI.
import itertools, sys
CFG = {4: (64, 128), 8: (64, 256), 2: (128, 128)}  # esize: (TILE, THREADS)

def vec_index(es, TILE, y, x):
    W = 16 // es
    return y * TILE + (((x // W) ^ ((y // W) & 7)) * W) + x % W

def elem_index(TILE, y, x, es=4):
    S = 2 if es == 2 else 1
    return y * TILE + (x ^ ((y & 31) * S))

def run(rows, cols, es):
    TILE, THREADS = CFG[es]
    W = 16 // es
    G = TILE // W
    inp = [[(r, c) for c in range(cols)] for r in range(rows)]
    out = {}
    VEC = rows % W == 0 and cols % W == 0
    tcols = -(-cols // TILE); nt = tcols * -(-rows // TILE)
    for b in range(nt):
        r0 = (b // tcols) * TILE; c0 = (b % tcols) * TILE
        sm = {}
        if VEC and r0 + TILE <= rows and c0 + TILE <= cols:
            LOADS = TILE * G // THREADS; SUBS = G * G // THREADS
            assert LOADS * THREADS == TILE * G and SUBS * THREADS == G * G
            for t in range(THREADS):
                for k in range(LOADS):
                    i = t + k * THREADS; y = i // G; g = i % G
                    slot = y * G + (g ^ ((y // W) & 7))
                    assert 0 <= slot < TILE * G and slot not in sm
                    sm[slot] = [inp[r0 + y][c0 + g * W + e] for e in range(W)]
            # bank check, store phase: 8-thread phases per instruction
            for t in range(THREADS):
                for k in range(SUBS):
                    s = t + k * THREADS; gr = s % G; gc = s // G
                    a = [sm[(gr * W + i) * G + (gc ^ (gr & 7))] for i in range(W)]
                    for j in range(W):
                        orow = c0 + gc * W + j
                        for i in range(W):
                            key = (orow, r0 + gr * W + i)
                            assert key not in out
                            out[key] = a[i][j]
            # conflicts: for each warp, instruction, quarter
            for w in range(THREADS // 32):
                for k in range(SUBS):
                    for i in range(W):
                        for q in range(4):
                            banks = set()
                            for l in range(q * 8, q * 8 + 8):
                                s = w * 32 + l + k * THREADS; gr = s % G; gc = s // G
                                banks.add(((gr * W + i) * G + (gc ^ (gr & 7))) % 8)
                            assert len(banks) == 8, ("store conflict", es)
                for k in range(LOADS):
                    for q in range(4):
                        banks = set()
                        for l in range(q * 8, q * 8 + 8):
                            i = w * 32 + l + k * THREADS; y = i // G; g = i % G
                            banks.add((y * G + (g ^ ((y // W) & 7))) % 8)
                        assert len(banks) == 8, ("load conflict", es)
        else:
            PER = TILE * TILE // THREADS
            idx = (lambda y, x: vec_index(es, TILE, y, x)) if VEC else (lambda y, x: elem_index(TILE, y, x, es))
            full = r0 + TILE <= rows and c0 + TILE <= cols
            for t in range(THREADS):
                for k in range(PER):
                    e = t + k * THREADS; y = e // TILE; x = e % TILE
                    if full or (r0 + y < rows and c0 + x < cols):
                        sl = idx(y, x); assert 0 <= sl < TILE * TILE and sl not in sm
                        sm[sl] = inp[r0 + y][c0 + x]
            for t in range(THREADS):
                for k in range(PER):
                    e = t + k * THREADS; oy = e // TILE; ox = e % TILE
                    if full or (c0 + oy < cols and r0 + ox < rows):
                        key = (c0 + oy, r0 + ox); assert key not in out
                        out[key] = sm[idx(ox, oy)]
            if not VEC:  # conflict check of element layout (4-byte banks)
                for w in range(THREADS // 32):
                    for k in range(PER):
                        for phase in ("load", "store"):
                            words = {}
                            for l in range(32):
                                e = w * 32 + l + k * THREADS
                                a, bb = (e // TILE, e % TILE) if phase == "load" else (e % TILE, e // TILE)
                                word = (elem_index(TILE, a, bb, es) * es) // 4
                                words.setdefault(word % 32, set()).add(word)
                            worst = max(len(v) for v in words.values())
                            assert worst <= max(1, es // 4), (phase, es, worst)
    assert len(out) == rows * cols, (len(out), rows * cols)
    for (orow, ocol), v in out.items():
        assert v == (ocol, orow)
    return VEC

for es in (4, 8, 2):
    for rows, cols in [(1, 1), (1, 37), (37, 1), (31, 33), (136, 200), (128, 256), (64, 64), (72, 136), (130, 66)]:
        vec = run(rows, cols, es)
        print(es, rows, cols, "vec" if vec else "elem", "ok")
