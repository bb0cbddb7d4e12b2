"""GPU tests of stof.attention (torch + CUDA + libstof_capi.so; skipped otherwise): every mask
generator of the engine (made by the stof CLI; those tests skip without it), ragged L, both
layouts, d 64 and 128, each kernel, a score scale, torch.compile(fullgraph=True), CUDA-graph
capture, dispatch modes, the cache, the launches bound per call signature, the compiled eager
path (stof_eager, built here when missing), and the refusals (bf16, d 96, CPU tensors)."""

import unittest
import warnings

import _gpu
from _gpu import TOL, inputs, max_err, reference, skip_unless_gpu

if _gpu.OK:
    import numpy as np
    import torch
    import stof


def band(L, w):
    i, j = np.indices((L, L))
    return abs(i - j) < w


def full_path(*args, **kwargs):
    """stof.attention with the remembered launches (Python and compiled) turned off."""
    import sys
    eager = sys.modules["stof._eager"]
    eager.enabled = False
    try:
        return stof.attention(*args, **kwargs)
    finally:
        eager.enabled = True


def cli_available():
    try:
        from stof import _cli
        _cli.cli_path()
        return True
    except Exception:
        return False


# Every generator of docs/masks.md, with parameters that make each one sparse at L.
def generator_specs(L):
    return [
        {"pattern": "full"},
        {"pattern": "causal"},
        {"pattern": "sliding_window", "width": 64},
        {"pattern": "dilated", "width": 32, "dilation": 1},
        {"pattern": "global", "global": 16},
        {"pattern": "random_blocks", "fill": 0.2, "block": 64, "seed": 3},
        {"pattern": "longformer", "global": 16, "width": 48},
        {"pattern": "bigbird"},
        {"pattern": "bigbird", "causal": True},
        {"pattern": "document", "doc_lengths": [L // 3, L - L // 3]},
        {"pattern": "or", "operands": [{"pattern": "global", "global": 8},
                                       {"pattern": "sliding_window", "width": 16}]},
        {"pattern": "and", "operands": [{"pattern": "document",
                                         "doc_lengths": [L // 2, L - L // 2]},
                                        {"pattern": "sliding_window", "width": 100}],
         "causal": True},
        {"pattern": "not", "operands": [{"pattern": "sliding_window", "width": 8}]},
    ]


@skip_unless_gpu
class AttentionTest(unittest.TestCase):
    def check(self, mask, B=2, H=3, d=64, layout="bhld", kernel="auto", scale=None):
        L = mask.seq_len
        q, k, v = inputs(B, H, L, d, layout)
        out = stof.attention(q, k, v, mask=mask, layout=layout, kernel=kernel, scale=scale)
        torch.cuda.synchronize()
        self.assertEqual(out.shape, q.shape)
        ref = reference(q, k, v, mask.to_tensor("cuda"), layout, scale)
        err = max_err(out, ref)
        self.assertLess(err, TOL, f"L={L} d={d} {layout} {kernel} scale={scale}: {mask}")

    @unittest.skipUnless(_gpu.OK and cli_available(), "the stof CLI is not built (it makes the "
                         "generator masks): STOF_CUDA=OFF scripts/build build-nocuda")
    def test_every_generator_ragged_L(self):
        for L in (1000, 3000):
            for spec in generator_specs(L):
                with self.subTest(L=L, spec=spec):
                    self.check(stof.Mask.from_spec(dict(spec, seq_len=L)), B=1, H=2)

    def test_layouts_kernels_head_dims(self):
        for L in (1000, 3000):
            m = stof.Mask(band(L, 96))
            for layout in ("bhld", "blhd"):
                for d in (64, 128):
                    for kernel in ("auto", "row_wise", "block_wise"):
                        with self.subTest(L=L, layout=layout, d=d, kernel=kernel):
                            self.check(m, d=d, layout=layout, kernel=kernel)

    def test_scale_and_mask_forms(self):
        L = 1000
        arr = band(L, 40)
        for kernel in ("row_wise", "block_wise"):
            self.check(stof.Mask(arr), kernel=kernel, scale=1.0)
        q, k, v = inputs(1, 2, L, 64)
        a = stof.attention(q, k, v, mask=torch.from_numpy(arr).cuda())
        b = stof.attention(q, k, v, mask=arr)
        torch.cuda.synchronize()
        self.assertEqual(max_err(a, b), 0.0)
        full = stof.attention(q, k, v)
        ref = reference(q, k, v, torch.ones(L, L, dtype=torch.bool, device="cuda"))
        self.assertLess(max_err(full, ref), TOL)

    def test_strided_views_read_in_place(self):
        # q, k, v as views into one [B, L, 3, H, d] projection, as a model makes them.
        B, L, H, d = 2, 1000, 4, 64
        qkv = torch.randn(B, L, 3, H, d, device="cuda", dtype=torch.float16)
        q, k, v = qkv.unbind(2)  # [B, L, H, d], strided
        m = stof.Mask(band(L, 64))
        out = stof.attention(q, k, v, mask=m, layout="blhd", kernel="block_wise")
        ref = reference(q, k, v, m.to_tensor("cuda"), "blhd")
        self.assertLess(max_err(out, ref), TOL)

    def test_torch_compile_fullgraph(self):
        L = 1000
        m = stof.Mask(band(L, 64))

        def f(q, k, v):
            return stof.attention(q * 1.0, k, v, mask=m, layout="blhd") + 0.0
        compiled = torch.compile(f, fullgraph=True)
        q, k, v = inputs(2, 4, L, 64, "blhd")
        out = compiled(q, k, v)
        ref = reference(q, k, v, m.to_tensor("cuda"), "blhd")
        self.assertLess(max_err(out, ref), TOL)

    def test_dispatch_modes_see_the_op(self):
        # Under a dispatch mode (as FlopCounterMode or a tracer installs) the call is seen as
        # the custom op stof::attention, with the same result as a plain call.
        from torch.utils._python_dispatch import TorchDispatchMode
        seen = []

        class Record(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                seen.append(str(func))
                return func(*args, **(kwargs or {}))
        L = 300
        m = stof.Mask(band(L, 32))
        q, k, v = inputs(1, 2, L, 64)
        plain = stof.attention(q, k, v, mask=m)
        with Record():
            watched = stof.attention(q, k, v, mask=m)
        torch.cuda.synchronize()
        self.assertIn("stof.attention.default", seen)
        self.assertTrue(torch.equal(plain, watched))
        self.assertLess(max_err(plain, reference(q, k, v, m.to_tensor("cuda"))), TOL)

    def test_eager_call_skips_the_dispatcher_with_the_same_bits(self):
        # A plain eager call runs the op's body directly (no dispatcher); the registered op
        # gives the same bits. A tensor that needs grad, or a dispatch mode, takes the op.
        import sys
        impl = sys.modules["stof.attention"]
        L = 500
        m = stof.Mask(band(L, 40))
        q, k, v = inputs(2, 3, L, 64)
        self.assertTrue(impl._eager_direct(q, k, v))
        direct = stof.attention(q, k, v, mask=m)
        via_op = torch.ops.stof.attention(q, k, v, m.key, "bhld", 0.0, "auto", 0, 0, 0)
        torch.cuda.synchronize()
        self.assertTrue(torch.equal(direct, via_op))
        self.assertLess(max_err(direct, reference(q, k, v, m.to_tensor("cuda"))), TOL)
        with torch.enable_grad():
            self.assertFalse(impl._eager_direct(q.clone().requires_grad_(), k, v))
        with torch.no_grad():
            self.assertTrue(impl._eager_direct(q.clone().requires_grad_(), k, v))
        from torch.utils._python_dispatch import TorchDispatchMode

        class Passthrough(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                return func(*args, **(kwargs or {}))
        with Passthrough():
            self.assertFalse(impl._eager_direct(q, k, v))

    def test_repeated_eager_calls_take_the_bound_launch(self):
        # The second call of a signature takes its bound launch: the same bits as the full
        # path, fresh addresses each call (new inputs give their own result), strided views
        # bound with their strides, a misaligned view and another kernel keep the full path,
        # and clear_cache forgets the launches (a stale one says its plan was released).
        import sys
        eager = sys.modules["stof._eager"]
        stof.clear_cache()
        L, m, bw = 700, stof.Mask(band(700, 50)), "block_wise"
        q, k, v = inputs(2, 3, L, 64)
        first = stof.attention(q, k, v, mask=m, kernel=bw)
        self.assertEqual(len(eager._launches), 1)
        launch = next(iter(eager._launches.values()))
        bound = stof.attention(q, k, v, mask=m, kernel=bw)
        full = full_path(q, k, v, mask=m, kernel=bw)
        q2, k2, v2 = inputs(2, 3, L, 64, seed=9)
        other = stof.attention(q2, k2, v2, mask=m, kernel=bw)
        torch.cuda.synchronize()
        self.assertTrue(torch.equal(first, bound) and torch.equal(bound, full))
        self.assertLess(max_err(other, reference(q2, k2, v2, m.to_tensor("cuda"))), TOL)
        self.assertGreater(max_err(other, bound), 0.1)
        # Views of one [B, L, 3, H, d] projection, then the same strides at an address 8
        # bytes off (not 16-byte aligned: copied on the full path).
        B, H, d = 2, 4, 64
        qkv = torch.randn(B, L, 3, H, d + 8, device="cuda", dtype=torch.float16)
        for off in (0, 4, 0):
            q3, k3, v3 = qkv[..., off:off + d].unbind(2)
            out = stof.attention(q3, k3, v3, mask=m, layout="blhd", kernel=bw)
            ref = reference(q3, k3, v3, m.to_tensor("cuda"), "blhd")
            self.assertLess(max_err(out, ref), TOL, f"offset {off}")
        self.assertEqual(len(eager._launches), 2)
        stof.attention(q, k, v, mask=m, kernel="row_wise")
        stof.attention(q, k, v, mask=m, kernel="row_wise")
        self.assertEqual(len(eager._launches), 2)  # row-wise takes no strided views
        stof.clear_cache()
        self.assertEqual(len(eager._launches), 0)
        with self.assertRaises(stof.StofError) as cm:
            launch(q, k, v)
        self.assertIn("plan was released", str(cm.exception))
        again = stof.attention(q, k, v, mask=m, kernel=bw)
        torch.cuda.synchronize()
        self.assertTrue(torch.equal(again, first))

    def test_compiled_eager_path(self):
        # The compiled module (python -m stof.extension; built here when missing and buildable)
        # launches repeated calls from C++ with the same bits as the Python paths, new
        # addresses and scales included; a misaligned view, autograd, a dispatch mode and a
        # tensor subclass go back to Python; clear_cache empties its table; a CUDA graph
        # captures its launch.
        import sys
        from stof import extension
        eager = sys.modules["stof._eager"]
        mod = extension.load()
        if mod is None:
            ok, why = extension.can_build()
            if not ok:
                self.skipTest(f"the compiled eager path cannot be built here: {why}")
            mod = extension.build(verbose=False)
        saved = eager._ext
        eager.use_extension(mod)
        try:
            self._compiled_path_checks(mod)
        finally:
            eager.use_extension(saved)

    def _compiled_path_checks(self, mod):
        stof.clear_cache()
        self.assertEqual(mod.size(), 0)
        L, m, bw = 700, stof.Mask(band(700, 50)), "block_wise"
        q, k, v = inputs(2, 3, L, 64)
        mt = m.to_tensor("cuda")
        first = stof.attention(q, k, v, mask=m, kernel=bw)  # prepares, binds, remembers
        self.assertEqual(mod.size(), 1)
        hits = mod.stats()[0]
        fast = stof.attention(q, k, v, mask=m, kernel=bw)
        self.assertEqual(mod.stats()[0], hits + 1)
        full = full_path(q, k, v, mask=m, kernel=bw)
        q2, k2, v2 = inputs(2, 3, L, 64, seed=9)
        other = stof.attention(q2, k2, v2, mask=m, kernel=bw)
        torch.cuda.synchronize()
        self.assertEqual(mod.stats()[0], hits + 2)
        self.assertTrue(torch.equal(first, fast) and torch.equal(fast, full))
        self.assertEqual(fast.shape, q.shape)
        self.assertTrue(fast.is_contiguous())
        self.assertLess(max_err(other, reference(q2, k2, v2, mt)), TOL)
        # A scale given as a float, then as an int: two more signatures, each launched here
        # on its second call.
        for scale in (0.05, 1):
            for _ in range(2):
                got = stof.attention(q2, k2, v2, mask=m, kernel=bw, scale=scale)
            self.assertLess(max_err(got, reference(q2, k2, v2, mt, scale=float(scale))), TOL)
        self.assertEqual(mod.stats()[0], hits + 4)
        # Views of one [B, L, 3, H, d] projection: in place; then 8 bytes off (declined here,
        # copied on the full path); then in place again.
        B, H, d = 2, 4, 64
        qkv = torch.randn(B, L, 3, H, d + 8, device="cuda", dtype=torch.float16)
        declined = mod.stats()[2]
        for off in (0, 0, 4, 0):
            q3, k3, v3 = qkv[..., off:off + d].unbind(2)
            out = stof.attention(q3, k3, v3, mask=m, layout="blhd", kernel=bw)
            self.assertLess(max_err(out, reference(q3, k3, v3, mt, "blhd")), TOL, f"off {off}")
        self.assertEqual(mod.stats()[0], hits + 6)
        self.assertEqual(mod.stats()[2], declined + 1)
        # Autograd, a dispatch mode and a subclass must see the op: the module hands such calls
        # back (None), before launching anything.
        from torch.utils._python_dispatch import TorchDispatchMode

        class Record(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                return func(*args, **(kwargs or {}))

        class Sub(torch.Tensor):
            pass
        before = mod.stats()[0]
        args = (m, "bhld", None, bw, (0, 0, 0))
        self.assertIsInstance(mod.call(q, k, v, *args), torch.Tensor)
        qg = q.clone().requires_grad_()
        with torch.enable_grad():
            self.assertIsNone(mod.call(qg, k, v, *args))
        with torch.no_grad():
            self.assertIsInstance(mod.call(qg, k, v, *args), torch.Tensor)
        with Record():
            self.assertIsNone(mod.call(q, k, v, *args))
        self.assertIsNone(mod.call(q.as_subclass(Sub), k, v, *args))
        self.assertIsNone(mod.call(q, k, v, stof.Mask(band(L, 50)), "bhld", None, bw, [0, 0, 0]))
        self.assertIsNone(mod.call(q, k, v, m, "bhld", True, bw, (0, 0, 0)))
        self.assertIsNone(mod.call(q[0], k[0], v[0], *args))
        with self.assertRaises(TypeError):
            mod.call(q, k, v)
        self.assertEqual(mod.stats()[0], before + 2)
        # A CUDA graph captures the launch made here (current stream: the capture's).
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            captured = stof.attention(q, k, v, mask=m, kernel=bw)
        self.assertEqual(mod.stats()[0], before + 3)
        q.copy_(q2), k.copy_(k2), v.copy_(v2)
        g.replay()
        torch.cuda.synchronize()
        self.assertTrue(torch.equal(captured, other))
        # clear_cache releases the plans and empties the table; the next calls start over.
        stof.clear_cache()
        self.assertEqual(mod.size(), 0)
        misses = mod.stats()[1]
        again = stof.attention(q2, k2, v2, mask=m, kernel=bw)
        self.assertEqual(mod.stats()[1], misses + 1)
        again2 = stof.attention(q2, k2, v2, mask=m, kernel=bw)
        torch.cuda.synchronize()
        self.assertTrue(torch.equal(again, other) and torch.equal(again2, other))
        from stof import extension
        self.assertIn("in use", extension.status())

    @unittest.skipUnless(_gpu.OK and torch.cuda.device_count() >= 2, "needs two GPUs")
    def test_current_device_is_left_alone(self):
        # A call on cuda:1 under cuda:0 (first call: prepare + launch; then the bound and
        # compiled launches; then clear_cache's release) runs on cuda:1 and leaves cuda:0
        # current: the C API gives the caller's device back (torch reads it from CUDA).
        L, m = 600, stof.Mask(band(600, 40))
        q, k, v = (t.to("cuda:1") for t in inputs(1, 2, L, 64))
        torch.cuda.set_device(0)
        for _ in range(3):
            out = stof.attention(q, k, v, mask=m)
            self.assertEqual(torch.cuda.current_device(), 0)
        self.assertEqual(out.device, torch.device("cuda:1"))
        self.assertLess(max_err(out, reference(q, k, v, m.to_tensor("cuda:1"))), TOL)
        stof.clear_cache()
        self.assertEqual(torch.cuda.current_device(), 0)

    def test_cuda_graph_capture(self):
        L = 3000
        m = stof.Mask(band(L, 128))
        q, k, v = inputs(1, 4, L, 64)
        stof.attention(q, k, v, mask=m)  # prepares the layout: capture forbids the upload
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):  # captures on its own stream: the op launches on it
            out = stof.attention(q, k, v, mask=m)
        q2, k2, v2 = inputs(1, 4, L, 64, seed=5)
        q.copy_(q2), k.copy_(k2), v.copy_(v2)
        g.replay()
        torch.cuda.synchronize()
        ref = reference(q2, k2, v2, m.to_tensor("cuda"))
        self.assertLess(max_err(out, ref), TOL)

    def test_capture_without_prepared_layout_says_so(self):
        L = 1000
        m = stof.Mask(band(L, 33))
        q, k, v = inputs(1, 2, L, 64)
        g = torch.cuda.CUDAGraph()
        with self.assertRaises(Exception) as cm:
            with torch.cuda.graph(g):
                stof.attention(q, k, v, mask=m)
        self.assertIn("run the call once before capturing", str(cm.exception))

    def test_cache(self):
        stof.clear_cache()
        L = 1000
        m = stof.Mask(band(L, 20))
        q, k, v = inputs(1, 2, L, 64)
        stof.attention(q, k, v, mask=m)
        stof.attention(q, k, v, mask=stof.Mask(band(L, 20)))  # same content: same entry
        self.assertEqual(len(stof.cache_info()), 1)
        stof.attention(q, k, v, mask=m, kernel="row_wise")
        self.assertEqual(len(stof.cache_info()), 2)
        stof.clear_cache()
        self.assertEqual(stof.cache_info(), [])

    def test_refusals(self):
        L = 256
        m = stof.Mask(band(L, 8))
        q, k, v = inputs(1, 2, L, 64)
        cases = [((q.float(), k.float(), v.float()), "expected torch.float16 or torch.bfloat16"),
                 ((q, k.bfloat16(), v), "expected q's dtype torch.float16"),
                 (tuple(inputs(1, 2, L, 100)), "head_dim: the STOF kernels support multiples "
                                               "of 8 from 8 to 256"),
                 ((q.cpu(), k.cpu(), v.cpu()), "expected a CUDA tensor")]
        for args, text in cases:
            with self.assertRaises(stof.StofError) as cm:
                stof.attention(*args, mask=m)
            self.assertIn(text, str(cm.exception))
        with self.assertRaises(stof.StofError) as cm:
            stof.attention(q, k, v, mask=stof.Mask(band(128, 8)))
        self.assertIn("mask: 128 x 128", str(cm.exception))
        self.assertIn("L_q = 256 queries over L_k = 256 keys", str(cm.exception))

    def test_bf16_on_hopper(self):
        """bf16 runs on the Hopper kernel (sm_90): both layouts, d 64 and 128, against the
        fp32 reference of the bf16 inputs (bf16 keeps 8 significant bits: 4x the fp16
        tolerance); a portable configuration asked for gives way to the Hopper kernel's own
        choice with one warning. Elsewhere bf16 is refused with a message naming sm_90."""
        L = 1000
        m = stof.Mask(band(L, 96))
        if torch.cuda.get_device_capability() != (9, 0):
            q, k, v = (t.bfloat16() for t in inputs(1, 2, L, 64))
            with self.assertRaises(stof.StofError) as cm:
                stof.attention(q, k, v, mask=m)
            self.assertIn("Hopper", str(cm.exception))
            return
        for layout in ("bhld", "blhd"):
            for d in (64, 128):
                with self.subTest(layout=layout, d=d):
                    q, k, v = (t.bfloat16() for t in inputs(2, 3, L, d, layout))
                    out = stof.attention(q, k, v, mask=m, layout=layout)
                    torch.cuda.synchronize()
                    self.assertEqual(out.dtype, torch.bfloat16)
                    ref = reference(q, k, v, m.to_tensor("cuda"), layout)
                    self.assertLess(max_err(out, ref), 4 * TOL)
        q, k, v = (t.bfloat16() for t in inputs(1, 2, L, 64))
        stof._warn.reset()  # said once per process: an earlier test may have said it
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = stof.attention(q, k, v, mask=m, kernel="block_wise", _block=(64, 64, 4))
        torch.cuda.synchronize()
        self.assertTrue(any("Hopper kernel only" in str(x.message) for x in w))
        self.assertLess(max_err(out, reference(q, k, v, m.to_tensor("cuda"))), 4 * TOL)

    def test_plan(self):
        import os
        from _util import REPO
        if not cli_available():
            self.skipTest("the stof CLI is not built (the plan's spec mask needs it)")
        plan = stof.load_plan(os.path.join(REPO, "assets", "plans",
                                           "bigbird-1024-bert-base-h100.json"))
        q, k, v = inputs(8, 12, 1024, 64)
        with warnings.catch_warnings(record=True) as w:  # the built-in H100 spec's name is
            warnings.simplefilter("always")              # not the CUDA device's: one warning
            out = stof.attention(q, k, v, plan=plan)
        texts = [str(x.message) for x in w if "stof:" in str(x.message)]
        self.assertEqual(len(texts), 1, texts)
        self.assertIn("plan made on H100-SXM-80GB, running on", texts[0])
        ref = reference(q, k, v, plan.mask.to_tensor("cuda"))
        self.assertLess(max_err(out, ref), TOL)
        with self.assertWarns(UserWarning):
            q, k, v = inputs(2, 12, 1024, 64)
            stof.attention(q, k, v, plan=plan)


@skip_unless_gpu
class FlexInteropTest(unittest.TestCase):
    def mods(self):
        def causal(b, h, q, kv):
            return q >= kv

        def window(b, h, q, kv):
            return (q - kv).abs() < 100

        def doc_causal(b, h, q, kv):
            return ((q // 300) == (kv // 300)) & (q >= kv)
        return {"causal": causal, "window": window, "doc_causal": doc_causal}

    def test_round_trips(self):
        from torch.nn.attention.flex_attention import create_block_mask
        for L in (1000, 1024):
            for name, mod in self.mods().items():
                for bs in (64, 128):
                    with self.subTest(L=L, mod=name, BLOCK_SIZE=bs):
                        flex = create_block_mask(mod, None, None, L, L, device="cuda",
                                                 BLOCK_SIZE=bs)
                        dense = stof.Mask.from_mask_mod(mod, L)
                        self.assertEqual(stof.Mask.from_block_mask(flex), dense)
                        ours = dense.to_block_mask(bs)
                        self.assertEqual(stof.Mask.from_block_mask(ours), dense)
                        # Same block structure as Flex's own (full and partial blocks).
                        self.assertTrue(torch.equal(ours.to_dense().bool(),
                                                    flex.to_dense().bool()))
                        self.assertTrue(torch.equal(ours.kv_num_blocks, flex.kv_num_blocks))
                        self.assertTrue(torch.equal(ours.full_kv_num_blocks,
                                                    flex.full_kv_num_blocks))

    def test_same_output_as_flex(self):
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention
        L = 1024
        mod = self.mods()["doc_causal"]
        flex_mask = create_block_mask(mod, None, None, L, L, device="cuda")
        q, k, v = inputs(2, 4, L, 64)
        ref = torch.compile(flex_attention)(q, k, v, block_mask=flex_mask)
        out = stof.attention(q, k, v, mask=stof.Mask.from_block_mask(flex_mask))
        self.assertLess(max_err(out, ref), TOL)


if __name__ == "__main__":
    unittest.main()
