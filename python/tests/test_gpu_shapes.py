"""GPU tests of the shapes of today's models (torch + CUDA + libstof_capi.so on an sm_90 GPU;
skipped otherwise): stof.attention with grouped key/value heads (GQA ratios 1-32, MQA) and a KV
cache's query rows (L_q < L_k, causal aligned to the bottom right, decode steps), both layouts,
fp16 and bf16, head sizes 32-256, against the fp32 reference; and the Hugging Face backend on
randomly initialised Llama (GQA), Mistral (sliding window), Qwen2, GPT-2, Phi-3 (head size 96)
and Gemma (head size 256, MQA) models from configs: a padded forward
against "sdpa", and greedy generate() whose logits stay within tolerance of sdpa's at every
step with our kernel counted in every layer and step."""

import unittest
import warnings

import _gpu
from _gpu import skip_unless_gpu

if _gpu.OK:
    import numpy as np
    import torch
    import stof

HOPPER = _gpu.OK and torch.cuda.get_device_capability() == (9, 0)
skip_unless_hopper = unittest.skipUnless(HOPPER, "needs an sm_90 GPU (the Hopper kernel): "
                                         + (_gpu.WHY or "another GPU"))


def grouped_inputs(B, H, Hkv, Lq, Lk, d, dtype, layout="bhld", seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)

    def make(h, n):
        shape = (B, h, n, d) if layout == "bhld" else (B, n, h, d)
        return torch.randn(shape, generator=g, device="cuda", dtype=dtype)
    return make(H, Lq), make(Hkv, Lk), make(Hkv, Lk)


def reference(q, k, v, mask, layout="bhld"):
    """fp32 attention with K and V repeated per query head (SDPA's enable_gqa)."""
    if layout == "blhd":
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
    group = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(group, dim=1)
    v = v.repeat_interleave(group, dim=1)
    s = torch.matmul(q.float(), k.float().transpose(-2, -1)) / q.shape[-1] ** 0.5
    s = s.masked_fill(~mask.to(q.device), float("-inf"))
    p = torch.nan_to_num(torch.softmax(s, dim=-1), nan=0.0)
    out = torch.matmul(p, v.float())
    return out.transpose(1, 2) if layout == "blhd" else out


def rel_err(out, ref):
    return float((out.float() - ref).abs().max() / ref.abs().max().clamp(min=1e-3))


@skip_unless_gpu
@skip_unless_hopper
class GroupedShapesTest(unittest.TestCase):
    def check(self, H, Hkv, Lq, Lk, d=128, dtype=None, layout="bhld", mask=None, B=2):
        dtype = dtype or torch.float16
        q, k, v = grouped_inputs(B, H, Hkv, Lq, Lk, d, dtype, layout, seed=H + Lq + Lk)
        mask = mask or stof.Mask.causal(Lq, Lk)
        out = stof.attention(q, k, v, mask=mask, layout=layout)
        torch.cuda.synchronize()
        self.assertEqual(out.shape, q.shape)
        self.assertFalse(torch.isnan(out).any().item())
        err = rel_err(out, reference(q, k, v, mask.to_tensor("cuda"), layout))
        tol = 2e-2 if dtype == torch.bfloat16 else 5e-3
        self.assertLess(err, tol, f"H {H}/{Hkv} Lq {Lq} Lk {Lk} d {d} {dtype} {layout}")

    def test_gqa_ratios(self):
        for Hkv in (32, 16, 8, 4, 1):
            for d in (64, 128):
                with self.subTest(Hkv=Hkv, d=d):
                    self.check(32, Hkv, 1000, 1000, d)

    def test_kv_cache_rows_and_decode(self):
        for Lq in (1, 7, 16, 128):
            for Lk in (Lq, 1000, 4097):
                with self.subTest(Lq=Lq, Lk=Lk):
                    self.check(32, 8, Lq, Lk)

    def test_layouts_and_bf16(self):
        for layout in ("bhld", "blhd"):
            for dtype in (torch.float16, torch.bfloat16):
                with self.subTest(layout=layout, dtype=dtype):
                    self.check(16, 4, 1, 2048, dtype=dtype, layout=layout)
                    self.check(16, 4, 300, 300, dtype=dtype, layout=layout)

    def test_sparse_cache(self):
        """A sliding window over the cache: the decode row reads only the window's blocks."""
        Lk = 8192
        a = np.zeros((1, Lk), dtype=bool)
        a[0, Lk - 1024:] = True
        self.check(32, 8, 1, Lk, mask=stof.Mask(a))

    def test_caches_longer_than_a_square_mask(self):
        """Decode and prefill rows over 65537-262144 keys (past a square mask's 32768), the
        default mask (all keys) and a sliding window; bf16 and fp16."""
        for Lq, Lk, dtype in ((1, 131072, torch.bfloat16), (16, 262144, torch.float16),
                              (1, 65537, torch.float16)):
            with self.subTest(Lq=Lq, Lk=Lk):
                self.check(8, 2, Lq, Lk, dtype=dtype, B=1)
        a = np.zeros((1, 131072), dtype=bool)
        a[0, -4096:] = True
        self.check(8, 2, 1, 131072, mask=stof.Mask(a), B=1)
        q, k, v = grouped_inputs(1, 8, 2, 1, 131072, 128, torch.float16)
        out = stof.attention(q, k, v)  # no mask: every key
        self.assertLess(rel_err(out, reference(q, k, v, torch.ones(1, 131072, dtype=torch.bool))),
                        5e-3)

    def test_caches_past_the_mask_limits_are_refused_by_name(self):
        """Past 262144 keys (or 32768 x 32768 cells) stof.attention refuses, and the HF
        backend falls back saying why."""
        from stof.hf import _unsupported
        q = torch.empty(1, 8, 1, 64, device="cuda", dtype=torch.float16)
        k = torch.empty(1, 2, 262145, 64, device="cuda", dtype=torch.float16)
        with self.assertRaisesRegex(stof.StofError, "L_k must be in 1..262144"):
            stof.attention(q, k, k)
        why = _unsupported(None, q, k, None, 0.0, {})
        self.assertIn("query length 1 over key length 262145 (a mask holds at most 262144 keys",
                      why)
        q8 = torch.empty(1, 8, 8192, 64, device="cuda", dtype=torch.float16)
        k8 = torch.empty(1, 2, 262144, 64, device="cuda", dtype=torch.float16)
        self.assertIn("query length 8192 over key length 262144", _unsupported(None, q8, k8,
                                                                                None, 0.0, {}))

    def test_cache_capacity_plan_is_reused(self):
        """A mask over a KV cache's capacity (more columns than keys) is prepared once; each
        decode step runs its first L_k columns."""
        cap = 1024
        rows = np.ones((1, cap), dtype=bool)
        rows[0, 5] = False  # a hole, so the columns past L_k are not all the same
        mask = stof.Mask(rows)
        plans = len(stof.cache_info())
        for Lk in (700, 701, 960, cap):
            q, k, v = grouped_inputs(2, 32, 8, 1, Lk, 128, torch.float16, seed=Lk)
            out = stof.attention(q, k, v, mask=mask)
            ref = reference(q, k, v, mask.to_tensor("cuda")[:, :Lk])
            self.assertLess(rel_err(out, ref), 5e-3, f"L_k {Lk}")
        self.assertEqual(len(stof.cache_info()), plans + 1, "one plan for every step")
        q, k, v = grouped_inputs(1, 8, 2, 16, 64, 64, torch.float16)
        with self.assertRaisesRegex(stof.StofError, "more columns than keys"):
            stof.attention(q, k, v, mask=stof.Mask(np.ones((8, 64), dtype=bool)))

    def test_key_ranges_one_launch(self):
        """Per batch row key ranges: each row is the reference on the mask AND its range."""
        B, H, Hkv, L = 3, 8, 2, 700
        ranges = torch.tensor([[0, L], [41, L], [0, 600]], dtype=torch.int32, device="cuda")
        for Lq in (L, 1):
            q, k, v = grouped_inputs(B, H, Hkv, Lq, L, 128, torch.float16, seed=Lq)
            mask = stof.Mask.causal(Lq, L)
            out = stof.attention(q, k, v, mask=mask, key_ranges=ranges)
            for b, (first, end) in enumerate(ranges.tolist()):
                cut = mask.to_tensor("cuda").clone()
                cut[:, :first] = False
                cut[:, end:] = False
                ref = reference(q[b:b + 1], k[b:b + 1], v[b:b + 1], cut)
                self.assertLess(rel_err(out[b:b + 1], ref), 5e-3, f"L_q {Lq} row {b}")
        with self.assertRaisesRegex(stof.StofError, r"key_ranges: expected a contiguous "
                                                    r"torch.int32 tensor \[3, 2\]"):
            stof.attention(q, k, v, mask=mask, key_ranges=ranges.long())

    def test_key_mask_one_launch(self):
        """Per batch row kept keys (padding with holes): each row is the reference on the mask
        AND its kept keys, with and without key ranges, for a prefill and a decode step."""
        B, H, Hkv, L = 3, 8, 2, 1000
        g = torch.Generator(device="cuda").manual_seed(4)
        keep = torch.rand(B, L, generator=g, device="cuda") > 0.3
        keep[0] = True
        keep[1, 300:340] = False
        ranges = torch.tensor([[0, L], [37, L], [0, 900]], dtype=torch.int32, device="cuda")
        for Lq in (L, 1):
            q, k, v = grouped_inputs(B, H, Hkv, Lq, L, 128, torch.bfloat16, seed=Lq + 1)
            mask = stof.Mask.causal(Lq, L)
            for with_ranges in (False, True):
                out = stof.attention(q, k, v, mask=mask, key_mask=keep,
                                     key_ranges=ranges if with_ranges else None)
                for b in range(B):
                    cut = mask.to_tensor("cuda") & keep[b].view(1, -1)
                    if with_ranges:
                        first, end = ranges[b].tolist()
                        cut[:, :first] = False
                        cut[:, end:] = False
                    ref = reference(q[b:b + 1], k[b:b + 1], v[b:b + 1], cut)
                    self.assertLess(rel_err(out[b:b + 1], ref), 2e-2,
                                    f"L_q {Lq} row {b} ranges {with_ranges}")
        with self.assertRaisesRegex(stof.StofError, r"key_mask: expected a torch.bool tensor "
                                                    r"\[3, 1000\]"):
            stof.attention(q, k, v, mask=mask, key_mask=keep[:, :999])

    def test_masks_per_row_and_head_one_launch(self):
        """Packed documents with other boundaries per batch row ([B, L, L]) and patterns per
        head ([B, H, L, L]; a MaskSet): each (row, head) is the reference on its own mask."""
        B, H, Hkv, L = 3, 8, 2, 700

        def documents(lengths):
            m = torch.zeros(L, L, dtype=torch.bool)
            start = 0
            for n in lengths:
                m[start:start + n, start:start + n] = torch.ones(n, n).tril().bool()
                start += n
            return m
        rows = torch.stack([documents([300, 200, 200]), documents([700]),
                            documents([64, 1, 500, 135])]).cuda()
        for dtype in (torch.float16, torch.bfloat16):
            q, k, v = grouped_inputs(B, H, Hkv, L, L, 128, dtype, seed=5)
            out = stof.attention(q, k, v, mask=rows)
            tol = 2e-2 if dtype == torch.bfloat16 else 5e-3
            for b in range(B):
                ref = reference(q[b:b + 1], k[b:b + 1], v[b:b + 1], rows[b])
                self.assertLess(rel_err(out[b:b + 1], ref), tol, f"row {b} {dtype}")
        i = torch.arange(L, device="cuda")
        causal = i.view(1, -1) <= i.view(-1, 1)
        window = causal & (i.view(1, -1) > i.view(-1, 1) - 64)
        heads = torch.stack([causal, window] * (H // 2))           # [H, L, L]
        per_head = torch.stack([heads, heads.flip(0), heads])       # [B, H, L, L]
        q, k, v = grouped_inputs(B, H, Hkv, L, L, 64, torch.float16, seed=6)
        out = stof.attention(q, k, v, mask=per_head)
        ref = reference(q, k, v, per_head)
        self.assertLess(rel_err(out, ref), 5e-3, "patterns per head")
        s = stof.MaskSet.from_tensor(per_head, B, H)
        self.assertEqual(s.patterns, 2)
        with self.assertRaisesRegex(stof.StofError, r"is for B=3 x H=8, the call has B=2"):
            stof.attention(q[:2], k[:2], v[:2], mask=s)
        # A decode step whose batch rows see other windows (the heads of a group share one).
        q, k, v = grouped_inputs(B, H, Hkv, 1, 1500, 128, torch.bfloat16, seed=7)
        keys = torch.arange(1500, device="cuda")
        wins = torch.stack([keys >= 1500 - w for w in (1500, 256, 37)]).view(B, 1, 1, 1500)
        out = stof.attention(q, k, v, mask=wins)
        self.assertLess(rel_err(out, reference(q, k, v, wins)), 2e-2, "decode windows per row")

    def test_head_sizes(self):
        # Phi's 96, Gemma's 256, small models' 32 (and 80, 192): square, grouped, a decode step.
        for d in (32, 80, 96, 192, 256):
            with self.subTest(d=d):
                self.check(4, 4, 500, 500, d, B=1)
                self.check(8, 2, 300, 300, d, dtype=torch.bfloat16, B=1)
                self.check(32, 8, 1, 2048, d)

    def test_refusals_name_the_shape(self):
        q, k, v = grouped_inputs(1, 12, 5, 64, 64, 64, torch.float16)
        with self.assertRaisesRegex(stof.StofError, "H a multiple of H_kv"):
            stof.attention(q, k, v)
        for d in (100, 264):
            q, k, v = grouped_inputs(1, 8, 2, 64, 64, d, torch.float16)
            with self.assertRaisesRegex(stof.StofError, f"head_dim.*multiples of 8.*got {d}"):
                stof.attention(q, k, v)
        q, k, v = grouped_inputs(1, 8, 2, 16, 64, 64, torch.float16)
        with self.assertRaisesRegex(stof.StofError, "16 x 16 .*L_q = 16 queries over L_k = 64"):
            stof.attention(q, k, v, mask=stof.Mask.causal(16, 16))


HAVE_HF = False
if HOPPER:
    try:
        import stof.hf
        stof.hf.register()
        HAVE_HF = True
    except ImportError:
        pass

VOCAB = 1000


def hf_config(name):
    import transformers as tf
    common = dict(vocab_size=VOCAB, hidden_size=512, intermediate_size=1024,
                  num_hidden_layers=2, max_position_embeddings=4096)
    if name == "llama":
        return tf.LlamaConfig(num_attention_heads=8, num_key_value_heads=2, **common)
    if name == "mistral":
        return tf.MistralConfig(num_attention_heads=8, num_key_value_heads=2, sliding_window=96,
                                **common)
    if name == "qwen2":
        return tf.Qwen2Config(num_attention_heads=8, num_key_value_heads=4, **common)
    if name == "phi3":  # Phi-3's head size, 96 (hidden 768 over 8 heads)
        return tf.Phi3Config(num_attention_heads=8, num_key_value_heads=8, pad_token_id=0,
                             bos_token_id=1, eos_token_id=2, **dict(common, hidden_size=768))
    if name == "gemma":  # Gemma's head size, 256
        return tf.GemmaConfig(num_attention_heads=4, num_key_value_heads=1, head_dim=256,
                              **common)
    return tf.GPT2Config(vocab_size=VOCAB, n_embd=512, n_layer=2, n_head=8, n_positions=4096)


def hf_model(name, impl, state=None):
    from transformers import AutoModelForCausalLM
    torch.manual_seed(0)
    m = AutoModelForCausalLM.from_config(hf_config(name), attn_implementation=impl)
    if state is not None:
        m.load_state_dict(state)
    return m.to("cuda", torch.float16).eval()


class KernelCount:
    """Counts stof.attention calls that ran our kernel (not the sdpa fallback)."""

    def __enter__(self):
        import sys
        att = sys.modules["stof.attention"]  # the module (stof.attention is the function)
        self.mod, self.orig, self.calls = att, att._attention_impl, 0

        def counted(*a, **kw):
            self.calls += 1
            return self.orig(*a, **kw)
        att._attention_impl = counted
        # The remembered eager launches (Python and compiled) would bypass the count.
        import stof._eager as eager
        self.eager, self.was = eager, eager.enabled
        eager.enabled = False
        return self

    def __exit__(self, *exc):
        self.mod._attention_impl = self.orig
        self.eager.enabled = self.was
        return False


@unittest.skipUnless(HAVE_HF, "needs transformers and an sm_90 GPU")
class HfModernModelsTest(unittest.TestCase):
    MODELS = ("llama", "mistral", "qwen2", "gpt2", "phi3", "gemma")

    def pair(self, name):
        ref = hf_model(name, "sdpa")
        return hf_model(name, "stof", ref.state_dict()), ref

    def check_padded(self, name, ids, am):
        """A padded forward of `name` on ours against sdpa: one launch per layer, no fallback,
        the logits of the kept tokens within tolerance."""
        ours, ref = self.pair(name)
        stof._warn.reset()
        with torch.no_grad(), warnings.catch_warnings(record=True) as w, \
                KernelCount() as count:
            warnings.simplefilter("always")
            a = ours(input_ids=ids, attention_mask=am).logits
        b = ref(input_ids=ids, attention_mask=am).logits
        self.assertEqual(count.calls, hf_config(name).num_hidden_layers, name)
        fallbacks = [str(x.message) for x in w if "stof attention" in str(x.message)]
        self.assertEqual(fallbacks, [], f"{name}: the stof kernels must run")
        keep = am.bool()
        err = float((a[keep].float() - b[keep].float()).abs().max())
        self.assertLess(err, 5e-2, name)

    def test_padded_forward_matches_sdpa(self):
        """Left padding, as generation pads: per-row key ranges."""
        for name in self.MODELS:
            with self.subTest(model=name):
                g = torch.Generator().manual_seed(1)
                ids = torch.randint(0, VOCAB, (2, 256), generator=g).cuda()
                am = torch.ones_like(ids)
                am[1, :40] = 0
                self.check_padded(name, ids, am)

    def test_padding_with_holes_runs_in_one_launch(self):
        """A padding that is not one key range per row (a hole inside a row): one launch per
        layer with the rows' kept keys (stof.attention's key_mask)."""
        for name in ("llama", "gpt2"):
            with self.subTest(model=name):
                g = torch.Generator().manual_seed(3)
                ids = torch.randint(0, VOCAB, (3, 256), generator=g).cuda()
                am = torch.ones_like(ids)
                am[1, :40] = 0
                am[2, 100:130] = 0  # a hole: no single key range says this row
                self.check_padded(name, ids, am)

    def test_documents_mask_runs_in_one_launch(self):
        """A 4-D boolean mask whose rows hold other documents (not padding, not kept keys): the
        backend runs one launch over a mask per batch row (stof.MaskSet), each row matching the
        fp32 reference on its own mask."""
        B, H, Hkv, L, d = 2, 8, 2, 256, 64
        q, k, v = grouped_inputs(B, H, Hkv, L, L, d, torch.float16, seed=9)
        ids = torch.tensor([[0] * 100 + [1] * 156, [0] * 30 + [1] * 200 + [2] * 26],
                           device="cuda")
        i = torch.arange(L, device="cuda")
        m = (ids[:, :, None] == ids[:, None, :]) & (i.view(1, -1, 1) >= i.view(1, 1, -1))
        module = torch.nn.Module()
        module.is_causal = True
        with torch.no_grad(), KernelCount() as count:
            out, _ = stof.hf.stof_attention_forward(module, q, k, v, m[:, None])
        self.assertEqual(count.calls, 1)
        ref = reference(q, k, v, m[:, None])
        self.assertLess(rel_err(out.transpose(1, 2), ref), 5e-3)

    def test_generate_steps_match_sdpa(self):
        steps = 32
        for name in self.MODELS:
            with self.subTest(model=name):
                ours, ref = self.pair(name)
                g = torch.Generator().manual_seed(2)
                ids = torch.randint(0, VOCAB, (1, 200), generator=g).cuda()
                kw = dict(max_new_tokens=steps, do_sample=False, output_logits=True,
                          return_dict_in_generate=True, pad_token_id=0)
                stof._warn.reset()
                with torch.no_grad(), warnings.catch_warnings(record=True) as w, \
                        KernelCount() as count:
                    warnings.simplefilter("always")
                    a = ours.generate(ids, **kw)
                fallbacks = [str(x.message) for x in w if "stof attention" in str(x.message)]
                self.assertEqual(fallbacks, [], f"{name}: the stof kernels must run")
                layers = hf_config(name).num_hidden_layers
                self.assertEqual(count.calls, layers * steps, f"{name}: kernel calls")
                with torch.no_grad():
                    b = ref.generate(ids, **kw)
                for step, (la, lb) in enumerate(zip(a.logits, b.logits)):
                    err = float((la.float() - lb.float()).abs().max())
                    self.assertLess(err, 5e-2, f"{name} step {step}")
                    # Same token wherever sdpa's top two logits are apart by more than that.
                    top = lb.float().topk(2, dim=-1).values[0]
                    if float(top[0] - top[1]) > 5e-2:
                        self.assertEqual(int(la.argmax()), int(lb.argmax()), f"{name} {step}")
                    if int(la.argmax()) != int(lb.argmax()):
                        break  # the sequences differ from here on: later logits compare apart

    def test_generate_over_a_cache_past_a_square_mask(self):
        """A 33000-token prompt: its prefill (33000 x 33000, past a mask's cells) falls back to
        sdpa naming why; every decode step over the 33000+ keys runs our kernel, its logits
        within tolerance of sdpa's."""
        import transformers as tf
        from transformers import AutoModelForCausalLM
        cfg = tf.LlamaConfig(num_attention_heads=8, num_key_value_heads=2, vocab_size=VOCAB,
                             hidden_size=512, intermediate_size=1024, num_hidden_layers=2,
                             max_position_embeddings=65536)

        def model(impl, state=None):
            torch.manual_seed(0)
            m = AutoModelForCausalLM.from_config(cfg, attn_implementation=impl)
            if state is not None:
                m.load_state_dict(state)
            return m.to("cuda", torch.float16).eval()
        ref = model("sdpa")
        ours = model("stof", ref.state_dict())
        steps = 6
        ids = torch.randint(0, VOCAB, (1, 33000), generator=torch.Generator().manual_seed(3))
        kw = dict(max_new_tokens=steps, do_sample=False, output_logits=True,
                  return_dict_in_generate=True, pad_token_id=0)
        stof._warn.reset()
        with torch.no_grad(), warnings.catch_warnings(record=True) as w, KernelCount() as count:
            warnings.simplefilter("always")
            a = ours.generate(ids.cuda(), **kw)
        fallbacks = [str(x.message) for x in w if "stof attention" in str(x.message)]
        self.assertTrue(fallbacks, "the prefill must fall back")
        for f in fallbacks:
            self.assertIn("query length 33000 over key length 33000 (a mask holds at most "
                          "262144 keys and 32768 x 32768 cells)", f)
        self.assertEqual(count.calls, cfg.num_hidden_layers * (steps - 1), "decode steps")
        with torch.no_grad():
            b = ref.generate(ids.cuda(), **kw)
        for step, (la, lb) in enumerate(zip(a.logits, b.logits)):
            self.assertLess(float((la.float() - lb.float()).abs().max()), 5e-2, f"step {step}")


if __name__ == "__main__":
    unittest.main()
