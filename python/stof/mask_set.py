"""stof.MaskSet: masks that differ per batch row and head for one stof.attention call (packed
documents with other boundaries in each row, padding that is not one key range per row, heads
with different sparse patterns). Holds each distinct stof.Mask once and, per (batch row, query
head), the index of its mask; the C API prepares one layout per distinct mask and runs the
whole batch in one launch on the Hopper kernel (stof_prepare_patterns, C API version 8).

Used by attention.py (a MaskSet or a [B, L_q, L_k] / [B, H, L_q, L_k] bool mask) and hf.py
(per batch row model masks). torch is imported only by from_tensor for torch input.
"""

import hashlib

from ._capi import StofError
from ._numpy import numpy
from .mask import Mask, _is_torch_tensor, _register


class MaskSet:
    """masks: a sequence of stof.Mask (or bool [L_q, L_k] arrays), all one size; pattern_of:
    [B][H] ints, the index of each (batch row, query head)'s mask. Equal masks are merged and
    unused ones dropped, as the engine does."""

    def __init__(self, masks, pattern_of, source="mask set"):
        np = numpy()
        masks = [m if isinstance(m, Mask) else Mask(m, source=f"{source}[{i}]")
                 for i, m in enumerate(masks)]
        if not masks:
            raise StofError(f"{source}: at least one mask expected, got none")
        of = np.asarray(pattern_of)
        if of.ndim != 2 or of.shape[0] < 1 or of.shape[1] < 1 or \
                not np.issubdtype(of.dtype, np.integer):
            raise StofError(f"{source}: pattern_of: expected integers [B, H] with B, H >= 1, got "
                            f"{of.dtype} {tuple(of.shape)}")
        first = masks[0]
        for i, m in enumerate(masks):
            if (m.q_len, m.kv_len) != (first.q_len, first.kv_len):
                raise StofError(f"{source}[{i}]: {m.q_len} x {m.kv_len}, expected "
                                f"{first.q_len} x {first.kv_len} as {source}[0]")
        bad = (of < 0) | (of >= len(masks))
        if bad.any():
            b, h = (int(x) for x in np.argwhere(bad)[0])
            raise StofError(f"{source}: pattern_of[{b}][{h}] is {int(of[b, h])}, expected "
                            f"0..{len(masks) - 1}")
        distinct, index, remap = [], {}, {}
        for src in of.ravel().tolist():
            if src not in remap:
                key = masks[src].key
                if key not in index:
                    index[key] = len(distinct)
                    distinct.append(masks[src])
                remap[src] = index[key]
        self.masks = distinct
        self.pattern_of = np.vectorize(remap.get, otypes=[np.int32])(of)
        self.pattern_of.setflags(write=False)
        self.batch, self.heads = int(of.shape[0]), int(of.shape[1])
        self.q_len, self.kv_len = first.q_len, first.kv_len
        self.source = source
        h = hashlib.blake2b(digest_size=16)
        h.update(b"set")
        for m in self.masks:
            h.update(m.key.encode())
        h.update(np.array(self.pattern_of.shape, dtype="<i8").tobytes())
        h.update(self.pattern_of.astype("<i4").tobytes())
        self.key = "set-" + h.hexdigest()
        _register(self)  # the custom op finds it by key, as a Mask

    @classmethod
    def from_tensor(cls, t, batch, heads, source="mask"):
        """A bool [B, L_q, L_k] or [B, H, L_q, L_k] numpy array / torch tensor (a size-1 batch
        or head dimension broadcasts to `batch` / `heads`), its distinct slices kept once."""
        np = numpy()
        if _is_torch_tensor(t):
            t = t.detach().to("cpu").numpy()
        a = np.asarray(t)
        if a.dtype != bool:
            raise StofError(f"{source}: expected a bool array, got dtype {a.dtype}")
        if a.ndim == 3:
            a = a[:, None]
        if a.ndim != 4 or a.shape[0] not in (1, batch) or a.shape[1] not in (1, heads):
            raise StofError(f"{source}: expected [B, L_q, L_k] or [B, H, L_q, L_k] with B 1 or "
                            f"{batch} and H 1 or {heads}, got shape {tuple(a.shape)}")
        seen, masks = {}, []
        slot = np.empty(a.shape[:2], dtype=np.int32)
        for b in range(a.shape[0]):
            for h in range(a.shape[1]):
                raw = np.packbits(a[b, h], axis=1).tobytes()
                if raw not in seen:
                    seen[raw] = len(masks)
                    masks.append(Mask(a[b, h], source=f"{source}[{b}, {h}]"))
                slot[b, h] = seen[raw]
        of = np.broadcast_to(slot, (batch, heads))
        return cls(masks, of, source=source)

    @property
    def patterns(self):
        return len(self.masks)

    def bytes_u8(self):
        """The distinct masks' bytes, [P, L_q, L_k] (1 = attend), as the C API takes them."""
        np = numpy()
        return np.ascontiguousarray(np.stack([m.numpy() for m in self.masks])).view(np.uint8)

    def __repr__(self):
        return (f"stof.MaskSet({self.patterns} pattern(s) over B={self.batch} x H={self.heads}, "
                f"L_q={self.q_len}, L_k={self.kv_len}, source={self.source!r})")
