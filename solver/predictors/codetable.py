"""A table from non-negative integer codes to rows of numbers, read for whole arrays of codes at
once (NumPy): what `solver.predictors.batch` reads the profiling tables through.

Small code spaces are a dense array indexed by code (at most `DENSE_LIMIT` values).  Large ones (twelve task types on the T2
give about 10^17 stress codes, of which a few hundred thousand are ever measured) are an
open-addressing hash table with linear probing (Knuth, TAOCP vol. 3, §6.4, Algorithm L) and
Fibonacci hashing (multiplicative, the golden-ratio constant; §6.4), kept at most half full: a
read is one multiplication, one gather and one comparison per code, then a few more probes for
the codes that collided.  Reads never change the table; `insert` adds codes not present.
"""

from __future__ import annotations

import numpy as np

DENSE_LIMIT = 1 << 20  # values (codes x width) up to this many are a dense array (8 MB)
_EMPTY = -1  # codes are non-negative
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # 2**64 / golden ratio, odd


class CodeTable:
    """Codes in ``[0, space)`` -> ``width`` float values each (any float, NaN included)."""

    def __init__(self, space: int, width: int) -> None:
        self.width = width
        self.dense = space * width <= DENSE_LIMIT
        if self.dense:
            self.values = np.full((width, space), np.nan)
            self.present = np.zeros(space, dtype=bool)
        else:
            self._allocate(10)
        self.size = 0

    def _allocate(self, bits: int) -> None:
        self.bits = bits
        self.mask = (1 << bits) - 1
        self.keys = np.full(1 << bits, _EMPTY, dtype=np.int64)
        self.values = np.full((self.width, 1 << bits), np.nan)

    def _home(self, codes: np.ndarray) -> np.ndarray:
        """First slot probed for each code (the top `bits` bits of code * golden, mod 2**64)."""
        product = codes.astype(np.uint64) * _GOLDEN
        return (product >> np.uint64(64 - self.bits)).astype(np.intp)

    def slots(self, codes: np.ndarray) -> np.ndarray:
        """Column of `values` holding each code (same shape; dense: the code itself), -1 where the
        code is absent."""
        if self.dense:
            return np.where(self.present[codes], codes, -1)
        flat = codes.ravel()
        slot = self._home(flat)
        found = self.keys[slot]
        out = np.where(found == flat, slot, -1)
        pending = np.nonzero((found != flat) & (found != _EMPTY))[0]
        while pending.size:  # collisions: probe the next slot
            slot[pending] = (slot[pending] + 1) & self.mask
            found = self.keys[slot[pending]]
            hit = found == flat[pending]
            out[pending[hit]] = slot[pending[hit]]
            pending = pending[~hit & (found != _EMPTY)]
        return out.reshape(codes.shape)

    def insert(self, codes: np.ndarray, values: np.ndarray) -> None:
        """Add distinct codes not yet present, with their values (shape (width, len(codes)))."""
        codes = np.asarray(codes, dtype=np.int64)
        if self.dense:
            self.values[:, codes] = values
            self.present[codes] = True
            self.size += len(codes)
            return
        if 2 * (self.size + len(codes)) > len(self.keys):
            old_keys, old_values = self.keys[self.keys != _EMPTY], self.values[:, self.keys != _EMPTY]
            bits = self.bits
            while 2 * (self.size + len(codes)) > (1 << bits):
                bits += 1
            self._allocate(bits)
            self.size = 0
            self._place(old_keys, old_values)
        self._place(codes, values)

    def _place(self, codes: np.ndarray, values: np.ndarray) -> None:
        """Linear probing insertion, all codes at once: of several codes reaching the same free
        slot the first takes it, the others probe on."""
        slot = self._home(codes)
        pending = np.arange(len(codes))
        while pending.size:
            free = self.keys[slot[pending]] == _EMPTY
            candidates = pending[free]
            _, first = np.unique(slot[candidates], return_index=True)
            winners = candidates[first]
            self.keys[slot[winners]] = codes[winners]
            self.values[:, slot[winners]] = values[:, winners]
            placed = np.zeros(len(codes), dtype=bool)
            placed[winners] = True
            pending = pending[~placed[pending]]
            slot[pending] = (slot[pending] + 1) & self.mask
        self.size += len(codes)
