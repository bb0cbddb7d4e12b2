"""GPU tests of the Hugging Face backend (stof/hf.py; torch + CUDA + transformers +
libstof_capi.so, skipped otherwise): randomly initialised BertModel, GPT2Model and
T5EncoderModel from small configs (no downloads), the same weights under
attn_implementation="stof", "sdpa" (same dense mask) and "flex_attention" (same sparse
pattern as a BlockMask); and the fallbacks to sdpa with one warning (head_dim 36, CPU
tensors; T5's additive position bias, or a skip when this transformers' T5 takes no
attention backend)."""

import unittest
import warnings

import _gpu

HAVE_HF = False
WHY_HF = ""
if _gpu.OK:
    import numpy as np
    import torch
    import stof
    try:
        import stof.hf
        stof.hf.register()
        HAVE_HF = True
    except ImportError as e:
        WHY_HF = f"transformers is not importable: {e}"

skip_unless_hf = unittest.skipUnless(_gpu.OK and HAVE_HF,
                                     f"HF tests skipped: {_gpu.WHY or WHY_HF}")
TOL = 2e-2  # fp16 hidden states (LayerNorm outputs, order 1) after two layers
L = 256
VOCAB = 1000


def configs():
    from transformers import BertConfig, GPT2Config, T5Config
    return {
        "bert": BertConfig(vocab_size=VOCAB, hidden_size=256, num_hidden_layers=2,
                           num_attention_heads=4, intermediate_size=512,
                           max_position_embeddings=512),
        "gpt2": GPT2Config(vocab_size=VOCAB, n_embd=256, n_layer=2, n_head=4, n_positions=512),
        "t5": T5Config(vocab_size=VOCAB, d_model=256, d_kv=64, num_heads=4, num_layers=2,
                       d_ff=512),
    }


def model(name, impl, state=None, config=None):
    from transformers import BertModel, GPT2Model, T5EncoderModel
    cls = {"bert": BertModel, "gpt2": GPT2Model, "t5": T5EncoderModel}[name]
    torch.manual_seed(0)
    m = cls._from_config(config or configs()[name], attn_implementation=impl)
    if state is not None:
        m.load_state_dict(state)
    return m.to("cuda", torch.float16).eval()


def band_mask(causal):
    i, j = np.indices((L, L))
    a = abs(i - j) < 48
    return a & (j <= i) if causal else a


def close(test, a, b, what):
    err = float((a.float() - b.float()).abs().max().item())
    test.assertLess(err, TOL, what)


@skip_unless_hf
class HfTest(unittest.TestCase):
    def pair(self, name, other):
        ref = model(name, other)
        ours = model(name, "stof", ref.state_dict())
        return ours, ref

    def ids(self, B=2):
        g = torch.Generator().manual_seed(1)
        return torch.randint(0, VOCAB, (B, L), generator=g).cuda()

    def test_dense_padding_mask_matches_sdpa(self):
        for name in ("bert", "gpt2"):
            with self.subTest(model=name):
                ours, ref = self.pair(name, "sdpa")
                ids = self.ids()
                am = torch.ones_like(ids)
                am[1, L - 40:] = 0  # second sequence padded at the end
                stof._warn.reset()
                with torch.no_grad(), warnings.catch_warnings(record=True) as w:
                    warnings.simplefilter("always")
                    a = ours(input_ids=ids, attention_mask=am).last_hidden_state
                fallbacks = [str(x.message) for x in w if "stof attention" in str(x.message)]
                self.assertEqual(fallbacks, [], "the stof kernels must run, not sdpa")
                b = ref(input_ids=ids, attention_mask=am).last_hidden_state
                keep = am.bool()
                close(self, a[keep], b[keep], f"{name} padding")

    def test_sparse_pattern_matches_sdpa_dense_mask(self):
        for name, causal in (("bert", False), ("gpt2", True)):
            with self.subTest(model=name):
                ours, ref = self.pair(name, "sdpa")
                pattern = band_mask(causal)
                stof.hf.use_mask(ours, stof.Mask(pattern))
                ids = self.ids()
                dense = torch.from_numpy(pattern).cuda().expand(2, 1, L, L)
                with torch.no_grad():
                    a = ours(input_ids=ids).last_hidden_state
                    b = ref(input_ids=ids, attention_mask=dense).last_hidden_state
                close(self, a, b, f"{name} sparse vs sdpa")

    def test_sparse_pattern_matches_flex(self):
        for name, causal in (("bert", False), ("gpt2", True)):
            with self.subTest(model=name):
                try:
                    ours, ref = self.pair(name, "flex_attention")
                except ValueError as e:  # e.g. GPT2Model in transformers 5: no flex backend
                    if "flex_attention" not in str(e):
                        raise
                    self.skipTest(f"{name}: transformers refuses flex_attention: {e}")
                m = stof.Mask(band_mask(causal))
                stof.hf.use_mask(ours, m)
                ids = self.ids()
                with torch.no_grad():
                    a = ours(input_ids=ids).last_hidden_state
                    b = ref(input_ids=ids, attention_mask=m.to_block_mask(128)).last_hidden_state
                close(self, a, b, f"{name} sparse vs flex")

    def test_t5_encoder(self):
        # T5's relative position bias is an additive mask, which the kernels cannot apply: the
        # backend must say so (once) and give sdpa's result, never a wrong one.
        try:
            ours, ref = self.pair("t5", "sdpa")
        except ValueError as e:  # this transformers' T5 does not take attention backends
            self.skipTest(f"T5EncoderModel refuses attn_implementation='stof': {e}")
        ids = self.ids()
        stof._warn.reset()
        with torch.no_grad(), warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            a = ours(input_ids=ids).last_hidden_state
        b = ref(input_ids=ids).last_hidden_state
        close(self, a, b, "t5")
        texts = [str(x.message) for x in w if "stof attention" in str(x.message)]
        self.assertEqual(len(texts), 1, texts)
        self.assertIn("position_bias", texts[0])

    def test_forward_is_captured_in_a_cuda_graph(self):
        # The combined mask is built once per forward (not per layer) and nothing copies
        # between host and device under capture, so a forward that ran once eagerly can be
        # captured; the replay must give the eager result.
        for name, causal in (("bert", False), ("gpt2", True)):
            with self.subTest(model=name):
                ours = model(name, "stof")
                stof.hf.use_mask(ours, stof.Mask(band_mask(causal)))
                stof.hf.clear_cache()
                ids = self.ids()
                with torch.no_grad():
                    eager = ours(input_ids=ids).last_hidden_state.clone()
                    self.assertLessEqual(len(stof.hf._host_masks) + len(stof.hf._padding_masks),
                                         2, "one combined mask a forward")
                    side = torch.cuda.Stream()
                    side.wait_stream(torch.cuda.current_stream())
                    with torch.cuda.stream(side):
                        ours(input_ids=ids)
                    torch.cuda.current_stream().wait_stream(side)
                    graph = torch.cuda.CUDAGraph()
                    with torch.cuda.graph(graph):
                        out = ours(input_ids=ids).last_hidden_state
                    out.fill_(float("nan"))
                    graph.replay()
                    torch.cuda.synchronize()
                self.assertFalse(bool(out.isnan().any()), f"{name}: NaN after replay")
                close(self, out, eager, f"{name} graph replay vs eager")
        # A materialised mask without padding (what transformers passes) under capture: the
        # host mask of the pattern, and no host read. Eagerly, a padded one: one read per
        # tensor, one Mask per distinct row.
        full = torch.ones(2, 1, L, L, dtype=torch.bool, device="cuda")
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            rows, ranges = stof.hf._padding_rows(full, None, L, L, False)
        graph.replay()
        torch.cuda.synchronize()
        self.assertIs(rows[0], stof.hf._host_mask(None, False, L, L))
        self.assertIsNone(ranges)
        padding = full.clone()
        padding[1, :, :, L - 40:] = False
        rows, ranges = stof.hf._padding_rows(padding, None, L, L, False, ranges=False)
        self.assertEqual(len(rows), 2)
        self.assertIsNone(ranges)
        self.assertIsNot(rows[0], rows[1])
        self.assertEqual(rows[1].nnz, L * (L - 40))
        again, _ = stof.hf._padding_rows(padding, None, L, L, False, ranges=False)
        self.assertIs(again, rows, "one read a tensor")
        # On the Hopper kernel, right padding is one mask and per-row key ranges.
        if torch.cuda.get_device_capability() == (9, 0):
            rows, ranges = stof.hf._padding_rows(padding, None, L, L, False)
            self.assertEqual(len(rows), 1)
            self.assertEqual(ranges.tolist(), [[0, L], [0, L - 40]])

    def test_fallbacks_warn_once_with_reason(self):
        from transformers import BertConfig
        cfg = BertConfig(vocab_size=VOCAB, hidden_size=144, num_hidden_layers=2,
                         num_attention_heads=4, intermediate_size=256)  # head_dim 36
        ref = model("bert", "sdpa", config=cfg)
        ours = model("bert", "stof", ref.state_dict(), config=cfg)
        ids = self.ids()
        stof._warn.reset()
        with torch.no_grad(), warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            a = ours(input_ids=ids).last_hidden_state
            ours(input_ids=ids)  # a second forward: no second warning
        b = ref(input_ids=ids).last_hidden_state
        close(self, a, b, "head_dim 36 fallback")
        texts = [str(x.message) for x in w if "stof attention" in str(x.message)]
        self.assertEqual(len(texts), 1, texts)
        self.assertIn("head_dim 36", texts[0])
        # A fallback keeps the sparse pattern: sdpa gets the model's mask AND the pattern.
        pattern = band_mask(False)
        stof.hf.use_mask(ours, stof.Mask(pattern))
        with torch.no_grad(), warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            a = ours(input_ids=ids).last_hidden_state
            dense = torch.from_numpy(pattern).cuda().expand(2, 1, L, L)
            b = ref(input_ids=ids, attention_mask=dense).last_hidden_state
        close(self, a, b, "head_dim 36 fallback with a sparse pattern")
        stof.hf.use_mask(ours, None)
        cpu = model("bert", "stof").float().cpu()
        stof._warn.reset()
        with torch.no_grad(), warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            cpu(input_ids=ids.cpu())
        texts = [str(x.message) for x in w if "stof attention" in str(x.message)]
        self.assertEqual(len(texts), 1, texts)
        self.assertIn("cpu", texts[0])


if __name__ == "__main__":
    unittest.main()
