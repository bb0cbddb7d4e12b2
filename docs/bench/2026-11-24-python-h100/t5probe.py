import torch, stof, stof.hf, transformers
from transformers import T5Config, T5EncoderModel
stof.hf.register()
seen = []
orig = stof.hf.stof_attention_forward
def probe(module, query, key, value, attention_mask, **kw):
    seen.append((type(module).__name__, None if attention_mask is None else (attention_mask.dtype, tuple(attention_mask.shape)), sorted(kw.keys()), {k: (v if not torch.is_tensor(v) else ('tensor', v.dtype, tuple(v.shape))) for k, v in kw.items()}))
    return orig(module, query, key, value, attention_mask, **kw)
from transformers import AttentionInterface
AttentionInterface.register("stof", probe)
cfg = T5Config(vocab_size=1000, d_model=256, d_kv=64, num_heads=4, num_layers=2, d_ff=512)
m = T5EncoderModel._from_config(cfg, attn_implementation="stof").cuda().half().eval()
ids = torch.randint(0, 1000, (2, 256), device="cuda")
with torch.no_grad(): m(input_ids=ids)
for x in seen[:3]: print(x)
import inspect
from transformers.models.t5 import modeling_t5
src = inspect.getsource(modeling_t5.T5Attention.forward)
i = src.find("attention_interface"); print(src[max(0,i-1500):i+900])
